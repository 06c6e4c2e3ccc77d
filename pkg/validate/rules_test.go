package validate

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
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

// bundleDoc is an olm.bundle blob of package foo; the marker comment is on
// its first line.
func bundleDoc(name, version, extra string) string {
	return "---\nschema: olm.bundle # <-\npackage: foo\nname: " + name + "\nimage: quay.io/foo/bundle:" + version +
		"\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: " + version + "}\n" + extra
}

// ruleCases is one minimal failing catalog per rule a catalog can break.
// The line marked "# <-" is where the finding must point (in catalog.yaml).
var ruleCases = []struct {
	code    string
	catalog string
}{
	{model.CodePackageNoName, base + "---\nschema: olm.package # <-\ndefaultChannel: x\n"},
	{model.CodePackageDuplicate, base + "---\nschema: olm.package # <-\nname: foo\n"},
	{model.CodePackageNameInvalid, base + "---\nschema: olm.package # <-\nname: Foo_Bar\n"},
	{model.CodeChannelUnknownPackage, base + "---\nschema: olm.channel # <-\npackage: bar\nname: x\nentries: []\n"},
	{model.CodeChannelNoName, base + "---\nschema: olm.channel # <-\npackage: foo\nentries: []\n"},
	{model.CodeChannelDuplicate, base + "---\nschema: olm.channel # <-\npackage: foo\nname: stable\nentries: []\n"},
	{model.CodeChannelDuplicateEntry, base + "---\nschema: olm.channel # <-\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.2.0\n  - name: foo.v0.2.0\n"},
	{model.CodeBundleNoPackage, base + "---\nschema: olm.bundle # <-\nname: orphan\nimage: x.io/o:1\n"},
	{model.CodeBundleUnknownPackage, base + "---\nschema: olm.bundle # <-\npackage: bar\nname: bar.v1\nimage: x.io/o:1\n"},
	{model.CodeBundleDuplicate, base + bundleDoc("foo.v0.1.0", "0.1.0", "")},
	{model.CodeBundlePropertiesInvalid, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.gvk\n    value: {group: 1}\n")},
	{model.CodeBundlePackagePropCount, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.package\n    value: {packageName: foo, version: 0.3.1}\n")},
	{model.CodeBundlePackagePropMismatch, base + "---\nschema: olm.bundle # <-\npackage: foo\nname: foo.v0.3.0\nimage: x.io/o:1\nproperties:\n  - type: olm.package\n    value: {packageName: bar, version: 0.3.0}\n"},
	{model.CodeBundleImageInvalid, strings.Replace(base, "image: quay.io/foo/bundle:v0.2.0", "image: Quay.io/Foo:bad tag", 1)},
	{model.CodeBundleRelatedImageInvalid, base + bundleDoc("foo.v0.3.0", "0.3.0", "relatedImages:\n  - {name: x, image: 'bad image'}\n")},
	{model.CodeBundleVersionInvalid, base + bundleDoc("foo.v0.3.0", "v0.3.0", "")},
	{model.CodeBundleReleaseInvalid, base + "---\nschema: olm.bundle # <-\npackage: foo\nname: foo.v0.3.0\nimage: x.io/o:1\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 0.3.0, release: '!!!'}\n"},
	{model.CodeBundleNotInChannel, base + bundleDoc("foo.v0.3.0", "0.3.0", "")},
	{model.CodeChannelEntryNoBundle, base + "---\nschema: olm.channel # <-\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.9.0\n"},
	{model.CodeDeprecationNoPackage, base + "---\nschema: olm.deprecations # <-\nentries: []\n"},
	{model.CodeDeprecationUnknownPackage, base + "---\nschema: olm.deprecations # <-\npackage: bar\nentries: []\n"},
	{model.CodeDeprecationDuplicate, base + "---\nschema: olm.deprecations\npackage: foo\nentries: []\n---\nschema: olm.deprecations # <-\npackage: foo\nentries: []\n"},
	{model.CodeDeprecationNoSchema, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {name: x}\n    message: m\n"},
	{model.CodeDeprecationDuplicateEntry, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.package}\n    message: m\n  - reference: {schema: olm.package}\n    message: m\n"},
	{model.CodeDeprecationBundleNotFound, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.bundle, name: foo.v9}\n    message: m\n"},
	{model.CodeDeprecationChannelMissing, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.channel, name: beta}\n    message: m\n"},
	{model.CodeDeprecationPackageNamed, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.package, name: foo}\n    message: m\n"},
	{model.CodeDeprecationSchemaUnknown, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.foo, name: x}\n    message: m\n"},

	{model.CodePackageNoDefaultChannel, strings.Replace(base, "schema: olm.package\nname: foo\ndefaultChannel: stable\n", "schema: olm.package # <-\nname: foo\n", 1)},
	{model.CodePackageNoChannels, base + "---\nschema: olm.package # <-\nname: bar\n"},
	{model.CodeDeprecationNoMessage, base + "---\nschema: olm.deprecations # <-\npackage: foo\nentries:\n  - reference: {schema: olm.channel, name: stable}\n"},
	{model.CodeChannelEmpty, strings.Replace(base, "schema: olm.package\nname: foo\ndefaultChannel: stable\n", "schema: olm.package # <-\nname: foo\ndefaultChannel: fast\n", 1)},
	{model.CodeChannelNoHead, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n    skips: [foo.v0.2.0]\n", 1)},
	{model.CodeChannelMultipleHeads, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n    replaces: foo.v0.1.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n", 1)},
	{model.CodeChannelCycle, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.3.0\n    replaces: foo.v0.2.0\n  - name: foo.v0.1.0\n    replaces: foo.v0.2.0\n", 1) + bundleDoc("foo.v0.3.0", "0.3.0", "")},
	{model.CodeChannelStranded, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.3.0\n    replaces: foo.v0.2.0\n    skips: [foo.v0.2.0]\n", 1) + bundleDoc("foo.v0.3.0", "0.3.0", "")},
	{model.CodeBundleNameNotNormalized, base + "---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n" +
		"---\nschema: olm.bundle # <-\npackage: foo\nname: foo.v0.3.0\nimage: x.io/o:1\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 0.3.0, release: '1'}\n"},
	{model.CodeBundleSkipEmpty, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n", "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n    skips: ['']\n", 1)},
	{model.CodeBundleSkipRangeInvalid, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n", "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n    skipRange: not-a-range\n", 1)},
	{model.CodeBundlePackagePropMissing, base + "---\nschema: olm.channel # <-\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.9.0\n---\nschema: olm.channel\npackage: foo\nname: last\nentries:\n  - name: foo.v0.2.0\n"},
	{model.CodeBundleImageMissing, strings.Replace(base, "image: quay.io/foo/bundle:v0.2.0", "image: ''", 1)},
	{model.CodeBundleBuildMetaAndRelease, base + "---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo-v0.3.0+b-1\n" +
		"---\nschema: olm.bundle # <-\npackage: foo\nname: foo-v0.3.0+b-1\nimage: x.io/o:1\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 0.3.0+b, release: '1'}\n"},
	{model.CodePackageDuplicateVersions, strings.Replace(strings.Replace(base, "version: 0.2.0}", "version: 0.1.0}", 1), "schema: olm.package\n", "schema: olm.package # <-\n", 1)},

	{CodeLoad, base + "---\nschema: olm.bundle\nname: [unclosed # <-\n"},
	{CodeSchema, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.gvk\n    value: {group: a, kind: B, version: v1, extra: 1}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},

	{CodeSkipRangeVPrefix, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n    skipRange: '>=v0.1.0 <v0.2.0'\n", 1)},
	{CodeSkipRangeCoversNone, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n    skipRange: '>=1.0.0 <2.0.0'\n", 1)},
	{CodeVersionShared, base + "---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.2.0-b\n" +
		"---\nschema: olm.bundle # <-\npackage: foo\nname: foo.v0.2.0-b\nimage: x.io/o:1\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 0.2.0+b}\n"},
	{CodeEdgeTargetMissing, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.1.0\n    replaces: foo.v0.0.1\n", 1)},
	{CodeSkippedAndReplaced, strings.Replace(base, "schema: olm.channel\npackage: foo\nname: stable\nentries:\n", "schema: olm.channel # <-\npackage: foo\nname: stable\nentries:\n  - name: foo.v0.3.0\n    replaces: foo.v0.2.0\n    skips: [foo.v0.2.0, foo.v0.1.0]\n", 1) + bundleDoc("foo.v0.3.0", "0.3.0", "")},
	{CodeMaxOpenShiftInvalid, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.maxOpenShiftVersion\n    value: '4.16.1'\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
	{CodeDependenciesUnresolvable, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.constraint\n    value: {gvk: {group: a.io, kind: B, version: v1}}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
	{CodePackageRequiredUnmet, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.package.required\n    value: {packageName: bar, versionRange: '>=1.0.0'}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
	{CodeGVKRequiredUnmet, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.gvk.required\n    value: {group: a.io, kind: B, version: v1}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
	{CodeVersionRangeInvalid, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.package.required\n    value: {packageName: foo, versionRange: 'v1'}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
	{CodeConstraintKindMissing, base + bundleDoc("foo.v0.3.0", "0.3.0", "  - type: olm.constraint\n    value: {failureMessage: nothing}\n") +
		"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v0.3.0\n"},
}

// internalCodes cannot come from a loaded catalog (the conversion never
// builds such a model); pkg/model tests them on hand-built models.
var internalCodes = map[string]bool{
	model.CodePackageNameEmpty: true, model.CodePackageChannelKey: true,
	model.CodePackageChannelLink: true, model.CodePackageDefaultNotFound: true, model.CodeChannelNameEmpty: true,
	model.CodeChannelNoPackage: true, model.CodeChannelBundleKey: true, model.CodeChannelBundleLink: true,
	model.CodeBundleNameEmpty: true, model.CodeBundleChannelUnset: true, model.CodeBundlePackageUnset: true,
	model.CodeBundlePackageChannel: true, CodeCustomSchema: true,
}

var markerLine = regexp.MustCompile(`# <-`)

func TestRules(t *testing.T) {
	schemas, err := LoadSchemas("")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tc := range ruleCases {
		covered[tc.code] = true
		name := "Error/" + tc.code
		t.Run(name, func(t *testing.T) {
			marked := markedLines(tc.catalog)
			res := validateText(t, tc.catalog, Options{Schemas: schemas, Dependencies: &DependencyOptions{}})
			var got *Finding
			for i, f := range res.Findings {
				if f.Code == tc.code && (got == nil || marked[f.Line]) {
					got = &res.Findings[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s finding; findings: %+v", tc.code, res.Findings)
			}
			if got.File != "catalog.yaml" || (len(marked) > 0 && !marked[got.Line]) || got.Line == 0 {
				t.Errorf("%s at %s:%d, want catalog.yaml at a line marked # <- (%s)", tc.code, got.File, got.Line, got.Message)
			}
			r, ok := RuleByCode(tc.code)
			if !ok {
				t.Fatalf("code %s is not in Rules", tc.code)
			}
			wantSev := SeverityWarning
			if r.Upstream {
				wantSev = SeverityError
			}
			if got.Severity != wantSev {
				t.Errorf("severity = %s, want %s", got.Severity, wantSev)
			}
			if res.Passed != (wantSev == SeverityWarning && !hasErrors(res)) {
				t.Errorf("passed = %v with findings %+v", res.Passed, res.Findings)
			}
		})
	}
	for _, r := range Rules {
		if !covered[r.Code] && !internalCodes[r.Code] {
			t.Errorf("rule %s has no test case", r.Code)
		}
	}
}

// markedLines returns the 1-based numbers of the lines holding "# <-".
func markedLines(catalog string) map[int]bool {
	out := map[int]bool{}
	for i, line := range strings.Split(catalog, "\n") {
		if markerLine.MatchString(line) {
			out[i+1] = true
		}
	}
	return out
}

func hasErrors(res *Result) bool {
	n, _ := res.Counts()
	return n > 0
}

func validateText(t *testing.T, catalog string, opts Options) *Result {
	t.Helper()
	cfg, err := declcfg.LoadReader(strings.NewReader(catalog), "catalog.yaml")
	if err != nil {
		return LoadErrorResult(err)
	}
	res, err := Validate(context.Background(), cfg, opts)
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
	catalog := ruleCases[len(ruleCases)-3].catalog // gvk-required-unsatisfied
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
	catalog := base + "---\nschema: example.com.widget\nname: ok\nsize: 3\n---\nschema: example.com.widget # <-\nname: Bad1\nsize: 0\n"
	res := validateText(t, catalog, Options{Schemas: s})
	if res.Passed {
		t.Fatalf("custom schema violations passed: %+v", res)
	}
	var msgs []string
	for _, f := range res.Findings {
		if f.Code != CodeCustomSchema || f.Severity != SeverityError || !markedLines(catalog)[f.Line] {
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
	for _, r := range Rules {
		if !strings.Contains(string(doc), "`"+r.Code+"`") {
			t.Errorf("docs/validate.md does not document %s", r.Code)
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
