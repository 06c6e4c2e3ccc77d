package catalog

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	diffaction "github.com/opmkit/opm/pkg/action/diff"
	validateaction "github.com/opmkit/opm/pkg/action/validate"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/graph"
)

func newDiffCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		output    string
		failOn    []string
		fragment  bool
		packages  []string
		semantics string
		pre       []string
		policy    string
		unrel     bool
	)
	cmd := &cobra.Command{
		Use:   "diff OLD [NEW]",
		Short: "Show what changed between two catalogs, and gate CI on removals",
		Long: `Compare two catalogs (directories, files, catalog images, or - for standard
input) package by package. NEW is the second argument, or -C CATALOG, or
else the current directory: "opm catalog diff quay.io/acme/index:v1" in a
catalog's directory says what it changes against the published image.
Compared: packages, channels and bundles added or removed,
default channels changed, channel heads moved, upgrade edges added or
removed, bundles whose image, related images or properties changed, and
upgrade paths lost: a bundle that could upgrade to the head of its channel in
OLD and cannot in NEW (OLM classic semantics unless --semantics v1, which
aims for the newest version of the channel instead).

With --fragment, NEW holds only some packages (a fragment meant to replace
them in OLD): only those packages are compared, and the others are not
reported as removed.

--fail-on makes the command exit 1, after printing the report and the
reasons, when a change of a listed kind is found:
  removed  a package, channel or bundle was removed, or a channel no longer
           lists a bundle
  heads    a channel head moved to a bundle that is not newer, or the channel
           no longer has a single head
  paths    an upgrade path to the head was lost
  pruned   a channel, or an entry of a channel, was removed, outside
           pre-release channels: names containing one of
           --pre-release-channels (default candidate,dev-preview,pre-ga, as
           Konflux's fbc-target-index-pruning-check), or the allow-list of a
           --policy (konflux, community, or a policy file)

--unreleased prints, instead of the report, what NEW ships that OLD lacks:
per package of NEW, the bundles whose image OLD's package does not have and
the related images none of its bundles has (-o json for the next step of a
pipeline).`,
		Example: `  opm catalog diff old-catalog/ examples/catalog
  opm catalog diff quay.io/acme/index:v1 -C examples/catalog -o json | jq '.summary'
  opm catalog diff index/ examples/catalog/cache-operator/catalog.yaml --fragment --fail-on removed,heads,paths
  opm catalog diff registry.redhat.io/redhat/redhat-operator-index:v4.18 catalog/ --fragment --fail-on pruned --unreleased -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", "json"); err != nil {
				return err
			}
			var kinds []compose.FailOn
			for _, f := range failOn {
				k, err := compose.ParseFailOn(f)
				if err != nil {
					return &cmdutil.FlagError{Err: err}
				}
				kinds = append(kinds, k)
			}
			if cmd.Flags().Changed("pre-release-channels") && policy != "" {
				return cmdutil.FlagErrorf("--pre-release-channels and --policy both name the pre-release channels: give one")
			}
			if policy != "" {
				p, err := validateaction.ReadPolicy(policy)
				if err != nil {
					return fmt.Errorf("--policy: %w", err)
				}
				pre = p.Allow.PreReleaseChannels
			}
			sem, err := graph.ParseSemantics(semantics)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			cat, err := cmdutil.OneCatalog(cmd, strings.Join(args[1:], ""))
			if err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			rep, err := diffaction.Run(cmd.Context(), diffaction.Options{
				Old: args[0], New: cat.Refs[0],
				Fragment:  fragment,
				Packages:  packages,
				Semantics: sem,
				FailOn:    kinds,
				Stdin:     ios.In,
				Registry:  reg,

				PreReleaseChannels: pre,
				Unreleased:         unrel,
			})
			if err != nil {
				return cat.Explain(err)
			}
			switch {
			case unrel && output == "json":
				err = cmdutil.WriteJSON(ios.Out, rep.Unreleased)
			case unrel:
				err = compose.WriteUnreleasedText(ios.Out, rep.Unreleased)
			case output == "json":
				err = cmdutil.WriteJSON(ios.Out, rep)
			default:
				err = compose.WriteDiffText(ios.Out, rep)
			}
			if err != nil {
				return err
			}
			if rep.Failed() {
				msgs := make([]string, len(rep.Failures))
				for i, f := range rep.Failures {
					msgs[i] = fmt.Sprintf("[%s] %s", f.Kind, f.Message)
				}
				return fmt.Errorf("--fail-on %s: %d %s:\n  %s", strings.Join(failOn, ","), len(msgs), map[bool]string{true: "change", false: "changes"}[len(msgs) == 1], strings.Join(msgs, "\n  "))
			}
			return nil
		},
	}
	cmdutil.AddCatalogFlag(cmd, nil, ".", "NEW, instead of the second argument")
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "text", "output format (text|json)")
	f.StringSliceVar(&failOn, "fail-on", nil, "exit 1 when a change of these kinds is found (removed,heads,paths,pruned)")
	f.StringSliceVar(&pre, "pre-release-channels", compose.DefaultPreReleaseChannels, "--fail-on pruned allows pruning in channels whose names contain one of these")
	f.StringVar(&policy, "policy", "", "take the pre-release channels from a release policy (konflux, community, or a policy file)")
	f.BoolVar(&unrel, "unreleased", false, "print what NEW ships that OLD lacks (bundles, related images) instead of the report")
	f.BoolVar(&fragment, "fragment", false, "NEW holds only some packages: compare those, do not report the others as removed")
	f.StringSliceVarP(&packages, "package", "p", nil, "compare only this package (repeatable)")
	f.StringVar(&semantics, "semantics", string(graph.Classic), "upgrade semantics for lost paths (classic|v1)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"removed", "heads", "paths", "pruned"}, cobra.ShellCompDirectiveNoFileComp))
	names := cmdutil.CompleteFrom(func(cmd *cobra.Command, args []string) []string {
		return append(cmdutil.OneCatalogRefs(1)(cmd, args), args[:min(len(args), 1)]...)
	})
	_ = cmd.RegisterFlagCompletionFunc("package", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names.Packages(cmd, args, toComplete)
	})
	return cmd
}
