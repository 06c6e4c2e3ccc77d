// Package filter implements `opm catalog filter`: the subset of a catalog
// that a selection of packages, channels and versions keeps, as a valid
// catalog.
package filter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
)

// Options configure a filter.
type Options struct {
	// Catalog is a directory, file, catalog image, or "-".
	Catalog string
	// Packages to keep (see ParsePackageArg), or ConfigFile: an
	// oc-mirror style configuration. With neither, every package is
	// kept, with the settings of All.
	Packages   []compose.PackageSelection
	ConfigFile string
	// ConfigCatalog, when set, chooses the configuration's
	// mirror.operators[] entry by its catalog field; otherwise the entry
	// for Catalog is used, or the only one.
	ConfigCatalog string
	All           compose.PackageSelection

	// OutputDir, when set, receives the result as one directory per
	// package; Force allows replacing a non-empty one. Otherwise the
	// result is streamed to Out as `opm render` does.
	OutputDir string
	Force     bool
	Out       io.Writer
	Format    declcfg.Format

	Stdin    io.Reader
	Registry render.RegistryOptions
}

// Run filters the catalog and writes the result.
func Run(ctx context.Context, opts Options) (*compose.FilterResult, error) {
	if opts.Format == "" {
		opts.Format = declcfg.FormatJSON
	}
	if len(opts.Packages) > 0 && opts.ConfigFile != "" {
		return nil, errors.New("select packages either with a configuration file or on the command line, not both")
	}
	if opts.OutputDir != "" {
		if err := compose.CheckOutputDir(opts.OutputDir, opts.Force, opts.Catalog, opts.ConfigFile); err != nil {
			return nil, err
		}
	} else if opts.Out == nil {
		return nil, errors.New("no output: set an output directory or writer")
	}
	sels := opts.Packages
	if opts.ConfigFile != "" {
		f, err := os.Open(opts.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("configuration: %w", err)
		}
		sels, err = compose.ParseFilterConfig(f, opts.Catalog, opts.ConfigCatalog)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", opts.ConfigFile, err)
		}
	}
	cfg, err := compose.Load(ctx, opts.Catalog, compose.LoadOptions{Stdin: opts.Stdin, Registry: opts.Registry})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := compose.Filter(cfg, compose.FilterOptions{Packages: sels, All: opts.All})
	if err != nil {
		return nil, err
	}
	if opts.OutputDir != "" {
		if err := compose.WriteDir(res.Config, opts.OutputDir, opts.Format, opts.Force, opts.Catalog, opts.ConfigFile); err != nil {
			return nil, fmt.Errorf("writing %q: %w", opts.OutputDir, err)
		}
		return res, nil
	}
	return res, declcfg.WriteContext(ctx, *res.Config, opts.Out, opts.Format)
}

// ParsePackageArg parses the --package syntax: PACKAGE, or
// PACKAGE:CHANNEL[,CHANNEL...].
func ParsePackageArg(s string) (compose.PackageSelection, error) {
	name, chans, hasChans := strings.Cut(s, ":")
	if name == "" {
		return compose.PackageSelection{}, fmt.Errorf("invalid package %q: no package name before the channels", s)
	}
	sel := compose.PackageSelection{Name: name}
	if !hasChans {
		return sel, nil
	}
	for _, c := range strings.Split(chans, ",") {
		if c == "" {
			return compose.PackageSelection{}, fmt.Errorf("invalid package %q: empty channel name", s)
		}
		sel.Channels = append(sel.Channels, compose.ChannelSelection{Name: c})
	}
	return sel, nil
}

// MergeSelections joins selections of the same package (as --package
// foo:a --package foo:b does), keeping the first-seen order of packages
// and channels.
func MergeSelections(sels []compose.PackageSelection) []compose.PackageSelection {
	var out []compose.PackageSelection
	at := map[string]int{}
	for _, s := range sels {
		i, ok := at[s.Name]
		if !ok {
			at[s.Name] = len(out)
			out = append(out, s)
			continue
		}
		if len(out[i].Channels) == 0 || len(s.Channels) == 0 {
			out[i].Channels = nil // one of them asks for every channel
			continue
		}
		for _, c := range s.Channels {
			dup := false
			for _, have := range out[i].Channels {
				dup = dup || have.Name == c.Name
			}
			if !dup {
				out[i].Channels = append(out[i].Channels, c)
			}
		}
	}
	return out
}
