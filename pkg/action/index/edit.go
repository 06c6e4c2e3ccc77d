package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/index"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/sqlite"
)

// EditKind is one of upstream's index edits that has an exact file-based
// catalog form.
type EditKind string

const (
	// EditRemove is `opm index rm`: packages removed.
	EditRemove EditKind = "rm"
	// EditPrune is `opm index prune`: every package but those named
	// removed.
	EditPrune EditKind = "prune"
	// EditPruneStranded is `opm index prune-stranded`: bundles no channel
	// lists removed.
	EditPruneStranded EditKind = "prune-stranded"
)

// EditOptions describe `opm index rm`, `prune` and `prune-stranded`.
type EditOptions struct {
	Kind EditKind
	// FromIndex is the index edited: a file-based catalog (image or
	// directory) or an sqlite index (image or file).
	FromIndex string
	// Packages are the packages removed (EditRemove) or kept (EditPrune).
	Packages []string
	// Permissive goes on past package names the index does not have,
	// with a warning.
	Permissive bool
	Registry   render.RegistryOptions
	SQLite     sqlite.Limits
	// Warn receives warnings (nil = dropped).
	Warn func(string)
	Output
}

// EditResult is what was made.
type EditResult struct {
	Config     *declcfg.DeclarativeConfig
	FromSQLite bool
	// Stranded are the bundles EditPruneStranded removed, as
	// PACKAGE/BUNDLE.
	Stranded []string
	Written
}

// Edit reads the index, edits it and writes the result as Output says.
func Edit(ctx context.Context, o EditOptions) (*EditResult, error) {
	switch o.Kind {
	case EditRemove, EditPrune, EditPruneStranded:
	default:
		return nil, fmt.Errorf("unknown index edit %q", o.Kind)
	}
	out, err := o.Output.check()
	if err != nil {
		return nil, err
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	res := &EditResult{}
	if res.Config, res.FromSQLite, err = openIndex(ctx, o.FromIndex, o.Registry, o.SQLite, warn); err != nil {
		return nil, err
	}
	switch o.Kind {
	case EditRemove:
		res.Config, err = index.RemovePackages(res.Config, o.Packages)
	case EditPrune:
		res.Config, err = index.KeepPackages(res.Config, o.Packages)
	case EditPruneStranded:
		res.Stranded = index.PruneStranded(res.Config)
	}
	if err != nil {
		if !o.Permissive {
			return nil, fmt.Errorf("%w (--permissive goes on without it)", err)
		}
		warn(fmt.Sprintf("permissive mode: %v", err))
	}
	res.Written, err = out.write(ctx, res.Config, o.Registry, warn)
	return res, err
}

// openIndex reads an index as a file-based catalog: an sqlite one is
// rendered as upstream's `opm render` rendered it.
func openIndex(ctx context.Context, ref string, reg render.RegistryOptions, lim sqlite.Limits, warn func(string)) (*declcfg.DeclarativeConfig, bool, error) {
	from, err := render.OpenIndex(ctx, ref, render.Options{Registry: reg, SQLite: lim, Warn: warn})
	if err != nil {
		return nil, false, fmt.Errorf("from-index: %w", err)
	}
	if from.Database == nil {
		return from.Catalog, false, nil
	}
	cfg, err := from.Database.Render(warn)
	if err != nil {
		return nil, true, fmt.Errorf("from-index %s: %w", ref, err)
	}
	render.Normalize(cfg)
	return cfg, true, nil
}

// DeprecateTruncateOptions describe `opm index deprecatetruncate`.
type DeprecateTruncateOptions struct {
	FromIndex string
	// Bundles are the bundle images deprecated.
	Bundles  []string
	Registry render.RegistryOptions
	SQLite   sqlite.Limits
}

// DeprecateTruncateError is the answer to `opm index deprecatetruncate`,
// which has no exact file-based form: upstream marked bundles deprecated
// with a property OLM no longer reads from file-based catalogs, and
// deleted every bundle they replaced. It names the `opm catalog` commands
// that do it on the index's catalog.
type DeprecateTruncateError struct {
	FromIndex string
	// Steps are the bundles found in the index, in the order given.
	Steps []DeprecateStep
}

// DeprecateStep is one bundle to deprecate.
type DeprecateStep struct {
	Image, Package, Bundle, Version string
}

func (e *DeprecateTruncateError) Error() string {
	var b strings.Builder
	b.WriteString("opm index deprecatetruncate has no exact file-based catalog form (upstream marked the bundles deprecated in the sqlite database, a mark OLM does not read from file-based catalogs, and deleted every bundle they replaced); nothing was built. ")
	dir := "DIR"
	fmt.Fprintf(&b, "Edit the catalog with opm catalog instead: 'opm migrate %s %s' writes it, then\n", e.FromIndex, dir)
	for _, s := range e.Steps {
		fmt.Fprintf(&b, "  opm catalog deprecate bundle -C %s %s %s --message MESSAGE\n", dir, s.Package, s.Bundle)
		fmt.Fprintf(&b, "  opm catalog prune -C %s %s --before %s --dry-run   (removes the bundles older than %s; review, then run without --dry-run)\n", dir, s.Package, s.Version, s.Bundle)
	}
	fmt.Fprintf(&b, "and 'opm build catalog %s -t IMAGE' builds the image", dir)
	return b.String()
}

// DeprecateTruncate finds the bundles in the index and returns the
// *DeprecateTruncateError that says how to do the edit with opm catalog
// (or another error: the index does not read, a bundle image is not in
// it).
func DeprecateTruncate(ctx context.Context, o DeprecateTruncateOptions) error {
	cfg, _, err := openIndex(ctx, o.FromIndex, o.Registry, o.SQLite, func(string) {})
	if err != nil {
		return err
	}
	e := &DeprecateTruncateError{FromIndex: o.FromIndex}
	var missing []string
	for _, img := range o.Bundles {
		i := slices.IndexFunc(cfg.Bundles, func(b declcfg.Bundle) bool { return b.Image == img })
		if i < 0 {
			missing = append(missing, img)
			continue
		}
		b := cfg.Bundles[i]
		s := DeprecateStep{Image: img, Package: b.Package, Bundle: b.Name}
		if v, err := graph.BundleVersion(&b); err == nil {
			s.Version = v.String()
		}
		e.Steps = append(e.Steps, s)
	}
	if len(missing) > 0 {
		return fmt.Errorf("from-index %s has no bundle of image %s", o.FromIndex, strings.Join(missing, ", "))
	}
	return e
}
