// Package render turns references (FBC directories, bundle directories,
// catalog and bundle images) into FBC blobs, as `opm render` does.
package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/template"

	"golang.org/x/sync/errgroup"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/sqlite"
)

// RefType is a kind of reference; masks restrict what a caller accepts.
type RefType uint

const (
	RefDCImage RefType = 1 << iota
	RefDCDir
	RefBundleImage
	RefBundleDir
	// RefSqliteImage is an index image holding an sqlite database (label
	// operators.operatorframework.io.index.database.v1).
	RefSqliteImage
	// RefSqliteFile is an sqlite index database file.
	RefSqliteFile
	// RefDCFile is one file-based catalog file, read as the directory
	// holding only it would be (beyond upstream, which refuses files:
	// commands that keep upstream's refusal, as alpha list, leave it out).
	RefDCFile

	// RefAll accepts every kind (the zero mask means the same).
	RefAll = RefDCImage | RefDCDir | RefBundleImage | RefBundleDir | RefSqliteImage | RefSqliteFile | RefDCFile
)

// ErrNotAllowed is wrapped by errors for references a mask rejects.
var ErrNotAllowed = errors.New("not allowed")

// Options configure a render.
type Options struct {
	// Refs are rendered in order and their blobs concatenated.
	Refs []string
	// AllowedRefMask restricts accepted reference kinds (0 = all).
	AllowedRefMask RefType
	// ImageRefTemplate, when set, computes the image of bundle directories
	// from {{.Package}}, {{.Name}} and {{.Version}}.
	ImageRefTemplate *template.Template
	// MigrationLevel names the last migration to apply ("" = none).
	MigrationLevel string
	// WithChannels derives olm.package and olm.channel blobs for rendered
	// bundles (beyond upstream).
	WithChannels bool
	// Registry configures image pulls.
	Registry RegistryOptions
	// SQLite bounds the reading of sqlite databases (zero fields: the
	// defaults).
	SQLite sqlite.Limits
	// Warn receives what the render goes past (an sqlite database's icon
	// that does not decode, as upstream logs it); nil drops them.
	Warn func(string)
}

// RegistryOptions configure registry access for image references.
type RegistryOptions struct {
	SkipTLSVerify bool
	UseHTTP       bool
	CAFile        string
	CacheDir      string
	Platform      string
	// Progress receives one line per downloaded blob (nil = silent); pass
	// stderr only when it is a terminal.
	Progress io.Writer
	// Limits bound what reading an image may cost (zero fields: the
	// defaults).
	Limits image.Limits
}

// Render renders every reference and returns their concatenated blobs.
func Render(ctx context.Context, opts Options) (*declcfg.DeclarativeConfig, error) {
	return render(ctx, opts, true)
}

// prefetched holds the references rendered concurrently ahead of Render's
// in-order loop.
type prefetched struct {
	bundles *renderedAhead
	images  *imageCache
}

// renderedAhead holds references rendered ahead of the in-order loop, each
// handed out once. A nil *renderedAhead holds nothing.
type renderedAhead struct {
	mu sync.Mutex
	m  map[string]renderResult
}

type renderResult struct {
	rendered
	err error
}

// rendered is what one reference renders to. hint is set for a bundle
// directory or image rendered WithChannels: the channel data of
// cfg.Bundles[0], which deriveChannels consumes. It never leaves the
// package.
type rendered struct {
	cfg  *declcfg.DeclarativeConfig
	hint *channelHint
}

// take returns and forgets the result for ref.
func (c *renderedAhead) take(ref string) (renderResult, bool) {
	if c == nil {
		return renderResult{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[ref]
	delete(c.m, ref)
	return r, ok
}

// renderAhead renders refs with fn, at most limit at a time, and keeps
// every result (errors included: the in-order loop decides which one is
// reported, so one failure does not stop the others).
func renderAhead(ctx context.Context, refs []string, limit int, fn func(context.Context, string) (rendered, error)) *renderedAhead {
	results := make([]renderResult, len(refs))
	var g errgroup.Group
	g.SetLimit(limit)
	for i, ref := range refs {
		g.Go(func() error {
			r, err := fn(ctx, ref)
			results[i] = renderResult{rendered: r, err: err}
			return nil
		})
	}
	_ = g.Wait() // every func returns nil
	c := &renderedAhead{m: make(map[string]renderResult, len(refs))}
	for i, ref := range refs {
		c.m[ref] = results[i]
	}
	return c
}

// uniqueRefs returns the distinct refs for which keep is true, in order.
func uniqueRefs(refs []string, keep func(string) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, ref := range refs {
		if !seen[ref] && keep(ref) {
			out = append(out, ref)
		}
		seen[ref] = true
	}
	return out
}

// render is Render; prefetch=false renders one reference at a time (tests
// compare the two).
func render(ctx context.Context, opts Options, prefetch bool) (*declcfg.DeclarativeConfig, error) {
	if opts.AllowedRefMask == 0 {
		opts.AllowedRefMask = RefAll
	}
	if err := migrations.Check(opts.MigrationLevel); err != nil {
		return nil, err
	}
	var pre prefetched
	if prefetch {
		pre.bundles = prefetchBundleDirs(ctx, opts)
		pre.images = prefetchImages(ctx, opts)
		defer pre.images.close()
	}
	return renderPrefetched(ctx, opts, pre)
}

// renderPrefetched renders, reports errors and merges in argument order,
// taking what pre already rendered.
func renderPrefetched(ctx context.Context, opts Options, pre prefetched) (*declcfg.DeclarativeConfig, error) {
	if opts.AllowedRefMask == 0 {
		opts.AllowedRefMask = RefAll
	}
	var (
		out   declcfg.DeclarativeConfig
		hints []bundleHint
	)
	for _, ref := range opts.Refs {
		r, err := renderOne(ctx, ref, opts, pre)
		if err != nil {
			return nil, err
		}
		if r.hint != nil {
			hints = append(hints, bundleHint{index: len(out.Bundles), hint: *r.hint})
		}
		out.Merge(r.cfg)
	}
	if opts.WithChannels {
		if err := deriveChannels(&out, hints); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// renderOne renders one reference as Render does for each of its
// arguments: rendered, properties and related images ordered, migrated.
func renderOne(ctx context.Context, ref string, opts Options, pre prefetched) (rendered, error) {
	r, err := renderReference(ctx, ref, opts, pre)
	if err != nil {
		return rendered{}, fmt.Errorf("render reference %q: %w", ref, err)
	}
	moveBundleObjectsToEnd(r.cfg)
	sortRelatedImages(r.cfg)
	if err := migrations.Migrate(r.cfg, opts.MigrationLevel); err != nil {
		return rendered{}, fmt.Errorf("migrate: %w", err)
	}
	return r, nil
}

func renderReference(ctx context.Context, ref string, opts Options, pre prefetched) (rendered, error) {
	st, err := os.Stat(ref)
	if err != nil {
		// A path that exists but cannot be read (permission, not a
		// directory on the way) is not an image reference either.
		if !errors.Is(err, fs.ErrNotExist) {
			return rendered{}, err
		}
		return renderImage(ctx, ref, opts, pre.images)
	}
	if !st.IsDir() {
		if sqlite.IsDatabase(ref) {
			if opts.AllowedRefMask&RefSqliteFile == 0 {
				return rendered{}, fmt.Errorf("cannot render sqlite file: %w", ErrNotAllowed)
			}
			cfg, err := sqlite.RenderFile(ctx, ref, ref, sqlite.Options{Limits: opts.SQLite, Warn: opts.Warn})
			return rendered{cfg: cfg}, err
		}
		if sqliteFileExt(ref) {
			return rendered{}, fmt.Errorf("%s is not an sqlite database: it does not start with sqlite's header", ref)
		}
		if opts.AllowedRefMask&RefDCFile == 0 {
			return rendered{}, fmt.Errorf("ref %q is not a directory: %w", ref, ErrNotAllowed)
		}
		cfg, err := declcfg.LoadPath(ctx, ref)
		if err != nil && !catalogFileExt(ref) {
			err = fmt.Errorf("%w (%s is read as a file-based catalog file; an image archive is read as oci-archive:%s or docker-archive:%s)", err, ref, ref, ref)
		}
		return rendered{cfg: cfg}, err
	}
	if IsBundleDir(ref) {
		if opts.AllowedRefMask&RefBundleDir == 0 {
			return rendered{}, fmt.Errorf("cannot render bundle directory %q: %w", ref, ErrNotAllowed)
		}
		return renderBundleDir(ctx, ref, opts, pre.bundles)
	}
	if opts.AllowedRefMask&RefDCDir == 0 {
		return rendered{}, fmt.Errorf("cannot render declarative config directory: %w", ErrNotAllowed)
	}
	cfg, err := declcfg.LoadDir(ctx, ref)
	return rendered{cfg: cfg}, err
}

// catalogFileExt reports whether name ends as catalog files do: .json,
// .yaml or .yml.
func catalogFileExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// sqliteFileExt reports whether name is named as an sqlite database is
// (index.db): such a file is never read as a catalog file.
func sqliteFileExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".db", ".sqlite", ".sqlite3":
		return true
	}
	return false
}

// IsBundleDir reports whether dir has both manifests/ and metadata/
// subdirectories.
func IsBundleDir(dir string) bool {
	for _, sub := range []string{"manifests", "metadata"} {
		st, err := os.Stat(dir + string(os.PathSeparator) + sub)
		if err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// moveBundleObjectsToEnd moves olm.bundle.object and olm.csv.metadata
// properties to the end of each bundle's list, keeping relative order.
func moveBundleObjectsToEnd(cfg *declcfg.DeclarativeConfig) {
	for i := range cfg.Bundles {
		props := cfg.Bundles[i].Properties
		var head, tail []property.Property
		for _, p := range props {
			if p.Type == property.TypeBundleObject || p.Type == property.TypeCSVMetadata {
				tail = append(tail, p)
			} else {
				head = append(head, p)
			}
		}
		if len(tail) == 0 {
			continue
		}
		cfg.Bundles[i].Properties = append(head, tail...)
	}
}

// sortRelatedImages sorts each bundle's relatedImages by image.
func sortRelatedImages(cfg *declcfg.DeclarativeConfig) {
	for i := range cfg.Bundles {
		ri := cfg.Bundles[i].RelatedImages
		sort.SliceStable(ri, func(a, b int) bool { return ri[a].Image < ri[b].Image })
	}
}
