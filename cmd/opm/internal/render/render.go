// Package render implements `opm render`.
package render

import (
	"context"
	"fmt"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// Options are the flags of `opm render`.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Refs             []string
	Output           string
	MigrateLevel     string
	Migrate          bool
	ImageRefTemplate string
	WithChannels     bool
	CAFile           string
	CacheDir         string
	Platform         string
	ImageLimits      string
}

// NewCmd builds `opm render`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "render [catalog-image | catalog-directory | bundle-image | bundle-directory]...",
		Short: "Generate a stream of file-based catalog objects from catalogs and bundles",
		Long: `Generate a stream of file-based catalog objects to stdout from the provided
catalog images, file-based catalog directories, bundle images, and bundle
directories.

A directory holding both manifests/ and metadata/ is a bundle directory; any
other directory is a file-based catalog; anything else is an image reference,
except a path (starting with /, ./, ../ or ~), which must exist.

Beyond upstream: --with-channels also derives the olm.package and olm.channel
blobs of the rendered bundles from their annotations and CSVs.`,
		Example: `  # Render a catalog directory as YAML
  opm render ./catalog -o yaml

  # Render bundles with their package and channels, then validate them
  opm render ./bundle-v1 ./bundle-v2 --with-channels | opm validate -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "json", "Output format of the streamed file-based catalog objects (json|yaml)")
	f.StringVar(&opts.MigrateLevel, "migrate-level", "", "Name of the last migration to run (default: none): none, bundle-object-to-csv-metadata")
	f.BoolVar(&opts.Migrate, "migrate", false, "Perform all available schema migrations on the rendered FBC")
	cmd.MarkFlagsMutuallyExclusive("migrate", "migrate-level")
	f.StringVar(&opts.ImageRefTemplate, "alpha-image-ref-template", "", "When bundle image reference information is unavailable, populate it with this template ({{.Package}}, {{.Name}}, {{.Version}})")
	f.BoolVar(&opts.WithChannels, "with-channels", false, "Also emit olm.package and olm.channel blobs derived from the rendered bundles")
	f.StringVar(&opts.CAFile, "ca-file", "", "PEM file of certificate authorities to trust for registries")
	f.StringVar(&opts.CacheDir, "cache-dir", "", "Directory of the image layer cache (default: the user cache directory)")
	f.StringVar(&opts.Platform, "platform", "", "Platform (os/arch[/variant]) to pick from multi-arch images (default: this host's)")
	f.StringVar(&opts.ImageLimits, "image-limits", "", "Limits on images, KEY=SIZE,... (manifest, config, blob, extract, uncompressed, entries, depth; see docs/images.md)")
	return cmd
}

// Run renders opts.Refs to opts.IO.Out.
func Run(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "json", "yaml"); err != nil {
		return err
	}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	reg.CAFile, reg.CacheDir, reg.Platform = opts.CAFile, opts.CacheDir, opts.Platform
	if reg.Limits, err = image.ParseLimits(opts.ImageLimits); err != nil {
		return cmdutil.FlagErrorf("invalid --image-limits: %v", err)
	}
	ropts := render.Options{
		Refs:           opts.Refs,
		MigrationLevel: opts.MigrateLevel,
		WithChannels:   opts.WithChannels,
		Registry:       reg,
	}
	if opts.Migrate {
		ropts.MigrationLevel = "all"
	}
	if opts.ImageRefTemplate != "" {
		tmpl, err := template.New("image-ref-template").Option("missingkey=error").Parse(opts.ImageRefTemplate)
		if err != nil {
			return cmdutil.FlagErrorf("invalid image reference template: %v", err)
		}
		ropts.ImageRefTemplate = tmpl
	}
	cfg, err := render.Render(ctx, ropts)
	if err != nil {
		return err
	}
	if err := declcfg.Write(*cfg, opts.IO.Out, declcfg.Format(opts.Output)); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
