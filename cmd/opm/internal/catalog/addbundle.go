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
		Use:   "add-bundle REF --channel CHANNEL[,CHANNEL...]",
		Short: "Render a bundle and add it to its package and channels",
		Long: `Render a bundle (a bundle directory or a bundle image, as 'opm render' does)
and insert it into its package: the olm.bundle blob goes where the package's
bundles live, and each channel named with --channel gets an entry. By
default an entry replaces the channel's head; --replaces, --skips and
--skip-range set the edges yourself.

The bundle carries olm.csv.metadata when the package's newest bundle does,
and its olm.bundle.object properties otherwise; --migrate-level chooses
explicitly. A bundle directory has no image: --image names the one it will
be pushed as, and is required for it. In a basic template the bundle becomes a stub naming its
image (so REF must be an image). --create adds a missing package (default
channel: the first --channel) and missing channels.` + editLong,
		Example: `  opm catalog add-bundle -C catalog ./bundle --channel stable --image quay.io/me/op-bundle:v1.2.0
  opm catalog add-bundle -C catalog quay.io/me/op-bundle:v1.2.0 --channel stable,fast --skip-range '>=1.0.0 <1.2.0'
  opm catalog add-bundle -C template.yaml quay.io/me/op-bundle:v1.2.0 --channel stable`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			if err := checkEdges(opts.Edges); err != nil {
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
			opts.Common, opts.Ref, opts.Registry = f.common, args[0], reg
			res, err := action.AddBundle(cmd.Context(), opts)
			if err != nil {
				return err
			}
			return printResult(ios, &f, res)
		},
	}
	addEditFlags(cmd, &f)
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Channels, "channel", nil, "channels to add the bundle to (comma-separated or repeated)")
	fl.BoolVar(&opts.Create, "create", false, "create a missing package and missing channels")
	fl.StringVar(&opts.MigrateLevel, "migrate-level", "", "migration level for the rendered bundle (default: as the package's newest bundle)")
	fl.StringVar(&opts.Image, "image", "", "the bundle's image (required for a bundle directory)")
	edgeFlags(cmd, &opts.Edges)
	_ = cmd.MarkFlagRequired("channel")
	return cmd
}
