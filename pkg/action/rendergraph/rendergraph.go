// Package rendergraph is the action of `opm alpha render-graph`: catalogs
// in, the Mermaid flowchart of their upgrade graphs out, byte for byte as
// upstream.
package rendergraph

import (
	"context"
	"io"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
)

// Options are what `opm alpha render-graph` is given.
type Options struct {
	// Refs are FBC directories or catalog images, rendered together.
	Refs []string
	// MinimumEdge is the bundle to draw from ("" = all edges).
	MinimumEdge string
	// PackageName keeps one package ("" = all).
	PackageName string
	// V0Semantics highlights skipped bundles and the edges into them.
	V0Semantics bool
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
}

// Result is a rendered catalog, ready to be drawn.
type Result struct {
	Config *declcfg.DeclarativeConfig
	opts   Options
}

// Run renders opts.Refs.
func Run(ctx context.Context, opts Options) (*Result, error) {
	cfg, err := render.Render(ctx, render.Options{
		Refs:           opts.Refs,
		AllowedRefMask: render.RefDCDir | render.RefDCImage | render.RefSqliteImage | render.RefSqliteFile,
		Registry:       opts.Registry,
	})
	if err != nil {
		return nil, err
	}
	return &Result{Config: cfg, opts: opts}, nil
}

// WriteMermaid writes the flowchart to w; warnings (ignored skipRanges, as
// upstream) go to warnings.
func (r *Result) WriteMermaid(w, warnings io.Writer) error {
	return graph.WriteMermaid(r.Config, w, graph.MermaidOptions{
		MinimumEdge: r.opts.MinimumEdge,
		PackageName: r.opts.PackageName,
		V0Semantics: r.opts.V0Semantics,
		Warnings:    warnings,
	})
}
