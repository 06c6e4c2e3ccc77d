// Package graph implements `opm graph show|successors|path|upgradeable`: flags in, one
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
		Long: `The graph commands read a catalog (an FBC directory or a catalog image:
the arguments, or -C CATALOG, or else the current directory) and answer
questions about its upgrade graphs: what they look like (show), which
bundles upgrade directly from a version (successors), and the step by step
upgrade path from a version (path), and whether installed bundles block a
cluster's next OpenShift minor version through olm.maxOpenShiftVersion
(upgradeable).

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
           the installed bundle is ranked among the candidates and deprecated
           bundles after the others (so a bundle that is not deprecated stays
           rather than move to a deprecated one), and it never moves to a lower
           version. Build metadata orders equal versions as a release
           (1.0.0+10 is newer than 1.0.0+9).

Both read skipRange as OLM classic does: pre-releases are versions like any
other, build metadata is ignored. An installed bundle the catalog no longer
has still matches replaces and skips by name and skipRange by version.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newShowCmd(ios, g), newSuccessorsCmd(ios, g), newPathCmd(ios, g), newUpgradeableCmd(ios, g))
	return cmd
}

// names completes package, channel and bundle names from the catalogs of
// the command line.
var names = cmdutil.CompleteFrom(cmdutil.ManyCatalogRefs)

func addCommonFlags(cmd *cobra.Command, opts *graph.Options, output *string, def, outputs, packageUsage string) {
	addCatalogFlag(cmd)
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Packages, "package", "p", nil, packageUsage)
	f.StringSliceVarP(&opts.Channels, "channel", "c", nil, "channel to query (repeatable)")
	f.StringVarP(output, "output", "o", def, "output format ("+outputs+")")
	_ = cmd.RegisterFlagCompletionFunc("package", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names.Packages(cmd, args, toComplete)
	})
	_ = cmd.RegisterFlagCompletionFunc("channel", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names.Channels(cmd, args, toComplete, cmdutil.FlagValue(cmd, "package"))
	})
}

// completeBundles completes flag with the bundle names of --package.
func completeBundles(cmd *cobra.Command, flag string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names.Bundles(cmd, args, toComplete, cmdutil.FlagValue(cmd, "package"))
	})
}

// addCatalogFlag adds -C: one more catalog, before the arguments.
func addCatalogFlag(cmd *cobra.Command) {
	cmdutil.AddCatalogFlag(cmd, nil, ".", "catalog to read, before the arguments")
}

// prepare checks -o against outputs and fills the catalog references and
// the registry options; the catalog explains the command's errors.
func prepare(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, cmd *cobra.Command, opts *graph.Options, args []string, output string, outputs ...string) (cmdutil.Catalog, error) {
	if err := cmdutil.CheckOutput(output, outputs...); err != nil {
		return cmdutil.Catalog{}, err
	}
	cat, err := cmdutil.Catalogs(cmd, args, 1)
	if err != nil {
		return cat, err
	}
	reg, err := g.Registry(ios)
	if err != nil {
		return cat, err
	}
	opts.Refs, opts.Registry = cat.Refs, reg
	return cat, nil
}

func newShowCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.Options
		output string
	)
	cmd := &cobra.Command{
		Use:   "show [CATALOG...]",
		Short: "Draw the upgrade graphs as Mermaid, Graphviz DOT or JSON",
		Long: `Draw the upgrade graphs of the selected packages and channels.

  -o mermaid  the same flowchart as 'opm alpha render-graph' (default)
  -o dot      Graphviz DOT: a cluster per package and channel; replaces edges
              solid, skips dashed red, skipRange dotted blue; the head bold,
              stranded entries orange, deprecated ones filled, names that
              edges refer to without a channel entry dashed
  -o json     every channel's entries (with versions), head, replaces chain,
              stranded entries, edges and problems, for jq`,
		Example: `  opm graph show examples/catalog -p cache-operator -o dot | dot -Tsvg > cache-operator.svg
  opm graph show examples/catalog -o json | jq '.packages[].channels[] | select(.stranded != [])'
  cd examples/catalog && opm graph show -p queue-operator`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := prepare(ios, g, cmd, &opts, args, output, "mermaid", "dot", "json")
			if err != nil {
				return err
			}
			res, err := graph.Show(cmd.Context(), opts)
			if err != nil {
				return cat.Explain(err)
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
	cmd.Flags().BoolVar(&opts.OLMv1, "olm-v1", false, "mark the bundles OLM v1 refuses (red border and a legend; olmV1 in -o json)")
	cmd.Flags().StringSliceVar(&opts.FeatureGates, "olm-v1-feature-gates", nil, "with --olm-v1: operator-controller feature gates to assume (Name=true|false[,...])")
	return cmd
}

func newSuccessorsCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.SuccessorsOptions
		output string
	)
	cmd := &cobra.Command{
		Use:   "successors [CATALOG...] --from VERSION",
		Short: "List the bundles that upgrade directly from a version",
		Long: `List every channel entry that upgrades directly from the installed bundle,
the fields that make it a successor (replaces, skips, skipRange), its place
on the channel's replaces chain, and which one each semantics picks.

` + fromHelp,
		Example: `  opm graph successors examples/catalog -p cache-operator --from 1.0.0
  opm graph successors examples/catalog -p cache-operator --from cache-operator.v1.1.0 -o json
  opm graph successors -C examples/catalog -p cache-operator --from v1.0.5 --from-bundle cache-operator.v1.0.5`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := prepare(ios, g, cmd, &opts.Options, args, output, "text", "json")
			if err != nil {
				return err
			}
			res, err := graph.Successors(cmd.Context(), opts)
			if err != nil {
				return cat.Explain(err)
			}
			if output == "json" {
				return cmdutil.WriteJSON(ios.Out, res.JSON())
			}
			return res.WriteText(ios.Out)
		},
	}
	addCommonFlags(cmd, &opts.Options, &output, "text", "text|json", "package to query (default: the catalog's only package)")
	addFromFlags(cmd, &opts.From, &opts.FromBundle)
	return cmd
}

const fromHelp = `--from takes a version (a leading "v" is fine) or a bundle name. An installed bundle the catalog
no longer has still matches: replaces and skips by its name, skipRange by
its version. Give its name with --from-bundle (and its version with
--from); when only a version is given and no bundle has it, the name is
assumed: <prefix>.v<version>, with the prefix every bundle of the package
is named with (else the package name), and the output says so.`

func addFromFlags(cmd *cobra.Command, from, bundle *string) {
	f := cmd.Flags()
	f.StringVar(from, "from", "", "installed version or bundle name")
	f.StringVar(bundle, "from-bundle", "", "installed bundle's name, when the catalog no longer has it")
	cmd.MarkFlagsOneRequired("from", "from-bundle")
	completeBundles(cmd, "from")
}

func newPathCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   graph.PathOptions
		output string
	)
	cmd := &cobra.Command{
		Use:   "path [CATALOG...] --from VERSION [--to VERSION | --version RANGE]",
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
reached, the reason is printed and the exit code is 1.

` + fromHelp,
		Example: `  opm graph path examples/catalog -p cache-operator --from 1.0.0
  opm graph path examples/catalog -p cache-operator --from v1.0.0 --to 1.1.1 --semantics v1 -c fast
  opm graph path examples/catalog -p cache-operator --from 1.0.0 --version '<1.2.0' --semantics v1 -o json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := prepare(ios, g, cmd, &opts.Options, args, output, "text", "json")
			if err != nil {
				return err
			}
			res, err := graph.Path(cmd.Context(), opts)
			if err != nil {
				return cat.Explain(err)
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
	addFromFlags(cmd, &opts.From, &opts.FromBundle)
	f := cmd.Flags()
	f.StringVar(&opts.To, "to", "", "version (or bundle name) to reach")
	completeBundles(cmd, "to")
	f.StringVar(&opts.Version, "version", "", "OLM v1 version range every step must stay in")
	f.StringVar(&opts.Semantics, "semantics", string(gr.Classic), "upgrade semantics (classic|v1)")
	cmd.MarkFlagsMutuallyExclusive("to", "version")
	return cmd
}

func newUpgradeableCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts      graph.UpgradeableOptions
		output    string
		installed []string
		channels  []string
	)
	cmd := &cobra.Command{
		Use:   "upgradeable [CATALOG...] --cluster-version VERSION --installed PACKAGE=VERSION...",
		Short: "Check whether installed bundles block the cluster's next minor version",
		Long: `Check, for every installed bundle, whether its olm.maxOpenShiftVersion blocks
an upgrade of the OpenShift cluster to its next minor version (4.y+1: only
the major and minor of --cluster-version count, so 4.18.3 and 4.18.0-rc1
both go to 4.19), as OLM does. A bundle blocks when its maximum is below
that version, or when the value is malformed.

For a bundle that blocks, the upgrade path within its channel (under
--semantics) to the nearest bundle that does not (fewest upgrades, then the
lowest version), or that none is reachable and the operator must be removed
before the cluster upgrade. An installed bundle the catalog lacks is
"unknown": its maximum cannot be read.

--installed PACKAGE=VERSION (or PACKAGE=BUNDLE, or PACKAGE=BUNDLE@VERSION for
a bundle the catalog no longer has) is repeatable. --channel PACKAGE=CHANNEL
chooses the channel (default: the package's default channel under classic,
every channel under v1).

The exit code is 0 when nothing blocks, 1 when an installed bundle blocks
or is unknown (the report is printed first).`,
		Example: `  opm graph upgradeable examples/catalog --cluster-version 4.18.3 --installed cache-operator=1.1.0
  opm graph upgradeable examples/catalog --cluster-version 4.18.3 --installed cache-operator=1.1.1 --channel cache-operator=fast --semantics v1 -o json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := prepare(ios, g, cmd, &opts.Options, args, output, "text", "json")
			if err != nil {
				return err
			}
			ops, err := graph.ParseInstalled(installed, channels)
			if err != nil {
				return err
			}
			opts.Installed = ops
			res, err := graph.Upgradeable(cmd.Context(), opts)
			if err != nil {
				return cat.Explain(err)
			}
			if output == "json" {
				err = cmdutil.WriteJSON(ios.Out, res.JSON())
			} else {
				err = res.WriteText(ios.Out)
			}
			if err != nil {
				return err
			}
			if !res.Upgradeable() {
				return cmdutil.SilentExit(cmdutil.ExitFailure)
			}
			return nil
		},
	}
	addCatalogFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&opts.ClusterVersion, "cluster-version", "", "the cluster's OpenShift version, e.g. 4.18.3 (required)")
	f.StringArrayVar(&installed, "installed", nil, "installed bundle: PACKAGE=VERSION, PACKAGE=BUNDLE or PACKAGE=BUNDLE@VERSION (repeatable, required)")
	f.StringArrayVar(&channels, "channel", nil, "channel of an installed package: PACKAGE=CHANNEL (repeatable)")
	f.StringVar(&opts.Semantics, "semantics", string(gr.Classic), "upgrade semantics (classic|v1)")
	f.StringVarP(&output, "output", "o", "text", "output format (text|json)")
	_ = cmd.MarkFlagRequired("cluster-version")
	_ = cmd.MarkFlagRequired("installed")
	return cmd
}
