// Package build implements `opm build catalog` and `opm build bundle`.
package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/action/dockerfile"
)

// NewCmd builds `opm build`, which only groups its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build catalog and bundle images without a container engine",
		Long: `Build catalog and bundle images from directories, with no container engine,
reproducibly: the same input gives the same digest on any machine.

The image is written to a registry, an OCI layout (oci:DIR[:TAG]), an OCI
archive (oci-archive:FILE[:TAG]) or a docker archive
(docker-archive:FILE[:REPO:TAG]). Its digest is the one line printed on
standard output (digest=$(opm build ...) keeps it); what was written, the
platforms, the size and the validation's warnings go to standard error, one
line each; -o json prints all of it on standard output.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCatalogCmd(ios, g), newBundleCmd(ios, g))
	return cmd
}

// flags are the flags both subcommands share.
type flags struct {
	opts     build.Options
	output   string
	caFile   string
	cacheDir string
}

// bind binds the shared flags; platforms is the --platform usage, which
// differs: a catalog image has a base image, a bundle image has none.
func (f *flags) bind(fs *pflag.FlagSet, platforms string) {
	fs.StringArrayVarP(&f.opts.Tags, "tag", "t", nil, "Where to write the image (repeatable): HOST/REPO[:TAG], oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG]")
	fs.StringSliceVar(&f.opts.Platforms, "platform", nil, platforms)
	fs.StringVar(&f.opts.Created, "created", "", "Creation time written in the image config: now, an RFC 3339 time or seconds since the epoch (default: $SOURCE_DATE_EPOCH, else 1970-01-01T00:00:00Z)")
	fs.StringVar(&f.opts.DigestFile, "digest-file", "", "Also write the digest to this file (replaced atomically)")
	fs.BoolVar(&f.opts.Overwrite, "overwrite", false, "Replace an existing oci-archive or docker-archive file")
	fs.StringVarP(&f.output, "output", "o", "text", "Output format (text|json): the digest (and a summary on stderr), or JSON")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of certificate authorities to trust for registries")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "Directory of the image layer cache (default: the user cache directory)")
}

// resolve fills the options the flags do not bind directly.
func (f *flags) resolve(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions, dir string) error {
	if err := cmdutil.CheckOutput(f.output, "text", "json"); err != nil {
		return err
	}
	if len(f.opts.Tags) == 0 {
		return cmdutil.FlagErrorf("required flag \"tag\" not set: say where the image goes (-t HOST/REPO:TAG, -t oci:DIR:TAG, ...)")
	}
	reg, err := g.Registry(ios)
	if err != nil {
		return err
	}
	reg.CAFile, reg.CacheDir = f.caFile, f.cacheDir
	f.opts.Registry = reg
	f.opts.Dir = dir
	f.opts.SourceDateEpoch = os.Getenv("SOURCE_DATE_EPOCH")
	return nil
}

// print prints res: the digest on stdout, the only line there, so that
// scripts can keep it (digest=$(opm build ...)), and a summary on stderr;
// or, with -o json, everything as JSON on stdout.
func (f *flags) print(ios *cmdutil.IOStreams, res *build.Result) error {
	if f.output == "json" {
		return cmdutil.WriteJSON(ios.Out, res)
	}
	if _, err := fmt.Fprintln(ios.Out, res.Digest); err != nil {
		return err
	}
	_, err := io.WriteString(ios.ErrOut, summary(res))
	return err
}

// summary is what the build did, one line each: the destinations written,
// the platforms, the size, then the validation: skipped, or its warnings
// (one line per rule, as opm validate writes them without -v).
func summary(res *build.Result) string {
	var b strings.Builder
	for _, d := range res.Destinations {
		fmt.Fprintf(&b, "wrote %s\n", d)
	}
	fmt.Fprintf(&b, "platforms: %s\n", strings.Join(res.Platforms, ", "))
	var sizes []string
	for _, img := range res.Images {
		sizes = append(sizes, fmt.Sprintf("%s (%s)", safefs.FormatSize(img.Size), img.Platform))
	}
	kind := "bundle"
	if res.Validated != nil {
		kind = "catalog"
	}
	files := "files"
	if res.Layer.Files == 1 {
		files = "file"
	}
	fmt.Fprintf(&b, "size: %s compressed; the %s layer %s (%s uncompressed, %d %s)", strings.Join(sizes, ", "),
		kind, safefs.FormatSize(res.Layer.Size), safefs.FormatSize(res.Layer.UncompressedSize), res.Layer.Files, files)
	if sc := res.ServeCache; sc != nil {
		fmt.Fprintf(&b, ", the serve cache layer %s (%s uncompressed)", safefs.FormatSize(sc.Layer.Size), safefs.FormatSize(sc.Layer.UncompressedSize))
	}
	b.WriteString("\n")
	if res.Validated != nil && !*res.Validated {
		b.WriteString("not validated (--skip-validate)\n")
	}
	perRule := map[string]int{}
	for _, w := range res.Warnings {
		perRule[w.Code]++
	}
	more := false
	for _, w := range res.Warnings {
		n := perRule[w.Code]
		if n == 0 {
			continue
		}
		perRule[w.Code] = 0
		b.WriteString("warning: ")
		if p := w.Pos(); p.IsValid() {
			b.WriteString(p.String() + ": ")
		}
		fmt.Fprintf(&b, "%s [%s]", w.Message, w.Code)
		if n > 1 {
			fmt.Fprintf(&b, " (and %d more)", n-1)
			more = true
		}
		b.WriteString("\n")
	}
	if more {
		b.WriteString("(opm validate -v lists every warning)\n")
	}
	return b.String()
}

// usage turns the action's usage errors into flag errors (exit 2).
func usage(err error) error {
	var ue *build.UsageError
	if errors.As(err, &ue) {
		return &cmdutil.FlagError{Err: err}
	}
	return err
}

func newCatalogCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	f := &flags{}
	var (
		opts       build.CatalogOptions
		cmdJSON    string
		serveCache bool
	)
	cmd := &cobra.Command{
		Use:   "catalog <fbcRootDir> -t REF...",
		Short: "Build a catalog image from a file-based catalog directory",
		Long: `Build the catalog image 'opm generate dockerfile' describes, without a
Dockerfile or a container engine: the base image (--base-image, pulled like
any image), one layer holding the catalog directory at /configs (every file),
the label operators.operatorframework.io.index.configs.v1=/configs, the
--extra-labels, and the entrypoint /bin/opm with the command
serve /configs --cache-dir=/var/cache/opm (none on a scratch base).

The serve cache is pre-built into its own layer at /var/cache/opm
(--serve-cache=false leaves it out; scratch images get it only when asked):
upstream's JSON cache, which upstream's opm serve (and OLM's extractContent
pods, with cacheDir: /var/cache/opm) loads after checking its digest, and,
when the base's opm is this very opm (--base-image self, or an image 'make
image' built from the same source), this opm's own index, loaded without
reading the catalog.

--base-image self builds on an image of this opm itself (for its own
platform, with no registry): /bin/opm, run as user 1001, with a writable
/tmp. The running opm must be statically linked (CGO_ENABLED=0).

The catalog is validated first, as 'opm validate' does, unless
--skip-validate. A multi-platform base gives a multi-platform index, one image
per platform; --platform narrows it.

The build is reproducible: file times are $SOURCE_DATE_EPOCH (or the Unix
epoch), owners and modes are normalised, and the config records no build
time unless --created says so. A base named by tag can change under you: name
it by digest for the same digest everywhere.`,
		Example: `  # Build on the default base and push; the digest is printed
  opm build catalog examples/catalog -t quay.io/example/catalog:v1

  # An image that serves with this opm, offline, and its manifests
  opm build catalog examples/catalog --base-image self -t oci:layout:v1
  opm build catalog examples/catalog --base-image self -t quay.io/example/catalog:v1 --manifests deploy/

  # A binary-less image into an OCI layout, for two platforms
  opm build catalog examples/catalog --base-image scratch --platform linux/amd64,linux/arm64 -t oci:layout:v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := f.resolve(ios, g, args[0]); err != nil {
				return err
			}
			if c.Flags().Changed("serve-cache") {
				opts.ServeCache = &serveCache
			}
			opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
			if c.Flags().Changed("cmd") {
				if err := json.Unmarshal([]byte(cmdJSON), &opts.Cmd); err != nil || len(opts.Cmd) == 0 {
					return cmdutil.FlagErrorf("invalid --cmd %q: want a non-empty JSON array of strings, e.g. '[\"serve\",\"/configs\"]'", cmdJSON)
				}
			}
			opts.Options = f.opts
			res, err := build.RunCatalog(c.Context(), opts)
			if err != nil {
				return usage(err)
			}
			return f.print(ios, res)
		},
	}
	fl := cmd.Flags()
	f.bind(fl, "Platforms (os/arch[/variant], repeatable or comma-separated) to build: a subset of a multi-platform base, or the platforms of a scratch image (default linux/amd64)")
	fl.StringVarP(&opts.BaseImage, "base-image", "i", dockerfile.DefaultImage, "Base image: a registry image, oci:DIR[:TAG] or oci-archive:FILE[:TAG]; self for an image of this opm (its own platform, no registry needed); or scratch for a binary-less image")
	fl.StringSliceVarP(&opts.ExtraLabels, "extra-labels", "l", nil, "Extra labels, key=value (repeatable or comma-separated; a later duplicate key wins)")
	fl.BoolVar(&opts.SkipValidate, "skip-validate", false, "Build without validating the catalog first")
	fl.StringVar(&cmdJSON, "cmd", "", `Command of the image as a JSON array, instead of ["serve","/configs","--cache-dir=`+build.CacheDir+`"]`)
	fl.BoolVar(&serveCache, "serve-cache", true, "Pre-build the serve cache into the image at "+build.CacheDir+" (upstream's JSON cache, and this opm's own when the image's opm is this version), and serve from it (default true, false on scratch)")
	fl.StringVar(&opts.Manifests, "manifests", "", "Also write a CatalogSource and a ClusterCatalog for the image (by digest, at its first registry destination) into this directory")
	return cmd
}

func newBundleCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "bundle <bundleDir> -t REF...",
		Short: "Build a bundle image from a bundle directory",
		Long: `Build the image upstream's bundle Dockerfiles describe, without a container
engine: FROM scratch, the bundle's manifests/ and metadata/ directories at
/manifests and /metadata (one layer), and one label per annotation of
metadata/annotations.yaml. The bundle is rendered first, to prove it parses.

The build is reproducible, as for 'opm build catalog'.`,
		Example: `  opm build bundle examples/bundles/foo-0.2.0 -t oci:foo-bundle:v0.2.0`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := f.resolve(ios, g, args[0]); err != nil {
				return err
			}
			res, err := build.RunBundle(c.Context(), build.BundleOptions{Options: f.opts})
			if err != nil {
				return usage(err)
			}
			return f.print(ios, res)
		},
	}
	f.bind(cmd.Flags(), "Platforms (os/arch[/variant], repeatable or comma-separated) the bundle image is built for; several give an index (default linux/amd64)")
	return cmd
}
