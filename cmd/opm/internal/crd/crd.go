// Package crd implements `opm crd diff`: flags in, [crddiff.Run] once, the
// changes out.
package crd

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/crddiff"
	"github.com/opmkit/opm/pkg/crd"
)

// NewCmd builds `opm crd`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crd",
		Short: "Check CustomResourceDefinition upgrades as OLM does",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newDiffCmd(ios, g))
	return cmd
}

func newDiffCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		output              string
		all                 bool
		olm                 string
		ignore, warnAsError []string
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Report the CRD changes of an upgrade and whether OLM refuses it",
		Long: `Compare the CRDs of an upgrade from OLD to NEW, each a CRD manifest file
(YAML documents or JSON; other objects are ignored), a bundle directory or a
bundle image, as OLM does before it upgrades a CRD:

  OLM v1's CRD Upgrade Safety preflight refuses a changed scope, a removed
  stored version, a removed field, a changed type, a new required field, a new
  or narrowed enum, a default added, changed or removed, tightened
  minimum/maximum/minLength/maxLength/minItems/maxItems/minProperties/
  maxProperties, a changed pattern, nullable or oneOf, and any other schema
  change it cannot judge; OLM classic refuses a removed stored (and, for CRDs
  several CSVs own, served) version and custom resources the new schema
  rejects: the old bundle's alm-examples are checked against the new CRDs.

Each change is printed with its position in NEW's (or, for what is gone,
OLD's) manifest, its rule, who refuses it and, under the first change of each
rule, how to fix it. --all lists the safe changes too (descriptions, new
optional fields, new versions, added enum values, ...). A check that could not
run (a CRD past opm's limits, alm-examples that do not parse) is reported as
not checked and fails the upgrade.

--olm v1 or --olm classic aims the check at one OLM: changes only the other
one refuses are warnings, which fail only for the rules --warn-as-error names.
--ignore leaves out the changes of rules. Rules are named as in docs/crd.md,
as opm validate codes them (crd-field-removed), or by globs of either
('crd-*', '*-tightened').

Exit status: 0 safe, 1 some change is unsafe or not checked, or an input cannot
be read (the error says which), 2 usage error. See docs/crd.md for every rule.`,
		Example: `  opm crd diff old/foos.yaml new/foos.yaml
  opm crd diff bundles/v0.7.0 bundles/v0.8.0 -o json | jq '.changes[] | select(.safe | not)'
  opm crd diff quay.io/acme/op-bundle:v1.0.0 ./bundle --all`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", "json"); err != nil {
				return err
			}
			opts := crddiff.Options{Old: args[0], New: args[1]}
			var err error
			if opts.OLM, err = crd.ParseOLM(olm); err != nil {
				return cmdutil.FlagErrorf("--olm: %v", err)
			}
			if opts.Ignore, err = crd.SelectRules(ignore); err != nil {
				return cmdutil.FlagErrorf("--ignore: %v", err)
			}
			if opts.WarnAsError, err = crd.SelectRules(warnAsError); err != nil {
				return cmdutil.FlagErrorf("--warn-as-error: %v", err)
			}
			if opts.Registry, err = g.Registry(ios); err != nil {
				return err
			}
			res, err := crddiff.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if output == "json" {
				err = cmdutil.WriteJSON(ios.Out, res.JSON())
			} else {
				err = res.WriteText(ios.Out, all)
			}
			if err != nil {
				return err
			}
			if res.Unsafe() {
				return cmdutil.SilentExit(cmdutil.ExitFailure)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format (text|json)")
	f.BoolVar(&all, "all", false, "text output: list the safe changes too")
	f.StringVar(&olm, "olm", "both", "the OLM the check is aimed at (classic|v1|both): changes only the other refuses are warnings")
	f.StringSliceVar(&ignore, "ignore", nil, "leave out the changes of these rules (RULE or glob[,...]; repeatable)")
	f.StringSliceVar(&warnAsError, "warn-as-error", nil, "with --olm, fail on the warnings of these rules too (RULE or glob[,...]; repeatable)")
	return cmd
}
