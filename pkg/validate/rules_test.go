package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// base is a small valid catalog: package foo with channel stable
// (foo.v0.1.0 <- foo.v0.2.0), each bundle with an image.
const base = `schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v0.1.0
  - name: foo.v0.2.0
    replaces: foo.v0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/foo/bundle:v0.1.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 0.1.0}
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: quay.io/foo/bundle:v0.2.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 0.2.0}
`

func hasErrors(res *Result) bool {
	n, _ := res.Counts()
	return n > 0
}

// validateText validates catalog, one file named catalog.yaml, one
// package at a time from its index (so findings are at their elements).
func validateText(t *testing.T, catalog string, opts Options) *Result {
	t.Helper()
	return validateNamed(t, catalog, "catalog.yaml", opts)
}

func validateNamed(t *testing.T, catalog, name string, opts Options) *Result {
	t.Helper()
	ix, err := declcfg.IndexBytes(context.Background(), []byte(catalog), name)
	if err != nil {
		return LoadErrorResult(err)
	}
	res, err := ValidateIndex(context.Background(), ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestValidBaseHasNoFindings(t *testing.T) {
	res := validateText(t, base, Options{})
	if !res.Passed || len(res.Findings) != 0 || res.Message != "" {
		t.Fatalf("base catalog: %+v", res)
	}
}

func TestStrict(t *testing.T) {
	data, _ := stripMarkers(ruleCase(t, "testdata/rules/gvk-required-unsatisfied.txtar").Files[0].Data)
	catalog := string(data)
	res := validateText(t, catalog, Options{})
	if !res.Passed {
		t.Fatalf("warnings failed the catalog: %+v", res)
	}
	res = validateText(t, catalog, Options{Strict: true})
	if res.Passed || !strings.Contains(res.Message, "requires API a.io/v1 B") {
		t.Fatalf("strict: %+v", res)
	}
	for _, f := range res.Findings {
		if f.Severity != SeverityError {
			t.Errorf("strict finding %+v is not an error", f)
		}
	}
}

func TestCustomSchemas(t *testing.T) {
	dir := t.TempDir()
	schema := `package schemas

#Custom: "example.com.widget": {
	schema!: "example.com.widget"
	package?: string
	name!: string & =~"^[a-z]+$"
	size!: int & >0
}
`
	if err := os.WriteFile(filepath.Join(dir, "widget.cue"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchemas(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, marks := stripMarkers([]byte(base + "---\nschema: example.com.widget\nname: ok\nsize: 3\n---\nschema: example.com.widget\nname: Bad1\n#     ^ custom-schema\nsize: 0\n#     ^ custom-schema\n"))
	res := validateText(t, string(data), Options{Schemas: s})
	if res.Passed {
		t.Fatalf("custom schema violations passed: %+v", res)
	}
	var msgs []string
	for _, f := range res.Findings {
		if f.Code != CodeCustomSchema || f.Severity != SeverityError || findingAt(res, f.Code, "catalog.yaml", marks[len(msgs)]) == nil {
			t.Errorf("finding %+v", f)
		}
		msgs = append(msgs, f.Message)
	}
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "name: invalid value \"Bad1\"") || !strings.HasPrefix(msgs[1], "size: invalid value 0") {
		t.Errorf("messages = %q", msgs)
	}

	if err := os.WriteFile(filepath.Join(dir, "broken.cue"), []byte("package schemas\n#Custom: {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSchemas(dir); err == nil || !strings.Contains(err.Error(), "broken.cue") {
		t.Errorf("LoadSchemas(broken) error = %v", err)
	}
	if _, err := LoadSchemas(t.TempDir()); err == nil {
		t.Error("LoadSchemas(empty dir) succeeded")
	}
}

// TestRulesDocumented checks that docs/validate.md documents every code.
func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/validate.md")
	if err != nil {
		t.Fatal(err)
	}
	// The bundle validators' rules are documented with opm bundle
	// validate.
	bundleDoc, err := os.ReadFile("../../docs/bundle-validate.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules {
		name, text := "docs/validate.md", doc
		if isBundleRule(r.Code) && r.Code != CodeBundleUnchecked {
			name, text = "docs/bundle-validate.md", bundleDoc
		}
		if !strings.Contains(string(text), "`"+r.Code+"`") {
			t.Errorf("%s does not document %s", name, r.Code)
		}
	}
}

// TestAllStages checks that a conversion error does not hide the model
// validation of the rest of the catalog, and that the bundles it rejected
// are not reported again.
func TestAllStages(t *testing.T) {
	catalog := strings.Replace(base, "version: 0.2.0}", "version: v0.2.0}", 1) +
		"---\nschema: olm.package # <-\nname: bar\n"
	res := validateText(t, catalog, Options{})
	if res.Passed || res.Message != `error parsing bundle "foo.v0.2.0" version "v0.2.0": Invalid character(s) found in major number "v0"` {
		t.Fatalf("message = %q", res.Message)
	}
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, f.Code+"@"+f.Package+"/"+f.Bundle)
	}
	got := strings.Join(codes, " ")
	want := "bundle-version-invalid@foo/foo.v0.2.0 package-default-channel-unset@bar/ package-no-channels@bar/"
	if got != want {
		t.Errorf("findings = %s\nwant %s", got, want)
	}
}
