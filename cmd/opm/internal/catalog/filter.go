package catalog

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	filteraction "github.com/opmkit/opm/pkg/action/filter"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
)

func newFilterCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		packages   []string
		minVersion string
		maxVersion string
		headsOnly  bool
		config     string
		configCat  string
		output     string
		outputDir  string
		force      bool
	)
	cmd := &cobra.Command{
		Use:   "filter CATALOG [--package P[:CHANNEL[,CHANNEL]]]... [--min-version V] [--max-version V] [--heads-only]",
		Short: "Keep part of a catalog, as a valid catalog",
		Long: `Keep the selected packages, channels and versions of a catalog (a directory,
file, catalog image, or - for standard input). The result is itself a valid
catalog:

  - each channel keeps a single head, and every kept bundle that could
    upgrade to the head still can: where removed bundles sat between kept
    ones, the kept entry closer to the head now replaces or skips the older
    kept one, and still skips the removed ones, so clusters that have them
    installed still upgrade. Entries keep their edges to removed bundles for
    the same reason. A selected bundle whose every upgrade led to removed
    bundles is dropped, with a note on standard error.
  - the default channel is kept, or chosen anew with a note: the first
    channel named, else the kept channel whose head has the highest version.
  - deprecations and other blobs of the kept packages are kept.

--package selects a package, with some of its channels after a colon
(repeatable; without --package or --config every package is kept).
--min-version and --max-version bound the versions kept, inclusively;
--heads-only keeps only each channel's head (after the bounds).

--config takes an oc-mirror ImageSetConfiguration (mirror.operators[] with
packages[].name, channels[].name, minVersion, maxVersion, defaultChannel, and
full), with oc-mirror's meaning: without full: true, a package or channel
with no bounds keeps only channel heads. Of several mirror.operators[]
entries, the one whose catalog is CATALOG is used; --config-catalog names
another (for a local copy of the catalog the entry names).

The result is written to standard output as 'opm render' writes it, or with
--output-dir as one directory per package, atomically; a non-empty directory
is replaced only with --force.`,
		Example: `  opm catalog filter ./catalog --package etcd:alpha,stable --min-version 0.9.2
  opm catalog filter quay.io/acme/index:v4.18 --config imageset-config.yaml --output-dir mirror-catalog/
  opm catalog filter ./index-copy --config imageset-config.yaml --config-catalog quay.io/acme/index:v4.18
  opm catalog filter ./catalog --heads-only -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "json", "yaml"); err != nil {
				return err
			}
			if config != "" && (len(packages) > 0 || minVersion != "" || maxVersion != "" || headsOnly) {
				return cmdutil.FlagErrorf("--config cannot be combined with --package, --min-version, --max-version or --heads-only: set them per package in the configuration")
			}
			if configCat != "" && config == "" {
				return cmdutil.FlagErrorf("--config-catalog only applies with --config")
			}
			if force && outputDir == "" {
				return cmdutil.FlagErrorf("--force only applies with --output-dir")
			}
			opts := filteraction.Options{
				Catalog:       args[0],
				ConfigFile:    config,
				ConfigCatalog: configCat,
				OutputDir:     outputDir,
				Force:         force,
				Out:           ios.Out,
				Format:        declcfg.Format(output),
				Stdin:         ios.In,
			}
			var sels []compose.PackageSelection
			for _, p := range packages {
				s, err := filteraction.ParsePackageArg(p)
				if err != nil {
					return &cmdutil.FlagError{Err: err}
				}
				s.MinVersion, s.MaxVersion, s.HeadsOnly = minVersion, maxVersion, headsOnly
				sels = append(sels, s)
			}
			opts.Packages = filteraction.MergeSelections(sels)
			opts.All = compose.PackageSelection{MinVersion: minVersion, MaxVersion: maxVersion, HeadsOnly: headsOnly}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Registry = reg
			res, err := filteraction.Run(cmd.Context(), opts)
			var ne *compose.NotEmptyError
			if errors.As(err, &ne) {
				return fmt.Errorf("%w (use --force to replace its contents)", err)
			}
			var ee *compose.ConfigEntryError
			if errors.As(err, &ee) && !ee.Chosen {
				return fmt.Errorf("%w; choose one with --config-catalog, e.g. --config-catalog %s", err, ee.Catalogs[0])
			}
			if res != nil {
				for _, n := range res.Notes {
					fmt.Fprintf(ios.ErrOut, "note: %s\n", n)
				}
			}
			if err != nil {
				return err
			}
			if outputDir != "" {
				fmt.Fprintf(ios.ErrOut, "wrote %s, %s, %s to %s\n", count(res.Packages, "package"), count(res.Channels, "channel"), count(res.Bundles, "bundle"), outputDir)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&packages, "package", "p", nil, "package to keep, optionally with channels: PACKAGE[:CHANNEL[,CHANNEL]] (repeatable)")
	f.StringVar(&minVersion, "min-version", "", "lowest version to keep (inclusive)")
	f.StringVar(&maxVersion, "max-version", "", "highest version to keep (inclusive)")
	f.BoolVar(&headsOnly, "heads-only", false, "keep only the head of each channel")
	f.StringVar(&config, "config", "", "oc-mirror ImageSetConfiguration selecting the packages to keep")
	f.StringVar(&configCat, "config-catalog", "", "the --config mirror.operators[] entry to use, by its catalog (default: CATALOG, or the only entry)")
	f.StringVarP(&output, "output", "o", "json", "output format (json|yaml)")
	f.StringVarP(&outputDir, "output-dir", "d", "", "write the result to this directory, one folder per package")
	f.BoolVar(&force, "force", false, "replace the contents of a non-empty --output-dir")
	return cmd
}

// count is "1 package", "2 packages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
