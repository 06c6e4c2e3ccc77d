// Package view implements `opm view`: flags in, pkg/action/view's Run, the
// URL printed.
package view

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/view"
)

// NewCmd builds `opm view`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var opts view.Options
	cmd := &cobra.Command{
		Use:   "view CATALOG [NEW-CATALOG]",
		Short: "See a catalog in the browser: packages, channels, upgrade graphs and paths",
		Long: `Serve a local web view of a catalog on 127.0.0.1 and print its URL:

  catalog   packages with search, default channels, bundle counts,
            deprecations and icons
  package   its channels and bundles, and a form for upgrade paths
  channel   the upgrade graph, drawn as a layered graph: replaces, skips and
            skipRange edges in their own styles, the head, deprecated,
            skipped and stranded bundles marked; toggle OLM classic / v1 to
            see which edges each follows
  path      the upgrades OLM makes from an installed version, step by step,
            and why it stops (the answer of 'opm graph path'); with a
            cluster version, whether the bundle blocks the next OpenShift
            minor version ('opm graph upgradeable')
  bundle    properties, related images, CSV metadata and description,
            provided and required APIs, its channels

Given two catalogs (OLD and NEW), the start page is the report of
'opm catalog diff', with each changed channel drawn from both sides; both
catalogs can be browsed.

Every page has a JSON twin: put /api in front of its path. The pages load
nothing from anywhere but this server, and the server answers only on
127.0.0.1. A catalog is a directory, an FBC file, a catalog image, or - for
standard input. Stop it with Ctrl-C.`,
		Example: `  opm view ./catalog
  opm view ./catalog --port 8080
  opm view quay.io/acme/index:v4.18 ./catalog      # what a change does`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Refs, opts.Registry, opts.Stdin = args, reg, ios.In
			opts.Ready = func(url string) {
				fmt.Fprintf(ios.Out, "opm view: serving %s\n", url)
				fmt.Fprintln(ios.ErrOut, "Press Ctrl-C to stop.")
			}
			return view.Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Port, "port", 0, "port on 127.0.0.1 to serve on (0: any free port)")
	f.BoolVar(&opts.Fragment, "fragment", false, "with two catalogs: NEW holds only some packages; compare only those (as 'opm catalog diff --fragment')")
	f.StringVar(&opts.Semantics, "semantics", "", "with two catalogs: semantics of lost upgrade paths, classic (default) or v1")
	return cmd
}
