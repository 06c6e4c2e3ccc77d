package index

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	indexaction "github.com/opmkit/opm/pkg/action/index"
)

// The edits of an index: rm, prune and prune-stranded, which have exact
// file-based forms, and deprecatetruncate, which names the opm catalog
// commands that do it.

const fromIndexLong = `

--from-index is the index: a file-based catalog (image or directory) or an
sqlite index (an index image labelled
operators.operatorframework.io.index.database.v1, or an index.db file),
migrated to FBC as 'opm migrate' migrates it. The result is built and pushed
to --tag as a file-based catalog image, with no container engine (on
--binary-image, default quay.io/operator-framework/opm:latest), or with
--generate written as the catalog directory (--catalog-dir, default index/)
and its Dockerfile (--out-dockerfile, default index.Dockerfile).
--container-tool, --build-tool and --pull-tool are accepted and not used.`

// newEditCmd builds one of rm, prune and prune-stranded.
func newEditCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, kind indexaction.EditKind, cmd *cobra.Command, tools toolSet) (*cobra.Command, *indexaction.EditOptions) {
	opts := &indexaction.EditOptions{Kind: kind}
	var of outputFlags
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		reg, tools, err := of.prepare(c, ios, g)
		if err != nil {
			return err
		}
		opts.Registry, opts.Output = reg, of.out
		opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
		res, err := indexaction.Edit(c.Context(), *opts)
		if err != nil {
			return usage(err)
		}
		for _, b := range res.Stranded {
			fmt.Fprintf(ios.ErrOut, "removed stranded bundle %s\n", b)
		}
		of.finish(ios, c, opts.FromIndex, res.FromSQLite, res.Written, tools)
		return nil
	}
	f := cmd.Flags()
	f.StringVarP(&opts.FromIndex, "from-index", "f", "", "Index to edit: a file-based catalog image or directory, or an sqlite index image or index.db file")
	_ = cmd.MarkFlagRequired("from-index")
	of.bind(cmd, tools)
	return cmd, opts
}

func newRmCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd, opts := newEditCmd(ios, g, indexaction.EditRemove, &cobra.Command{
		Use:   "rm --from-index INDEX --operators PACKAGE,... (--tag IMAGE | --generate)",
		Short: "Remove whole packages from an index, as a file-based catalog",
		Long: `Remove packages from an index, every blob of each, as upstream opm's 'opm
index rm' did. A package the index does not have is an error (upstream's
too), unless --permissive: the others are then removed, with a warning.

On a file-based catalog directory, 'opm catalog filter --package P ...'
keeps the packages named instead.` + fromIndexLong,
		Example: `  opm index rm --from-index quay.io/example/catalog:v1 --operators memcached-operator --tag quay.io/example/catalog:v2
  opm index rm --from-index index.db --operators etcd --generate`,
	}, allTools)
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Packages, "operators", "o", nil, "Packages to remove (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("operators")
	f.BoolVar(&opts.Permissive, "permissive", false, "Go on past packages the index does not have, with a warning")
	return cmd
}

func newPruneCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd, opts := newEditCmd(ios, g, indexaction.EditPrune, &cobra.Command{
		Use:   "prune --from-index INDEX --packages PACKAGE,... (--tag IMAGE | --generate)",
		Short: "Keep only some packages of an index, as a file-based catalog",
		Long: `Remove every package of an index but those named, as upstream opm's 'opm
index prune' did; blobs of no package are kept. Upstream ignored names the
index does not have; since a misspelt name would remove the package meant to
be kept, opm refuses them unless --permissive (a warning then).

On a file-based catalog, 'opm catalog filter --package P ...' does the same.` + fromIndexLong,
		Example: `  opm index prune --from-index quay.io/example/catalog:v1 --packages memcached-operator --tag quay.io/example/catalog:v2
  opm index prune --from-index index.db --packages etcd,prometheus --generate`,
	}, containerToolOnly)
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Packages, "packages", "p", nil, "Packages to keep (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("packages")
	f.BoolVar(&opts.Permissive, "permissive", false, "Go on past packages the index does not have, with a warning")
	return cmd
}

func newPruneStrandedCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd, _ := newEditCmd(ios, g, indexaction.EditPruneStranded, &cobra.Command{
		Use:   "prune-stranded --from-index INDEX (--tag IMAGE | --generate)",
		Short: "Remove the bundles no channel lists, as a file-based catalog",
		Long: `Remove the bundles of an index that no channel lists, as upstream opm's 'opm
index prune-stranded' did; each is named on standard error. A valid
file-based catalog has none ('opm validate' refuses them), and an sqlite
index's are left out when it is migrated, so this mostly rebuilds the index
as a file-based catalog.` + fromIndexLong,
		Example: `  opm index prune-stranded --from-index quay.io/example/catalog:v1 --tag quay.io/example/catalog:v2`,
	}, containerToolOnly)
	return cmd
}

func newDeprecateTruncateCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts        indexaction.DeprecateTruncateOptions
		of          outputFlags
		permissive  bool
		allowRemove bool
	)
	cmd := &cobra.Command{
		// hidden, as upstream's
		Hidden: true,
		Use:    "deprecatetruncate --from-index INDEX --bundles IMAGE,...",
		Short:  "Say which opm catalog commands deprecate bundles and truncate their channels",
		Long: `Upstream opm's 'opm index deprecatetruncate' marked bundles deprecated in an
sqlite index and deleted every bundle they replaced. A file-based catalog
has no exact form of that: OLM does not read upstream's deprecated mark from
file-based catalogs, which deprecate bundles with olm.deprecations blobs
instead. So nothing is built: the bundles are looked up in --from-index
(an FBC or sqlite index, image, directory or file) and the error names the
'opm catalog' commands that do the edit on the index's catalog:
'opm catalog deprecate bundle' and 'opm catalog prune --before'.

Every flag of upstream's command is accepted.`,
		Example: `  opm index deprecatetruncate --from-index quay.io/example/catalog:v1 --bundles quay.io/example/bundle:v0.2.0 --tag quay.io/example/catalog:v2`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			reg, _, err := of.prepare(c, ios, g)
			if err != nil {
				return err
			}
			if opts.FromIndex == "" {
				return cmdutil.FlagErrorf("--from-index is required: the index whose catalog to edit")
			}
			opts.Registry = reg
			return indexaction.DeprecateTruncate(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.FromIndex, "from-index", "f", "", "Index holding the bundles: a file-based catalog image or directory, or an sqlite index image or index.db file")
	f.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "Bundle images to deprecate (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("bundles")
	f.BoolVar(&permissive, "permissive", false, "Accepted for compatibility")
	f.BoolVar(&allowRemove, "allow-package-removal", false, "Accepted for compatibility ('opm catalog deprecate package' deprecates a whole package)")
	of.bind(cmd, allTools)
	return cmd
}
