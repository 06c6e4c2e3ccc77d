package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
	"github.com/opmkit/opm/pkg/migrations"
)

func newAddBundleCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	var opts action.AddBundleOptions
	cmd := &cobra.Command{
		Use:   "add-bundle REF [--channel CHANNEL[,CHANNEL...]]",
		Short: "Render a bundle and add it to its package and channels",
		Long: `Render a bundle (a bundle directory or a bundle image, as 'opm render' does)
and insert it into its package: the olm.bundle blob goes where the package's
bundles live, and each channel named with --channel (a comma-separated list,
or repeated) gets an entry; without --channel, the channels the bundle's
annotations name (metadata/annotations.yaml), the default channel first,
as a line on stderr says. Channel names cannot hold commas. By
default an entry replaces the channel's head; --replaces, --skips and
--skip-range set the edges yourself.

The bundle carries olm.csv.metadata when the package's newest bundle does,
and its olm.bundle.object properties otherwise; --migrate-level chooses
explicitly. A bundle directory has no image: --image names the one it will
be pushed as, and is required for it. In a basic template the bundle becomes a stub naming its
image (so REF must be an image). --create adds a missing package (default
channel: the first --channel, or the annotations' default channel) and
missing channels.` + editLong,
		Example: `  opm catalog add-bundle -C examples/catalog examples/bundles/foo-0.1.0 --channel stable --create --image quay.io/example/foo-bundle:v0.1.0 --dry-run
  opm catalog add-bundle -C examples/catalog quay.io/example/cache-operator-bundle:v1.3.0 --channel stable,fast --skip-range '>=1.0.0 <1.3.0'
  opm catalog add-bundle -C template.yaml quay.io/example/cache-operator-bundle:v1.3.0 --channel stable`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkEdges(opts.Edges); err != nil {
				return err
			}
			if err := checkChannels("--channel", opts.Channels...); err != nil {
				return err
			}
			if opts.MigrateLevel != "" {
				if err := migrations.Check(opts.MigrateLevel); err != nil {
					return &cmdutil.FlagError{Err: err}
				}
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				opts.Common, opts.Ref, opts.Registry = c, args[0], reg
				return action.AddBundle(cmd.Context(), opts)
			})
		},
	}
	addEditFlags(cmd, &f)
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Channels, "channel", nil, "channels to add the bundle to (comma-separated or repeated; default: those of the bundle's annotations)")
	fl.BoolVar(&opts.Create, "create", false, "create a missing package and missing channels")
	fl.StringVar(&opts.MigrateLevel, "migrate-level", "", "migration level for the rendered bundle (default: as the package's newest bundle)")
	fl.StringVar(&opts.Image, "image", "", "the bundle's image (required for a bundle directory)")
	edgeFlags(cmd, &opts.Edges)
	_ = cmd.RegisterFlagCompletionFunc("channel", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return editNames.Channels(cmd, args, toComplete, "")
	})
	return cmd
}
