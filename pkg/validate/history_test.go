package validate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// historyCatalog is package foo with one channel, the entries given as
// YAML list items, and a bundle for each versions.
func historyCatalog(entries string, versions ...string) string {
	var b strings.Builder
	b.WriteString("schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n")
	b.WriteString(entries)
	for _, v := range versions {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: foo\nname: foo.v%s\nimage: quay.io/foo/bundle:v%s\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: %s}\n", v, v, v)
	}
	return b.String()
}

// TestPrunedHistory: edges and skipRanges that speak of bundles a shipped
// catalog no longer has (pruned, or never shipped in it) are not
// reported; mistakes are, each with the finding's code.
func TestPrunedHistory(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries string
		want    []string // codes of the warnings, sorted
	}{
		// Pruned history: nothing to report.
		{"Pruned/tail replaces an older bundle", `
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
`, nil},
		{"Pruned/skips of older bundles from the middle", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skips: [foo.v1.0.5, foo.v1.1.9]
`, nil},
		{"Pruned/tail after a version scheme change", `
  - name: foo.v1.1.0
    skips: [foo.v2026.5.1]
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
`, nil},
		{"Pruned/first bundle's skipRange below it", `
  - name: foo.v1.1.0
    skipRange: '>=1.0.0 <1.1.0'
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skipRange: '<1.2.0'
`, nil},
		{"Pruned/skipRange of one older missing version", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skipRange: '=1.1.5'
`, nil},
		{"Pruned/empty range below the bundle", `
  - name: foo.v1.1.0
    skipRange: '>=1.0.6 <1.0.6'
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
`, nil},

		// Mistakes: reported.
		{"Mistake/name off the package's naming", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skips: [fooo.v1.0.0]
`, []string{CodeEdgeTargetMissing}},
		{"Mistake/tail names no bundle of the package", `
  - name: foo.v1.1.0
    replaces: bar.v1.0.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
`, []string{CodeEdgeTargetMissing}},
		{"Mistake/middle entry skips a newer version", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skips: [foo.v1.3.0]
`, []string{CodeEdgeTargetMissing}},
		{"Mistake/skipRange above the bundle", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skipRange: '>=2.0.0 <2.1.0'
`, []string{CodeSkipRangeCoversNone}},
		{"Mistake/skipRange covering the bundle and newer ones", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skipRange: '>=1.2.0 <1.5.0'
`, []string{CodeSkipRangeCoversNone}},
		{"Mistake/empty range at the bundle", `
  - name: foo.v1.1.0
  - name: foo.v1.2.0
    replaces: foo.v1.1.0
    skipRange: '>=1.2.0 <1.2.0'
`, []string{CodeSkipRangeCoversNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := validateText(t, historyCatalog(strings.TrimPrefix(tc.entries, "\n"), "1.1.0", "1.2.0"), Options{})
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Code)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %q, want %q:\n%s", got, tc.want, describe(res))
			}
			if tc.want == nil && !res.Passed {
				t.Errorf("did not pass: %s", res.Message)
			}
		})
	}
}

// TestEdgeTargetMissingSuggests: a misspelt edge target's help names the
// nearest bundle.
func TestEdgeTargetMissingSuggests(t *testing.T) {
	res := validateText(t, historyCatalog("  - name: foo.v1.1.0\n  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n    skips: [fo.v1.1.0]\n", "1.1.0", "1.2.0"), Options{})
	if len(res.Findings) != 1 || !strings.HasPrefix(res.Findings[0].Help, `did you mean "foo.v1.1.0"? fix the name`) {
		t.Errorf("findings:\n%s\n%+v", describe(res), res.Findings)
	}
}
