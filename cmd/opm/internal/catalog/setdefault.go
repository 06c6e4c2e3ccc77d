package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
)

func newSetDefaultChannelCmd(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	cmd := &cobra.Command{
		Use:   "set-default-channel PACKAGE CHANNEL",
		Short: "Change the default channel of a package",
		Long: `Set the defaultChannel of a package's olm.package blob to one of its
channels.` + editLong,
		Example:           `  opm catalog set-default-channel -C examples/catalog cache-operator fast --dry-run`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeArgs("package", "channel"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkChannels("", args[1]); err != nil {
				return err
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				return action.SetDefaultChannel(cmd.Context(), action.SetDefaultChannelOptions{
					Common: c, Package: args[0], Channel: args[1],
				})
			})
		},
	}
	addEditFlags(cmd, &f)
	return cmd
}
