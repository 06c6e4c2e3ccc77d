// Package index implements `opm index`: upstream opm's sqlite index
// commands (removed after v1.73.0), under their names and flags, answered
// with file-based catalogs.
package index

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	indexaction "github.com/opmkit/opm/pkg/action/index"
	"github.com/opmkit/opm/pkg/index"
)

// NewCmd builds `opm index`, which groups its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build and edit catalogs with upstream's sqlite-era index commands",
		Long: `Upstream opm's index commands, which built sqlite index images and were
removed after v1.73.0, under their names and flags: 'opm index add' builds a
file-based catalog (FBC) image instead, with no container engine, so that
Makefiles written for it (operator-sdk scaffolds one) keep working; rm, prune
and prune-stranded edit an index (file-based or sqlite) into a file-based
catalog image the same way; deprecatetruncate, which has no exact file-based
form, names the 'opm catalog' commands that do it.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newAddCmd(ios, g))
	cmd.AddCommand(newRmCmd(ios, g), newPruneCmd(ios, g), newPruneStrandedCmd(ios, g), newDeprecateTruncateCmd(ios, g))
	return cmd
}

func newAddCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts        indexaction.AddOptions
		of          outputFlags
		mode        string
		enableAlpha bool
	)
	cmd := &cobra.Command{
		Use:   "add --bundles IMAGE,... [--from-index INDEX] (--tag IMAGE | --generate)",
		Short: "Add operator bundles to an index, as a file-based catalog",
		Long: `Add bundle images to an index, as upstream opm's 'opm index add' did, and
build the result as a file-based catalog (FBC) image instead of an sqlite one:
with no container engine, pushed to --tag as 'opm build catalog' pushes (on
--binary-image, default quay.io/operator-framework/opm:latest). With
--generate, the catalog directory (--catalog-dir, default index/, one folder
per package) and its Dockerfile (--out-dockerfile, default index.Dockerfile)
are written instead.

The catalog is what upstream's sqlite index would have rendered to with
upstream's 'opm render', byte for byte. The channels are built as --mode says:

  replaces           from the CSVs' spec.replaces and spec.skips, walked down
                     from each channel's head, the bundle of greatest version
                     naming the channel (the default)
  semver             by version: each bundle replaces the next lower one in
                     each of its channels; CSV replaces and skips are not used
  semver-skippatch   semver, and a bundle also replaces the lower patch
                     versions of its major.minor, which leave the channel

As upstream's semver modes did, only the channel heads keep their manifests
(olm.bundle.object) in the catalog; OLM pulls the other bundles' images when it
installs them.

--from-index is the index to add to: a file-based catalog (image or directory;
its packages that get no bundle are kept exactly as they are) or an sqlite index
(an index image labelled operators.operatorframework.io.index.database.v1, or an
index.db file), migrated to FBC as 'opm migrate' migrates it.

--container-tool, --build-tool and --pull-tool are accepted and not used.`,
		Example: `  # The catalog-build line of an operator-sdk Makefile, unchanged
  opm index add --container-tool docker --mode semver --tag quay.io/example/catalog:v0.2.0 \
    --bundles quay.io/example/bundle:v0.2.0 --from-index quay.io/example/catalog:v0.1.0

  # The catalog directory and its Dockerfile instead of an image
  opm index add --bundles quay.io/example/bundle:v0.2.0 --generate`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			m, err := index.ParseMode(mode)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			reg, tools, err := of.prepare(c, ios, g)
			if err != nil {
				return err
			}
			opts.Mode, opts.Registry, opts.EnableAlpha, opts.Output = m, reg, enableAlpha, of.out
			opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
			res, err := indexaction.Add(c.Context(), opts)
			if err != nil {
				return usage(err)
			}
			of.finish(ios, c, opts.FromIndex, res.FromSQLite, res.Written, tools)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "Bundle images to add (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("bundles")
	f.StringVarP(&opts.FromIndex, "from-index", "f", "", "Index to add to: a file-based catalog image or directory, or an sqlite index image or index.db file")
	f.StringVar(&mode, "mode", string(index.ModeReplaces), "Graph update mode that builds the channels: replaces, semver or semver-skippatch")
	f.BoolVar(&opts.Permissive, "permissive", false, "Go on past errors adding bundles, keeping what could be added")
	f.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "Replace the channel heads of the index by the bundles of the same names given (replaces mode)")
	_ = f.MarkHidden("overwrite-latest")
	f.BoolVar(&enableAlpha, "enable-alpha", false, "Enable unsupported alpha features (bundles that substitute for others)")
	_ = f.MarkHidden("enable-alpha")
	of.bind(cmd, allTools)
	return cmd
}
