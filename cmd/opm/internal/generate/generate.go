// Package generate implements `opm generate` and its subcommands
// dockerfile ([dockerfile.Run]), catalogsource, clustercatalog and
// clusterextension ([manifests.CatalogSource], [manifests.ClusterCatalog],
// [manifests.ClusterExtension]): flags in, one action call.
package generate

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/dockerfile"
)

// NewCmd builds `opm generate`, which only groups its subcommands and prints
// its help when run alone.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate various artifacts for declarative config indexes",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewDockerfileCmd(ios), NewCatalogSourceCmd(ios), NewClusterCatalogCmd(ios), NewClusterExtensionCmd(ios, g))
	return cmd
}

// NewDockerfileCmd builds `opm generate dockerfile`.
func NewDockerfileCmd(ios *cmdutil.IOStreams) *cobra.Command {
	var opts dockerfile.RunOptions
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
			_, err := dockerfile.Run(cmd.Context(), opts)
			return err
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
