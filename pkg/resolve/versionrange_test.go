package resolve

import (
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/versionrange"
)

// §5.2: olm.package.required and package constraints use blang/semver
// ranges (pkg/versionrange's classic parser), not Masterminds/semver's
// (pkg/versionrange.Parse, OLM v1's). The two differ on pre-releases and
// on syntax; each case says what each does.
func TestVersionRangeSemantics(t *testing.T) {
	for _, tc := range []struct {
		rng, version string
		// olm: the resolver's verdict ("" when the range does not parse);
		// mm: Masterminds' ("" when it does not parse).
		olm, mm string
	}{
		// Pre-releases match like any version under OLM classic.
		{">=1.0.0 <2.0.0", "2.0.0-rc.1", "yes", "no"},
		{"<2.0.0", "1.5.0-rc.1", "yes", "no"},
		{">=1.0.0", "1.1.0-alpha", "yes", "no"},
		// A pre-release is below its release for both.
		{"<3.0.0", "3.0.0-rc.1", "yes", "no"},
		{">=3.0.0", "3.0.0-rc.1", "no", "no"},
		// Build metadata is ignored by both.
		{"=1.2.3", "1.2.3+build.7", "yes", "yes"},
		{"1.2.3", "1.2.3", "yes", "yes"},
		// Syntax only Masterminds knows.
		{"~1.2", "1.2.5", "", "yes"},
		{"^1.2.3", "1.9.0", "", "yes"},
		{">=1.0.0, <2.0.0", "1.5.0", "", "yes"},
		{"1.2", "1.2.0", "", "yes"},
		{"v1.2.3", "1.2.3", "", "yes"},
		// A hyphen range is not a parse error, as resolution.md §5.2 says:
		// blang drops a lone one-character word ("-") and ANDs the rest,
		// "=1.0.0 =2.0.0", which matches nothing.
		{"1.0.0 - 2.0.0", "1.5.0", "no", "yes"},
		{"1.0.0 - 2.0.0", "1.0.0", "no", "yes"},
		{"", "1.0.0", "", ""},
		// Syntax both know, with the same meaning.
		{"1.x", "1.9.9", "yes", "yes"},
		{">=1.2.x", "1.2.0", "yes", "yes"},
		{">1.0.0 <2.0.0 || >=3.0.0", "3.1.0", "yes", "yes"},
		// The seed's examples.
		{">0.27.0", "0.32.0", "yes", "yes"},
		{"> 1.0.0 !1.2.1", "1.2.1", "no", ""},
		{"> 1.0.0 !1.2.1", "1.2.2", "yes", ""},
		// blang's quirk: !1.2.x is an AND of <1.2.0 and >=1.3.0.
		{"!1.2.x", "1.0.0", "no", ""},
	} {
		v := semver.MustParse(tc.version)
		got := ""
		if p, err := newPackagePredicate("p", tc.rng); err == nil {
			got = yesNo(p.match(t.Context(), &bundle{pkg: "p", version: v, versionOK: true}))
		}
		if got != tc.olm {
			t.Errorf("OLM classic: %q contains %s = %q, want %q", tc.rng, tc.version, got, tc.olm)
		}
		mm := ""
		if r, err := versionrange.Parse(tc.rng); err == nil {
			mm = yesNo(r.ContainsVersion(v))
		}
		if mm != tc.mm {
			t.Errorf("Masterminds: %q contains %s = %q, want %q", tc.rng, tc.version, mm, tc.mm)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// A dependency "<2.0.0" takes a 2.0.0 pre-release at the head of the
// channel, where OLM v1's semantics would skip it.
func TestPrereleaseDependency(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresPkg("db", ">=1.0.0 <2.0.0")).
		pkg("db", "stable").channel("db", "stable", "db.v1.5.0", "db.v2.0.0-rc.1<db.v1.5.0").
		bundle("db", "db.v1.5.0", "1.5.0").
		bundle("db", "db.v2.0.0-rc.1", "2.0.0-rc.1")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/db.v2.0.0-rc.1 c/app.v1")
}
