package graph

import (
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// OLM v1 orders registry+v1 bundles by version, then by release: the
// olm.package property's release when it has one, otherwise the build
// metadata of the version (the legacy encoding of a release in
// registry+v1 bundles). So 1.0.0+10 is newer than 1.0.0+9, and 1.0.0+1
// newer than 1.0.0. skipRange and OLM v1 version ranges still ignore build
// metadata; OLM classic never orders by version.

// releaseOf returns the release identifiers of a bundle: release split at
// dots, or the build metadata.
func releaseOf(v semver.Version, release string) []string {
	if release != "" {
		return strings.Split(release, ".")
	}
	if len(v.Build) > 0 {
		return v.Build
	}
	return nil
}

// compareRelease orders releases: none before any; then identifier by
// identifier, numbers numerically (leading zeros ignored) and before
// alphanumerics, alphanumerics in ASCII order; a release that is a prefix
// of another first. For valid releases these are semver's pre-release
// precedence rules.
func compareRelease(a, b []string) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return -1
	case len(b) == 0:
		return 1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdentifier(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func compareIdentifier(a, b string) int {
	an, bn := isNumeric(a), isNumeric(b)
	switch {
	case an && bn:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareV1 orders two versioned nodes as OLM v1 does: version (build
// metadata ignored), then release.
func compareV1(a, b *Node) int {
	if c := a.Version.Compare(b.Version); c != 0 {
		return c
	}
	return compareRelease(a.rel, b.rel)
}

// CompareVersions orders a and b as OLM v1 does: by version, then by
// release (the olm.package release, or the build metadata).
func CompareVersions(a, b *Node) int { return compareV1(a, b) }

// sortNodes sorts nodes by OLM v1 order, then name.
func sortNodes(nodes []*Node) {
	sort.Slice(nodes, func(i, j int) bool {
		if c := compareV1(nodes[i], nodes[j]); c != 0 {
			return c < 0
		}
		return nodes[i].Name < nodes[j].Name
	})
}
