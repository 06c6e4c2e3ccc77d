package render

import (
	"context"
	"fmt"
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
)

// Rendered is the result of rendering one reference.
type Rendered struct {
	Ref    string
	Config *declcfg.DeclarativeConfig
	Err    error
}

// RenderEach renders every reference of opts.Refs on its own and returns
// one result per reference, in order, failures included, so that a caller
// (a catalog template) can map results back to what named them and report
// the error it meets first. Rendering is what Render does for each
// argument, with the same concurrency: images are pulled and rendered
// several at a time through one image session (shared connections, tokens
// and blob cache), bundle directories in parallel. A reference listed
// twice is rendered once and both results share one Config, which callers
// must not modify. The error is for options that are wrong whatever the
// references (an unknown migration level).
func RenderEach(ctx context.Context, opts Options) ([]Rendered, error) {
	if opts.AllowedRefMask == 0 {
		opts.AllowedRefMask = RefAll
	}
	if err := migrations.Check(opts.MigrationLevel); err != nil {
		return nil, err
	}
	pre := prefetched{bundles: prefetchBundleDirs(ctx, opts), images: prefetchImages(ctx, opts)}
	defer pre.images.close()
	out := make([]Rendered, len(opts.Refs))
	first := make(map[string]int, len(opts.Refs))
	for i, ref := range opts.Refs {
		if j, ok := first[ref]; ok {
			out[i] = out[j]
			continue
		}
		first[ref] = i
		r, err := renderOne(ctx, ref, opts, pre)
		out[i] = Rendered{Ref: ref, Config: r.cfg, Err: err}
	}
	return out, nil
}

// BundleImages renders the images of catalog bundles (those that carry no
// manifests, only olm.csv.metadata) as RenderEach does, each image once
// however many bundles name it, and returns the rendered olm.bundle of
// each bundle, by bundle name, and the number of images pulled. A bundle
// without an image is left out; an image that cannot be pulled or
// rendered, or that holds other than one bundle, is an error naming the
// bundle and the package pkg.
func BundleImages(ctx context.Context, pkg string, bundles []*declcfg.Bundle, reg RegistryOptions) (map[string]*declcfg.Bundle, int, error) {
	names := map[string][]string{}
	var refs []string
	for _, b := range bundles {
		if b.Image == "" {
			continue
		}
		if _, ok := names[b.Image]; !ok {
			refs = append(refs, b.Image)
		}
		names[b.Image] = append(names[b.Image], b.Name)
	}
	out := map[string]*declcfg.Bundle{}
	if len(refs) == 0 {
		return out, 0, nil
	}
	sort.Strings(refs)
	results, err := RenderEach(ctx, Options{Refs: refs, AllowedRefMask: RefBundleImage, Registry: reg})
	if err != nil {
		return nil, 0, err
	}
	for _, r := range results {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		first := names[r.Ref][0]
		if r.Err != nil {
			return nil, 0, fmt.Errorf("package %s: bundle %s: pull %s: %w", pkg, first, r.Ref, r.Err)
		}
		if len(r.Config.Bundles) != 1 {
			return nil, 0, fmt.Errorf("package %s: bundle %s: %s: expected one bundle, got %d", pkg, first, r.Ref, len(r.Config.Bundles))
		}
		for _, n := range names[r.Ref] {
			out[n] = &r.Config.Bundles[0]
		}
	}
	return out, len(refs), nil
}
