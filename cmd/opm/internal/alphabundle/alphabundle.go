// Package alphabundle implements upstream's legacy bundle commands, `opm
// alpha bundle generate|build|unpack`, and `extract`, which says why it is
// not supported.
package alphabundle

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	bundlecmd "github.com/opmkit/opm/cmd/opm/internal/bundle"
	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/alphabundle"
	"github.com/opmkit/opm/pkg/action/build"
)

// NewCmd builds `opm alpha bundle`, which only groups its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Manage operator bundle metadata",
		Long: `Generate operator bundle metadata and build bundle image.

These are upstream's legacy bundle commands, with no container engine:
generate writes metadata/annotations.yaml and bundle.Dockerfile, build also
builds the image (as 'opm build bundle'), unpack writes a bundle image's
contents to a directory, validate validates a bundle image (as 'opm bundle
validate' with fewer validators). See docs/alpha-bundle.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newGenerateCmd(ios), newBuildCmd(ios, g), newUnpackCmd(ios, g), newExtractCmd(), bundlecmd.NewAlphaValidateCmd(ios, g))
	return cmd
}

// bindGenerate binds the flags generate and build share.
func bindGenerate(fl *pflag.FlagSet, o *action.GenerateOptions) {
	fl.StringVarP(&o.Directory, "directory", "d", "", "The directory where bundle manifests for a specific version are located.")
	fl.StringVarP(&o.Package, "package", "p", "", "The name of the package that bundle image belongs to (Required if `directory` is not pointing to a bundle in the nested bundle format)")
	fl.StringVarP(&o.Channels, "channels", "c", "", "The list of channels that bundle image belongs to(Required if `directory` is not pointing to a bundle in the nested bundle format)")
	fl.StringVarP(&o.DefaultChannel, "default", "e", "", "The default channel for the bundle image")
	fl.StringVarP(&o.OutputDir, "output-dir", "u", "", "Optional output directory for operator manifests")
}

func newGenerateCmd(ios *cmdutil.IOStreams) *cobra.Command {
	var opts action.GenerateOptions
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate operator bundle metadata and Dockerfile",
		Long: `The "opm alpha bundle generate" command will generate operator
bundle metadata if needed and a Dockerfile to build Operator bundle image.

It writes <parent of --directory>/metadata/annotations.yaml (or, with
--output-dir DIR, copies the manifests to DIR/manifests and writes
DIR/metadata/annotations.yaml) and ./bundle.Dockerfile. The media type is
helm for a chart, registry+v1 when a manifest is a ClusterServiceVersion,
plain otherwise. Without --package or --channels they are inferred from a
package manifest in the parent directory (the nested bundle format).

No file is replaced without --overwrite: an existing annotations file must
agree with the generated one, copied manifests must be identical, and a
different bundle.Dockerfile is kept (with a note).`,
		Example: `  opm alpha bundle generate --directory bundle/manifests --package test-operator --channels stable,beta --default stable`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := action.Generate(c.Context(), opts)
			if err != nil {
				return err
			}
			printGenerate(ios, res)
			return nil
		},
	}
	fl := cmd.Flags()
	bindGenerate(fl, &opts)
	fl.StringVar(&opts.BaseImage, "base-image", "scratch", "The base image of the bundle.Dockerfile")
	fl.BoolVar(&opts.Overwrite, "overwrite", false, "Replace existing files that differ (annotations.yaml, bundle.Dockerfile, copied manifests)")
	_ = cmd.MarkFlagRequired("directory")
	return cmd
}

// printGenerate prints what generate did, on standard error as upstream
// logs it.
func printGenerate(ios *cmdutil.IOStreams, res *action.GenerateResult) {
	for _, n := range res.Notes {
		fmt.Fprintf(ios.ErrOut, "note: %s\n", n)
	}
	for _, f := range res.Files {
		if f.Why != "" {
			fmt.Fprintf(ios.ErrOut, "%s %s: %s\n", f.Action, f.Path, f.Why)
			continue
		}
		fmt.Fprintf(ios.ErrOut, "%s %s\n", f.Action, f.Path)
	}
}

func newBuildCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   action.BuildOptions
		caFile string
	)
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build operator bundle image",
		Long: `The "opm alpha bundle build" command will generate operator
bundle metadata if needed and build bundle image with operator manifest
and metadata for a specific version.

As upstream, it runs generate first (see opm alpha bundle generate --help),
then builds the image, here with no container engine, as 'opm build bundle'
does: FROM scratch, a label per annotation, manifests/ and metadata/ at
/manifests and /metadata, reproducibly. The image's digest is printed.

--tag says where the image goes: a registry reference is pushed (upstream's
engine only tags it locally; push it yourself there), and oci:DIR[:TAG],
oci-archive:FILE[:TAG] and docker-archive:FILE[:REPO:TAG] write local
copies. --image-builder names the engine upstream runs; none is run here,
so it is checked and ignored. --directory must name a directory called
manifests (its parent is the bundle directory), or --output-dir must be
given.`,
		Example: `  opm alpha bundle build --directory bundle/manifests --tag quay.io/example/test-operator-bundle:v0.1.0 \
    --package test-operator --channels stable,beta --default stable
  opm alpha bundle build -d bundle/manifests -p test-operator -c stable -t oci:bundle-layout:v0.1.0`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			reg.CAFile = caFile
			opts.Registry = reg
			opts.SourceDateEpoch = os.Getenv("SOURCE_DATE_EPOCH")
			if c.Flags().Changed("image-builder") {
				fmt.Fprintf(ios.ErrOut, "note: --image-builder %s: no container engine is run; opm builds the image itself\n", opts.ImageBuilder)
			}
			res, err := action.Build(c.Context(), opts)
			if res != nil && res.Generate != nil {
				printGenerate(ios, res.Generate)
			}
			if err != nil {
				var ue *build.UsageError
				if errors.As(err, &ue) {
					return &cmdutil.FlagError{Err: err}
				}
				return err
			}
			_, err = fmt.Fprintln(ios.Out, res.Image.Digest)
			return err
		},
	}
	fl := cmd.Flags()
	bindGenerate(fl, &opts.GenerateOptions)
	fl.StringVarP(&opts.Tag, "tag", "t", "", "The image tag applied to the bundle image: a registry reference (pushed), oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG]")
	fl.StringVarP(&opts.ImageBuilder, "image-builder", "b", "docker", "Tool to build container images. One of: [docker, podman, buildah] (none is run: opm builds the image itself)")
	fl.BoolVarP(&opts.Overwrite, "overwrite", "o", false, "To overwrite annotations.yaml, bundle.Dockerfile and copied manifests if they exist and differ")
	fl.StringVar(&opts.BaseImage, "base-image", "scratch", "The base image of the bundle (scratch only: bundle images are built on scratch here)")
	fl.StringVar(&caFile, "ca-file", "", "PEM file of certificate authorities to trust for the registry")
	_ = cmd.MarkFlagRequired("directory")
	_ = cmd.MarkFlagRequired("tag")
	return cmd
}

func newUnpackCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   action.UnpackOptions
		caFile string
		debug  bool
	)
	cmd := &cobra.Command{
		Use:   "unpack BUNDLE_NAME[:TAG|@DIGEST]",
		Short: "Unpacks the content of an operator bundle",
		Long: `Unpacks the content of an operator bundle into a directory.

The image is pulled with opm's image code (registries.conf, credentials, the
blob cache, --image-limits; no container engine or containerd), and its
bundle directories (manifests/, metadata/ and those the annotations
operators.operatorframework.io.bundle.manifests.v1 and .metadata.v1 name)
are written to --out, which must be absent or empty unless --overwrite;
--overwrite replaces those directories alone. Anything else in the image
(a .git/, other files) is never written: a line on stderr names what was
skipped. Nothing is written unless the bundle
renders as 'opm render' renders it (--skip-validation unpacks any image),
and no link in it may lead out of the directory. Files get the modes of a
checkout (0644, executables and directories 0755).

BUNDLE_NAME is a registry reference, or oci:DIR[:TAG], oci-archive:FILE[:TAG]
or docker-archive:FILE[:REPO:TAG].`,
		Example: `  opm alpha bundle unpack quay.io/example/test-operator-bundle:v0.1.0 --out bundle`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			reg.CAFile = caFile
			opts.Ref, opts.Registry = args[0], reg
			res, err := action.Unpack(c.Context(), opts)
			if err != nil {
				return err
			}
			if debug {
				fmt.Fprintf(ios.ErrOut, "pulled %s (%s)\n", res.Ref, res.Digest)
			}
			if len(res.Skipped) > 0 {
				fmt.Fprintf(ios.ErrOut, "skipped what is not bundle content (only manifests/, metadata/ and the directories the annotations name are unpacked): %s\n", strings.Join(res.Skipped, ", "))
			}
			fmt.Fprintf(ios.ErrOut, "unpacked %s to %s:", res.Ref, res.OutDir)
			for _, e := range res.Entries {
				fmt.Fprintf(ios.ErrOut, " %s", e)
			}
			fmt.Fprintln(ios.ErrOut)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.OutDir, "out", "o", "./", "directory in which to unpack operator bundle content")
	fl.BoolVarP(&opts.SkipValidation, "skip-validation", "v", false, "disable bundle validation")
	fl.StringVarP(&caFile, "root-ca", "c", "", "file path of a root CA to use when communicating with image registries")
	fl.BoolVarP(&debug, "debug", "d", false, "enable debug logging (here: also print the image digest)")
	fl.BoolVar(&opts.Overwrite, "overwrite", false, "unpack into a non-empty --out, replacing the bundle's directories (manifests/, metadata/, those the annotations name) and keeping everything else")
	// Upstream's -s shorthand of the global --skip-tls (deprecated).
	fl.BoolVarP(&g.SkipTLS, "skip-tls", "s", false, "disable TLS verification")
	_ = fl.MarkHidden("skip-tls")
	return cmd
}

func newExtractCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "extract",
		Short: "Extracts the data in a bundle directory via ConfigMap (not supported: needs a cluster)",
		Long: `Not supported here. Upstream runs this command inside a cluster, in the
pod of OLM's bundle unpack job, to write a bundle's manifests into a
ConfigMap through the Kubernetes API. opm has no Kubernetes client and runs
nothing in a cluster, so this command always fails (exit status 1, as every
failure), without doing anything.

To read a bundle's contents, use 'opm alpha bundle unpack IMAGE --out DIR'
or 'opm render IMAGE'.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New(
				"opm alpha bundle extract is not supported: upstream runs it inside a cluster (OLM's bundle unpack job) to write a bundle's manifests into a ConfigMap, and opm has no Kubernetes client; to read a bundle's contents use 'opm alpha bundle unpack IMAGE --out DIR' or 'opm render IMAGE'")
		},
	}
	// Upstream's flags, accepted so that any invocation gets the message
	// above rather than a flag error.
	fl := cmd.Flags()
	fl.StringP("configmapname", "c", "", "name of configmap to write bundle data")
	fl.StringP("namespace", "n", "openshift-operator-lifecycle-manager", "namespace to write configmap data")
	fl.StringP("manifestsdir", "m", "/", "path to directory containing manifests")
	fl.StringP("kubeconfig", "k", "", "absolute path to kubeconfig file")
	fl.Uint64P("datalimit", "l", 1<<20, "maximum limit in bytes for total bundle data")
	fl.BoolP("gzip", "z", false, "enable gzip compression of configmap data")
	fl.Bool("debug", false, "enable debug logging")
	return cmd
}
