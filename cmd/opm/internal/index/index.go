// Package index implements `opm index`: upstream opm's sqlite index
// commands (removed after v1.73.0), under their names and flags, answered
// with file-based catalogs.
package index

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action"
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
Makefiles written for it (operator-sdk scaffolds one) keep working; rm, prune,
prune-stranded and deprecatetruncate say which 'opm catalog' command edits a
file-based catalog that way.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newAddCmd(ios, g))
	cmd.AddCommand(newEditCmds(ios)...)
	return cmd
}

// toolFlags are upstream's container tool flags: accepted, checked as
// upstream checks them, and not used.
type toolFlags struct {
	container, build, pull string
}

func (t *toolFlags) bind(fs *pflag.FlagSet) {
	fs.StringVarP(&t.container, "container-tool", "c", "", "Accepted for compatibility and not used: opm builds and pushes images itself, with no container engine (one of: docker, podman)")
	fs.StringVarP(&t.build, "build-tool", "u", "", "Accepted for compatibility and not used (one of: docker, podman)")
	fs.StringVarP(&t.pull, "pull-tool", "p", "", "Accepted for compatibility and not used: opm pulls images itself (one of: none, docker, podman)")
}

// check is upstream's check of the tool flags; it returns the tool named,
// for the note.
func (t *toolFlags) check() (string, error) {
	oneOf := func(flag, v string, ok ...string) error {
		for _, o := range ok {
			if v == o {
				return nil
			}
		}
		return cmdutil.FlagErrorf("invalid --%s %q: one of %s", flag, v, strings.Join(ok, ", "))
	}
	if t.build == "none" {
		return "", cmdutil.FlagErrorf("none is not a valid container-tool for index add")
	}
	if t.container != "" && (t.build != "" || t.pull != "") {
		return "", cmdutil.FlagErrorf("container-tool cannot be set alongside pull-tool or build-tool")
	}
	for _, f := range []struct{ flag, v string }{{"container-tool", t.container}, {"build-tool", t.build}} {
		if f.v != "" {
			if err := oneOf(f.flag, f.v, "docker", "podman"); err != nil {
				return "", err
			}
		}
	}
	if t.pull != "" {
		if err := oneOf("pull-tool", t.pull, "none", "docker", "podman"); err != nil {
			return "", err
		}
	}
	for _, v := range []string{t.container, t.build} {
		if v != "" {
			return v, nil
		}
	}
	return "", nil
}

func newAddCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts        indexaction.AddOptions
		tools       toolFlags
		mode, tag   string
		cafile      string
		cache       string
		debug       bool
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
			tool, err := tools.check()
			if err != nil {
				return err
			}
			m, err := index.ParseMode(mode)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			reg.CAFile, reg.CacheDir = cafile, cache
			opts.Mode, opts.Registry, opts.EnableAlpha = m, reg, enableAlpha
			if tag != "" {
				opts.Build.Tags = []string{tag}
			}
			opts.Build.SourceDateEpoch = os.Getenv("SOURCE_DATE_EPOCH")
			opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
			res, err := indexaction.Add(c.Context(), opts)
			if err != nil {
				return usage(err)
			}
			fmt.Fprintln(ios.ErrOut, note(opts, res, tool))
			if res.Image != nil {
				fmt.Fprintln(ios.Out, res.Image.Digest)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "Bundle images to add (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("bundles")
	f.StringVarP(&opts.FromIndex, "from-index", "f", "", "Index to add to: a file-based catalog image or directory, or an sqlite index image or index.db file")
	f.StringVar(&mode, "mode", string(index.ModeReplaces), "Graph update mode that builds the channels: replaces, semver or semver-skippatch")
	f.StringVarP(&tag, "tag", "t", "", "Where to push the catalog image: HOST/REPO[:TAG], oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG]")
	f.StringVarP(&opts.BinaryImage, "binary-image", "i", "", "Base image of the catalog image, holding /bin/opm (default quay.io/operator-framework/opm:latest; self for an image of this opm)")
	f.BoolVar(&opts.Generate, "generate", false, "Write the catalog directory and its Dockerfile instead of building the image")
	f.StringVarP(&opts.OutDockerfile, "out-dockerfile", "d", "", "Name of the Dockerfile --generate writes (default index.Dockerfile)")
	f.StringVar(&opts.CatalogDir, "catalog-dir", "", "Catalog directory --generate writes (default index)")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "Let --generate replace an existing catalog directory and Dockerfile")
	f.BoolVar(&opts.Permissive, "permissive", false, "Go on past errors adding bundles, keeping what could be added")
	f.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "Replace the channel heads of the index by the bundles of the same names given (replaces mode)")
	_ = f.MarkHidden("overwrite-latest")
	f.BoolVar(&enableAlpha, "enable-alpha", false, "Enable unsupported alpha features (bundles that substitute for others)")
	_ = f.MarkHidden("enable-alpha")
	f.BoolVar(&debug, "debug", false, "Accepted for compatibility")
	_ = f.MarkHidden("debug")
	f.StringVar(&cafile, "ca-file", "", "PEM file of certificate authorities to trust for registries")
	f.StringVar(&cache, "cache-dir", "", "Directory of the image layer cache (default: the user cache directory)")
	tools.bind(f)
	return cmd
}

// note is the one line that says the result is a file-based catalog.
func note(o indexaction.AddOptions, res *indexaction.AddResult, tool string) string {
	var b strings.Builder
	b.WriteString("note: opm index add builds file-based catalogs (FBC), not sqlite indexes")
	if res.FromSQLite {
		fmt.Fprintf(&b, " (the sqlite index %s was migrated to FBC)", o.FromIndex)
	}
	if o.Generate {
		fmt.Fprintf(&b, ": wrote the catalog to %s/ and %s (not database/index.db); 'opm build catalog %s -t IMAGE' builds its image with no container engine", res.Written[0], res.Written[1], res.Written[0])
		return b.String()
	}
	fmt.Fprintf(&b, ": pushed the catalog image to %s; to keep the catalog as a directory, run with --generate (or 'opm migrate %s DIR')", o.Build.Tags[0], o.Build.Tags[0])
	if tool != "" {
		fmt.Fprintf(&b, "; --container-tool %s was not used", tool)
	}
	return b.String()
}

// usage turns the action's usage errors into flag errors (exit 2).
func usage(err error) error {
	var ue *action.UsageError
	if errors.As(err, &ue) {
		return &cmdutil.FlagError{Err: err}
	}
	return err
}

func newEditCmds(*cmdutil.IOStreams) []*cobra.Command { return nil }
