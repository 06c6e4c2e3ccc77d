package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/resolve"
)

const appCatalog = `{"schema": "olm.package", "name": "app", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "app", "name": "stable", "entries": [{"name": "app.v1"}, {"name": "app.v2", "replaces": "app.v1"}]}
{"schema": "olm.channel", "package": "app", "name": "fast", "entries": [{"name": "app.v2"}]}
{"schema": "olm.bundle", "package": "app", "name": "app.v1", "image": "a:1", "properties": [
  {"type": "olm.package", "value": {"packageName": "app", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "package": "app", "name": "app.v2", "image": "a:2", "properties": [
  {"type": "olm.package", "value": {"packageName": "app", "version": "2.0.0"}},
  {"type": "olm.gvk.required", "value": {"group": "cert-manager.io", "kind": "Certificate", "version": "v1"}}]}
`

const certManager = `{"schema": "olm.package", "name": "cert-manager", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "cert-manager", "name": "stable", "entries": [{"name": "cert-manager.v1"}]}
{"schema": "olm.bundle", "package": "cert-manager", "name": "cert-manager.v1", "image": "c:1", "properties": [
  {"type": "olm.package", "value": {"packageName": "cert-manager", "version": "1.0.0"}},
  {"type": "olm.gvk", "value": {"group": "cert-manager.io", "kind": "Certificate", "version": "v1"}}]}
`

func load(t *testing.T, s string) *declcfg.DeclarativeConfig {
	t.Helper()
	cfg, err := declcfg.LoadReader(strings.NewReader(s), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestCheckDependencies(t *testing.T) {
	ctx := context.Background()
	cfg := load(t, appCatalog)
	fs, err := CheckDependencies(ctx, cfg, DependencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("findings = %+v", fs)
	}
	f := fs[0]
	want := `bundle "app.v2", head of channels "fast", "stable", cannot be installed: app.v2 (channel fast) requires an API that nothing in the given catalogs provides: kind Certificate in group cert-manager.io, version v1`
	if f.Code != CodeDependenciesUnresolvable || f.Severity != SeverityWarning || f.Message != want || f.Bundle != "app.v2" || f.Package != "app" || f.Line != 6 {
		t.Fatalf("finding = %+v", f)
	}

	// With the catalog that ships cert-manager: resolvable.
	fs, err = CheckDependencies(ctx, cfg, DependencyOptions{With: []resolve.Catalog{{Name: "certs", Config: load(t, certManager)}}})
	if err != nil || len(fs) != 0 {
		t.Fatalf("findings = %+v, %v", fs, err)
	}

	// Through Validate: a warning, an error under --strict.
	res, err := Validate(ctx, cfg, Options{Dependencies: &DependencyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed || countCode(res, CodeDependenciesUnresolvable) != 1 {
		t.Fatalf("result = %+v", res)
	}
	res, err = Validate(ctx, cfg, Options{Strict: true, Dependencies: &DependencyOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Fatal("passed under --strict")
	}
	// Off unless asked for.
	res, err = Validate(ctx, cfg, Options{})
	if err != nil || countCode(res, CodeDependenciesUnresolvable) != 0 {
		t.Fatalf("result = %+v, %v", res, err)
	}
}

// An invalid olm.constraint on a head is reported with the resolver's
// error; a catalog the resolver cannot index is left to the other rules.
func TestCheckDependenciesErrors(t *testing.T) {
	bad := strings.Replace(appCatalog, `{"type": "olm.gvk.required", "value": {"group": "cert-manager.io", "kind": "Certificate", "version": "v1"}}`,
		`{"type": "olm.constraint", "value": {"package": {"name": "x", "versionRange": ">=1.0.0"}}}`, 1)
	fs, err := CheckDependencies(context.Background(), load(t, bad), DependencyOptions{})
	if err != nil || len(fs) != 1 || !strings.Contains(fs[0].Message, `parse olm.constraint: json: unknown field "name"`) {
		t.Fatalf("findings = %+v, %v", fs, err)
	}
	dangling := `{"schema": "olm.channel", "package": "x", "name": "s", "entries": [{"name": "x.v1"}]}`
	fs, err = CheckDependencies(context.Background(), load(t, dangling), DependencyOptions{})
	if err != nil || len(fs) != 0 {
		t.Fatalf("findings = %+v, %v", fs, err)
	}
}

func countCode(res *Result, code string) int {
	n := 0
	for _, f := range res.Findings {
		if f.Code == code {
			n++
		}
	}
	return n
}
