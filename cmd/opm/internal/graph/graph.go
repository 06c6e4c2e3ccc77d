// Package graph implements `opm graph show|successors|path`: flags in, one
// query of [graph] (pkg/action/graph), its result printed as text, JSON,
// DOT or Mermaid.
package graph

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/graph"
	gr "github.com/opmkit/opm/pkg/graph"
)

// NewCmd builds `opm graph` and its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Inspect and query the upgrade graphs of a catalog",
		Long: `The graph commands read a catalog (an FBC directory or a catalog image) and
answer questions about its upgrade graphs: what they look like (show), which
bundles upgrade directly from a version (successors), and the step by step
upgrade path from a version (path).

Upgrades are chosen under one of two semantics:

  classic  OLM classic (v0) subscriptions: the candidates are the entries on the
           channel's replaces chain (walked from the head; an entry that
           another entry skips is not on it) whose replaces or skips names the
           installed bundle or whose skipRange covers its version; the one
           closest to the head wins. One channel at a time (default: the
           package's default channel).
  v1       OLM v1 ClusterExtensions: every entry of the selected channels
           (default: all) whose replaces or skips names the installed bundle or
           whose skipRange covers its version; the highest version wins,
           deprecated bundles rank last, and it never moves to a lower version.

Both read skipRange as OLM classic does: pre-releases are versions like any
other, build metadata is ignored.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newShowCmd(ios, g), newSuccessorsCmd(ios, g), newPathCmd(ios, g))
	return cmd
}

func addCommonFlags(cmd *cobra.Command, opts *graph.Options, output *string, def, outputs, packageUsage string) {
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Packages, "package", "p", nil, packageUsage)
	f.StringSliceVarP(&opts.Channels, "channel", "c", nil, "channel to query (repeatable)")
	f.StringVarP(output, "output", "o", def, "output format ("+outputs+")")
}

// prepare checks -o against outputs and fills the catalog references and
// the registry options.
func prepare(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, opts *graph.Options, args []string, output string, outputs ...string) error {
	if err := cmdutil.CheckOutput(output, outputs...); err != nil {
		return err
	}
	reg, err := g.Registry(ios)
	if err != nil {
		return err
	}
	opts.Refs, opts.Registry = args, reg
	return nil
}

func newShowCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.Options
		output string
	)
	cmd := &cobra.Command{
		Use:   "show <catalog>...",
		Short: "Draw the upgrade graphs as Mermaid, Graphviz DOT or JSON",
		Long: `Draw the upgrade graphs of the selected packages and channels.

  -o mermaid  the same flowchart as 'opm alpha render-graph' (default)
  -o dot      Graphviz DOT: a cluster per package and channel; replaces edges
              solid, skips dashed red, skipRange dotted blue; the head bold,
              stranded entries orange, deprecated ones filled, names that
              edges refer to without a channel entry dashed
  -o json     every channel's entries (with versions), head, replaces chain,
              stranded entries, edges and problems, for jq`,
		Example: `  opm graph show ./catalog -p etcd -o dot | dot -Tsvg > etcd.svg
  opm graph show ./catalog -o json | jq '.packages[].channels[] | select(.stranded != [])'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := prepare(ios, g, &opts, args, output, "mermaid", "dot", "json"); err != nil {
				return err
			}
			res, err := graph.Show(cmd.Context(), opts)
			if err != nil {
				return err
			}
			switch output {
			case "dot":
				return res.WriteDOT(ios.Out)
			case "json":
				return cmdutil.WriteJSON(ios.Out, res.JSON())
			}
			return res.WriteMermaid(ios.Out, ios.ErrOut)
		},
	}
	addCommonFlags(cmd, &opts, &output, "mermaid", "mermaid|dot|json", "package to draw (repeatable; default: all)")
	return cmd
}

func newSuccessorsCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.SuccessorsOptions
		output string
	)
	cmd := &cobra.Command{
		Use:   "successors <catalog>... --from VERSION",
		Short: "List the bundles that upgrade directly from a version",
		Long: `List every channel entry that upgrades directly from the installed bundle,
the fields that make it a successor (replaces, skips, skipRange), its place
on the channel's replaces chain, and which one each semantics picks.

--from takes a version or a bundle name. A version that no bundle of the
package has is still matched against skipRanges (an older release that left
the catalog); a bundle name that only replaces or skips mention is matched
against those.`,
		Example: `  opm graph successors ./catalog -p etcd --from 0.9.0
  opm graph successors ./catalog -p etcd --from etcdoperator.v0.9.0 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := prepare(ios, g, &opts.Options, args, output, "text", "json"); err != nil {
				return err
			}
			res, err := graph.Successors(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				return cmdutil.WriteJSON(ios.Out, res.JSON())
			}
			return res.WriteText(ios.Out)
		},
	}
	addCommonFlags(cmd, &opts.Options, &output, "text", "text|json", "package to query (default: the catalog's only package)")
	cmd.Flags().StringVar(&opts.From, "from", "", "installed version or bundle name (required)")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

func newPathCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.PathOptions
		output string
	)
	cmd := &cobra.Command{
		Use:   "path <catalog>... --from VERSION [--to VERSION | --version RANGE]",
		Short: "Show the step by step upgrade path from a version",
		Long: `Show the upgrades OLM would make, one at a time, from the installed bundle.

Without a target the walk goes as far as the semantics allows: the channel
head (classic) or the newest version it can reach (v1). --to VERSION stops
at that version: classic follows its fixed walk and fails if the walk never
visits it; v1 considers only versions up to it at each step. --version RANGE
bounds the walk as a ClusterExtension's spec.version does (OLM v1 range
syntax: ">=1.11, <1.13", "1.11.x", "~1.12", "^2"): v1 only moves to versions in
it; classic stops at the last version in it.

Classic gives one path per channel (default: the package's default channel);
v1 one path over the selected channels (default: all). When a target is not
reached, the reason is printed and the exit code is 1.`,
		Example: `  opm graph path ./catalog -p etcd --from 0.9.0
  opm graph path ./catalog -p example --from 1.0.0 --to 2.0.0 --semantics v1
  opm graph path ./catalog -p example --from 1.0.0 --version '<3.0.0' --semantics v1 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := prepare(ios, g, &opts.Options, args, output, "text", "json"); err != nil {
				return err
			}
			res, err := graph.Path(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				err = cmdutil.WriteJSON(ios.Out, res.JSON())
			} else {
				err = res.WriteText(ios.Out)
			}
			if err != nil {
				return err
			}
			if !res.Reached() {
				// The reason is printed; a path not reached exits 1.
				return cmdutil.SilentExit(cmdutil.ExitFailure)
			}
			return nil
		},
	}
	addCommonFlags(cmd, &opts.Options, &output, "text", "text|json", "package to query (default: the catalog's only package)")
	f := cmd.Flags()
	f.StringVar(&opts.From, "from", "", "installed version or bundle name (required)")
	f.StringVar(&opts.To, "to", "", "version (or bundle name) to reach")
	f.StringVar(&opts.Version, "version", "", "OLM v1 version range every step must stay in")
	f.StringVar(&opts.Semantics, "semantics", string(gr.Classic), "upgrade semantics (classic|v1)")
	_ = cmd.MarkFlagRequired("from")
	cmd.MarkFlagsMutuallyExclusive("to", "version")
	return cmd
}
