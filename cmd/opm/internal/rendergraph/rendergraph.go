// Package rendergraph implements `opm alpha render-graph`: a Mermaid
// flowchart of the upgrade graphs of catalogs, byte for byte as upstream.
package rendergraph

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
)

// Options are the arguments and flags of `opm alpha render-graph`.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Refs            []string
	MinimumEdge     string
	PackageName     string
	DrawV0Semantics bool
}

// NewCmd builds `opm alpha render-graph`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "render-graph [index-image | fbc-dir]...",
		Short: "Generate mermaid-formatted view of upgrade graph of operators in an index",
		Long: `Generate a Mermaid flowchart of the upgrade graphs of the operators in
catalog images or file-based catalog directories, as upstream opm does.

Packages are drawn as subgraphs, channels inside them; every edge points from
the older bundle to the newer one and is labelled skip, skipRange(<range>) or
replace. Paste the output into any Mermaid renderer (GitHub, mermaid.live).

For queries over the graph (successors, upgrade paths, DOT or JSON output)
see 'opm graph'.`,
		Example: `  # Draw every package of a catalog directory
  opm alpha render-graph ./catalog

  # Only one package, from a given bundle upwards, with OLM v0 styling
  opm alpha render-graph ./catalog -p etcd --minimum-edge etcdoperator.v0.9.2 --draw-v0-semantics`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.MinimumEdge, "minimum-edge", "", "the channel edge to be used as the lower bound of the set of edges composing the upgrade graph; default is to include all edges")
	f.StringVarP(&opts.PackageName, "package-name", "p", "", "a specific package name to filter output; default is to include all packages in reference")
	f.BoolVar(&opts.DrawV0Semantics, "draw-v0-semantics", false, "draw the graph using OLMv0 semantics (skipped bundles and the edges into them are highlighted)")
	return cmd
}

// Run renders the references and writes their Mermaid graph.
func Run(ctx context.Context, opts *Options) error {
	ro := render.Options{Refs: opts.Refs, AllowedRefMask: render.RefDCDir | render.RefDCImage}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	ro.Registry = reg
	cfg, err := render.Render(ctx, ro)
	if err != nil {
		return err
	}
	return graph.WriteMermaid(cfg, opts.IO.Out, graph.MermaidOptions{
		MinimumEdge: opts.MinimumEdge,
		PackageName: opts.PackageName,
		V0Semantics: opts.DrawV0Semantics,
		Warnings:    opts.IO.ErrOut,
	})
}
