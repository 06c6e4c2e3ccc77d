package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
)

func TestParseConstraint(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string
	}{
		{`{"gvk":{"group":"g","version":"v","kind":"k"}}`, ""},
		{`{"failureMessage":"m","package":{"packageName":"p","versionRange":">1.0.0"}}`, ""},
		{`{"all":{"constraints":[{"gvk":{"group":"g","version":"v","kind":"k"}},{"not":{"constraints":[]}}]}}`, ""},
		{`{"cel":{"rule":"true"}}`, ""},
		// The seed's example writes "name"; the field is packageName.
		{`{"package":{"name":"blue","versionRange":">=1.0.0"}}`, `json: unknown field "name"`},
		{`{"gvk":{"group":"g","version":"v","kind":"k","extra":1}}`, `json: unknown field "extra"`},
		{`{"foo":{}}`, `json: unknown field "foo"`},
		{`{}`, "constraint is empty"},
		{`null`, "constraint is empty"},
		{`{"failureMessage":"only a message"}`, "constraint is empty"},
		{`{"any":{"constraints":[{}]}}`, "constraint is empty"},
		// Several keys: the first of gvk, package, all, any, not, cel wins;
		// the others are not even checked.
		{`{"gvk":{"group":"g","version":"v","kind":"k"},"all":{"constraints":[{}]}}`, ""},
		{`{"all":{"constraints":[{}]},"cel":{"rule":"true"}}`, "constraint is empty"},
		{`"string"`, "cannot unmarshal string"},
		{`{"gvk":{}} {}`, "invalid character after top-level value"},
		{`{"cel":{"rule":"` + strings.Repeat("x", MaxConstraintSize) + `"}}`, "exceeds the limit of 131072 bytes"},
		{strings.Repeat(`{"not":{"constraints":[`, 101) + `{"cel":{"rule":"true"}}` + strings.Repeat(`]}}`, 101), "nested more than 100 levels"},
	} {
		_, err := ParseConstraint([]byte(tc.in))
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("ParseConstraint(%.60s): %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseConstraint(%.60s) = %v, want %q", tc.in, err, tc.wantErr)
		}
	}
}

// constraintCatalog has app requiring what the given olm.constraint says,
// and providers of the Blue and Green APIs.
func constraintCatalog(c string) *fbc {
	return newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", constraint(c)).
		pkg("blue", "stable").channel("blue", "stable", "blue.v0.9.0", "blue.v1.0.0<blue.v0.9.0", "blue.v1.1.0<blue.v1.0.0").
		bundle("blue", "blue.v0.9.0", "0.9.0", provides("blues.example.com", "v1beta1", "Blue")).
		bundle("blue", "blue.v1.0.0", "1.0.0", provides("blues.example.com", "v1", "Blue")).
		bundle("blue", "blue.v1.1.0", "1.1.0", provides("blues.example.com", "v1", "Blue"), raw("certified", `true`)).
		pkg("green", "stable").channel("green", "stable", "green.v1.0.0").
		bundle("green", "green.v1.0.0", "1.0.0", provides("greens.example.com", "v1", "Green"), provides("blues.example.com", "v1alpha1", "Blue"))
}

// §5: each constraint type, against one candidate at a time.
func TestConstraintTypes(t *testing.T) {
	for _, tc := range []struct {
		name, constraint, want string
	}{
		{"gvk", `{"gvk":{"group":"greens.example.com","version":"v1","kind":"Green"}}`, "c/green.v1.0.0 c/app.v1"},
		{"package", `{"package":{"packageName":"blue","versionRange":"<1.1.0"}}`, "c/blue.v1.0.0 c/app.v1"},
		{"all", `{"all":{"constraints":[{"package":{"packageName":"blue","versionRange":">=1.0.0"}},{"gvk":{"group":"blues.example.com","version":"v1","kind":"Blue"}}]}}`, "c/blue.v1.1.0 c/app.v1"},
		// any: the first candidate matching any child, in candidate order
		// (blue's channel head comes before green: package name order).
		{"any", `{"any":{"constraints":[{"gvk":{"group":"blues.example.com","version":"v1beta1","kind":"Blue"}},{"gvk":{"group":"greens.example.com","version":"v1","kind":"Green"}}]}}`, "c/blue.v0.9.0 c/app.v1"},
		// not inside all: "a provider of Blue that is not from package blue".
		{"all-not", `{"all":{"constraints":[{"gvk":{"group":"blues.example.com","version":"v1alpha1","kind":"Blue"}},{"not":{"constraints":[{"package":{"packageName":"blue","versionRange":">=0.0.0"}}]}}]}}`, "c/green.v1.0.0 c/app.v1"},
		// A top-level not is met by the declaring bundle itself: nothing is
		// pulled in and nothing is forbidden.
		{"not", `{"not":{"constraints":[{"gvk":{"group":"greens.example.com","version":"v1","kind":"Green"}}]}}`, "c/app.v1"},
		{"cel", `{"cel":{"rule":"properties.exists(p, p.type == \"certified\")"}}`, "c/blue.v1.1.0 c/app.v1"},
		{"cel-semver", `{"cel":{"rule":"properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'blue' && semver_compare(p.value.version, '1.0.0') == 0)"}}`, "c/blue.v1.0.0 c/app.v1"},
		{"cel-map-equality", `{"cel":{"rule":"properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': 'greens.example.com', 'version': 'v1', 'kind': 'Green'})"}}`, "c/green.v1.0.0 c/app.v1"},
		// Nested: any of two alls (the seed's last example, corrected).
		{"nested", `{"any":{"constraints":[
			{"all":{"constraints":[{"package":{"packageName":"blue","versionRange":">=1.0.0"}},{"gvk":{"group":"blues.example.com","version":"v1","kind":"Blue"}}]}},
			{"all":{"constraints":[{"package":{"packageName":"blue","versionRange":"<1.0.0"}},{"gvk":{"group":"blues.example.com","version":"v1beta1","kind":"Blue"}}]}}]}}`, "c/blue.v1.1.0 c/app.v1"},
		// Empty compounds: all matches everything (the first candidate in
		// order: app's own catalog, default channels, package name: app
		// itself), any matches nothing, not matches everything.
		{"all-empty", `{"all":{"constraints":[]}}`, "c/app.v1"},
		{"not-empty", `{"not":{"constraints":[]}}`, "c/app.v1"},
		// Several keys: gvk wins over all.
		{"precedence", `{"gvk":{"group":"greens.example.com","version":"v1","kind":"Green"},"package":{"packageName":"blue","versionRange":">=0.0.0"}}`, "c/green.v1.0.0 c/app.v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustResolve(t, []Catalog{cat("c", 0, constraintCatalog(tc.constraint))}, Request{Subscriptions: subs("app")})
			wantInstall(t, res, tc.want)
		})
	}

	res := mustResolve(t, []Catalog{cat("c", 0, constraintCatalog(`{"failureMessage":"need nothing","any":{"constraints":[]}}`))}, Request{Subscriptions: subs("app")})
	wantConflicts(t, res,
		"[subscription] subscription app needs app.v1 (channel stable)",
		`[missing-dependency] app.v1 (channel stable) requires a bundle matching any of () (failure message: "need nothing"), and no bundle in the given catalogs matches`)
}

// §4: an invalid olm.constraint is an error of the whole resolution, even
// on a bundle that would not be chosen.
func TestConstraintErrors(t *testing.T) {
	for _, tc := range []struct{ name, constraint, want string }{
		{"seed-name-field", `{"package":{"name":"blue","versionRange":">=1.0.0"}}`, `parse olm.constraint: json: unknown field "name"`},
		{"empty", `{}`, "parse olm.constraint: constraint is empty"},
		{"empty-range", `{"package":{"packageName":"blue","versionRange":""}}`, `invalid version range "" for package "blue"`},
		{"caret-range", `{"package":{"packageName":"blue","versionRange":"^1.0.0"}}`, `invalid version range "^1.0.0"`},
		{"cel-syntax", `{"cel":{"rule":"properties.exists(p,"}}`, "compile cel rule"},
		{"cel-not-bool", `{"cel":{"rule":"size(properties)"}}`, "has type int, not bool"},
		{"cel-unknown-var", `{"cel":{"rule":"bundle.name == 'x'"}}`, "undeclared reference to 'bundle'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFBC().
				pkg("app", "stable").channel("app", "stable", "app.v1", "app.v2<app.v1").
				bundle("app", "app.v1", "1.0.0", constraint(tc.constraint)).
				bundle("app", "app.v2", "2.0.0")
			res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
			wantError(t, res, tc.want)
			if !strings.HasPrefix(res.Error, `bundle "app.v1" (catalog c): `) {
				t.Errorf("error %q does not name the bundle", res.Error)
			}
		})
	}
}

// §5.4: CEL evaluation errors mean "no match", never an error.
func TestCelErrorsDoNotMatch(t *testing.T) {
	for _, tc := range []struct{ name, rule, want string }{
		// blue.v0.9.0's properties have no packageName on olm.gvk values:
		// the unguarded exists errors on them unless an element is true.
		{"unguarded-true", `properties.exists(p, p.value.packageName == 'blue')`, "c/blue.v1.1.0 c/app.v1"},
		{"unguarded-negated", `!properties.exists(p, p.value.packageName == 'nope')`, ""},
		{"guarded", `!properties.exists(p, has(p.value.packageName) && p.value.packageName == 'nope')`, "c/app.v1"},
		{"bad-semver", `properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.packageName, '1.0.0') > 0)`, ""},
		{"semver-tolerant", `properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'blue' && semver_compare(p.value.version, 'v1.1') == 0)`, "c/blue.v1.1.0 c/app.v1"},
		{"size", `size(properties) == 3 && properties.exists(p, p.type == 'certified')`, "c/blue.v1.1.0 c/app.v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := constraintCatalog(`{"cel":{"rule":` + jsonString(tc.rule) + `}}`)
			res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
			if tc.want == "" {
				if res.Resolvable || res.Error != "" {
					t.Fatalf("want unsatisfiable, got resolvable=%v error=%q install=%s", res.Resolvable, res.Error, installSet(res))
				}
				return
			}
			wantInstall(t, res, tc.want)
		})
	}
}

// §1.1: the resolver sees every property but olm.bundle.object and
// olm.csv.metadata, then a copy of each olm.gvk.required and
// olm.package.required; CEL sees them all.
func TestCelSeesLegacyCopies(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", constraint(`{"cel":{"rule":"size(properties) == 5 && properties[3].type == 'olm.gvk.required' && properties[4].type == 'olm.package.required'"}}`)).
		pkg("dep", "stable").channel("dep", "stable", "dep.v1").
		bundle("dep", "dep.v1", "1.0.0", requiresGVK("g", "v", "K"), raw("olm.csv.metadata", `{}`), requiresPkg("x", ">=0.0.0"), raw("olm.bundle.object", `{"data":"e30="}`)).
		pkg("x", "stable").channel("x", "stable", "x.v1").
		bundle("x", "x.v1", "1.0.0", provides("g", "v", "K"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/x.v1 c/dep.v1 c/app.v1")
}

func jsonString(s string) string {
	b := strings.ReplaceAll(s, `\`, `\\`)
	return `"` + strings.ReplaceAll(b, `"`, `\"`) + `"`
}

// §5.4: semver_compare parses leniently and compares by precedence.
func TestSemverCompare(t *testing.T) {
	if _, err := compileCel(`semver_compare(a, b) == want`); err == nil {
		t.Fatal("rules may only use the variable properties")
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"v2", "2.0.0", 0},
		{"1.2", "1.2.0", 0},
		{"3.0.0-rc.1", "3.0.0", -1},
		{"1.0.0+build.1", "1.0.0", 0},
		{"1.10.0", "1.9.0", 1},
	} {
		prg, err := compileCel(`semver_compare(properties[0].value, properties[1].value) == ` + map[int]string{-1: "-1", 0: "0", 1: "1"}[tc.want])
		if err != nil {
			t.Fatal(err)
		}
		ok, err := prg.eval(context.Background(), []any{map[string]any{"value": tc.a}, map[string]any{"value": tc.b}})
		if err != nil || !ok {
			t.Errorf("semver_compare(%q, %q) != %d (err %v)", tc.a, tc.b, tc.want, err)
		}
	}
	if _, err := semver.ParseTolerant("x"); err == nil {
		t.Fatal("blang accepts x")
	}
	prg, _ := compileCel(`semver_compare('x', '1.0.0') == 0`)
	if ok, err := prg.eval(context.Background(), nil); ok || err == nil {
		t.Errorf("semver_compare of an invalid version = %v, %v; want an error", ok, err)
	}
}

// §5.4: a rule that loops over a huge list is cut off by the cost limit
// (no match) instead of running for ever.
func TestCelCostLimit(t *testing.T) {
	prg, err := compileCel(`properties.all(a, properties.all(b, properties.all(c, a == b || b != c || true)))`)
	if err != nil {
		t.Fatal(err)
	}
	props := make([]any, 60)
	for i := range props {
		props[i] = map[string]any{"type": "x", "value": float64(i)}
	}
	if ok, err := prg.eval(context.Background(), props); ok || err == nil {
		t.Fatalf("eval = %v, %v; want a cost limit error", ok, err)
	}
}
