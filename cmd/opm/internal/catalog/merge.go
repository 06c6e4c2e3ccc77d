package catalog

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	mergeaction "github.com/opmkit/opm/pkg/action/merge"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
)

func newMergeCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		verbose   bool
		prefer    string
		output    string
		outputDir string
		force     bool
	)
	cmd := &cobra.Command{
		Use:   "merge [-C CATALOG] CATALOG... [--output-dir DIR]",
		Short: "Combine several catalogs into one valid catalog",
		Long: `Combine catalogs (directories, files or catalog images: the arguments, with
-C CATALOG as the first one if given; at least two) into one. Each
package comes whole from one input: a package that several inputs hold is an
error naming all of them, unless --prefer first or --prefer last says which
input wins; a note on standard error then says, per winning input, how
many packages were taken from it and names a few (-v names each one). Blobs
that belong to no package are kept from every input, once
each. The result is validated with upstream's rules before anything is
written.

The result is written to standard output as 'opm render' writes it (merging
disjoint catalogs gives what rendering them together gives), or with
--output-dir as one directory per package, atomically; a non-empty directory
is replaced only with --force.`,
		Example: `  opm catalog merge team-a/catalog examples/catalog --output-dir combined/
  opm catalog merge -C examples/catalog ./hotfix --prefer last -o yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "json", "yaml"); err != nil {
				return err
			}
			p, err := compose.ParsePrefer(prefer)
			if err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if force && outputDir == "" {
				return cmdutil.FlagErrorf("--force only applies with --output-dir")
			}
			cat, err := cmdutil.Catalogs(cmd, args, 2)
			if err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			res, err := mergeaction.Run(cmd.Context(), mergeaction.Options{
				Refs:      cat.Refs,
				Prefer:    p,
				OutputDir: outputDir,
				Force:     force,
				Out:       ios.Out,
				Format:    declcfg.Format(output),
				Stdin:     ios.In,
				Registry:  reg,
			})
			var ne *compose.NotEmptyError
			var ce *compose.ConflictError
			switch {
			case errors.As(err, &ne):
				return fmt.Errorf("%w (use --force to replace its contents)", err)
			case errors.As(err, &ce):
				return fmt.Errorf("%w\nuse --prefer first or --prefer last to choose which input wins", err)
			case err != nil:
				return cat.Explain(err)
			}
			for _, n := range res.Notes(verbose) {
				fmt.Fprintf(ios.ErrOut, "note: %s\n", n)
			}
			if outputDir != "" {
				fmt.Fprintf(ios.ErrOut, "wrote %s from %s to %s\n", count(res.Packages, "package"), count(len(cat.Refs), "catalog"), outputDir)
			}
			return nil
		},
	}
	cmdutil.AddCatalogFlag(cmd, nil, "", "the first catalog, before the arguments")
	f := cmd.Flags()
	f.StringVar(&prefer, "prefer", "", "which input wins a package several hold (first|last); default: an error")
	f.BoolVarP(&verbose, "verbose", "v", false, "name every package --prefer chose an input for (default: one line per pair of inputs)")
	f.StringVarP(&output, "output", "o", "json", "output format (json|yaml)")
	f.StringVarP(&outputDir, "output-dir", "d", "", "write the result to this directory, one folder per package")
	f.BoolVar(&force, "force", false, "replace the contents of a non-empty --output-dir")
	return cmd
}
