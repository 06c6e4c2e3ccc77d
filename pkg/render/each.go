package render

import (
	"context"

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
