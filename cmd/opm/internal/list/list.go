// Package list implements `opm alpha list packages|channels|bundles`.
package list

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/list"
)

// What selects the table a list command prints.
type What string

// The three list commands.
const (
	WhatPackages What = "packages"
	WhatChannels What = "channels"
	WhatBundles  What = "bundles"
)

// Options are the arguments and flags of one list command.
type Options struct {
	IO      *cmdutil.IOStreams
	What    What
	Ref     string
	Package string // channels and bundles only; "" = every package
	Output  string // text or json
	Global  *cmdutil.GlobalOptions
}

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
		newSubCmd(ios, g, WhatPackages, "packages <indexRef>", "List packages in an index", cobra.ExactArgs(1)),
		newSubCmd(ios, g, WhatChannels, "channels <indexRef> [packageName]", "List package channels in an index", cobra.RangeArgs(1, 2)),
		newSubCmd(ios, g, WhatBundles, "bundles <indexRef> [packageName]", "List package bundles in an index", cobra.RangeArgs(1, 2)),
	)
	return cmd
}

func newSubCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, what What, use, short string, args cobra.PositionalArgs) *cobra.Command {
	opts := &Options{IO: ios, What: what, Global: g}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if len(args) > 1 {
				opts.Package = args[1]
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "text", "output format (text|json)")
	return cmd
}

// Run lists what opts asks for.
func Run(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "text", "json"); err != nil {
		return err
	}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	m, err := list.Load(ctx, opts.Ref, reg)
	if err != nil {
		return err
	}
	var rows any
	var write func() error
	switch opts.What {
	case WhatPackages:
		r := list.Packages(m)
		rows, write = r, func() error { return list.WritePackages(opts.IO.Out, r) }
	case WhatChannels:
		r, err := list.Channels(m, opts.Package)
		if err != nil {
			return err
		}
		rows, write = r, func() error { return list.WriteChannels(opts.IO.Out, r) }
	case WhatBundles:
		r, err := list.Bundles(m, opts.Package)
		if err != nil {
			return err
		}
		rows, write = r, func() error { return list.WriteBundles(opts.IO.Out, r) }
	}
	if opts.Output == "json" {
		return cmdutil.WriteJSON(opts.IO.Out, rows)
	}
	return write()
}
