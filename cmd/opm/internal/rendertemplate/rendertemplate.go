// Package rendertemplate implements `opm alpha render-template`.
package rendertemplate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/action/rendertemplate"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/template"
)

// Options are the arguments and flags of `opm alpha render-template`.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Args         []string
	Output       string
	MigrateLevel string
}

// NewCmd builds `opm alpha render-template`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "render-template [TYPE] [FILE]",
		Short: "Render a catalog template type",
		Long: `Render a catalog template into a file-based catalog, as upstream opm does.

TYPE is basic, semver or substitutes; without it the type is detected from
the template's schema (olm.template.basic, olm.semver,
olm.template.substitutes). FILE is the template ("-" or nothing: standard
input). Only the first YAML or JSON document of the file is read.

The bundle images the template names are pulled concurrently, through the
blob cache, honouring registries.conf (see docs/images.md); the rendered
bundles keep the references as written in the template.`,
		Example: `  # Render a basic template to YAML
  opm alpha render-template basic catalog-template.yaml -o yaml > catalog/my-operator/catalog.yaml

  # Detect the type, migrate bundles to olm.csv.metadata, draw the graph
  opm alpha render-template semver-template.yaml --migrate-level bundle-object-to-csv-metadata -o mermaid`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "json", "Output format (json|yaml|mermaid)")
	f.StringVar(&opts.MigrateLevel, "migrate-level", "", `Name of the last migration to run (default: none)

The migrator will run all migrations up to and including the selected level.

Available migrators:
  - none                          : do nothing
  - bundle-object-to-csv-metadata : migrates bundles' "olm.bundle.object" to "olm.csv.metadata"
`)
	return cmd
}

// Run renders the template opts.Args name and writes the result.
func Run(ctx context.Context, opts *Options) error {
	switch opts.Output {
	case "json", "yaml", "mermaid":
	default:
		return cmdutil.FlagErrorf("invalid --output value %q, expected (json|yaml|mermaid)", opts.Output)
	}
	if opts.MigrateLevel != "" {
		if err := migrations.Check(opts.MigrateLevel); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
	}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	var typ template.Type
	file := "-"
	switch len(opts.Args) {
	case 1:
		if t, err := template.ParseType(opts.Args[0]); err == nil {
			typ = t
		} else {
			file = opts.Args[0]
		}
	case 2:
		if typ, err = template.ParseType(opts.Args[0]); err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		file = opts.Args[1]
	}
	in, name, closeIn, err := OpenInput(ctx, file, opts.IO.In)
	if err != nil {
		return err
	}
	defer closeIn()

	res, err := rendertemplate.Run(ctx, rendertemplate.Options{
		Type:           typ,
		Input:          in,
		Name:           name,
		MigrationLevel: opts.MigrateLevel,
		Registry:       reg,
	})
	if err != nil {
		return err
	}
	switch opts.Output {
	case "mermaid":
		err = graph.WriteMermaid(res.Config, opts.IO.Out, graph.MermaidOptions{V0Semantics: true, Warnings: opts.IO.ErrOut})
	default:
		err = declcfg.WriteContext(ctx, *res.Config, opts.IO.Out, declcfg.Format(opts.Output))
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// OpenInput opens file, or stdin for "-" (within the limit on standard
// input of ctx, --max-stdin-size). It refuses directories.
func OpenInput(ctx context.Context, file string, stdin io.Reader) (r io.Reader, name string, closeFn func(), err error) {
	if file == "-" {
		return safefs.StdinReader(ctx, stdin), "<stdin>", func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", nil, fmt.Errorf("unable to open %q: no such file", file)
		}
		return nil, "", nil, fmt.Errorf("unable to open %q: %w", file, err)
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = errors.New("is a directory, want a file")
	}
	if err != nil {
		f.Close()
		return nil, "", nil, fmt.Errorf("unable to read %q: %w", file, err)
	}
	return f, file, func() { f.Close() }, nil
}
