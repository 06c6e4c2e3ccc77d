// Package catalog implements `opm catalog`, the commands that edit a
// catalog in place and compose catalogs from others. Each subcommand lives
// in its own file and is listed in subcommands.
package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
)

// subcommands lists every `opm catalog` subcommand, one line each.
var subcommands = []func(*cmdutil.IOStreams, *cmdutil.GlobalOptions) *cobra.Command{
	// Editing a catalog in place.
	newPromoteCmd,
	newSetDefaultChannelCmd,
	newAddBundleCmd,
	newRemoveBundleCmd,
	newPruneCmd,
	newDeprecateCmd,

	// Composing catalogs.
	newDiffCmd,
	newFilterCmd,
	newMergeCmd,
}

// NewCmd builds `opm catalog` with every subcommand.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "Edit file-based catalogs in place and compose catalogs from others",
		Args:  cobra.NoArgs,
	}
	for _, build := range subcommands {
		cmd.AddCommand(build(ios, g))
	}
	return cmd
}
