package catalog

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
)

const restitchLong = `

Each channel the bundles leave is re-stitched so that every remaining
bundle still reaches the head: an entry that replaced a removed bundle now
replaces what that bundle replaced and skips what it skipped; an entry that
skipped it now skips those. When the head goes, the newest of the entries
it replaced or skipped becomes the head and skips the others. Channels left
empty are removed (not the default channel: that is refused), and so are
deprecation entries of what is gone.

Installs of a removed bundle keep upgrading: its name stays in the skips of
the entries that upgraded from it (OLM matches edges by name), and the
summary lists those installs. --drop-edges drops the names, leaving those
installs without an upgrade. What the new graph no longer allows is listed
as lost upgrade paths.`

func newRemoveBundleCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var f editFlags
	var opts action.RemoveBundleOptions
	cmd := &cobra.Command{
		Use:   "remove-bundle PACKAGE BUNDLE...",
		Short: "Remove bundles and re-stitch their channels",
		Long: `Remove bundles from a package: their olm.bundle blobs and their channel
entries.` + restitchLong + `

In a basic template, a bundle's stub is the one that carries its name, or
else the one whose image renders to it (the images are pulled).` + editLong,
		Example: `  opm catalog remove-bundle -C examples/catalog cache-operator cache-operator.v1.1.1 --dry-run
  opm catalog remove-bundle -C examples/catalog cache-operator v1.1.1 --drop-edges --dry-run`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: completeArgs("package", "bundle", "..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			return f.run(ios, cmd, func(c action.Common) (*action.Result, error) {
				opts.Common, opts.Package, opts.Bundles, opts.Registry = c, args[0], args[1:], reg
				return action.RemoveBundle(cmd.Context(), opts)
			})
		},
	}
	addEditFlags(cmd, &f)
	dropEdgesFlags(cmd, &opts.DropEdges)
	return cmd
}
