package catalogedit

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
)

// What the files become.

// File change actions.
const (
	ActionModified = "modified"
	ActionCreated  = "created"
	ActionDeleted  = "deleted"
)

// FileChange is one file an edit changes.
type FileChange struct {
	// Name is the file relative to the catalog root, slash-separated (for
	// a file catalog, the file's name).
	Name string
	// Display is the file as the user would name it.
	Display string
	Action  string
	Old     []byte
	New     []byte

	regions []region
}

// Render computes the new contents of every file the edits change.
func (c *Catalog) Render() ([]FileChange, error) {
	for _, fe := range c.files {
		fe.splices, fe.seq = nil, 0
	}
	touched := map[string]bool{}
	anchored := map[*Blob][]*Blob{}
	var anchors []*Blob
	newFiles := map[string][]*Blob{}
	var tail []*Blob
	for _, b := range c.blobs {
		switch {
		case b.created && b.deleted:
		case b.created && b.newFile != "":
			newFiles[b.newFile] = append(newFiles[b.newFile], b)
		case b.created && b.anchor != nil:
			if _, ok := anchored[b.anchor]; !ok {
				anchors = append(anchors, b.anchor)
			}
			anchored[b.anchor] = append(anchored[b.anchor], b)
		case b.created:
			tail = append(tail, b)
		case b.deleted:
			fe, err := c.fileEdit(b.Pos.File)
			if err != nil {
				return nil, err
			}
			fe.deleteBlob(b.span)
			touched[b.Pos.File] = true
		case b.dirty:
			if same(b.orig, b.value) {
				continue
			}
			fe, err := c.fileEdit(b.Pos.File)
			if err != nil {
				return nil, err
			}
			if err := fe.replaceBlob(b.span, b.orig, b.value); err != nil {
				return nil, err
			}
			touched[b.Pos.File] = true
		}
	}
	for _, a := range anchors {
		fe, err := c.fileEdit(a.Pos.File)
		if err != nil {
			return nil, err
		}
		if err := fe.insertAfter(a.span, values(anchored[a])); err != nil {
			return nil, err
		}
		touched[a.Pos.File] = true
	}
	if len(tail) > 0 {
		name := c.single
		if name == "" {
			return nil, fmt.Errorf("internal error: a new blob has no place")
		}
		fe, err := c.fileEdit(name)
		if err != nil {
			return nil, err
		}
		if err := fe.insertAfter(-1, values(tail)); err != nil {
			return nil, err
		}
		touched[name] = true
	}

	var out []FileChange
	for name := range touched {
		fe := c.files[name]
		data, regions, err := fe.result()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(data, fe.data) {
			continue
		}
		ch := FileChange{Name: name, Display: c.DisplayName(name), Action: ActionModified, Old: fe.data, New: data, regions: regions}
		if c.dir && len(c.FileBlobs(name)) == 0 && !hasAnchored(anchored, name) {
			ch.Action, ch.New, ch.regions = ActionDeleted, nil, nil
		}
		out = append(out, ch)
	}
	for name, bs := range newFiles {
		data, err := c.newFileContent(name, bs)
		if err != nil {
			return nil, err
		}
		out = append(out, FileChange{Name: name, Display: c.DisplayName(name), Action: ActionCreated, New: data})
	}
	sort.Slice(out, func(i, j int) bool { return walkLess(out[i].Name, out[j].Name) })
	return out, nil
}

func hasAnchored(anchored map[*Blob][]*Blob, file string) bool {
	for a := range anchored {
		if a.Pos.File == file {
			return true
		}
	}
	return false
}

func values(bs []*Blob) []*Object {
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].seq < bs[j].seq })
	out := make([]*Object, len(bs))
	for i, b := range bs {
		out[i] = b.value
	}
	return out
}

func same(a, b *Object) bool {
	x, err1 := canonical(a)
	y, err2 := canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// formatOfName returns the format a new file's extension asks for.
func formatOfName(name string) Format {
	if strings.EqualFold(path.Ext(name), ".json") {
		return FormatJSON
	}
	return FormatYAML
}

// newFileContent writes the blobs of a new file in the style of the file
// it was modelled on (or upstream's style).
func (c *Catalog) newFileContent(name string, bs []*Blob) ([]byte, error) {
	f := formatOfName(name)
	jst := jsonStyle{indent: "    ", kvSep: ":", itemSep: ",", newline: "\n"}
	yst := yamlStyle{indent: 2, newline: "\n"}
	sep := true
	for _, b := range bs {
		if b.styleFile == "" {
			continue
		}
		if fe, err := c.fileEdit(b.styleFile); err == nil && fe.layout.Format == f {
			nl := fe.layout.Newline
			if f == FormatJSON {
				jst = fe.jsonStyle()
			} else {
				yst = fe.yamlStyle()
				// a model file without separators gets none either
				sep = bytes.HasPrefix(fe.data, []byte("---"))
			}
			jst.newline, yst.newline = nl, nl
		}
		break
	}
	text, err := emitNewBlobs(values(bs), f, jst, yst, yst.nl(), sep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.DisplayName(name), err)
	}
	return text, nil
}

// ResultConfig loads the catalog as the changes leave it.
func (c *Catalog) ResultConfig(changes []FileChange) (*declcfg.DeclarativeConfig, error) {
	byName := map[string]FileChange{}
	for _, ch := range changes {
		byName[ch.Name] = ch
	}
	load := func(name string, data []byte) (*declcfg.DeclarativeConfig, error) {
		cfg, err := declcfg.LoadReader(bytes.NewReader(data), name)
		if err != nil {
			return nil, fmt.Errorf("internal error: the edited %s does not load: %w", c.DisplayName(name), withDisplayPath(err, c))
		}
		return cfg, nil
	}
	if c.Template {
		data := c.files[c.single].data
		if ch, ok := byName[c.single]; ok {
			data = ch.New
		}
		cfg, _, err := loadTemplate(data, c.single)
		if err != nil {
			return nil, fmt.Errorf("internal error: the edited template does not load: %w", err)
		}
		return cfg, nil
	}
	if !c.dir {
		if ch, ok := byName[c.single]; ok {
			return load(c.single, ch.New)
		}
		return c.Config, nil
	}
	perFile := map[string]*declcfg.DeclarativeConfig{}
	get := func(f string) *declcfg.DeclarativeConfig {
		if perFile[f] == nil {
			perFile[f] = &declcfg.DeclarativeConfig{}
		}
		return perFile[f]
	}
	cfg := c.Config
	for _, p := range cfg.Packages {
		get(p.Pos.File).Packages = append(get(p.Pos.File).Packages, p)
	}
	for _, ch := range cfg.Channels {
		get(ch.Pos.File).Channels = append(get(ch.Pos.File).Channels, ch)
	}
	for _, b := range cfg.Bundles {
		get(b.Pos.File).Bundles = append(get(b.Pos.File).Bundles, b)
	}
	for _, d := range cfg.Deprecations {
		get(d.Pos.File).Deprecations = append(get(d.Pos.File).Deprecations, d)
	}
	for _, m := range cfg.Others {
		get(m.Pos.File).Others = append(get(m.Pos.File).Others, m)
	}
	names := make([]string, 0, len(perFile)+len(changes))
	for n := range perFile {
		names = append(names, n)
	}
	for _, ch := range changes {
		if ch.Action == ActionCreated {
			names = append(names, ch.Name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return walkLess(names[i], names[j]) })
	out := &declcfg.DeclarativeConfig{}
	for _, n := range names {
		ch, ok := byName[n]
		switch {
		case !ok:
			out.Merge(perFile[n])
		case ch.Action == ActionDeleted:
		default:
			one, err := load(n, ch.New)
			if err != nil {
				return nil, err
			}
			out.Merge(one)
		}
	}
	return out, nil
}
