// Package ocpversion knows OpenShift minor versions: which Kubernetes
// version each one ships, and how bundles and catalog images name the
// versions they target (the com.redhat.openshift.versions selector of
// bundle annotations and labels, and the com.redhat.fbc.openshift.version
// label of Konflux catalog images).
package ocpversion

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Version is an OpenShift (or Kubernetes) minor version: major.minor.
type Version struct {
	Major, Minor int
}

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// Compare returns -1, 0 or 1 as v is below, equal to or above o.
func (v Version) Compare(o Version) int {
	switch {
	case v.Major != o.Major:
		return cmpInt(v.Major, o.Major)
	case v.Minor != o.Minor:
		return cmpInt(v.Minor, o.Minor)
	}
	return 0
}

// FromUint is the version major.minor of numbers parsed as unsigned
// (semver's); a number over the largest int counts as the largest int,
// which keeps every comparison but among such numbers.
func FromUint(major, minor uint64) Version {
	clamp := func(n uint64) int {
		if n > math.MaxInt {
			return math.MaxInt
		}
		return int(n)
	}
	return Version{Major: clamp(major), Minor: clamp(minor)}
}

func cmpInt(a, b int) int {
	if a < b {
		return -1
	}
	return 1
}

// maxComponent bounds each number of a version we read.
const maxComponent = 1 << 16

// Parse reads a minor version: "4.18" or "v4.18". A patch is refused:
// OpenShift versions are targeted by minor.
func Parse(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	maj, min, ok := strings.Cut(t, ".")
	if !ok || strings.Contains(min, ".") {
		return Version{}, fmt.Errorf("%q is not a <major>.<minor> version such as 4.18", s)
	}
	a, err1 := number(maj)
	b, err2 := number(min)
	if err1 != nil || err2 != nil {
		return Version{}, fmt.Errorf("%q is not a <major>.<minor> version such as 4.18", s)
	}
	return Version{a, b}, nil
}

func number(s string) (int, error) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, errors.New("not a number")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxComponent {
		return 0, errors.New("not a number")
	}
	return n, nil
}

// ParseKube reads a Kubernetes version as CSVs write minKubeVersion:
// "1.25", "1.25.0", "v1.25.3" (the patch and any pre-release are
// dropped: OpenShift ships a Kubernetes minor).
func ParseKube(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("%q is not a Kubernetes version such as 1.25.0", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := number(p)
		if err != nil {
			return Version{}, fmt.Errorf("%q is not a Kubernetes version such as 1.25.0", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1]}, nil
}

// kube is the Kubernetes minor version each OpenShift minor version ships
// (Red Hat's "OpenShift and Kubernetes versions" table, and the
// openshift/kubernetes release branches for the newest).
var kube = map[Version]Version{
	{4, 1}: {1, 13}, {4, 2}: {1, 14}, {4, 3}: {1, 16}, {4, 4}: {1, 17},
	{4, 5}: {1, 18}, {4, 6}: {1, 19}, {4, 7}: {1, 20}, {4, 8}: {1, 21},
	{4, 9}: {1, 22}, {4, 10}: {1, 23}, {4, 11}: {1, 24}, {4, 12}: {1, 25},
	{4, 13}: {1, 26}, {4, 14}: {1, 27}, {4, 15}: {1, 28}, {4, 16}: {1, 29},
	{4, 17}: {1, 30}, {4, 18}: {1, 31}, {4, 19}: {1, 32}, {4, 20}: {1, 33},
	{4, 21}: {1, 34}, {4, 22}: {1, 35},
}

// Newest is the newest OpenShift version this package knows the
// Kubernetes version of.
var Newest = Version{4, 22}

// Kube returns the Kubernetes version OpenShift v ships; ok is false for a
// version this package does not know (a newer one: give it yourself).
func Kube(v Version) (Version, bool) {
	k, ok := kube[v]
	return k, ok
}

// Known returns the OpenShift versions this package knows, oldest first.
func Known() []Version {
	var out []Version
	for m := 1; m <= Newest.Minor; m++ {
		out = append(out, Version{4, m})
	}
	return out
}

// Range is the set of OpenShift versions a com.redhat.openshift.versions
// selector names: from Min up to Max (nil: no upper bound).
type Range struct {
	Min Version
	Max *Version
	// Text is the selector as written.
	Text string
}

// Contains reports whether v is in r.
func (r Range) Contains(v Version) bool {
	return v.Compare(r.Min) >= 0 && (r.Max == nil || v.Compare(*r.Max) <= 0)
}

// Within reports whether every version of r up to bound (for an open
// range) is in o, also bounded by bound.
func (r Range) Within(o Range, bound Version) bool {
	if r.Min.Compare(o.Min) < 0 {
		return false
	}
	rMax, oMax := bound, bound
	if r.Max != nil && r.Max.Compare(bound) < 0 {
		rMax = *r.Max
	}
	if o.Max != nil && o.Max.Compare(bound) < 0 {
		oMax = *o.Max
	}
	return rMax.Compare(r.Min) < 0 || rMax.Compare(oMax) <= 0
}

func (r Range) String() string {
	if r.Max == nil {
		return r.Min.String() + " and later"
	}
	if r.Max.Compare(r.Min) == 0 {
		return r.Min.String()
	}
	return r.Min.String() + " to " + r.Max.String()
}

// ParseRange reads a com.redhat.openshift.versions selector as Red Hat's
// pipelines read it: "v4.12" (that version and later), "=v4.12" (that
// version only), "v4.12-v4.14" (a range, both ends included), or the
// legacy "v4.5,v4.6" (the lowest listed and later).
func ParseRange(s string) (Range, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (Range, error) {
		return Range{}, fmt.Errorf("OpenShift versions %q %s (expected \"v4.12\", \"=v4.12\" or \"v4.12-v4.14\")", s, why)
	}
	const notSelector = "is not a selector"
	if t == "" {
		return bad(notSelector)
	}
	r := Range{Text: s}
	switch {
	case strings.Contains(t, "-"):
		a, b, _ := strings.Cut(t, "-")
		lo, err1 := Parse(a)
		hi, err2 := Parse(b)
		if err1 != nil || err2 != nil {
			return bad(notSelector)
		}
		if hi.Compare(lo) < 0 {
			return bad(fmt.Sprintf("ends (%s) below where it starts (%s)", hi, lo))
		}
		r.Min, r.Max = lo, &hi
	case strings.Contains(t, ","):
		first := true
		for _, p := range strings.Split(t, ",") {
			v, err := Parse(p)
			if err != nil {
				return bad(notSelector)
			}
			if first || v.Compare(r.Min) < 0 {
				r.Min = v
			}
			first = false
		}
	case strings.HasPrefix(t, "="):
		v, err := Parse(t[1:])
		if err != nil {
			return bad(notSelector)
		}
		r.Min, r.Max = v, &v
	default:
		v, err := Parse(t)
		if err != nil {
			return bad(notSelector)
		}
		r.Min = v
	}
	return r, nil
}

// Label names.
const (
	// FBCLabel is the label of Konflux catalog images naming the OpenShift
	// versions a catalog is built for: a JSON array such as
	// ["v4.18","v4.19"] (Konflux uses the first).
	FBCLabel = "com.redhat.fbc.openshift.version"
	// VersionsLabel is the bundle annotation and label naming the
	// OpenShift versions a bundle supports (a selector, see ParseRange).
	VersionsLabel = "com.redhat.openshift.versions"
)

// FromFBCLabel reads the value of FBCLabel: a JSON array of versions
// (the first counts, as Konflux reads it) or a single version.
func FromFBCLabel(value string) (Version, error) {
	t := strings.TrimSpace(value)
	if strings.HasPrefix(t, "[") {
		var list []string
		if err := json.Unmarshal([]byte(t), &list); err != nil {
			return Version{}, fmt.Errorf("label %s=%s: not a JSON array of versions: %w", FBCLabel, value, err)
		}
		if len(list) == 0 {
			return Version{}, fmt.Errorf("label %s=%s: an empty list", FBCLabel, value)
		}
		t = list[0]
	}
	v, err := Parse(t)
	if err != nil {
		return Version{}, fmt.Errorf("label %s=%s: %w", FBCLabel, value, err)
	}
	return v, nil
}

// FromVersionsLabel reads a catalog's VersionsLabel: it must name one
// version ("v4.18" or "=v4.18"); a range names no single target.
func FromVersionsLabel(value string) (Version, error) {
	r, err := ParseRange(value)
	if err != nil {
		return Version{}, fmt.Errorf("label %s: %w", VersionsLabel, err)
	}
	if r.Max != nil && r.Max.Compare(r.Min) != 0 {
		return Version{}, fmt.Errorf("label %s=%s names a range, not the one version a catalog is built for", VersionsLabel, value)
	}
	return r.Min, nil
}
