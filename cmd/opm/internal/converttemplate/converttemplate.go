// Package converttemplate implements `opm alpha convert-template basic` and
// `opm alpha convert-template substitutes`.
package converttemplate

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/rendertemplate"
	"github.com/opmkit/opm/pkg/action/converttemplate"
	"github.com/opmkit/opm/pkg/template"
)

// Options are the arguments and flags of a convert-template subcommand.
type Options struct {
	IO *cmdutil.IOStreams

	Type   template.Type
	File   string
	Output string
}

// NewCmd builds `opm alpha convert-template` and its subcommands. The
// group itself prints its help.
func NewCmd(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert-template",
		Short: "Convert existing FBC to a supported template type",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(
		newSub(ios, template.Basic, "Generate a basic template from existing FBC", `Generate a basic catalog template from a file-based catalog file: every
blob becomes an entry, in order, and each olm.bundle is reduced to its
image, to be rendered again by 'opm alpha render-template'.`),
		newSub(ios, template.Substitutes, "Generate a substitutes template from existing FBC", `Generate a substitutes catalog template from a file-based catalog file:
every blob becomes an entry, as it is, and the list of substitutions is
empty.`),
	)
	return cmd
}

func newSub(ios *cmdutil.IOStreams, typ template.Type, short, long string) *cobra.Command {
	opts := &Options{IO: ios, Type: typ}
	cmd := &cobra.Command{
		Use:   string(typ) + " [<fbc-file> | -]",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  # Convert a catalog file, YAML out
  opm alpha convert-template %s examples/catalog/cache-operator/catalog.yaml -o yaml > cache-operator-template.yaml`, typ),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = "-"
			if len(args) == 1 {
				opts.File = args[0]
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}

// Run converts the file and writes the template.
func Run(ctx context.Context, opts *Options) error {
	switch opts.Output {
	case "json", "yaml":
	default:
		return cmdutil.FlagErrorf("invalid --output value %q, expected (json|yaml)", opts.Output)
	}
	in, name, closeIn, err := rendertemplate.OpenInput(ctx, opts.File, opts.IO.In)
	if err != nil {
		return err
	}
	defer closeIn()
	res, err := converttemplate.Run(converttemplate.Options{Type: opts.Type, Input: in, Name: name})
	if err != nil {
		return fmt.Errorf("converting: %w", err)
	}
	if err := template.WriteConverted(opts.IO.Out, res.Template, opts.Output); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
