// Package initcmd implements `opm init`.
package initcmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/pkginit"
)

// Options are the flags of `opm init`.
type Options struct {
	IO *cmdutil.IOStreams

	Package         string
	DefaultChannel  string
	IconFile        string
	DescriptionFile string
	Output          string
}

// NewCmd builds `opm init`.
func NewCmd(ios *cmdutil.IOStreams) *cobra.Command {
	opts := &Options{IO: ios}
	cmd := &cobra.Command{
		Use:   "init <packageName>",
		Short: "Generate an olm.package declarative config blob",
		Long: `Generate an olm.package declarative config blob for a package.

The icon's media type is detected from its content and must be an image
(PNG, JPEG, GIF, SVG, WebP, ...). The description file is read verbatim.`,
		Example: `  opm init my-operator --default-channel=stable --icon=icon.svg --description=README.md -o yaml > catalog/my-operator/package.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Package = args[0]
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.DefaultChannel, "default-channel", "c", "", "The channel that subscriptions will default to if unspecified")
	f.StringVarP(&opts.IconFile, "icon", "i", "", "Path to package's icon")
	f.StringVarP(&opts.DescriptionFile, "description", "d", "", "Path to the operator's README.md (or other documentation)")
	f.StringVarP(&opts.Output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}

// Run writes the olm.package blob to opts.IO.Out.
func Run(_ context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "json", "yaml"); err != nil {
		return err
	}
	po := pkginit.Options{Name: opts.Package, DefaultChannel: opts.DefaultChannel}
	if opts.IconFile != "" {
		data, err := os.ReadFile(opts.IconFile)
		if err != nil {
			return fmt.Errorf("read icon: %w", err)
		}
		po.Icon = data
	}
	if opts.DescriptionFile != "" {
		data, err := os.ReadFile(opts.DescriptionFile)
		if err != nil {
			return fmt.Errorf("read description: %w", err)
		}
		po.Description = string(data)
	}
	pkg, err := pkginit.New(po)
	if err != nil {
		if opts.IconFile != "" {
			return fmt.Errorf("icon %s: %w", opts.IconFile, err)
		}
		return err
	}
	cfg := declcfg.DeclarativeConfig{Packages: []declcfg.Package{pkg}}
	return declcfg.Write(cfg, opts.IO.Out, declcfg.Format(opts.Output))
}
