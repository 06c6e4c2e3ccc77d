// Package migrate implements `opm migrate`: flags in, [migrate.Run] once,
// its progress lines on stderr.
package migrate

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/migrate"
	"github.com/opmkit/opm/pkg/declcfg"
)

// NewCmd builds `opm migrate`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   migrate.Options
		output string
	)
	cmd := &cobra.Command{
		Use:   "migrate <indexRef> <outputDir>",
		Short: "Migrate a file-based catalog to the latest file-based catalog format",
		Long: `Migrate a file-based catalog (an FBC directory or catalog image) to a
file-based catalog in <outputDir>, applying migrations up to --migrate-level.

The output has one directory per package holding catalog.json (or
catalog.yaml with -o yaml), and catalog.<ext> at the top for blobs that
belong to no package. It is written atomically: on any error <outputDir> is
left as it was.

<outputDir> must be absent or empty, unless --force is given: then its
contents are replaced by the migrated catalog.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "json", "yaml"); err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.CatalogRef, opts.OutputDir = args[0], args[1]
			opts.Format, opts.Registry = declcfg.Format(output), reg
			opts.Logf = func(format string, args ...any) {
				fmt.Fprintf(ios.ErrOut, format+"\n", args...)
			}
			opts.Warn = func(msg string) { fmt.Fprintln(ios.ErrOut, "warning:", msg) }
			err = migrate.Run(cmd.Context(), opts)
			var ne *migrate.NotEmptyError
			if errors.As(err, &ne) {
				return fmt.Errorf("%w (use --force to replace its contents)", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	f.StringVar(&opts.MigrationLevel, "migrate-level", "none", "Name of the last migration to run: none, bundle-object-to-csv-metadata")
	f.BoolVar(&opts.Force, "force", false, "Replace the contents of a non-empty <outputDir>")
	return cmd
}
