package validate

import (
	"context"
	"fmt"
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

// pigeonCatalog is a catalog whose head "app" requires n+1 packages, each
// needing an API that only n packages provide, one bundle each: a problem
// the solver needs many conflicts to decide.
func pigeonCatalog(n int) string {
	var b strings.Builder
	req := ""
	for i := 0; i <= n; i++ {
		req += fmt.Sprintf(`,{"type":"olm.package.required","value":{"packageName":"pigeon%d","versionRange":">=0.0.0"}}`, i)
	}
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	pkg := func(p string) {
		line(`{"schema":"olm.package","name":%q,"defaultChannel":"stable"}`, p)
	}
	pkg("app")
	line(`{"schema":"olm.channel","package":"app","name":"stable","entries":[{"name":"app.v1.0.0"}]}`)
	line(`{"schema":"olm.bundle","package":"app","name":"app.v1.0.0","image":"x/app","properties":[{"type":"olm.package","value":{"packageName":"app","version":"1.0.0"}}%s]}`, req)
	for i := 0; i <= n; i++ {
		p := fmt.Sprintf("pigeon%d", i)
		pkg(p)
		line(`{"schema":"olm.channel","package":%q,"name":"stable","entries":[{"name":"%s.v1.0.0"}]}`, p, p)
		line(`{"schema":"olm.bundle","package":%q,"name":"%s.v1.0.0","image":"x/%s","properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.0"}},{"type":"olm.gvk.required","value":{"group":"example.com","version":"v1","kind":"Nest%d"}}]}`, p, p, p, p, i)
	}
	for h := 0; h < n; h++ {
		p := fmt.Sprintf("hole%d", h)
		pkg(p)
		var entries []string
		for i := 0; i <= n; i++ {
			name := fmt.Sprintf("%s.v1.0.%d", p, i)
			if i == 0 {
				entries = append(entries, fmt.Sprintf(`{"name":%q}`, name))
			} else {
				entries = append(entries, fmt.Sprintf(`{"name":%q,"replaces":"%s.v1.0.%d"}`, name, p, i-1))
			}
			line(`{"schema":"olm.bundle","package":%q,"name":%q,"image":"x/%s","properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.%d"}},{"type":"olm.gvk","value":{"group":"example.com","version":"v1","kind":"Nest%d"}}]}`, p, name, name, p, i, i)
		}
		line(`{"schema":"olm.channel","package":%q,"name":"stable","entries":[%s]}`, p, strings.Join(entries, ","))
	}
	return b.String()
}

// A head the solver gives up on is undecided, not unresolvable: a
// warning that says it was not checked, and fails under --strict.
func TestCheckDependenciesUndecided(t *testing.T) {
	cfg := load(t, pigeonCatalog(4))
	fs, err := CheckDependencies(context.Background(), cfg, DependencyOptions{Budget: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Code != CodeDependenciesUndecided || fs[0].Severity != SeverityWarning ||
		!strings.HasPrefix(fs[0].Message, `bundle "app.v1.0.0", head of channel "stable": not checked: gave up after 1 solver conflicts`) ||
		!strings.HasSuffix(fs[0].Help, "undecided is not a pass: --strict fails on it") {
		t.Fatalf("findings = %+v", fs)
	}
	res, err := Validate(context.Background(), cfg, Options{Strict: true, Dependencies: &DependencyOptions{Budget: 1}})
	if err != nil || res.Passed || countCode(res, CodeDependenciesUndecided) != 1 {
		t.Fatalf("strict: passed %v, %v", res.Passed, err)
	}
}
