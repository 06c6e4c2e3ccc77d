// Command gencatalog writes a synthetic file-based catalog for benchmarks:
//
//	go run ./internal/gencatalog/cmd/gencatalog -packages 200 -bundles 20 -o DIR [-format json|yaml] [-seed N] [-force]
//
// See package [github.com/opmkit/opm/internal/gencatalog].
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/opmkit/opm/internal/gencatalog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	switch {
	case err == flag.ErrHelp:
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fset := flag.NewFlagSet("gencatalog", flag.ContinueOnError)
	fset.SetOutput(stderr)
	packages := fset.Int("packages", 200, "number of packages")
	bundles := fset.Int("bundles", 20, "bundles per package")
	out := fset.String("o", "", "output directory (required; must be empty or absent unless -force)")
	format := fset.String("format", "json", "file format: json or yaml")
	seed := fset.Uint64("seed", 1, "random seed; the same seed gives the same catalog")
	force := fset.Bool("force", false, "write into a non-empty directory")
	quiet := fset.Bool("q", false, "do not print a summary")
	fset.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gencatalog -o DIR [-packages P] [-bundles B] [-format json|yaml] [-seed N] [-force]\n\n"+
			"Writes a synthetic file-based catalog of P packages x B bundles, DIR/pkg-NNN/catalog.<format>.\n\n")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fset.Args())
	}
	if *out == "" {
		return fmt.Errorf("-o DIR is required")
	}
	f, err := gencatalog.ParseFormat(*format)
	if err != nil {
		return err
	}
	st, err := gencatalog.Generate(ctx, *out, gencatalog.Options{
		Packages: *packages, Bundles: *bundles, Seed: *seed, Format: f, Force: *force,
	})
	if err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stderr, "wrote %d packages, %d bundles, %.1f MB to %s\n",
			st.Packages, st.Bundles, float64(st.Bytes)/1e6, *out)
	}
	return nil
}
