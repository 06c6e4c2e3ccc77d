package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/property"
)

// Building an index.
//
// Files are parsed in parallel, one at a time per worker. As soon as a file
// is parsed, its bundles' manifests are decoded and written to the data
// file and replaced by a tiny placeholder, and its custom-schema blobs are
// written there too, so what stays in memory until the whole catalog is
// validated is the catalog without its manifests: names, channels,
// properties. The model conversion and validation of `opm validate` then
// run on that (as upstream serve does, a catalog it refuses is refused
// here), and the index is derived from the model. Peak memory is therefore
// about one file per worker plus the catalog's metadata, not the catalog.

// BuildOptions configure Build.
type BuildOptions struct {
	// Name prefixes file names in errors (e.g. the catalog directory).
	Name string
	// Data receives the data file's bytes; the index reads them back from
	// DataReader once Build returns. Both are required.
	Data       io.Writer
	DataReader io.ReaderAt
	// HTTP also builds the catalogd HTTP API's data (every blob as a JSON
	// line, and its index) into the data file.
	HTTP bool
	// Concurrency is the number of files parsed at once (default: the
	// number of CPUs).
	Concurrency int
	// HashOnly keeps no data file: each section is hashed (SHA-256) as it
	// is made, and Data and DataReader are not used. Such an index can
	// answer nothing that reads the data file; it is what Compare compares
	// a cache with, without writing anything.
	HashOnly bool
}

// customNameRE is what upstream requires of custom-schema names and
// packages (serve refuses to start otherwise; validate does not care).
var customNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

// CustomNamePattern is customNameRE's text, for error messages.
const CustomNamePattern = `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`

// placeholderObject replaces olm.bundle.object values once their manifest
// is in the data file: it parses as an empty BundleObject.
var placeholderObject = []byte(`{"data":""}`)

// placeholderMetadata replaces olm.csv.metadata values once they are in
// the data file.
var placeholderMetadata = []byte(`{}`)

func isObjectOrNull(v []byte) bool {
	return (len(v) > 0 && v[0] == '{') || string(v) == "null"
}

// dataFile appends sections to the data file, or only hashes them (sums
// not nil: HashOnly).
type dataFile struct {
	mu   sync.Mutex
	w    *bufio.Writer
	off  int64
	err  error
	sums map[int64][sha256.Size]byte
}

func newDataFile(w io.Writer) *dataFile {
	return &dataFile{w: bufio.NewWriterSize(w, 256<<10)}
}

func (d *dataFile) write(b []byte) (span, error) {
	var sum [sha256.Size]byte
	if d.sums != nil {
		sum = sha256.Sum256(b)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return span{}, d.err
	}
	s := span{Off: d.off, Len: int64(len(b))}
	if d.sums != nil {
		d.sums[s.Off] = sum
		d.off += s.Len
		return s, nil
	}
	if _, err := d.w.Write(b); err != nil {
		d.err = fmt.Errorf("writing the data file: %w", err)
		return span{}, d.err
	}
	d.off += int64(len(b))
	return s, nil
}

func (d *dataFile) flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil || d.sums != nil {
		return d.err
	}
	if err := d.w.Flush(); err != nil {
		d.err = fmt.Errorf("writing the data file: %w", err)
	}
	return d.err
}

// bundleExtra is what the parse phase keeps of a bundle's manifests and
// CSV metadata.
type bundleExtra struct {
	objects span
	meta    span // the olm.csv.metadata value, when the bundle has exactly one
}

// fileResult is one parsed file, stripped of its manifests.
type fileResult struct {
	cfg    *declcfg.DeclarativeConfig
	extras []bundleExtra // aligned with cfg.Bundles
	custom []customBlob

	// With HTTP data: the file's JSON lines are the section linesAt, and
	// lines locate each blob's line within it.
	linesAt span
	lines   []lineEntry
}

type lineEntry struct {
	schema, pkg, name string
	at                span // relative to the file's section
}

type customBlob struct {
	key customKey
	at  span
}

// Build reads the catalog in fsys and returns its index. It refuses
// catalogs upstream `opm serve` refuses: any load, conversion or
// validation error of `opm validate`, and custom-schema blobs whose schema
// or package upstream rejects.
func Build(ctx context.Context, fsys fs.FS, opts BuildOptions) (*Index, error) {
	if (opts.Data == nil || opts.DataReader == nil) && !opts.HashOnly {
		return nil, errors.New("build: no data file")
	}
	files, err := declcfg.ListFiles(ctx, fsys)
	if err != nil {
		return nil, NameErr(opts.Name, err)
	}
	data := newDataFile(opts.Data)
	if opts.HashOnly {
		data.sums = map[int64][sha256.Size]byte{}
	}
	results, err := parseFiles(ctx, fsys, files, data, opts)
	if err != nil {
		return nil, err
	}

	// Merge in file order; the extras follow their bundles.
	var cfg declcfg.DeclarativeConfig
	type bkey struct{ pkg, name string }
	extras := map[bkey]bundleExtra{}
	x := &Index{custom: map[customKey][]span{}}
	if opts.HTTP {
		x.http = newHTTPIndex(results)
	}
	for _, r := range results {
		for i, b := range r.cfg.Bundles {
			extras[bkey{b.Package, b.Name}] = r.extras[i]
		}
		cfg.Merge(r.cfg)
		for _, c := range r.custom {
			x.custom[c.key] = append(x.custom[c.key], c.at)
		}
	}
	results = nil

	m, err := model.ConvertToModel(cfg)
	if err != nil {
		return nil, modelErr(opts.Name, err)
	}
	cfg = declcfg.DeclarativeConfig{}

	bundleIdx := map[bkey]int32{}
	for _, pname := range slices.Sorted(maps.Keys(m)) {
		mp := m[pname]
		pi := int32(len(x.packages))
		p := Package{Name: mp.Name, Description: mp.Description}
		if mp.Icon != nil {
			p.Icon = &Icon{Data: mp.Icon.Data, MediaType: mp.Icon.MediaType}
		}
		if mp.DefaultChannel != nil {
			p.DefaultChannel = mp.DefaultChannel.Name
		}
		p.Deprecation = deprecation(mp.Deprecation)
		for ci, cname := range slices.Sorted(maps.Keys(mp.Channels)) {
			mc := mp.Channels[cname]
			ch := Channel{Name: mc.Name, Deprecation: deprecation(mc.Deprecation), Head: -1}
			head, err := mc.Graph().Head()
			if err != nil {
				return nil, fmt.Errorf("package %q, channel %q: %w", mp.Name, mc.Name, err)
			}
			for _, bname := range slices.Sorted(maps.Keys(mc.Bundles)) {
				mb := mc.Bundles[bname]
				k := bkey{mp.Name, mb.Name}
				bi, ok := bundleIdx[k]
				if !ok {
					b, err := newBundle(mb, extras[k])
					if err != nil {
						return nil, err
					}
					bi = int32(len(x.bundles))
					x.bundles = append(x.bundles, b)
					bundleIdx[k] = bi
				}
				r := int32(len(x.records))
				x.records = append(x.records, Record{
					Package: pi, Channel: int32(ci), Bundle: bi,
					Replaces: mb.Replaces, Skips: mb.Skips, SkipRange: mb.SkipRange,
				})
				ch.Records = append(ch.Records, r)
				if mb.Name == head {
					ch.Head = r
				}
			}
			p.Channels = append(p.Channels, ch)
		}
		x.packages = append(x.packages, p)
	}

	// Records in ListBundles order; channels point at the new indices.
	order := sortRecords(x.records, x.packages, x.bundles)
	newIdx := make([]int32, len(order))
	sorted := make([]Record, len(order))
	for n, old := range order {
		newIdx[old] = int32(n)
		sorted[n] = x.records[old]
	}
	x.records = sorted
	for pi := range x.packages {
		for ci := range x.packages[pi].Channels {
			ch := &x.packages[pi].Channels[ci]
			for i, r := range ch.Records {
				ch.Records[i] = newIdx[r]
			}
			if ch.Head >= 0 {
				ch.Head = newIdx[ch.Head]
			}
		}
	}

	if err := data.flush(); err != nil {
		return nil, err
	}
	x.data = opts.DataReader
	if opts.HashOnly {
		x.data, x.sums = nil, data.sums
	}
	x.finish()
	return x, nil
}

func deprecation(d *model.Deprecation) Deprecation {
	if d == nil {
		return Deprecation{}
	}
	return Deprecation{Set: true, Message: d.Message}
}

// parseFiles parses every file with the loader's reader (declcfg.WalkFS:
// the same checks, limits, parallelism and cancellation as render and
// validate). Results come back in file order; on failure, the error is the
// one of the first bad file.
func parseFiles(ctx context.Context, fsys fs.FS, files []string, data *dataFile, opts BuildOptions) ([]fileResult, error) {
	results := make([]fileResult, len(files))
	lines := make([][]byte, len(files)) // with HTTP: each file's JSON lines, until written
	visit := func(i int, blob declcfg.Blob) error {
		r := &results[i]
		if r.cfg == nil {
			r.cfg = &declcfg.DeclarativeConfig{}
		}
		if opts.HTTP {
			start := len(lines[i])
			lines[i] = append(append(lines[i], blob.Meta.Blob...), '\n')
			r.lines = append(r.lines, lineEntry{schema: blob.Meta.Schema, pkg: blob.Meta.Package, name: blob.Meta.Name,
				at: span{Off: int64(start), Len: int64(len(lines[i]) - start)}})
		}
		return parseBlob(r, blob, data, opts.Name)
	}
	end := func(i int) error {
		if results[i].cfg == nil {
			results[i].cfg = &declcfg.DeclarativeConfig{}
		}
		if len(lines[i]) > 0 {
			s, err := data.write(lines[i])
			if err != nil {
				return err
			}
			results[i].linesAt = s
			lines[i] = nil
		}
		return nil
	}
	var lopts []declcfg.LoadOption
	if opts.Concurrency > 0 {
		lopts = append(lopts, declcfg.WithConcurrency(opts.Concurrency))
	}
	if err := declcfg.WalkFS(ctx, fsys, files, visit, end, lopts...); err != nil {
		return nil, NameErr(opts.Name, err)
	}
	return results, nil
}

// objPool holds the buffers bundles' manifests are gathered in.
var objPool = sync.Pool{New: func() any { return new([]byte) }}

// parseBlob adds one blob to r, moving its manifests, CSV metadata and
// custom blobs to the data file.
func parseBlob(r *fileResult, blob declcfg.Blob, data *dataFile, name string) error {
	switch {
	case blob.Package != nil:
		r.cfg.Packages = append(r.cfg.Packages, *blob.Package)
	case blob.Channel != nil:
		r.cfg.Channels = append(r.cfg.Channels, *blob.Channel)
	case blob.Deprecation != nil:
		r.cfg.Deprecations = append(r.cfg.Deprecations, *blob.Deprecation)
	case blob.Bundle != nil:
		buf := objPool.Get().(*[]byte)
		extra, err := stripBundle(blob.Bundle, data, name, buf)
		objPool.Put(buf)
		if err != nil {
			return err
		}
		r.cfg.Bundles = append(r.cfg.Bundles, *blob.Bundle)
		r.extras = append(r.extras, extra)
	default:
		m := blob.Meta
		if !customNameRE.MatchString(m.Schema) {
			return fmt.Errorf("%s: invalid custom schema meta: invalid schema %q: must match %s", posName(name, m.Pos), m.Schema, CustomNamePattern)
		}
		if m.Package != "" && !customNameRE.MatchString(m.Package) {
			return fmt.Errorf("%s: invalid custom schema meta: invalid package %q: must match %s", posName(name, m.Pos), m.Package, CustomNamePattern)
		}
		s, err := data.write(m.Blob)
		if err != nil {
			return err
		}
		r.custom = append(r.custom, customBlob{key: customKey{m.Schema, m.Package}, at: s})
	}
	return nil
}

// stripBundle moves a bundle's manifests and CSV metadata to the data file,
// leaving placeholders the model conversion accepts, and copies the small
// property values it keeps (the loader aliases them into the blob, which
// the collector can then free).
func stripBundle(b *declcfg.Bundle, data *dataFile, name string, buf *[]byte) (bundleExtra, error) {
	var extra bundleExtra
	nmeta := 0
	for _, prop := range b.Properties {
		if prop.Type == property.TypeCSVMetadata {
			nmeta++
		}
	}
	objs := (*buf)[:0]
	props := make([]property.Property, len(b.Properties))
	for j, prop := range b.Properties {
		props[j].Type = prop.Type
		switch prop.Type {
		case property.TypeCSVMetadata:
			// The loader normalised the value, so it is valid JSON; the
			// model conversion only asks for an object (or null). The stub
			// CSV is made from it on demand.
			if !isObjectOrNull(prop.Value) {
				break
			}
			if nmeta == 1 {
				s, err := data.write(prop.Value)
				if err != nil {
					return extra, err
				}
				extra.meta = s
			}
			props[j].Value = placeholderMetadata
			continue
		case property.TypeBundleObject:
			var ok bool
			var err error
			objs, ok, err = appendBundleObject(objs, prop.Value)
			if err != nil {
				return extra, fmt.Errorf("%s: package %q, bundle %q: property[%d] (%s): %w", posName(name, b.Pos), b.Package, b.Name, j, property.TypeBundleObject, err)
			}
			if !ok {
				break // left as it is: the model conversion reports it
			}
			props[j].Value = placeholderObject
			continue
		}
		props[j].Value = bytes.Clone(prop.Value)
	}
	b.Properties = props
	*buf = objs[:0]
	if len(objs) > 0 {
		s, err := data.write(objs)
		if err != nil {
			return extra, err
		}
		extra.objects = s
	}
	return extra, nil
}

// newBundle builds the index's bundle from the model's.
func newBundle(mb *model.Bundle, extra bundleExtra) (Bundle, error) {
	b := Bundle{
		Name:        mb.Name,
		Package:     mb.Package.Name,
		Image:       mb.Image,
		Deprecation: deprecation(mb.Deprecation),
		Objects:     extra.objects,
	}
	props := mb.PropertiesP
	if props != nil && len(props.Packages) > 0 {
		b.Version = props.Packages[0].Version
	}
	for _, p := range mb.Properties {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			continue
		}
		b.Properties = append(b.Properties, KV{Type: p.Type, Value: string(p.Value)})
	}
	if props != nil {
		for _, g := range props.GVKs {
			b.Provided = append(b.Provided, GVK{Group: g.Group, Version: g.Version, Kind: g.Kind})
		}
		for _, g := range props.GVKsRequired {
			b.Required = append(b.Required, GVK{Group: g.Group, Version: g.Version, Kind: g.Kind})
		}
	}
	deps, err := dependencies(mb.Properties)
	if err != nil {
		return Bundle{}, fmt.Errorf("package %q, bundle %q: %w", b.Package, b.Name, err)
	}
	b.Deps = deps

	if extra.meta.Len > 0 {
		b.Meta = extra.meta
		b.SemVer = mb.Version.String()
		for _, ri := range mb.RelatedImages {
			b.RelatedImages = append(b.RelatedImages, RelatedImage{Name: ri.Name, Image: ri.Image})
		}
	}
	return b, nil
}

// dependencies lists the bundle's dependencies in property order:
// olm.gvk.required as type olm.gvk, olm.package.required as type
// olm.package with {packageName, version: the range}.
func dependencies(props []property.Property) ([]KV, error) {
	var deps []KV
	for _, p := range props {
		switch p.Type {
		case property.TypeGVKRequired:
			parsed, err := property.Parse([]property.Property{p})
			if err != nil {
				return nil, err
			}
			g := parsed.GVKsRequired[0]
			v, err := property.MarshalNoEscape(property.GVK(g))
			if err != nil {
				return nil, err
			}
			deps = append(deps, KV{Type: property.TypeGVK, Value: string(v)})
		case property.TypePackageRequired:
			parsed, err := property.Parse([]property.Property{p})
			if err != nil {
				return nil, err
			}
			pr := parsed.PackagesRequired[0]
			v, err := property.MarshalNoEscape(struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}{pr.PackageName, pr.VersionRange})
			if err != nil {
				return nil, err
			}
			deps = append(deps, KV{Type: property.TypePackage, Value: string(v)})
		}
	}
	return deps, nil
}

// posName names a blob's position with the catalog name in front.
func posName(name string, pos declcfg.Position) string {
	if name != "" && pos.File != "" {
		pos.File = path.Join(name, pos.File)
	}
	return pos.String()
}

// NameErr puts the catalog name in front of the file of a load error
// (a *declcfg.LoadError in err), once.
func NameErr(name string, err error) error {
	var le *declcfg.LoadError
	if name != "" && errors.As(err, &le) && le.Pos.File != "" && !strings.HasPrefix(le.Pos.File, name+"/") {
		le.Pos.File = path.Join(name, le.Pos.File)
	}
	return err
}

// InvalidCatalogError is a catalog serve refuses: the model conversion or
// validation failed.
type InvalidCatalogError struct {
	// Package is the package the (first) problem is about, if known.
	Package string
	Err     error
	name    string
}

func (e *InvalidCatalogError) Error() string {
	var re *model.RuleError
	if errors.As(e.Err, &re) {
		msg := re.Message
		if re.Pos.IsValid() {
			msg += " (" + posName(e.name, re.Pos) + ")"
		}
		if e.Package != "" {
			return fmt.Sprintf("build package index: process package %q: %s", e.Package, msg)
		}
		return "build package index: " + msg
	}
	var ve *model.ValidationError
	if errors.As(e.Err, &ve) {
		return "build package index: " + ve.Format(func(err error) string {
			var re *model.RuleError
			if errors.As(err, &re) && re.Pos.IsValid() {
				return re.Message + " (" + posName(e.name, re.Pos) + ")"
			}
			return err.Error()
		})
	}
	return "build package index: " + e.Err.Error()
}

func (e *InvalidCatalogError) Unwrap() error { return e.Err }

func modelErr(name string, err error) error {
	ie := &InvalidCatalogError{Err: err, name: name}
	if issues := model.Issues(err); len(issues) > 0 {
		pkgs := map[string]bool{}
		for _, is := range issues {
			pkgs[is.Package] = true
		}
		if len(pkgs) == 1 {
			ie.Package = issues[0].Package
		}
	}
	return ie
}
