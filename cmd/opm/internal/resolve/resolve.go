// Package resolve implements `opm resolve`: OLM classic's dependency
// resolution as an offline dry run.
package resolve

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/resolve"
	"github.com/opmkit/opm/pkg/resolve"
)

// NewCmd builds `opm resolve`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var opts action.Options
	var output string
	cmd := &cobra.Command{
		Use:   "resolve --catalog NAME=DIR[:PRIORITY]... [--installed CATALOG/BUNDLE]... --subscribe PACKAGE[:CHANNEL][@STARTINGCSV]...",
		Short: "Dry-run OLM classic's dependency resolution: what installs, and why",
		Long: `Resolve subscriptions against catalogs exactly as OLM classic (v0) does in a
namespace, without a cluster: which bundles get installed or upgraded, and why
each one (a subscription, or which bundle's which requirement); or, when no
solution exists, a smallest set of requirements that cannot all be met.

  --catalog NAME=REF[:PRIORITY]   a catalog: an FBC directory or a catalog
                                  image, with a CatalogSource priority (default
                                  0; higher is preferred). Repeatable.
  --installed CATALOG/BUNDLE      a bundle already installed in the namespace,
                                  installed from that catalog. Repeatable.
  --subscribe PACKAGE[:CHANNEL][@STARTINGCSV]
                                  a Subscription. No channel: any channel, the
                                  default one first. A starting bundle applies
                                  only when nothing of the package is installed.

A subscription installs from the catalog its installed bundle came from, else
from the highest-priority catalog with the package (ties: name order).
Dependencies (olm.gvk.required, olm.package.required, olm.label.required and
olm.constraint with gvk, package, all, any, not and cel) come from installed
bundles first, then the requiring bundle's own catalog, then the others by
priority; within a catalog default channels first, each channel newest first
along its replaces chain. At most one bundle per package and one provider per
API; installed bundles no subscription names stay.

Exit status: 0 resolvable, 1 not resolvable (including invalid dependency
properties) or a catalog that cannot be loaded or lacks an installed bundle,
2 usage. See docs/resolve.md.`,
		Example: `  opm resolve --catalog example=examples/catalog --subscribe web-console
  opm resolve --catalog ops=./ops:10 --catalog example=examples/catalog \
      --installed example/cache-operator.v1.0.0 --subscribe cache-operator:fast \
      --subscribe web-console -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmdutil.CheckOutput(output, "text", "json"); err != nil {
				return err
			}
			if err := resolve.CheckBudget(opts.SolverBudget); err != nil {
				return cmdutil.FlagErrorf("--solver-budget: %v", err)
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Registry = reg
			res, err := action.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				err = cmdutil.WriteJSON(ios.Out, res)
			} else {
				err = WriteText(ios.Out, res)
			}
			if err != nil {
				return err
			}
			if !res.Resolvable {
				return cmdutil.SilentExit(cmdutil.ExitFailure)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Catalogs, "catalog", nil, "catalog as NAME=DIR|IMAGE[:PRIORITY] (repeatable)")
	f.StringArrayVar(&opts.Installed, "installed", nil, "installed bundle as CATALOG/BUNDLE (repeatable)")
	f.StringArrayVar(&opts.Subscribe, "subscribe", nil, "subscription as PACKAGE[:CHANNEL][@STARTINGCSV] (repeatable)")
	f.Int64Var(&opts.SolverBudget, "solver-budget", resolve.DefaultBudget, "most solver conflicts spent before giving up (a positive number, or -1 for no limit)")
	f.StringVarP(&output, "output", "o", "text", "output format (text|json)")
	return cmd
}

// WriteText writes a result for people: the bundles in dependency order
// with why each is there, or why no solution exists.
func WriteText(w io.Writer, res *resolve.Result) error {
	var b strings.Builder
	switch {
	case res.Error != "":
		fmt.Fprintf(&b, "Not resolvable: %s\n", res.Error)
	case !res.Resolvable:
		b.WriteString("Not resolvable. These requirements cannot all be met (without any one of them, the rest could be):\n")
		for _, c := range res.Conflicts {
			fmt.Fprintf(&b, "  - %s\n", c.Message)
		}
	case len(res.Install) == 0:
		b.WriteString("Resolvable: nothing to install.\n")
	default:
		n := len(res.Install)
		fmt.Fprintf(&b, "Resolvable: %d %s, dependencies first:\n", n, plural(n, "bundle", "bundles"))
		for i, in := range res.Install {
			where := "catalog " + in.Catalog
			if in.Channel != "" {
				where += ", channel " + in.Channel
			}
			status := "new"
			switch in.Status {
			case resolve.StatusUpgrade:
				status = "upgrade from " + in.Replaces
			case resolve.StatusInstalled:
				status = "installed, stays"
			}
			fmt.Fprintf(&b, "\n%d. %s (package %s %s, %s): %s\n", i+1, in.Bundle, in.Package, in.Version, where, status)
			for _, r := range in.Reasons {
				fmt.Fprintf(&b, "   - %s\n", reasonText(r))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func reasonText(r resolve.Reason) string {
	switch {
	case r.Subscription != "":
		return "subscription " + r.Subscription
	case r.Installed:
		return "installed, and no subscription names its package"
	}
	by := r.RequiredBy
	if r.RequiredByCatalog != "" {
		by += " (catalog " + r.RequiredByCatalog + ")"
	}
	return fmt.Sprintf("required by %s: %s (%s)", by, r.Requirement, r.Property)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
