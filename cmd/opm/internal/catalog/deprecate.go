package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
	ce "github.com/opmkit/opm/pkg/catalogedit"
)

func newDeprecateCmd(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	var opts action.DeprecateOptions
	cmd := &cobra.Command{
		Use:   "deprecate package|channel|bundle PACKAGE [NAME...] --message M",
		Short: "Deprecate a package, channels or bundles",
		Long: `Write deprecation entries into the package's olm.deprecations blob (created
beside the package's blobs when it has none). An entry that exists gets the
new message. --remove takes entries out instead (and the blob with its last
entry).

  deprecate package PACKAGE                 the whole package
  deprecate channel PACKAGE CHANNEL...      channels of the package
  deprecate bundle PACKAGE BUNDLE...        bundles of the package` + editLong,
		Example: `  opm catalog deprecate channel -C examples/catalog cache-operator fast --message 'fast is no longer updated; use stable' --dry-run
  opm catalog deprecate bundle -C examples/catalog cache-operator v1.0.0 --message 'upgrade to 1.2.0' --dry-run
  opm catalog deprecate bundle -C examples/catalog cache-operator cache-operator.v1.1.0 --remove --dry-run`,
		Args: cobra.MinimumNArgs(2),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{ce.TargetPackage, ce.TargetChannel, ce.TargetBundle}, cobra.ShellCompDirectiveNoFileComp
			}
			kinds := []string{"", "package"}
			switch args[0] {
			case ce.TargetChannel, ce.TargetBundle:
				kinds = append(kinds, args[0], "...")
			}
			return completeArgs(kinds...)(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case ce.TargetPackage:
				if len(args) != 2 {
					return cmdutil.FlagErrorf("deprecate package takes the package name only")
				}
			case ce.TargetChannel, ce.TargetBundle:
				if len(args) < 3 {
					return cmdutil.FlagErrorf("deprecate %s takes the package and at least one %s name", args[0], args[0])
				}
				if args[0] == ce.TargetChannel {
					if err := checkChannels("", args[2:]...); err != nil {
						return err
					}
				}
			default:
				return cmdutil.FlagErrorf("unknown deprecation target %q: expected package, channel or bundle", args[0])
			}
			if opts.Message == "" && !opts.Remove {
				return cmdutil.FlagErrorf("--message is required (or --remove)")
			}
			if opts.Message != "" && opts.Remove {
				return cmdutil.FlagErrorf("--message and --remove cannot be used together")
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				opts.Common, opts.Target, opts.Package, opts.Names = c, args[0], args[1], args[2:]
				return action.Deprecate(cmd.Context(), opts)
			})
		},
	}
	addEditFlags(cmd, &f)
	cmd.Flags().StringVar(&opts.Message, "message", "", "the deprecation message")
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "remove the deprecations instead")
	return cmd
}
