package versionrange

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
)

var fuzzVersions = []semver.Version{
	semver.MustParse("0.0.0"), semver.MustParse("1.2.3"), semver.MustParse("1.2.3-rc.1"),
	semver.MustParse("1.2.3+build"), semver.MustParse("2.0.0"), semver.MustParse("10.20.30-alpha.1+b.2"),
}

// FuzzParse feeds arbitrary text to both dialects' parsers: they must not
// panic, and a range that parses must answer for any version.
func FuzzParse(f *testing.F) {
	for _, s := range []string{">=1.11, <1.13", "1.11.x", "~1.12", "^0.0.3", "*", "<=2.x", ">=1.0.0 <2.0.0 || >3", "!=1.2.3", "v1.2", ">=4.1.0 <4.1.2", "", "||", ">= ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := Parse(s); err == nil {
			for _, v := range fuzzVersions {
				_ = r.ContainsVersion(v)
			}
			_ = r.Contains(s)
		}
		if r, err := ParseSkipRange(s); err == nil {
			for _, v := range fuzzVersions {
				_ = r.Contains(v)
			}
		}
	})
}

// FuzzSkipRangeSpans checks that the spans of a skipRange hold every
// version it contains: an index that searches only the spans finds every
// member. Versions come from the range's own text, and around it.
func FuzzSkipRangeSpans(f *testing.F) {
	for _, s := range []string{">=1.0.0 <1.0.1", "<1.2.x || >= 2.x", "1.2.x", "!=1.x", ">1.x <=2.3.x", "=1.0.0-x1", "!=1.1.0 <1.1.1 || <= 2.2.1 <2.3.0", ">=1.0.0-rc.1 <1.0.0", "~1.x", "> 1.0.0 < 2.0.0 || =3.0.0", "1.0.0 || 0.5.0", "<0.0.1 >0.0.0", ">=1.1.0 <=1.1.0"} {
		f.Add(s, "1.0.0", "1.2.3")
	}
	f.Fuzz(func(t *testing.T, s, v1, v2 string) {
		r, err := ParseSkipRange(s)
		if err != nil {
			return
		}
		vs := append([]semver.Version(nil), fuzzVersions...)
		for _, p := range append([]string{v1, v2}, skipRangeTerm.FindAllString(s, -1)...) {
			p = strings.TrimLeft(strings.TrimSpace(p), "<>=!~ ")
			if v, err := semver.Parse(p); err == nil {
				vs = append(vs, v, bump(v, 0), bump(v, 1), bump(v, 2))
				if v.Patch > 0 {
					w := v
					w.Patch--
					vs = append(vs, w)
				}
			}
		}
		spans := r.Spans()
		for i := 1; i < len(spans); i++ {
			if !spanBefore(spans[i-1], spans[i]) {
				t.Fatalf("%q: spans %v overlap or are out of order", s, spans)
			}
		}
		for _, v := range vs {
			if !r.Contains(v) {
				continue
			}
			held := false
			for _, sp := range spans {
				held = held || sp.Holds(v)
			}
			if !held {
				t.Fatalf("%q contains %s, which none of its spans %v holds", s, v, spans)
			}
		}
	})
}

func bump(v semver.Version, i int) semver.Version {
	v.Pre, v.Build = nil, nil
	switch i {
	case 0:
		v.Major++
	case 1:
		v.Minor++
	default:
		v.Patch++
	}
	return v
}

// spanBefore reports whether a ends before b starts.
func spanBefore(a, b Span) bool {
	if a.Hi == nil || b.Lo == nil {
		return false
	}
	c := a.Hi.Compare(*b.Lo)
	return c < 0 || (c == 0 && !(a.HiIncl && b.LoIncl))
}
