// Package rendergraph implements `opm alpha render-graph`: flags in,
// [rendergraph.Run] once, the Mermaid flowchart out.
package rendergraph

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/rendergraph"
)

// NewCmd builds `opm alpha render-graph`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var opts rendergraph.Options
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
  opm alpha render-graph examples/catalog

  # Only one package, from a given bundle upwards, with OLM v0 styling
  opm alpha render-graph examples/catalog -p cache-operator --minimum-edge cache-operator.v1.1.0 --draw-v0-semantics`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Refs, opts.Registry = args, reg
			res, err := rendergraph.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			return res.WriteMermaid(ios.Out, ios.ErrOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.MinimumEdge, "minimum-edge", "", "the channel edge to be used as the lower bound of the set of edges composing the upgrade graph; default is to include all edges")
	f.StringVarP(&opts.PackageName, "package-name", "p", "", "a specific package name to filter output; default is to include all packages in reference")
	f.BoolVar(&opts.V0Semantics, "draw-v0-semantics", false, "draw the graph using OLMv0 semantics (skipped bundles and the edges into them are highlighted)")
	return cmd
}
