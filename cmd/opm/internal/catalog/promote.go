package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
)

func newPromoteCmd(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	var opts action.PromoteOptions
	cmd := &cobra.Command{
		Use:   "promote PACKAGE BUNDLE --to CHANNEL[,CHANNEL...]",
		Short: "Add an existing bundle to channels",
		Long: `Add a bundle the package already has to other channels (--to takes a
comma-separated list, or is repeated), each with the upgrade
edge that keeps the channel a single-head graph. By default the new entry
replaces the channel's head; a bundle older than the head is instead skipped
by the head (so that its installs upgrade to the head). --replaces, --skips
and --skip-range set the edges yourself; an edit that would leave two heads
or strand a bundle is refused. --create adds a channel when the package
has none of that name. Channel names cannot hold commas.` + editLong,
		Example: `  opm catalog promote -C examples/catalog cache-operator cache-operator.v1.1.1 --to stable --dry-run
  opm catalog promote -C examples/catalog cache-operator v1.1.1 --to candidate --create --skip-range '>=1.0.0 <1.1.1' --dry-run
  cd examples/catalog && opm catalog promote cache-operator 1.1.1 --to stable --dry-run`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeArgs("package", "bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkEdges(opts.Edges); err != nil {
				return err
			}
			if err := checkChannels("--to", opts.Channels...); err != nil {
				return err
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				opts.Common, opts.Package, opts.Bundle = c, args[0], args[1]
				return action.Promote(cmd.Context(), opts)
			})
		},
	}
	addEditFlags(cmd, &f)
	cmd.Flags().StringSliceVar(&opts.Channels, "to", nil, "the channels to add the bundle to (comma-separated or repeated)")
	cmd.Flags().BoolVar(&opts.Create, "create", false, "create a channel if the package has none of that name")
	edgeFlags(cmd, &opts.Edges)
	completeFlag(cmd, "to", "channel")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
