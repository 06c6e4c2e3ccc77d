// Package versionrange parses the two version-range dialects of OLM.
//
// [Parse] reads OLM v1's range syntax, the one a ClusterExtension's
// spec.version takes (operator-controller evaluates it with
// github.com/Masterminds/semver/v3):
//
//   - comparisons =, !=, >, <, >=, <=, and a bare version meaning =;
//   - comma or space between comparisons for AND, || for OR;
//   - x, X and * wildcards ("1.11.x" is >=1.11.0, <1.12.0; "*" is
//     >=0.0.0);
//   - ~ for patch releases ("~1.12" is >=1.12, <1.13) and ^ for releases
//     compatible with a major version ("^1.2.3" is >=1.2.3, <2.0.0; below
//     1.0.0 the minor, then the patch, is the compatibility level).
//
// [ParseSkipRange] reads OLM classic's olm.skipRange syntax (evaluated
// with github.com/blang/semver/v4's ParseRange), which catalogs still use
// under both OLM classic and OLM v1. OLM classic reads the versionRange of
// a dependency (olm.package.required, a package constraint) in the same
// dialect.
//
// Every range of a catalog is parsed here: no other package calls
// blang/semver's ParseRange or Masterminds' NewConstraint, so both
// dialects keep one meaning throughout opm.
//
// The two dialects differ, and this package keeps each one's meaning:
//
//   - Pre-releases. A skipRange compares pre-releases like any other
//     version: "<2.0.0" covers 2.0.0-rc.1 and ">=1.0.0 <2.0.0" covers
//     1.5.0-rc.1. An OLM v1 range never matches a pre-release unless one
//     of its comparisons names a pre-release of the same major.minor.patch
//     (">=1.11 <1.13" does not match 1.12.0-rc.1; ">=1.12.0-0" does).
//   - Build metadata is ignored by both when comparing: 1.2.3+build
//     satisfies "=1.2.3" and "1.2.3" alike.
//   - Syntax. A skipRange separates AND terms with spaces only (no commas)
//     and has no ~ or ^; an OLM v1 range accepts both separators, ~, ^, a
//     "v" prefix and partial versions ("1.2" means 1.2.x).
//   - Versions. OLM classic and OLM v1 both read bundle versions as strict
//     semver (no "v" prefix, all three numbers).
package versionrange

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	mmsemver "github.com/Masterminds/semver/v3"
	"github.com/blang/semver/v4"
)

// Range is an OLM v1 version range.
type Range struct {
	text string
	c    *mmsemver.Constraints
}

// Parse parses an OLM v1 version range such as ">=1.11, <1.13" or "~1.12".
func Parse(s string) (*Range, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("invalid version range %q: empty", s)
	}
	c, err := mmsemver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("invalid version range %q: %w", s, err)
	}
	return &Range{text: s, c: c}, nil
}

// String returns the range as written.
func (r *Range) String() string { return r.text }

// Contains reports whether v (a semver string) is in the range. A version
// that does not parse is in no range.
func (r *Range) Contains(v string) bool {
	mv, err := mmsemver.StrictNewVersion(v)
	if err != nil {
		return false
	}
	return r.c.Check(mv)
}

// ContainsVersion reports whether v is in the range.
func (r *Range) ContainsVersion(v semver.Version) bool {
	return r.Contains(v.String())
}

// SkipRange is an OLM classic olm.skipRange.
type SkipRange struct {
	text  string
	r     semver.Range
	spans []Span
}

// ParseSkipRange parses a skipRange such as ">=4.1.0 <4.1.2". Errors carry
// blang/semver's wording, as upstream's validation reports it
// (invalid skipRange "x": <this error>).
func ParseSkipRange(s string) (*SkipRange, error) {
	r, err := semver.ParseRange(s)
	if err != nil {
		return nil, err
	}
	if parts := strings.Split(s, "||"); len(parts) > 1 && slices.ContainsFunc(parts, func(p string) bool { return strings.TrimSpace(p) == "" }) {
		// blang accepts an empty alternative ("a || || b") and panics
		// when it is reached: it matches nothing here.
		var alts []semver.Range
		for _, p := range parts {
			if strings.TrimSpace(p) == "" {
				continue
			}
			a, err := semver.ParseRange(p)
			if err != nil {
				return nil, err
			}
			alts = append(alts, a)
		}
		r = func(v semver.Version) bool {
			return slices.ContainsFunc(alts, func(a semver.Range) bool { return a(v) })
		}
	}
	return &SkipRange{text: s, r: r, spans: skipRangeSpans(s)}, nil
}

// String returns the range as written.
func (r *SkipRange) String() string { return r.text }

// Contains reports whether v is in the range; pre-releases are ordinary
// versions and build metadata is ignored.
func (r *SkipRange) Contains(v semver.Version) bool { return r.r(v) }

// ParseVersion parses a version a person typed (a flag or an argument):
// strict semver, with an optional leading "v" ("v2.4.0" is 2.4.0), as
// bundle names usually write it. Versions in catalogs stay strict.
func ParseVersion(s string) (semver.Version, error) {
	t := s
	if len(t) > 1 && (t[0] == 'v' || t[0] == 'V') && t[1] >= '0' && t[1] <= '9' {
		t = t[1:]
	}
	v, err := semver.Parse(t)
	if err != nil {
		return semver.Version{}, fmt.Errorf("invalid version %q: %w", s, err)
	}
	return v, nil
}

// skipRangeTerm is one comparison of a skipRange: an optional operator and
// a version.
var skipRangeTerm = regexp.MustCompile(`\s*(>=|<=|!=|==|>|<|=|!)?\s*([^\s<>=!]\S*)`)

// Older reports whether the range speaks only of versions older than v:
// in each of its alternatives every version it names is at most v, and
// the alternative reaches below v (it has no lower bound, or its lower
// bound is below v). "<1.2.0", ">=1.0.0 <1.2.0" and "=1.1.0" are older
// than 1.2.0; ">=1.2.0" and "<1.3.0" are not. A range it cannot read
// (wildcards) is not.
func (r *SkipRange) Older(v semver.Version) bool {
	for _, alt := range strings.Split(r.text, "||") {
		terms := skipRangeTerm.FindAllStringSubmatch(strings.TrimSpace(alt), -1)
		if len(terms) == 0 {
			return false
		}
		var lower *semver.Version
		for _, t := range terms {
			tv, err := semver.Parse(t[2])
			if err != nil {
				return false
			}
			op := t[1]
			if op == "!=" || op == "!" {
				continue
			}
			if tv.Compare(v) > 0 {
				return false
			}
			switch op {
			case "", "=", "==", ">", ">=":
				if lower == nil || tv.Compare(*lower) > 0 {
					lower = &tv
				}
			}
		}
		if lower != nil && lower.Compare(v) >= 0 {
			return false
		}
	}
	return true
}
