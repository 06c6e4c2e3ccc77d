// Package render implements `opm render`: flags in, [render.Run] once, the
// blobs out as JSON or YAML.
package render

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/render"
	"github.com/opmkit/opm/pkg/declcfg"
)

// NewCmd builds `opm render`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts          render.Options
		output        string
		cafile, cache string
		platform      string
	)
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
  opm render examples/catalog -o yaml

  # Render bundles with their package and channels, then validate them
  set -o pipefail
  opm render examples/bundles/foo-0.2.0 examples/bundles/foo-0.1.0 --with-channels | opm validate -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "json", "yaml"); err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			reg.CAFile, reg.CacheDir, reg.Platform = cafile, cache, platform
			opts.Refs, opts.Registry = args, reg
			opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
			return render.Write(cmd.Context(), opts, ios.Out, declcfg.Format(output))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "json", "Output format of the streamed file-based catalog objects (json|yaml)")
	f.StringVar(&opts.MigrateLevel, "migrate-level", "", "Name of the last migration to run (default: none): none, bundle-object-to-csv-metadata")
	f.BoolVar(&opts.Migrate, "migrate", false, "Perform all available schema migrations on the rendered FBC")
	cmd.MarkFlagsMutuallyExclusive("migrate", "migrate-level")
	f.StringVar(&opts.ImageRefTemplate, "alpha-image-ref-template", "", "When bundle image reference information is unavailable, populate it with this template ({{.Package}}, {{.Name}}, {{.Version}})")
	f.BoolVar(&opts.WithChannels, "with-channels", false, "Also emit olm.package and olm.channel blobs derived from the rendered bundles")
	f.StringVar(&cafile, "ca-file", "", "PEM file of certificate authorities to trust for registries")
	f.StringVar(&cache, "cache-dir", "", "Directory of the image layer cache (default: the user cache directory)")
	f.StringVar(&platform, "platform", "", "Platform (os/arch[/variant]) to pick from multi-arch images (default: this host's)")
	return cmd
}
