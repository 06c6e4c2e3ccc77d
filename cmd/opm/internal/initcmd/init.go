// Package initcmd implements `opm init`: flags in, [initpkg.Run] once, the
// olm.package blob out as JSON or YAML.
package initcmd

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/initpkg"
	"github.com/opmkit/opm/pkg/declcfg"
)

// NewCmd builds `opm init`.
func NewCmd(ios *cmdutil.IOStreams) *cobra.Command {
	var (
		opts   initpkg.Options
		output string
	)
	cmd := &cobra.Command{
		Use:   "init <packageName>",
		Short: "Generate an olm.package declarative config blob",
		Long: `Generate an olm.package declarative config blob for a package.

The icon's media type is detected from its content and must be an image
(PNG, JPEG, GIF, SVG, WebP, ...). The description file is read verbatim.`,
		Example: `  opm init my-operator --default-channel=stable --description=examples/catalog/README.md -o yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "json", "yaml"); err != nil {
				return err
			}
			opts.Name = args[0]
			pkg, err := initpkg.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			cfg := declcfg.DeclarativeConfig{Packages: []declcfg.Package{*pkg}}
			return declcfg.Write(cfg, ios.Out, declcfg.Format(output))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.DefaultChannel, "default-channel", "c", "", "The channel that subscriptions will default to if unspecified")
	f.StringVarP(&opts.IconFile, "icon", "i", "", "Path to package's icon")
	f.StringVarP(&opts.DescriptionFile, "description", "d", "", "Path to the operator's README.md (or other documentation)")
	f.StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}
