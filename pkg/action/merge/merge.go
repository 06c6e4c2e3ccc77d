// Package merge implements `opm catalog merge`: one catalog from several,
// each package taken whole from one input.
package merge

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
)

// Options configure a merge.
type Options struct {
	// Refs are the inputs, in order: directories, files or catalog images
	// ("-" for standard input, once).
	Refs   []string
	Prefer compose.Prefer

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

// Run merges the inputs and writes the result.
func Run(ctx context.Context, opts Options) (*compose.MergeResult, error) {
	if opts.Format == "" {
		opts.Format = declcfg.FormatJSON
	}
	if len(opts.Refs) == 0 {
		return nil, errors.New("no catalog to merge")
	}
	stdin := 0
	for _, r := range opts.Refs {
		if r == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, errors.New("standard input can be read only once")
	}
	if opts.OutputDir != "" {
		if err := compose.CheckOutputDir(opts.OutputDir, opts.Force, opts.Refs...); err != nil {
			return nil, err
		}
	} else if opts.Out == nil {
		return nil, errors.New("no output: set an output directory or writer")
	}
	lo := compose.LoadOptions{Stdin: opts.Stdin, Registry: opts.Registry}
	inputs := make([]compose.Input, 0, len(opts.Refs))
	for _, ref := range opts.Refs {
		cfg, err := compose.Load(ctx, ref, lo)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		inputs = append(inputs, compose.Input{Source: ref, Config: cfg})
	}
	res, err := compose.Merge(inputs, compose.MergeOptions{Prefer: opts.Prefer})
	if err != nil {
		return nil, err
	}
	if opts.OutputDir != "" {
		if err := compose.WriteDir(res.Config, opts.OutputDir, opts.Format, opts.Force, opts.Refs...); err != nil {
			return nil, fmt.Errorf("writing %q: %w", opts.OutputDir, err)
		}
		return res, nil
	}
	return res, declcfg.WriteContext(ctx, *res.Config, opts.Out, opts.Format)
}
