// Package gencatalog writes synthetic file-based catalogs for benchmarks
// and tests: P packages of B bundles each, one directory per package, with
// realistic content (icons, Markdown descriptions, channels chained by
// replaces with skips and skipRanges, deprecations, dependencies, and
// olm.bundle.object properties holding base64 CSV and CRD manifests).
//
// The output is a pure function of the options: the same seed gives the
// same bytes. Each package file is written exactly as upstream
// `opm render -o json` (or `-o yaml`) would write that package, so
// rendering the whole catalog reproduces the files concatenated in package
// order. The catalog is valid for upstream `opm validate`: one head per
// channel, no stranded bundles, strict semver versions, DNS-1123 names.
package gencatalog

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/yaml"
)

// Format is the encoding of the generated files.
type Format int

// Formats.
const (
	FormatJSON Format = iota
	FormatYAML
)

// ParseFormat parses "json" or "yaml".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "json":
		return FormatJSON, nil
	case "yaml":
		return FormatYAML, nil
	}
	return 0, fmt.Errorf("invalid format %q: must be json or yaml", s)
}

// Ext returns the file extension of f, without the dot.
func (f Format) Ext() string {
	if f == FormatYAML {
		return "yaml"
	}
	return "json"
}

// Options describe the catalog to generate.
type Options struct {
	Packages int    // number of packages, at least 1
	Bundles  int    // bundles per package, at least 1
	Seed     uint64 // the same seed gives the same catalog
	Format   Format
	// Force allows writing into a directory that is not empty. Files of the
	// same names are replaced; other files are left alone.
	Force bool
}

// Stats summarise a generated catalog.
type Stats struct {
	Packages int
	Bundles  int
	Bytes    int64
}

// ErrNotEmpty is returned when the output directory already holds files
// and Options.Force is not set.
var ErrNotEmpty = errors.New("directory is not empty")

// Generator produces the packages of one catalog.
type Generator struct {
	opts  Options
	width int // digits in package names
}

// New checks opts and returns a Generator.
func New(opts Options) (*Generator, error) {
	if opts.Packages < 1 {
		return nil, fmt.Errorf("invalid number of packages %d: must be at least 1", opts.Packages)
	}
	if opts.Bundles < 1 {
		return nil, fmt.Errorf("invalid number of bundles %d: must be at least 1", opts.Bundles)
	}
	if opts.Format != FormatJSON && opts.Format != FormatYAML {
		return nil, fmt.Errorf("invalid format %d", opts.Format)
	}
	return &Generator{opts: opts, width: max(3, len(strconv.Itoa(opts.Packages)))}, nil
}

// Generate writes the catalog described by opts under dir.
func Generate(ctx context.Context, dir string, opts Options) (Stats, error) {
	g, err := New(opts)
	if err != nil {
		return Stats{}, err
	}
	return g.Generate(ctx, dir)
}

// PackageNames returns the names of the packages in byte (and numeric) order.
func (g *Generator) PackageNames() []string {
	names := make([]string, g.opts.Packages)
	for i := range names {
		names[i] = g.packageName(i + 1)
	}
	return names
}

// Generate writes one file per package, DIR/<package>/catalog.<ext>, each
// written atomically, using every CPU.
func (g *Generator) Generate(ctx context.Context, dir string) (Stats, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Stats{}, fmt.Errorf("reading output directory: %w", err)
	case len(ents) > 0 && !g.opts.Force:
		return Stats{}, fmt.Errorf("output directory %s: %w", dir, ErrNotEmpty)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return Stats{}, fmt.Errorf("creating output directory: %w", err)
	}
	var total atomic.Int64
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i := 1; i <= g.opts.Packages; i++ {
		eg.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := g.WritePackage(&buf, i); err != nil {
				return err
			}
			total.Add(int64(buf.Len()))
			pdir := filepath.Join(dir, g.packageName(i))
			if err := os.MkdirAll(pdir, 0o777); err != nil {
				return fmt.Errorf("creating package directory: %w", err)
			}
			return writeFileAtomic(filepath.Join(pdir, "catalog."+g.opts.Format.Ext()), buf.Bytes())
		})
	}
	if err := eg.Wait(); err != nil {
		return Stats{}, err
	}
	return Stats{Packages: g.opts.Packages, Bundles: g.opts.Packages * g.opts.Bundles, Bytes: total.Load()}, nil
}

func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// Blob types, with fields in upstream's output order.
type (
	icon struct {
		Data      []byte `json:"base64data"`
		MediaType string `json:"mediatype"`
	}
	packageBlob struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
		Icon           *icon  `json:"icon,omitempty"`
		Description    string `json:"description,omitempty"`
	}
	channelBlob struct {
		Schema  string  `json:"schema"`
		Name    string  `json:"name"`
		Package string  `json:"package"`
		Entries []entry `json:"entries"`
	}
	prop struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	relatedImage struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	bundleBlob struct {
		Schema        string         `json:"schema"`
		Name          string         `json:"name"`
		Package       string         `json:"package"`
		Image         string         `json:"image"`
		Properties    []prop         `json:"properties"`
		RelatedImages []relatedImage `json:"relatedImages"`
	}
	pkgRef struct {
		Schema string `json:"schema"`
		Name   string `json:"name,omitempty"`
	}
	deprecationEntry struct {
		Reference pkgRef `json:"reference"`
		Message   string `json:"message"`
	}
	deprecationBlob struct {
		Schema  string             `json:"schema"`
		Package string             `json:"package"`
		Entries []deprecationEntry `json:"entries"`
	}
)

// value encodes a property value compactly without HTML escaping, as
// upstream builds them.
func value(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain structs and strings
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

type gvk struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// WritePackage writes package i (1-based) as one file in the configured
// format: the olm.package blob, its channels and bundles sorted by name,
// then its olm.deprecations blob, if any.
func (g *Generator) WritePackage(w io.Writer, i int) error {
	if i < 1 || i > g.opts.Packages {
		return fmt.Errorf("package index %d out of range [1, %d]", i, g.opts.Packages)
	}
	blobs := g.packageBlobs(i)
	if g.opts.Format == FormatYAML {
		for _, b := range blobs {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(b); err != nil {
				return fmt.Errorf("encoding package %d: %w", i, err)
			}
			y, err := yaml.JSONToYAML(buf.Bytes())
			if err != nil {
				return fmt.Errorf("encoding package %d: %w", i, err)
			}
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
			if _, err := w.Write(y); err != nil {
				return err
			}
		}
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	for _, b := range blobs {
		if err := enc.Encode(b); err != nil {
			return fmt.Errorf("encoding package %d: %w", i, err)
		}
	}
	return nil
}

func (g *Generator) packageBlobs(i int) []any {
	p := g.plan(i)
	r := g.contentRand(i)
	c := g.content(r, p)

	blobs := []any{packageBlob{
		Schema: "olm.package", Name: p.name, DefaultChannel: p.defaultChannel,
		Icon: &icon{Data: c.icon, MediaType: c.iconType}, Description: c.description,
	}}
	var chainEntries []entry // entries of the first channel, which holds every bundle
	for n, ch := range p.channels {
		es := p.entries(r, ch)
		if n == 0 {
			chainEntries = es
		}
		blobs = append(blobs, channelBlob{Schema: "olm.channel", Name: ch.name, Package: p.name, Entries: es})
	}

	// Package-wide properties.
	var extra []prop
	if r.IntN(5) == 0 {
		extra = append(extra, prop{"olm.maxOpenShiftVersion", value(fmt.Sprintf("4.%d", 14+r.IntN(5)))})
	}
	var depsFrom int // bundles from this index on carry the dependencies
	var deps []prop
	if g.opts.Packages > 1 {
		other := func() *plan {
			j := 1 + (i+r.IntN(g.opts.Packages-1))%g.opts.Packages
			return g.plan(j)
		}
		if r.IntN(100) < 25 {
			q := other()
			deps = append(deps, prop{"olm.gvk.required", value(gvk{q.group, q.crds[0].kind, q.crds[0].versions[0]})})
		}
		if r.IntN(100) < 15 {
			q := other()
			rng := ">=" + q.versions[0]
			if r.IntN(2) == 0 {
				rng = fmt.Sprintf(">=%s <%d.0.0", q.versions[0], semverMajor(q.versions[len(q.versions)-1])+1)
			}
			deps = append(deps, prop{"olm.package.required", value(struct {
				PackageName  string `json:"packageName"`
				VersionRange string `json:"versionRange"`
			}{q.name, rng})})
		}
		depsFrom = len(p.versions) / 2
	}
	var gvks []prop
	for _, crd := range p.crds {
		for _, v := range crd.versions {
			gvks = append(gvks, prop{"olm.gvk", value(gvk{p.group, crd.kind, v})})
		}
	}
	var crdObjects []string
	for _, b := range c.crdJSON {
		crdObjects = append(crdObjects, base64.StdEncoding.EncodeToString(b))
	}

	bundles := make([]bundleBlob, len(p.versions))
	for k := range p.versions {
		image := "quay.io/gen/" + p.name + "-bundle@" + digest(r)
		operator := "quay.io/gen/" + p.name + "-operator@" + digest(r)
		operand := "quay.io/gen/" + p.name + "-operand@" + digest(r)
		csv := mustMarshal(c.csvObject(r, k, chainEntries[k], operator, operand))

		props := slices.Clone(gvks)
		props = append(props, extra...)
		if k >= depsFrom {
			props = append(props, deps...)
		}
		props = append(props, prop{"olm.package", value(struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
		}{p.name, p.versions[k]})})
		var objs []prop
		for _, o := range append(slices.Clone(crdObjects), base64.StdEncoding.EncodeToString(csv)) {
			objs = append(objs, prop{"olm.bundle.object", value(struct {
				Data string `json:"data"`
			}{o})})
		}
		// Upstream's order: by type then value, bundle objects last.
		sortProps(props)
		sortProps(objs)
		props = append(props, objs...)

		rel := []relatedImage{{"manager", operator}, {"operand", operand}, {"", image}}
		slices.SortStableFunc(rel, func(a, b relatedImage) int { return strings.Compare(a.Image, b.Image) })
		bundles[k] = bundleBlob{
			Schema: "olm.bundle", Name: p.bundleName(k), Package: p.name, Image: image,
			Properties: props, RelatedImages: rel,
		}
	}
	slices.SortFunc(bundles, func(a, b bundleBlob) int { return strings.Compare(a.Name, b.Name) })
	for _, b := range bundles {
		blobs = append(blobs, b)
	}

	if p.deprecated {
		d := deprecationBlob{Schema: "olm.deprecations", Package: p.name}
		if r.IntN(5) == 0 {
			d.Entries = append(d.Entries, deprecationEntry{pkgRef{Schema: "olm.package"},
				p.name + " is deprecated and will be removed from the catalog; migrate to a supported operator."})
		}
		if p.channels[0].name == "candidate" {
			d.Entries = append(d.Entries, deprecationEntry{pkgRef{"olm.channel", "candidate"},
				"The candidate channel is no longer updated. Use the fast or stable channel."})
		}
		if len(p.versions) > 1 || len(d.Entries) == 0 {
			d.Entries = append(d.Entries, deprecationEntry{pkgRef{"olm.bundle", p.bundleName(0)},
				p.bundleName(0) + " has known security issues; upgrade to " + p.bundleName(len(p.versions)-1) + "."})
		}
		blobs = append(blobs, d)
	}
	return blobs
}

func sortProps(ps []prop) {
	slices.SortStableFunc(ps, func(a, b prop) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return bytes.Compare(a.Value, b.Value)
	})
}

func semverMajor(v string) int {
	n, _ := strconv.Atoi(v[:strings.IndexByte(v, '.')])
	return n
}
