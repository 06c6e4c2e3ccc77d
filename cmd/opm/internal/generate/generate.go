// Package generate implements `opm generate` and `opm generate dockerfile`.
package generate

import (
	"context"
	// Registers sha256 for go-digest, which the model's image pull-spec
	// checks need.
	_ "crypto/sha256"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/dockerfile"
	"github.com/opmkit/opm/pkg/model"
)

// NewCmd builds `opm generate`, which only groups its subcommands and prints
// its help when run alone.
func NewCmd(ios *cmdutil.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate various artifacts for declarative config indexes",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewDockerfileCmd(ios))
	return cmd
}

// DockerfileOptions are the arguments and flags of `opm generate dockerfile`.
type DockerfileOptions struct {
	IO *cmdutil.IOStreams
	// Root is the catalog directory.
	Root         string
	BaseImage    string
	BuilderImage string
	// BinaryImage is the deprecated --binary-image; when set it is the base
	// image, and also the builder image unless BuilderImageSet.
	BinaryImage     string
	BuilderImageSet bool
	ExtraLabels     []string
	SkipValidate    bool
}

// NewDockerfileCmd builds `opm generate dockerfile`.
func NewDockerfileCmd(ios *cmdutil.IOStreams) *cobra.Command {
	opts := &DockerfileOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "dockerfile <fbcRootDir>",
		Short: "Generate a Dockerfile for a declarative config index",
		Long: `Generate a Dockerfile for a declarative config index.

This command creates a Dockerfile in the same directory as the <fbcRootDir>
(named <fbcDirName>.Dockerfile) that can be used to build the index. If a
file with that name already exists, this command fails and leaves it alone.

The catalog is validated first, so a broken catalog never gets a Dockerfile;
--skip-validate generates one without validating (as upstream opm does).

When specifying extra labels, note that if duplicate keys exist, only the last
value of each duplicate key will be added to the generated Dockerfile.

A separate builder and base image can be specified. The builder image may not
be "scratch"; a "scratch" base image gives a binary-less catalog image.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Root = args[0]
			opts.BuilderImageSet = cmd.Flags().Changed("builder-image")
			if cmd.Flags().Changed("binary-image") {
				// Printed here rather than by cobra's MarkDeprecated, which
				// writes to the command's output stream (stdout here).
				fmt.Fprintln(ios.ErrOut, "Flag --binary-image has been deprecated, use --base-image instead")
			} else {
				opts.BinaryImage = ""
			}
			return RunDockerfile(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.BaseImage, "base-image", "i", dockerfile.DefaultImage, "Image base to use to build catalog.")
	f.StringVarP(&opts.BuilderImage, "builder-image", "b", dockerfile.DefaultImage, "Image to use as a build stage.")
	f.StringVar(&opts.BinaryImage, "binary-image", dockerfile.DefaultImage, "Image in which to build catalog.")
	f.StringSliceVarP(&opts.ExtraLabels, "extra-labels", "l", nil, "Extra labels to include in the generated Dockerfile. Labels should be of the form 'key=value'.")
	f.BoolVar(&opts.SkipValidate, "skip-validate", false, "Generate the Dockerfile without validating the catalog first.")
	_ = f.MarkHidden("binary-image")
	cmd.MarkFlagsMutuallyExclusive("binary-image", "base-image")
	return cmd
}

// RunDockerfile writes <root>.Dockerfile beside the catalog directory. The
// checks run in upstream's order: the builder image, the labels, an existing
// Dockerfile (before the catalog itself), the catalog directory; then the
// catalog is validated unless SkipValidate.
func RunDockerfile(ctx context.Context, opts *DockerfileOptions) error {
	gen := dockerfile.Options{BaseImage: opts.BaseImage, BuilderImage: opts.BuilderImage}
	if opts.BinaryImage != "" {
		gen.BaseImage = opts.BinaryImage
		if !opts.BuilderImageSet {
			gen.BuilderImage = opts.BinaryImage
		}
	}
	if err := gen.Check(); err != nil {
		return err
	}
	labels, err := dockerfile.ParseLabels(opts.ExtraLabels)
	if err != nil {
		return err
	}
	gen.ExtraLabels = labels

	name, path, err := dockerfile.Paths(opts.Root)
	if err != nil {
		return err
	}
	gen.IndexDir = name
	if err := dockerfile.EnsureNotExist(path); err != nil {
		return err
	}
	if err := dockerfile.CheckRoot(opts.Root); err != nil {
		return err
	}
	if !opts.SkipValidate {
		if err := validateCatalog(ctx, opts.Root); err != nil {
			return fmt.Errorf("%w\n(no Dockerfile written; use --skip-validate to write one anyway)", err)
		}
	}
	return dockerfile.WriteNew(path, []byte(dockerfile.Render(gen)))
}

// validateCatalog loads the catalog and checks it with upstream's rules, as
// `opm validate` does. A rule that stops the conversion is prefixed with the
// position of the blob it is about.
func validateCatalog(ctx context.Context, root string) error {
	cfg, err := declcfg.LoadDir(ctx, root)
	if err != nil {
		return fmt.Errorf("invalid catalog %q: %w", root, err)
	}
	if _, err := model.ConvertToModel(*cfg); err != nil {
		var re *model.RuleError
		if errors.As(err, &re) && re.Pos.IsValid() {
			return fmt.Errorf("invalid catalog %q: %s: %w", root, re.Pos, err)
		}
		return fmt.Errorf("invalid catalog %q: %w", root, err)
	}
	return nil
}
