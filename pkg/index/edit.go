package index

import (
	"errors"
	"slices"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/catalogedit"
	"github.com/opmkit/opm/pkg/declcfg"
)

// The edits of upstream's `opm index rm`, `prune` and `prune-stranded`, on
// a file-based catalog: an sqlite index renders package by package, so
// removing a package's rows and rendering is removing its blobs from the
// rendering, and a bundle no channel lists (a stranded row) is never
// rendered.

// RemovePackages returns cfg without the packages named (upstream's `opm
// index rm --operators`), and an error naming each name the catalog has no
// package for (upstream refused those too). The other packages are removed
// all the same: the caller decides whether the error stops it
// (upstream's --permissive).
func RemovePackages(cfg *declcfg.DeclarativeConfig, names []string) (*declcfg.DeclarativeConfig, error) {
	drop, err := known(cfg, names)
	keep := map[string]bool{"": true}
	mark := func(pkg string) { keep[pkg] = !drop[pkg] }
	for _, p := range cfg.Packages {
		mark(p.Name)
	}
	for _, c := range cfg.Channels {
		mark(c.Package)
	}
	for _, b := range cfg.Bundles {
		mark(b.Package)
	}
	for _, d := range cfg.Deprecations {
		mark(d.Package)
	}
	for _, m := range cfg.Others {
		mark(m.Package)
	}
	return catalogedit.OnlyPackages(cfg, keep), err
}

// KeepPackages returns cfg with only the packages named (upstream's `opm
// index prune --packages`), and an error naming each name the catalog has
// no package for. Upstream ignored those; a misspelt name would drop the
// package it meant to keep, so the caller refuses them unless told to go
// on. Blobs of no package are kept.
func KeepPackages(cfg *declcfg.DeclarativeConfig, names []string) (*declcfg.DeclarativeConfig, error) {
	keep, err := known(cfg, names)
	keep[""] = true
	return catalogedit.OnlyPackages(cfg, keep), err
}

// known returns the names (empty ones aside) that are packages of cfg, and
// an error for each that is not.
func known(cfg *declcfg.DeclarativeConfig, names []string) (map[string]bool, error) {
	have := packageNames(cfg)
	out := map[string]bool{}
	var errs []error
	for _, n := range names {
		switch {
		case n == "" || out[n]:
		case slices.Contains(have, n):
			out[n] = true
		default:
			errs = append(errs, suggest.Unknown("package", n, "in the index", have))
		}
	}
	return out, errors.Join(errs...)
}

// PruneStranded drops the bundles that no channel lists (upstream's `opm
// index prune-stranded`). A valid file-based catalog has none, and an
// sqlite index's are never rendered. It returns the names of the bundles
// dropped, as PACKAGE/BUNDLE.
func PruneStranded(cfg *declcfg.DeclarativeConfig) []string {
	listed := map[[2]string]bool{}
	for _, ch := range cfg.Channels {
		for _, e := range ch.Entries {
			listed[[2]string{ch.Package, e.Name}] = true
		}
	}
	var dropped []string
	cfg.Bundles = slices.DeleteFunc(cfg.Bundles, func(b declcfg.Bundle) bool {
		if listed[[2]string{b.Package, b.Name}] {
			return false
		}
		dropped = append(dropped, b.Package+"/"+b.Name)
		return true
	})
	return dropped
}

// packageNames lists the packages of cfg: those with an olm.package blob.
func packageNames(cfg *declcfg.DeclarativeConfig) []string {
	out := make([]string, 0, len(cfg.Packages))
	for _, p := range cfg.Packages {
		out = append(out, p.Name)
	}
	return out
}
