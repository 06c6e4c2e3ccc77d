// Package migrate implements `opm migrate`.
package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrate"
)

// Options are the arguments and flags of `opm migrate`.
type Options struct {
	IO             *cmdutil.IOStreams
	CatalogRef     string
	OutputDir      string
	Output         string // json or yaml
	MigrationLevel string
	Force          bool
	Global         *cmdutil.GlobalOptions
}

// NewCmd builds `opm migrate`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
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
			opts.CatalogRef, opts.OutputDir = args[0], args[1]
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "json", "Output format (json|yaml)")
	f.StringVar(&opts.MigrationLevel, "migrate-level", "none", "Name of the last migration to run: none, bundle-object-to-csv-metadata")
	f.BoolVar(&opts.Force, "force", false, "Replace the contents of a non-empty <outputDir>")
	return cmd
}

// Run migrates opts.CatalogRef into opts.OutputDir.
func Run(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "json", "yaml"); err != nil {
		return err
	}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	err = migrate.Migrate(ctx, migrate.Options{
		CatalogRef:     opts.CatalogRef,
		OutputDir:      opts.OutputDir,
		MigrationLevel: opts.MigrationLevel,
		Format:         declcfg.Format(opts.Output),
		Force:          opts.Force,
		Registry:       reg,
		Logf: func(format string, args ...any) {
			fmt.Fprintf(opts.IO.ErrOut, format+"\n", args...)
		},
	})
	var ne *migrate.NotEmptyError
	if errors.As(err, &ne) {
		return fmt.Errorf("%w (use --force to replace its contents)", err)
	}
	return err
}
