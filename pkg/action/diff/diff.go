// Package diff implements `opm catalog diff`: what changed between two
// catalogs, package by package, and whether a CI gate should fail.
package diff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
)

// Options configure a diff.
type Options struct {
	// Old and New are catalog references: directories, files, catalog
	// images, or "-" for standard input (one of them at most).
	Old, New string
	// Fragment compares only the packages New holds.
	Fragment bool
	// Packages restricts the comparison (empty: all).
	Packages []string
	// Semantics defines "reaches the head" for lost upgrade paths
	// (default classic).
	Semantics graph.Semantics
	// FailOn lists the kinds of change reported as failures.
	FailOn []compose.FailOn
	// PreReleaseChannels are the channels compose.FailPruned lets lose
	// entries (nil: compose.DefaultPreReleaseChannels).
	PreReleaseChannels []string
	// Unreleased lists what New ships that Old does not
	// (Report.Unreleased).
	Unreleased bool
	// Stdin is read for "-".
	Stdin io.Reader
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
}

// Run loads both catalogs and compares them. Each catalog is reduced to a
// compose.Summary as soon as it is loaded and then released, so at most
// one catalog is held in memory at a time.
func Run(ctx context.Context, opts Options) (*compose.Report, error) {
	if opts.Old == "-" && opts.New == "-" {
		return nil, errors.New("only one of OLD and NEW can be read from standard input")
	}
	if opts.Semantics == "" {
		opts.Semantics = graph.Classic
	}
	if _, err := graph.ParseSemantics(string(opts.Semantics)); err != nil {
		return nil, err
	}
	lo := compose.LoadOptions{Stdin: opts.Stdin, Registry: opts.Registry}
	old, err := summarize(ctx, opts.Old, lo)
	if err != nil {
		return nil, fmt.Errorf("old catalog: %w", err)
	}
	runtime.GC() // hand OLD's blobs back before NEW's arrive
	cur, err := summarize(ctx, opts.New, lo)
	if err != nil {
		return nil, fmt.Errorf("new catalog: %w", err)
	}
	return compose.Diff(old, cur, compose.DiffOptions{
		Fragment:  opts.Fragment,
		Packages:  opts.Packages,
		Semantics: opts.Semantics,
		FailOn:    opts.FailOn,

		PreReleaseChannels: opts.PreReleaseChannels,
		Unreleased:         opts.Unreleased,
	})
}

func summarize(ctx context.Context, ref string, lo compose.LoadOptions) (*compose.Summary, error) {
	cfg, err := compose.Load(ctx, ref, lo)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return compose.Summarize(cfg, ref)
}
