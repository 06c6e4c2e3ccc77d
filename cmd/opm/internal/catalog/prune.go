package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
)

func newPruneCmd(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	var opts action.PruneOptions
	cmd := &cobra.Command{
		Use:   "prune PACKAGE --keep-last N | --before VERSION",
		Short: "Remove a package's old bundles and re-stitch its channels",
		Long: `Remove the old bundles of a package: with --keep-last N, every bundle that is
not among the N newest of at least one of its channels; with --before
VERSION, every bundle older than VERSION.` + restitchLong + editLong,
		Example: `  opm catalog prune -C examples/catalog queue-operator --keep-last 1 --dry-run
  opm catalog prune -C examples/catalog cache-operator --before v1.1.0 --dry-run`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeArgs("package"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("keep-last") && opts.KeepLast < 1 {
				return cmdutil.FlagErrorf("--keep-last must be at least 1")
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				opts.Common, opts.Package = c, args[0]
				return action.Prune(cmd.Context(), opts)
			})
		},
	}
	addEditFlags(cmd, &f)
	fl := cmd.Flags()
	fl.IntVar(&opts.KeepLast, "keep-last", 0, "keep the N newest bundles of each channel")
	fl.StringVar(&opts.Before, "before", "", "remove the bundles older than this version")
	cmd.MarkFlagsMutuallyExclusive("keep-last", "before")
	cmd.MarkFlagsOneRequired("keep-last", "before")
	dropEdgesFlags(cmd, &opts.DropEdges)
	return cmd
}
