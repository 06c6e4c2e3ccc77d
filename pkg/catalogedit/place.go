package catalogedit

import (
	"fmt"
	"path"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// Where new blobs go: where the package's blobs of that kind already live.
// A package whose channels (or bundles) each have a file of their own gets
// a new file beside them, named after the model file with the name (or
// version) swapped; otherwise the new blob follows the last one of its
// kind in the file that holds the default channel (for channels), the
// newest bundle (for bundles) or the package (for deprecations).

// existing returns the blobs of bs that come from files.
func existing(bs []*Blob) []*Blob {
	var out []*Blob
	for _, b := range bs {
		if !b.created {
			out = append(out, b)
		}
	}
	return out
}

// onePerFile reports whether every blob of bs is alone in its file (a
// single blob only counts when its file is named after it).
func (c *Catalog) onePerFile(bs []*Blob) bool {
	if !c.dir || len(bs) == 0 {
		return false
	}
	if len(bs) == 1 {
		base := path.Base(bs[0].Pos.File)
		named := bs[0].Name != "" && strings.Contains(base, bs[0].Name)
		if bs[0].bundle != nil {
			if v, err := graph.BundleVersion(bs[0].bundle); err == nil && strings.Contains(base, v.String()) {
				named = true
			}
		}
		if !named {
			return false
		}
	}
	files := map[string]bool{}
	for _, b := range bs {
		if files[b.Pos.File] || len(c.byFile[b.Pos.File]) != 1 {
			return false
		}
		files[b.Pos.File] = true
	}
	return true
}

// lastInFile returns the last blob of bs in file.
func lastInFile(bs []*Blob, file string) *Blob {
	var last *Blob
	for _, b := range bs {
		if b.Pos.File == file && (last == nil || b.span > last.span) {
			last = b
		}
	}
	return last
}

// siblingFile names a new file beside model: model's name with old
// replaced by new (or oldAlt by newAlt), else new plus model's extension.
func (c *Catalog) siblingFile(model, old, new, oldAlt, newAlt string) (string, error) {
	dir, base := path.Split(model)
	ext := path.Ext(base)
	var cands []string
	if old != "" && strings.Contains(base, old) {
		cands = append(cands, dir+strings.ReplaceAll(base, old, new))
	}
	if oldAlt != "" && newAlt != "" && strings.Contains(base, oldAlt) {
		cands = append(cands, dir+strings.ReplaceAll(base, oldAlt, newAlt))
	}
	cands = append(cands, dir+new+ext)
	for _, f := range cands {
		if cleanFileName(f) && !c.exists(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("cannot choose a file for %q beside %s: %s exists or is not a plain file name", new, c.DisplayName(model), c.DisplayName(cands[len(cands)-1]))
}

// templateBlock returns the items of a template from pkg's olm.package
// item to the item before the next olm.package item.
func (c *Catalog) templateBlock(pkg string) []*Blob {
	all := c.byFile[c.single]
	start := -1
	for i, b := range all {
		if b.Schema == declcfg.SchemaPackage {
			if start >= 0 {
				return all[start:i]
			}
			if b.Name == pkg {
				start = i
			}
		}
	}
	if start < 0 {
		return nil
	}
	return all[start:]
}

// lastOf returns the last live blob of bs satisfying keep.
func lastOf(bs []*Blob, keep func(*Blob) bool) *Blob {
	for i := len(bs) - 1; i >= 0; i-- {
		if !bs[i].deleted && keep(bs[i]) {
			return bs[i]
		}
	}
	return nil
}

// placeChannel says where a new channel of pkg goes.
func (c *Catalog) placeChannel(pkg, name string) (Place, error) {
	pb := c.Package(pkg)
	if c.Template {
		block := c.templateBlock(pkg)
		if a := lastOf(block, func(b *Blob) bool { return b.Schema == declcfg.SchemaChannel && b.Package == pkg }); a != nil {
			return Place{After: a}, nil
		}
		return Place{After: pb}, nil
	}
	chans := existing(c.Channels(pkg))
	if len(chans) == 0 {
		return Place{After: pb}, nil
	}
	model := chans[len(chans)-1]
	for _, ch := range chans {
		if ch.Name == pb.pkg.DefaultChannel {
			model = ch
		}
	}
	if c.onePerFile(chans) {
		f, err := c.siblingFile(model.Pos.File, model.Name, name, "", "")
		if err != nil {
			return Place{}, err
		}
		return Place{NewFile: f, StyleFile: model.Pos.File}, nil
	}
	return Place{After: lastInFile(chans, model.Pos.File)}, nil
}

// placeBundle says where a new bundle of pkg goes.
func (c *Catalog) placeBundle(pkg, name string, version *semver.Version) (Place, error) {
	pb := c.Package(pkg)
	if c.Template {
		block := c.templateBlock(pkg)
		if a := lastOf(block, func(b *Blob) bool { return b.Schema == declcfg.SchemaBundle && b.Package == "" }); a != nil {
			return Place{After: a}, nil
		}
		if a := lastOf(block, func(b *Blob) bool { return b.Schema == declcfg.SchemaChannel && b.Package == pkg }); a != nil {
			return Place{After: a}, nil
		}
		return Place{After: pb}, nil
	}
	bundles := existing(c.Bundles(pkg))
	if len(bundles) == 0 {
		chans := existing(c.Channels(pkg))
		if a := lastInFile(chans, pb.Pos.File); a != nil && !pb.created {
			return Place{After: a}, nil
		}
		return Place{After: pb}, nil
	}
	// the newest bundle is the model
	model := bundles[0]
	var best semver.Version
	haveBest := false
	for _, b := range bundles {
		v, err := graph.BundleVersion(b.bundle)
		if err != nil {
			continue
		}
		if !haveBest || v.GT(best) {
			best, haveBest, model = v, true, b
		}
	}
	if c.onePerFile(bundles) {
		oldV, newV := "", ""
		if haveBest && version != nil {
			oldV, newV = best.String(), version.String()
		}
		f, err := c.siblingFile(model.Pos.File, model.Name, name, oldV, newV)
		if err != nil {
			return Place{}, err
		}
		return Place{NewFile: f, StyleFile: model.Pos.File}, nil
	}
	return Place{After: lastInFile(bundles, model.Pos.File)}, nil
}

// placeDeprecation says where a new olm.deprecations blob of pkg goes:
// after the package's last blob in the file holding its olm.package blob.
func (c *Catalog) placeDeprecation(pkg string) Place {
	pb := c.Package(pkg)
	if c.Template {
		block := c.templateBlock(pkg)
		if a := lastOf(block, func(b *Blob) bool { return b.Package == pkg || b.Package == "" && b.Schema == declcfg.SchemaBundle }); a != nil {
			return Place{After: a}
		}
		return Place{After: pb}
	}
	if pb.created {
		return Place{After: pb}
	}
	a := lastOf(c.byFile[pb.Pos.File], func(b *Blob) bool { return b.Package == pkg })
	if a == nil {
		a = pb
	}
	return Place{After: a}
}

// placePackage says where a new package goes: its own directory in a
// catalog directory (in the format most of the catalog's files use), else
// the end of the file.
func (c *Catalog) placePackage(pkg string) (Place, error) {
	if !c.dir {
		return Place{}, nil
	}
	json, other := 0, 0
	for f := range c.byFile {
		if strings.EqualFold(path.Ext(f), ".json") {
			json++
		} else {
			other++
		}
	}
	ext := ".yaml"
	if json > other {
		ext = ".json"
	}
	// the new file copies the style of the catalog's first file of its
	// format
	style := ""
	for _, b := range c.blobs {
		if !b.created && strings.EqualFold(path.Ext(b.Pos.File), ext) {
			style = b.Pos.File
			break
		}
	}
	for _, f := range []string{pkg + "/catalog" + ext, pkg + "/" + pkg + ext} {
		if cleanFileName(f) && !c.exists(f) {
			if st, err := c.root.Lstat(pkg); err == nil && !st.IsDir() {
				return Place{}, fmt.Errorf("cannot place new package %q: %s is not a directory", pkg, c.DisplayName(pkg))
			}
			return Place{NewFile: f, StyleFile: style}, nil
		}
	}
	return Place{}, fmt.Errorf("cannot choose a file for new package %q", pkg)
}
