package versionrange

import (
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
)

// probes are checked against every row: a row's range and the expression
// the seed's table gives as its meaning must agree on each of them.
var probes = []string{
	"0.0.0", "0.0.2", "0.0.3", "0.0.4", "0.1.0", "0.2.0", "0.2.2", "0.2.3", "0.2.9", "0.3.0",
	"0.9.9", "1.0.0", "1.1.0", "1.2.0", "1.2.2", "1.2.3", "1.2.4", "1.9.9", "1.10.9", "1.11.0",
	"1.11.1", "1.11.9", "1.12.0", "1.12.5", "1.13.0", "1.99.0", "2.0.0", "2.2.9", "2.3.0",
	"2.9.9", "3.0.0", "10.0.0", "1.2.3+build.7",
}

// TestParseSeedTables has one case per row of the OLM v1 documentation's
// version range tables (basic comparisons, wildcards, ~ and ^), plus its
// worked examples. Each row names versions it must and must not match, and
// the "means" column of the table, which must select the same probes.
func TestParseSeedTables(t *testing.T) {
	tests := []struct {
		name  string
		rng   string
		means string // the table's "matching string"; "" for table 1
		in    []string
		out   []string
	}{
		// Table 1. Basic comparisons.
		{name: "Success/equal", rng: "=1.2.3", in: []string{"1.2.3", "1.2.3+build.7"}, out: []string{"1.2.2", "1.2.4"}},
		{name: "Success/not equal", rng: "!=1.2.3", in: []string{"1.2.2", "1.2.4", "0.0.0"}, out: []string{"1.2.3"}},
		{name: "Success/greater", rng: ">1.2.3", in: []string{"1.2.4", "2.0.0"}, out: []string{"1.2.3", "1.2.2"}},
		{name: "Success/less", rng: "<1.2.3", in: []string{"1.2.2", "0.0.0"}, out: []string{"1.2.3", "1.2.4"}},
		{name: "Success/greater or equal", rng: ">=1.2.3", in: []string{"1.2.3", "1.2.4"}, out: []string{"1.2.2"}},
		{name: "Success/less or equal", rng: "<=1.2.3", in: []string{"1.2.3", "1.2.2"}, out: []string{"1.2.4"}},
		// Worked examples in the text.
		{name: "Success/comma AND", rng: ">=1.11, <1.13", means: ">=1.11.0 <1.13.0", in: []string{"1.11.0", "1.12.5"}, out: []string{"1.10.9", "1.13.0"}},
		{name: "Success/space AND", rng: ">=1.11 <1.13", means: ">=1.11, <1.13", in: []string{"1.11.0", "1.12.5"}, out: []string{"1.13.0"}},
		{name: "Success/greater than a version", rng: ">1.11.1", in: []string{"1.11.9", "2.0.0"}, out: []string{"1.11.1", "1.11.0"}},
		{name: "Success/pinned version", rng: "1.11.1", means: "=1.11.1", in: []string{"1.11.1"}, out: []string{"1.11.0", "1.11.9"}},
		{name: "Success/OR", rng: ">=1.11, <1.12 || >=2.3", in: []string{"1.11.9", "2.3.0", "10.0.0"}, out: []string{"1.12.0", "2.2.9"}},
		// Table 2. Wildcards.
		{name: "Success/wildcard x", rng: "1.11.x", means: ">=1.11.0, <1.12.0", in: []string{"1.11.0", "1.11.9"}, out: []string{"1.10.9", "1.12.0"}},
		{name: "Success/wildcard X", rng: ">=1.12.X", means: ">=1.12.0", in: []string{"1.12.0", "10.0.0"}, out: []string{"1.11.9"}},
		{name: "Success/wildcard major", rng: "<=2.x", means: "<3", in: []string{"2.9.9", "0.0.0"}, out: []string{"3.0.0"}},
		{name: "Success/wildcard star", rng: "*", means: ">=0.0.0", in: []string{"0.0.0", "10.0.0"}},
		{name: "Success/wildcard with equal", rng: "=1.11.x", means: ">=1.11.0, <1.12.0", in: []string{"1.11.1"}, out: []string{"1.12.0"}},
		// Table 3. Patch release comparisons (~).
		{name: "Success/tilde patch", rng: "~1.11.0", means: ">=1.11.0, <1.12.0", in: []string{"1.11.0", "1.11.9"}, out: []string{"1.12.0", "1.10.9"}},
		{name: "Success/tilde major", rng: "~1", means: ">=1, <2", in: []string{"1.0.0", "1.99.0"}, out: []string{"2.0.0", "0.9.9"}},
		{name: "Success/tilde minor", rng: "~1.12", means: ">=1.12, <1.13", in: []string{"1.12.0", "1.12.5"}, out: []string{"1.13.0"}},
		{name: "Success/tilde wildcard patch", rng: "~1.12.x", means: ">=1.12.0, <1.13.0", in: []string{"1.12.5"}, out: []string{"1.13.0", "1.11.9"}},
		{name: "Success/tilde wildcard minor", rng: "~1.x", means: ">=1, <2", in: []string{"1.0.0", "1.99.0"}, out: []string{"2.0.0"}},
		// Table 4. Major release comparisons (^).
		{name: "Success/caret 0", rng: "^0", means: ">=0.0.0, <1.0.0", in: []string{"0.0.0", "0.9.9"}, out: []string{"1.0.0"}},
		{name: "Success/caret 0.0", rng: "^0.0", means: ">=0.0.0, <0.1.0", in: []string{"0.0.0", "0.0.4"}, out: []string{"0.1.0"}},
		{name: "Success/caret 0.0.3", rng: "^0.0.3", means: ">=0.0.3, <0.0.4", in: []string{"0.0.3"}, out: []string{"0.0.2", "0.0.4"}},
		{name: "Success/caret 0.2", rng: "^0.2", means: ">=0.2.0, <0.3.0", in: []string{"0.2.0", "0.2.9"}, out: []string{"0.3.0", "0.1.0"}},
		{name: "Success/caret 0.2.3", rng: "^0.2.3", means: ">=0.2.3, <0.3.0", in: []string{"0.2.3", "0.2.9"}, out: []string{"0.2.2", "0.3.0"}},
		{name: "Success/caret 1.2.x", rng: "^1.2.x", means: ">= 1.2.0, < 2.0.0", in: []string{"1.2.0", "1.99.0"}, out: []string{"1.1.0", "2.0.0"}},
		{name: "Success/caret 1.2.3", rng: "^1.2.3", means: ">= 1.2.3, < 2.0.0", in: []string{"1.2.3", "1.9.9"}, out: []string{"1.2.2", "2.0.0"}},
		{name: "Success/caret 2.x", rng: "^2.x", means: ">= 2.0.0, < 3", in: []string{"2.0.0", "2.9.9"}, out: []string{"1.99.0", "3.0.0"}},
		{name: "Success/caret 2.3", rng: "^2.3", means: ">= 2.3, < 3", in: []string{"2.3.0", "2.9.9"}, out: []string{"2.2.9", "3.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(tt.rng)
			if err != nil {
				t.Fatal(err)
			}
			if r.String() != tt.rng {
				t.Errorf("String() = %q, want %q", r.String(), tt.rng)
			}
			for _, v := range tt.in {
				if !r.Contains(v) {
					t.Errorf("%q does not contain %s", tt.rng, v)
				}
			}
			for _, v := range tt.out {
				if r.Contains(v) {
					t.Errorf("%q contains %s", tt.rng, v)
				}
			}
			if tt.means == "" {
				return
			}
			m, err := Parse(tt.means)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range probes {
				if r.Contains(v) != m.Contains(v) {
					t.Errorf("%s: %q says %v, its meaning %q says %v", v, tt.rng, r.Contains(v), tt.means, m.Contains(v))
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "  ", ">=foo", "1.2.3.4.5", "~>1 <"} {
		t.Run("Error/"+s, func(t *testing.T) {
			_, err := Parse(s)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", s)
			}
			if !strings.Contains(err.Error(), "invalid version range") {
				t.Errorf("error %q does not say what failed", err)
			}
		})
	}
}

// TestDialectDifferences pins each documented difference between the OLM v1
// range dialect and OLM classic's skipRange.
func TestDialectDifferences(t *testing.T) {
	t.Run("Success/pre-releases count in skipRange only", func(t *testing.T) {
		r := mustParse(t, ">=1.0.0 <2.0.0")
		s := mustSkipRange(t, ">=1.0.0 <2.0.0")
		for _, v := range []string{"1.5.0-rc.1", "2.0.0-rc.1"} {
			if r.Contains(v) {
				t.Errorf("OLM v1 range contains pre-release %s", v)
			}
			if !s.Contains(semver.MustParse(v)) {
				t.Errorf("skipRange does not contain pre-release %s", v)
			}
		}
		// A pre-release in the constraint opts OLM v1 in for that version.
		if !mustParse(t, ">=1.5.0-0 <2.0.0").Contains("1.5.0-rc.1") {
			t.Error("OLM v1 range with a pre-release bound does not contain 1.5.0-rc.1")
		}
	})
	t.Run("Success/build metadata ignored by both", func(t *testing.T) {
		if !mustParse(t, "=1.2.3").Contains("1.2.3+build.7") {
			t.Error("OLM v1 range: 1.2.3+build.7 is not =1.2.3")
		}
		if !mustSkipRange(t, ">=1.2.3 <=1.2.3").Contains(semver.MustParse("1.2.3+build.7")) {
			t.Error("skipRange: 1.2.3+build.7 is not in >=1.2.3 <=1.2.3")
		}
		if mustSkipRange(t, "<1.2.3+zzz").Contains(semver.MustParse("1.2.3+aaa")) {
			t.Error("skipRange compares build metadata")
		}
	})
	t.Run("Error/skipRange has no comma, tilde or caret", func(t *testing.T) {
		for _, s := range []string{">=1.0.0, <2.0.0", "~1.2", "^1.2"} {
			if _, err := ParseSkipRange(s); err == nil {
				t.Errorf("ParseSkipRange(%q) succeeded", s)
			}
			if _, err := Parse(s); err != nil {
				t.Errorf("Parse(%q): %v", s, err)
			}
		}
	})
	t.Run("Success/OLM v1 accepts v prefix and partial versions", func(t *testing.T) {
		if !mustParse(t, "v1.2").Contains("1.2.9") {
			t.Error(`"v1.2" does not contain 1.2.9`)
		}
	})
	t.Run("Success/bundle versions are strict", func(t *testing.T) {
		r := mustParse(t, "*")
		for _, v := range []string{"v1.0.0", "1.0", "01.0.0"} {
			if r.Contains(v) {
				t.Errorf("%q is treated as a version", v)
			}
		}
	})
	t.Run("Success/skipRange wildcards", func(t *testing.T) {
		s := mustSkipRange(t, "<1.2.x")
		if !s.Contains(semver.MustParse("1.1.9")) || s.Contains(semver.MustParse("1.2.0")) {
			t.Error(`"<1.2.x" is not <1.2.0`)
		}
	})
	t.Run("Error/skipRange error wording", func(t *testing.T) {
		_, err := ParseSkipRange("not-a-range")
		if err == nil || err.Error() != `Could not get version from string: "not-a-range"` {
			t.Errorf("error = %v", err)
		}
	})
}

func TestContainsVersion(t *testing.T) {
	r := mustParse(t, "~1.12")
	if !r.ContainsVersion(semver.MustParse("1.12.3")) || r.ContainsVersion(semver.MustParse("1.13.0")) {
		t.Error("ContainsVersion disagrees with ~1.12")
	}
	if got := mustSkipRange(t, ">=4.1.0 <4.1.2").String(); got != ">=4.1.0 <4.1.2" {
		t.Errorf("String() = %q", got)
	}
}

func mustParse(t *testing.T, s string) *Range {
	t.Helper()
	r, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustSkipRange(t *testing.T, s string) *SkipRange {
	t.Helper()
	r, err := ParseSkipRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"2.4.0", "2.4.0", ""},
		{"v2.4.0", "2.4.0", ""},
		{"V2.4.0-rc.1+b", "2.4.0-rc.1+b", ""},
		{"v", "", `invalid version "v"`},
		{"vv2.4.0", "", `invalid version "vv2.4.0"`},
		{"2.4", "", `invalid version "2.4"`},
	} {
		v, err := ParseVersion(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParseVersion(%q) error %v, want %s", tc.in, err, tc.err)
			}
		case err != nil || v.String() != tc.want:
			t.Errorf("ParseVersion(%q) = %s, %v; want %s", tc.in, v, err, tc.want)
		}
	}
}

func TestSkipRangeOlder(t *testing.T) {
	v := semver.MustParse("1.2.0")
	for _, tc := range []struct {
		rng  string
		want bool
	}{
		{"<1.2.0", true},
		{">=1.0.0 <1.2.0", true},
		{"=1.1.0", true},
		{">1.1.0 <1.2.0", true},
		{">=1.1.0 <1.1.0", true}, // empty, and about older versions
		{"<1.0.0 || >=1.1.0 <1.2.0", true},
		{">=1.2.0", false},
		{"<1.3.0", false},
		{">=1.2.0 <1.2.0", false},
		{">=2.0.0 <3.0.0", false},
		{"<1.0.0 || >=2.0.0", false},
		{"<1.2.0 !=1.5.0", true},
		{"<=1.2.0", true},
	} {
		r, err := ParseSkipRange(tc.rng)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Older(v); got != tc.want {
			t.Errorf("%q.Older(1.2.0) = %v, want %v", tc.rng, got, tc.want)
		}
	}
	// Build metadata is ignored: 1.2.0+b is 1.2.0.
	r, _ := ParseSkipRange("<1.2.0")
	if !r.Older(semver.MustParse("1.2.0+b.1")) {
		t.Error(`"<1.2.0" is not older than 1.2.0+b.1`)
	}
}

// TestSkipRangeSpans pins the spans of typical and odd skipRanges.
func TestSkipRangeSpans(t *testing.T) {
	for _, tc := range []struct{ rng, want string }{
		{">=4.1.0 <4.1.2", "[4.1.0,4.1.2)"},
		{">4.1.0 <=4.1.2", "(4.1.0,4.1.2]"},
		{"<1.0.0", "(*,1.0.0)"},
		{">=1.0.0", "[1.0.0,*)"},
		{"1.2.3", "[1.2.3,1.2.3]"},
		{"!=1.2.3", "(*,*)"},
		{"<1.0.0 || >=2.0.0 <3.0.0", "(*,1.0.0) [2.0.0,3.0.0)"},
		{">=2.0.0 <3.0.0 || <2.5.0", "(*,3.0.0)"},
		{"!=1.1.0 <1.1.1 || <= 2.2.1 <2.3.0", "(*,2.2.1]"},
		{"1.2.x", "[1.2.0,1.3.0)"},
		{">1.x", "[2.0.0,*)"},
		{"<=1.2.x", "(*,1.3.0)"},
		{"!=1.x", ""}, // blang reads it as <1.0.0 AND >=2.0.0
		{">=2.0.0 <1.0.0", ""},
		{">1.0.0 <1.0.0 || >=1.0.0 <=1.0.0", "[1.0.0,1.0.0]"},
		{">= 1.0.0 < 1.1.0", "[1.0.0,1.1.0)"},
		{">=1.0.0-rc.1 <1.0.0", "[1.0.0-rc.1,1.0.0)"},
	} {
		r := mustSkipRange(t, tc.rng)
		var got []string
		for _, s := range r.Spans() {
			got = append(got, spanString(s))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q: spans %s, want %s", tc.rng, g, tc.want)
		}
	}
}

func spanString(s Span) string {
	b := "("
	if s.LoIncl {
		b = "["
	}
	lo, hi := "*", "*"
	if s.Lo != nil {
		lo = s.Lo.String()
	}
	if s.Hi != nil {
		hi = s.Hi.String()
	}
	e := ")"
	if s.HiIncl {
		e = "]"
	}
	return b + lo + "," + hi + e
}

// TestIndex: an index finds what testing every version finds, in
// position order, and a narrow range tests few versions.
func TestIndex(t *testing.T) {
	var vers []semver.Version
	for _, s := range probes {
		vers = append(vers, semver.MustParse(s))
	}
	vers = append(vers, vers[3], vers[10]) // repeated versions
	keep := func(i int) bool { return i%7 != 3 }
	x := NewIndex(vers, keep)
	for _, rng := range []string{">=1.0.0 <1.2.3", "<0.2.0 || >=2.3.0", "!=1.2.3", "1.11.x", "=1.2.3", ">10.0.0", "<0.0.0"} {
		r := mustSkipRange(t, rng)
		var want []int
		for i, v := range vers {
			if keep(i) && r.Contains(v) {
				want = append(want, i)
			}
		}
		if got := x.Members(nil, r, nil); !slices.Equal(got, want) {
			t.Errorf("%q: members %v, want %v", rng, got, want)
		}
	}
	// 20,000 versions and a range that covers one of them.
	vers = vers[:0]
	for i := 0; i < 20000; i++ {
		vers = append(vers, semver.Version{Major: 1, Patch: uint64(i)})
	}
	x = NewIndex(vers, nil)
	tested := 0
	got := x.Members(nil, mustSkipRange(t, ">=1.0.500 <1.0.501"), &tested)
	if !slices.Equal(got, []int{500}) || tested > 2 {
		t.Errorf("a range of one version among 20,000: %v, %d versions tested", got, tested)
	}
}
