// Package catalogedit edits file-based catalogs in place: the FBC
// specification's three reasons the format is editable (promoting a bundle
// to a channel, changing a package's default channel, custom algorithms
// for adding, updating and removing upgrade edges), plus adding, removing
// and deprecating bundles.
//
// A Catalog is opened from an FBC directory, a single FBC file or a basic
// template (olm.template.basic). Operations change its blobs as values;
// Render turns the changes into new file contents, each edit confined to
// the bytes of the blob it changes (see Scan and the patcher), in the
// file's own format and style; Write replaces the files atomically, all of
// them or none. Channel reasoning goes through pkg/graph, and the result is
// checked with pkg/validate (templates: pkg/model over the template's
// packages, channels and deprecations) before anything is written.
package catalogedit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"

	"github.com/opmkit/opm/internal/safefs"
)

// Catalog is a catalog opened for editing.
type Catalog struct {
	// Path is the catalog as given: a directory or a file.
	Path string
	// Template is set for a basic template file.
	Template bool
	// Config is the catalog as loaded. For a template, its bundles are the
	// template's bundle stubs (image only).
	Config *declcfg.DeclarativeConfig

	root   *os.Root
	single string // for a file catalog: its name in root
	dir    bool

	blobs   []*Blob
	byFile  map[string][]*Blob // blobs of each file, in file order
	files   map[string]*fileEdit
	seq     int
	changes []Change
	kept    []KeptPath // see RemoveBundles
}

// Blob is one blob of the catalog and its editing state.
type Blob struct {
	Schema  string
	Package string
	Name    string
	// Pos is where the blob starts; File is relative to the catalog root
	// (for a file catalog, the file's name).
	Pos declcfg.Position

	pkg    *declcfg.Package
	ch     *declcfg.Channel
	bundle *declcfg.Bundle
	dep    *declcfg.Deprecation

	span    int     // index in its file's layout
	orig    *Object // the value as loaded (when edited)
	value   *Object // the value after edits (when edited or created)
	dirty   bool
	deleted bool
	created bool
	// where a created blob goes: after anchor, or in a new file
	anchor    *Blob
	newFile   string
	styleFile string // an existing file whose style a new file copies
	seq       int
}

// Deleted reports whether the blob has been removed.
func (b *Blob) Deleted() bool { return b.deleted }

// PackageBlob returns the typed olm.package blob.
func (b *Blob) PackageBlob() *declcfg.Package { return b.pkg }

// ChannelBlob returns the typed olm.channel blob.
func (b *Blob) ChannelBlob() *declcfg.Channel { return b.ch }

// BundleBlob returns the typed olm.bundle blob.
func (b *Blob) BundleBlob() *declcfg.Bundle { return b.bundle }

// DeprecationBlob returns the typed olm.deprecations blob.
func (b *Blob) DeprecationBlob() *declcfg.Deprecation { return b.dep }

// DisplayPos returns the blob's position with its file named as the user
// named the catalog.
func (c *Catalog) DisplayPos(b *Blob) string {
	if b.created {
		f := b.newFile
		if f == "" && b.anchor != nil {
			f = b.anchor.Pos.File
		}
		return c.DisplayName(f)
	}
	p := b.Pos
	p.File = c.DisplayName(p.File)
	return p.String()
}

// DisplayName returns a file's name relative to where the user is.
func (c *Catalog) DisplayName(file string) string {
	if !c.dir {
		return c.Path
	}
	return filepath.Join(c.Path, filepath.FromSlash(file))
}

// maxFileSize bounds the size of a file read for editing.
const maxFileSize = 1 << 30

// Open opens the catalog at p: an FBC directory, an FBC file or a basic
// template file. Close releases it.
func Open(ctx context.Context, p string) (*Catalog, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	c := &Catalog{Path: p, files: map[string]*fileEdit{}}
	if st.IsDir() {
		if err := declcfg.NotOCILayout(p); err != nil {
			return nil, err
		}
		c.dir = true
		c.root, err = os.OpenRoot(p)
		if err != nil {
			return nil, err
		}
		cfg, err := declcfg.LoadFS(ctx, c.root.FS(), declcfg.WithPathPrefix(""))
		if err != nil {
			c.Close()
			return nil, withDisplayPath(err, c)
		}
		c.Config = cfg
	} else {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file or a directory", p)
		}
		if lst, err := os.Lstat(p); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkedFileError(p)
		}
		c.root, err = os.OpenRoot(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		c.single = filepath.Base(p)
		data, err := c.readFile(c.single)
		if err != nil {
			c.Close()
			return nil, err
		}
		if IsTemplate(data) {
			c.Template = true
			cfg, fe, err := loadTemplate(data, c.single)
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			c.Config = cfg
			c.files[c.single] = fe
		} else {
			cfg, err := declcfg.LoadReader(bytes.NewReader(data), c.single)
			if err != nil {
				c.Close()
				return nil, withDisplayPath(err, c)
			}
			c.Config = cfg
		}
	}
	c.index()
	return c, nil
}

// withDisplayPath rewrites a load error's position to the displayed name.
func withDisplayPath(err error, c *Catalog) error {
	var le *declcfg.LoadError
	if errors.As(err, &le) && le.Pos.File != "" {
		cp := *le
		cp.Pos.File = c.DisplayName(le.Pos.File)
		return &cp
	}
	return err
}

// Close releases the catalog's directory.
func (c *Catalog) Close() error {
	if c.root == nil {
		return nil
	}
	err := c.root.Close()
	c.root = nil
	return err
}

func (c *Catalog) readFile(name string) ([]byte, error) {
	data, err := safefs.ReadRegular(c.root, name, maxFileSize)
	var pe *fs.PathError
	if err != nil && (errors.Is(err, safefs.ErrNotRegular) || errors.Is(err, safefs.ErrTooLarge)) && errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", c.DisplayName(name), pe.Err)
	}
	return data, err
}

// index builds the blob list from Config.
func (c *Catalog) index() {
	cfg := c.Config
	add := func(b *Blob) {
		c.blobs = append(c.blobs, b)
	}
	for i := range cfg.Packages {
		p := &cfg.Packages[i]
		add(&Blob{Schema: declcfg.SchemaPackage, Package: p.Name, Name: p.Name, Pos: p.Pos, pkg: p})
	}
	for i := range cfg.Channels {
		ch := &cfg.Channels[i]
		add(&Blob{Schema: declcfg.SchemaChannel, Package: ch.Package, Name: ch.Name, Pos: ch.Pos, ch: ch})
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		add(&Blob{Schema: declcfg.SchemaBundle, Package: b.Package, Name: b.Name, Pos: b.Pos, bundle: b})
	}
	for i := range cfg.Deprecations {
		d := &cfg.Deprecations[i]
		add(&Blob{Schema: declcfg.SchemaDeprecations, Package: d.Package, Pos: d.Pos, dep: d})
	}
	for i := range cfg.Others {
		m := &cfg.Others[i]
		add(&Blob{Schema: m.Schema, Package: m.Package, Name: m.Name, Pos: m.Pos})
	}
	sort.SliceStable(c.blobs, func(i, j int) bool {
		a, b := c.blobs[i].Pos, c.blobs[j].Pos
		if a.File != b.File {
			return walkLess(a.File, b.File)
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	c.byFile = map[string][]*Blob{}
	for _, b := range c.blobs {
		b.span = len(c.byFile[b.Pos.File])
		c.byFile[b.Pos.File] = append(c.byFile[b.Pos.File], b)
	}
}

// walkLess orders slash-separated paths as fs.WalkDir visits them.
func walkLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

// fileEdit returns the editing state of a file, reading and scanning it
// on first use and matching its blobs with the loader's.
func (c *Catalog) fileEdit(name string) (*fileEdit, error) {
	if fe, ok := c.files[name]; ok {
		return fe, nil
	}
	data, err := c.readFile(name)
	if err != nil {
		return nil, err
	}
	layout, err := Scan(data)
	if err != nil {
		return nil, fmt.Errorf("cannot edit %s in place: %w", c.DisplayName(name), err)
	}
	blobs := c.byFile[name]
	if len(layout.Blobs) != len(blobs) {
		return nil, fmt.Errorf("cannot edit %s in place: found %d blobs where the loader found %d", c.DisplayName(name), len(layout.Blobs), len(blobs))
	}
	for i, b := range blobs {
		s := layout.Blobs[i]
		if s.Line != b.Pos.Line || (layout.Format == FormatJSON && s.Column != b.Pos.Column) {
			return nil, fmt.Errorf("cannot edit %s in place: blob %d is at line %d, the loader says line %d", c.DisplayName(name), i+1, s.Line, b.Pos.Line)
		}
	}
	fe := &fileEdit{name: c.DisplayName(name), data: data, layout: layout}
	if layout.Format == FormatYAML && !hasSeqEvidence(data) {
		// nothing in this file shows how lists are indented: follow the
		// package's other files
		st := detectYAMLStyle(data, layout.Newline)
		if seqIndent, ok := c.packageSeqIndent(name); ok {
			st.seqIndent = seqIndent
		}
		fe.yst = &st
	}
	c.files[name] = fe
	return fe, nil
}

// packageSeqIndent returns how the other YAML files holding blobs of the
// packages of file indent lists, when one of them shows it.
func (c *Catalog) packageSeqIndent(file string) (bool, bool) {
	pkgs := map[string]bool{}
	for _, b := range c.byFile[file] {
		pkgs[b.Package] = true
	}
	tried := 0
	seen := map[string]bool{file: true}
	for _, b := range c.blobs {
		if b.created || seen[b.Pos.File] || !pkgs[b.Package] {
			continue
		}
		seen[b.Pos.File] = true
		if tried++; tried > 10 {
			break
		}
		if strings.EqualFold(path.Ext(b.Pos.File), ".json") {
			continue
		}
		data, err := c.readFile(b.Pos.File)
		if err != nil || looksLikeJSON(data) || !hasSeqEvidence(data) {
			continue
		}
		return detectYAMLStyle(data, newlineOf(data)).seqIndent, true
	}
	return false, false
}

// load reads the value of an existing blob from its file.
func (c *Catalog) load(b *Blob) error {
	if b.orig != nil || b.created {
		return nil
	}
	fe, err := c.fileEdit(b.Pos.File)
	if err != nil {
		return err
	}
	s := fe.layout.Blobs[b.span]
	text := fe.data[s.Start:s.End]
	var v any
	if fe.layout.Format == FormatJSON {
		n, _, err := parseJSON(fe.data, s.Start)
		if err != nil {
			return fmt.Errorf("%s: %w", c.DisplayPos(b), err)
		}
		v = n.value(fe.data)
	} else {
		v, err = valueFromYAML(text)
		if err != nil {
			return fmt.Errorf("%s: %w", c.DisplayPos(b), err)
		}
		if fe.layout.Template {
			if a, ok := v.([]any); ok && len(a) == 1 {
				v = a[0]
			}
		}
	}
	o, ok := v.(*Object)
	var want any = o
	if fe.layout.Template && fe.layout.Format == FormatYAML {
		want = []any{o}
	}
	if !ok || !sameValue(text, fe.layout.Format, want) {
		return fmt.Errorf("cannot edit %s in place: the blob does not read back the same", c.DisplayPos(b))
	}
	b.orig = o
	return nil
}

// Edit returns the value of b to change. Call Sync after changing it.
func (c *Catalog) Edit(b *Blob) (*Object, error) {
	if b.deleted {
		return nil, fmt.Errorf("%s: blob was removed", c.DisplayPos(b))
	}
	if b.value != nil {
		b.dirty = true
		return b.value, nil
	}
	if err := c.load(b); err != nil {
		return nil, err
	}
	b.value = clone(b.orig).(*Object)
	b.dirty = true
	return b.value, nil
}

// Sync re-reads the typed form of b from its value.
func (c *Catalog) Sync(b *Blob) error {
	var buf bytes.Buffer
	if err := writeJSON(&buf, b.value, jsonStyle{compact: true, kvSep: ":", itemSep: ","}, ""); err != nil {
		return err
	}
	cfg, err := declcfg.LoadReader(&buf, b.Pos.File)
	if err != nil {
		return fmt.Errorf("%s: %w", c.DisplayPos(b), err)
	}
	switch b.Schema {
	case declcfg.SchemaPackage:
		if len(cfg.Packages) == 1 {
			p := cfg.Packages[0]
			p.Pos = b.Pos
			b.pkg = &p
		}
	case declcfg.SchemaChannel:
		if len(cfg.Channels) == 1 {
			ch := cfg.Channels[0]
			ch.Pos = b.Pos
			b.ch = &ch
		}
	case declcfg.SchemaBundle:
		if len(cfg.Bundles) == 1 {
			bb := cfg.Bundles[0]
			bb.Pos = b.Pos
			b.bundle = &bb
		}
	case declcfg.SchemaDeprecations:
		if len(cfg.Deprecations) == 1 {
			d := cfg.Deprecations[0]
			d.Pos = b.Pos
			b.dep = &d
		}
	}
	return nil
}

// Place says where a new blob goes: after an existing (or new) blob, in a
// new file, or (neither) at the end of a file catalog's only file.
type Place struct {
	After   *Blob
	NewFile string
	// StyleFile is an existing file whose format and style a new file
	// copies.
	StyleFile string
}

// Create adds a new blob with value v at place.
func (c *Catalog) Create(v *Object, place Place) (*Blob, error) {
	c.seq++
	b := &Blob{
		Schema:    v.String("schema"),
		Package:   v.String("package"),
		Name:      v.String("name"),
		value:     v,
		created:   true,
		anchor:    place.After,
		newFile:   place.NewFile,
		styleFile: place.StyleFile,
		seq:       c.seq,
	}
	if b.Schema == declcfg.SchemaPackage {
		b.Package = b.Name
	}
	// After a new blob: where that one goes.
	for b.anchor != nil && b.anchor.created {
		if b.anchor.newFile != "" {
			b.newFile, b.styleFile = b.anchor.newFile, b.anchor.styleFile
			b.anchor = nil
			break
		}
		b.anchor = b.anchor.anchor
	}
	switch {
	case b.newFile != "":
		if !cleanFileName(b.newFile) {
			return nil, fmt.Errorf("cannot create file %q: not a plain path inside the catalog", b.newFile)
		}
		b.Pos = declcfg.Position{File: b.newFile}
	case b.anchor != nil:
		b.Pos = declcfg.Position{File: b.anchor.Pos.File}
	default:
		b.Pos = declcfg.Position{File: c.single}
	}
	if err := c.Sync(b); err != nil {
		return nil, err
	}
	c.blobs = append(c.blobs, b)
	return b, nil
}

// Delete removes b.
func (c *Catalog) Delete(b *Blob) { b.deleted = true }

// Blobs returns every blob that is not deleted, in file order (created
// blobs last).
func (c *Catalog) Blobs() []*Blob {
	out := make([]*Blob, 0, len(c.blobs))
	for _, b := range c.blobs {
		if !b.deleted {
			out = append(out, b)
		}
	}
	return out
}

// find returns the live blobs of schema in pkg (name "" = any).
func (c *Catalog) find(schema, pkg, name string) []*Blob {
	var out []*Blob
	for _, b := range c.blobs {
		if b.deleted || b.Schema != schema || b.Package != pkg {
			continue
		}
		if name != "" && b.Name != name {
			continue
		}
		out = append(out, b)
	}
	return out
}

// Package returns the olm.package blob of pkg, or nil.
func (c *Catalog) Package(pkg string) *Blob {
	if bs := c.find(declcfg.SchemaPackage, pkg, ""); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// Channels returns the channel blobs of pkg.
func (c *Catalog) Channels(pkg string) []*Blob { return c.find(declcfg.SchemaChannel, pkg, "") }

// Channel returns the channel blob called name of pkg, or nil.
func (c *Catalog) Channel(pkg, name string) *Blob {
	if bs := c.find(declcfg.SchemaChannel, pkg, name); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// Bundles returns the bundle blobs of pkg (none for a template: its
// bundle stubs belong to no package).
func (c *Catalog) Bundles(pkg string) []*Blob { return c.find(declcfg.SchemaBundle, pkg, "") }

// Bundle returns the bundle blob called name of pkg, or nil.
func (c *Catalog) Bundle(pkg, name string) *Blob {
	if bs := c.find(declcfg.SchemaBundle, pkg, name); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// Deprecation returns the olm.deprecations blob of pkg, or nil.
func (c *Catalog) Deprecation(pkg string) *Blob {
	if bs := c.find(declcfg.SchemaDeprecations, pkg, ""); len(bs) > 0 {
		return bs[0]
	}
	return nil
}

// Stubs returns a template's bundle stubs.
func (c *Catalog) Stubs() []*Blob {
	var out []*Blob
	for _, b := range c.blobs {
		if !b.deleted && b.Schema == declcfg.SchemaBundle && b.Package == "" {
			out = append(out, b)
		}
	}
	return out
}

// FileBlobs returns the live blobs of a file, in order.
func (c *Catalog) FileBlobs(file string) []*Blob {
	var out []*Blob
	for _, b := range c.byFile[file] {
		if !b.deleted {
			out = append(out, b)
		}
	}
	return out
}

// IsDir reports whether the catalog is a directory.
func (c *Catalog) IsDir() bool { return c.dir }

// exists reports whether a file exists in the catalog's directory or is
// about to be created.
func (c *Catalog) exists(name string) bool {
	for _, b := range c.blobs {
		if b.created && b.newFile == name {
			return true
		}
	}
	_, err := c.root.Lstat(name)
	return !errors.Is(err, fs.ErrNotExist)
}

// cleanFileName reports whether name is a safe new file name inside the
// catalog: local, without "..", not hidden.
func cleanFileName(name string) bool {
	if name == "" || !filepath.IsLocal(filepath.FromSlash(name)) || path.Clean(name) != name {
		return false
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || strings.HasPrefix(el, ".") {
			return false
		}
	}
	return true
}

// symlinkedFileError refuses a catalog file named through a symbolic link:
// edits rewrite the file they are given (a new file renamed over it),
// which would replace the link rather than change what it points to, and
// the target may lie outside the directory the catalog is confined to.
func symlinkedFileError(p string) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("%s is a symbolic link that cannot be followed (%v): name a catalog directory or a catalog file itself", p, err)
	}
	return fmt.Errorf("%s is a symbolic link to the file %s: catalog edits rewrite the file they are given and do not follow links; name the file itself (%s) or the catalog directory", p, target, target)
}
