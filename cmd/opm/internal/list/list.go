// Package list implements `opm alpha list packages|channels|bundles`:
// arguments in, [list.Run] once, upstream's table or -o json rows out.
package list

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/list"
)

// NewCmd builds `opm alpha list`, which prints its help when run alone.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List contents of an index",
		Long: `The list subcommands print the contents of an index (an FBC directory or
catalog image), as upstream opm's tables.

The tables are for people: their format follows upstream opm and may change.
For scripts, use -o json, which prints a JSON array of rows.

An invalid catalog is not listed: the command fails with the same
validation errors as opm validate.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newSubCmd(ios, g, list.WhatPackages, "packages <indexRef>", "List packages in an index", cobra.ExactArgs(1)),
		newSubCmd(ios, g, list.WhatChannels, "channels <indexRef> [packageName]", "List package channels in an index", cobra.RangeArgs(1, 2)),
		newSubCmd(ios, g, list.WhatBundles, "bundles <indexRef> [packageName]", "List package bundles in an index", cobra.RangeArgs(1, 2)),
	)
	return cmd
}

func newSubCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, what list.What, use, short string, args cobra.PositionalArgs) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", "json"); err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts := list.Options{What: what, Ref: args[0], Registry: reg}
			if len(args) > 1 {
				opts.Package = args[1]
			}
			res, err := list.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				return cmdutil.WriteJSON(ios.Out, res.Rows())
			}
			return res.WriteTable(ios.Out)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format (text|json)")
	return cmd
}
