// Package index builds file-based catalogs the way upstream opm's sqlite
// `opm index add` built index databases, so that a Makefile written for it
// (operator-sdk scaffolds `opm index add --mode semver --bundles ...
// --from-index ...`) keeps working and its catalog comes out as upstream's
// index rendered with upstream's `opm render`, byte for byte.
//
// The work is done on pkg/sqlite's Contents, the rows an index database
// holds, with the operations of upstream's loader (see that package):
// bundles are added as rows, channels built by the update mode, and the
// result rendered as upstream renders a database. The index added to
// (--from-index) is a file-based catalog (its packages that receive no
// bundle are kept exactly as they are; the others are read into rows) or an
// sqlite database or index image (read whole, migrated as upstream's render
// migrates it).
package index

import (
	"fmt"
	"strings"
)

// Mode is how channels are built from the bundles added: upstream's graph
// update modes.
type Mode string

const (
	// ModeReplaces builds channels from the CSVs' spec.replaces and
	// spec.skips, from each channel's head: the bundle of greatest
	// version among those that name the channel.
	ModeReplaces Mode = "replaces"
	// ModeSemver orders each channel by version: every bundle replaces the
	// one below it; the CSVs' replaces and skips are not used.
	ModeSemver Mode = "semver"
	// ModeSemverSkipPatch is ModeSemver where a bundle also replaces the
	// lower patch versions of its major.minor, which leave the channel.
	ModeSemverSkipPatch Mode = "semver-skippatch"
)

// Modes lists the modes.
var Modes = []Mode{ModeReplaces, ModeSemver, ModeSemverSkipPatch}

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown mode %q: one of %s", s, strings.Join(names, ", "))
}
