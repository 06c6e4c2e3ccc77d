package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

func TestMaxOpenShiftChecks(t *testing.T) {
	prop := func(values ...string) string {
		var b strings.Builder
		for _, v := range values {
			b.WriteString("  - type: olm.maxOpenShiftVersion\n    value: " + v + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name   string
		values []string
		want   string // the message, "" for no finding
		line   int    // of the finding
	}{
		{name: "Success/string", values: []string{`"4.16"`}},
		{name: "Success/number", values: []string{`4.17`}},
		{name: "Success/v prefix and zero patch", values: []string{`"v4.16.0"`}},
		{name: "Error/patch", values: []string{`"4.16.1"`}, line: 37, want: `bundle "foo.v0.3.0" has an invalid olm.maxOpenShiftVersion: "4.16.1" must give only <major>.<minor>, such as "4.16"`},
		{name: "Error/empty", values: []string{`""`}, line: 37, want: `bundle "foo.v0.3.0" has an invalid olm.maxOpenShiftVersion: value is "" (an empty string), expected a version such as "4.16"`},
		{name: "Error/not a version", values: []string{`latest`}, line: 37, want: `bundle "foo.v0.3.0" has an invalid olm.maxOpenShiftVersion: "latest" is not a version such as "4.16"`},
		{name: "Error/boolean", values: []string{`true`}, line: 37, want: `bundle "foo.v0.3.0" has an invalid olm.maxOpenShiftVersion: value true is neither a string nor a number, expected a version such as "4.16"`},
		{name: "Error/twice", values: []string{`"4.16"`, `"4.17"`}, line: 38, want: `bundle "foo.v0.3.0" has an invalid olm.maxOpenShiftVersion: 2 olm.maxOpenShiftVersion properties, expected at most 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			catalog := base + "---\nschema: olm.bundle\npackage: foo\nname: foo.v0.3.0\nimage: quay.io/foo/bundle:0.3.0\nproperties:\n" +
				"  - type: olm.package\n    value: {packageName: foo, version: 0.3.0}\n" + prop(tt.values...) +
				"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"
			var got []Finding
			for _, f := range validateText(t, catalog, Options{}).Findings {
				if f.Code == CodeMaxOpenShiftInvalid {
					got = append(got, f)
				}
			}
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("findings = %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Message != tt.want || got[0].Severity != SeverityWarning || got[0].Bundle != "foo.v0.3.0" || got[0].Line != tt.line {
				t.Fatalf("findings = %+v, want %q at line %d", got, tt.want, tt.line)
			}
		})
	}
}

// TestMaxOpenShiftChecksRealCatalog: the okderators catalog writes the
// property both as a string and as a number; neither is a finding.
func TestMaxOpenShiftChecksRealCatalog(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "conformance", "catalog", "okderators-catalog-index", "input")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("conformance suite not found: %v", err)
	}
	cfg, err := declcfg.LoadDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range cfg.Bundles {
		for _, p := range b.Properties {
			if p.Type == "olm.maxOpenShiftVersion" {
				n++
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d olm.maxOpenShiftVersion properties, expected at least 5", n)
	}
	res, err := Validate(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.Code == CodeMaxOpenShiftInvalid {
			t.Errorf("finding %+v", f)
		}
	}
}
