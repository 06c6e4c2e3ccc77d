package crd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// Hostile CRDs and examples (issue 30): the work of a comparison and of
// the example checks is bounded, what is not checked is a change saying
// so, and every loop can be cancelled. Each test bounds itself with a
// context deadline far above what it needs: a regression runs into the
// deadline (the comparison checks the context) and fails.

// testCRDObject is a CRD named widgets.example.com with the versions
// given, each {name, served, storage, schema}.
func testCRDObject(versions []map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"}, "versions": versions},
	}
}

// specVersion is a served version whose spec has the given properties.
func specVersion(name string, storage bool, props map[string]any) map[string]any {
	return map[string]any{"name": name, "served": true, "storage": storage, "schema": map[string]any{
		"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": props}}}}}
}

func mustParse(t testing.TB, obj map[string]any) *CRD {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// manyVersions is a CRD of n served versions, each with five string fields
// of its own; extra adds a field to the last one.
func manyVersions(t testing.TB, n int, extra bool) *CRD {
	var vs []map[string]any
	for i := 1; i <= n; i++ {
		props := map[string]any{}
		for j := range 5 {
			props[fmt.Sprintf("f%dx%d", i, j)] = map[string]any{"type": "string"}
		}
		if extra && i == n {
			props["extra"] = map[string]any{"type": "string"}
		}
		vs = append(vs, specVersion(fmt.Sprintf("v%d", i), i == 1, props))
	}
	return mustParse(t, testCRDObject(vs))
}

func withLimit(t *testing.T, p *int, v int) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func rulesOf(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Rule)
	}
	return out
}

// 1,000 served versions (the 378 KB CRD) are 499,500 pairs: not
// compared, and a limit-reached change says so; the versions themselves
// are compared.
func TestManyServedVersions(t *testing.T) {
	old, new := manyVersions(t, 1000, false), manyVersions(t, 1000, true)
	cs, err := Compare(deadline(t), old, new)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rulesOf(cs), " "); got != "limit-reached field-added" {
		t.Fatalf("rules = %s", got)
	}
	want := "too many served versions (1000, the limit is 50): their 499500 pairs, which OLM v1 compares, were not compared"
	if cs[0].Message != want || cs[0].Path != "spec.versions" || cs[0].Safe || cs[0].Refused != 0 {
		t.Fatalf("change = %+v", cs[0])
	}
	// 50 are compared: each new version's pairs with the others differ
	// (its fields are its own), all already different in the old CRD
	cs, err = Compare(deadline(t), manyVersions(t, 50, false), manyVersions(t, 50, true))
	if err != nil || strings.Join(rulesOf(cs), " ") != "field-added" {
		t.Fatalf("50 versions: %v, %v", rulesOf(cs), err)
	}
}

// The pairs of schema nodes compared are bounded, served pairs included.
func TestCompareStepLimit(t *testing.T) {
	withLimit(t, &limits.compareSteps, 1000)
	version := func(name string, storage bool, max int) map[string]any {
		props := map[string]any{}
		for j := range 600 {
			props[fmt.Sprintf("f%d", j)] = map[string]any{"type": "string", "maxLength": max}
		}
		return specVersion(name, storage, props)
	}
	old := mustParse(t, testCRDObject([]map[string]any{version("v1", true, 10), version("v2", false, 20)}))
	new := mustParse(t, testCRDObject([]map[string]any{version("v1", true, 5), version("v2", false, 20)}))
	cs, err := Compare(deadline(t), old, new)
	if err != nil {
		t.Fatal(err)
	}
	last := cs[0] // unsafe changes first; limit-reached has no version
	if last.Rule != RuleLimitReached || last.Message != "the comparison stopped after 1000 pairs of schema nodes (the limit): the rest of the CRD was not compared" {
		t.Fatalf("first change = %+v", last)
	}
}

// Unsafe changes past the limit stop the comparison; safe ones are
// counted.
func TestChangeLimit(t *testing.T) {
	withLimit(t, &limits.changes, 10)
	props := func(n int, desc string) map[string]any {
		m := map[string]any{}
		for j := range n {
			m[fmt.Sprintf("f%02d", j)] = map[string]any{"type": "string", "description": desc}
		}
		return m
	}
	ctx := deadline(t)
	old := mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, props(30, "a"))}))
	gone := mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, props(0, "a"))}))
	cs, err := Compare(ctx, old, gone)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 11 || cs[0].Rule != RuleLimitReached || cs[0].Message != "more than 10 unsafe changes: the rest of the CRD was not compared" {
		t.Fatalf("changes = %v (%d)", rulesOf(cs), len(cs))
	}
	redoc := mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, props(30, "b"))}))
	r, err := CompareBundles(ctx, &Bundle{Name: "a", CRDs: []*CRD{old}}, &Bundle{Name: "b", CRDs: []*CRD{redoc}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Changes) != 10 || r.Omitted != 20 || len(r.Unsafe()) != 0 {
		t.Fatalf("changes = %d, omitted = %d, unsafe = %d", len(r.Changes), r.Omitted, len(r.Unsafe()))
	}
}

func enumCRD(t testing.TB, prefix string, n int) *CRD {
	enum := make([]any, n)
	for i := range enum {
		enum[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, map[string]any{
		"mode": map[string]any{"type": "string", "enum": enum}})}))
}

// Enums are compared as sets (80,000 values each took 25 s), messages
// list the first values, and the comparison stops when cancelled.
func TestLargeEnum(t *testing.T) {
	old, new := enumCRD(t, "a", 80_000), enumCRD(t, "b", 80_000)
	cs, err := Compare(deadline(t), old, new)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rulesOf(cs), " "); got != "enum-value-removed enum-value-added" {
		t.Fatalf("rules = %s", got)
	}
	if !strings.HasSuffix(cs[0].Message, `"a19" and 79980 more`) || strings.Count(cs[0].Old, ", ") != 79_999 {
		t.Fatalf("message = %.200s...", cs[0].Message)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compare(ctx, old, new); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

// The validator finds enum values in a set, numbers by value.
func TestEnumSetValidation(t *testing.T) {
	c := mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, map[string]any{
		"n": map[string]any{"type": "number", "enum": []any{1.5, 2, 3}}})}))
	for _, tt := range []struct {
		spec string
		ok   bool
	}{{`{"n": 2.0}`, true}, {`{"n": 1.5}`, true}, {`{"n": 4}`, false}} {
		var spec map[string]any
		if err := json.Unmarshal([]byte(tt.spec), &spec); err != nil {
			t.Fatal(err)
		}
		r, err := c.Validate(context.Background(), map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "spec": spec})
		if err != nil || r.Valid() != tt.ok {
			t.Errorf("%s: valid = %v, %v; errors %v", tt.spec, r != nil && r.Valid(), err, r)
		}
	}
}

// anyOfTree is a schema whose validation tries two alternatives over the
// same subtree at each of depth levels (2^depth checks per value).
func anyOfTree(depth int) map[string]any {
	if depth == 0 {
		return map[string]any{"type": "string"}
	}
	sub := anyOfTree(depth - 1)
	return map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "required": []any{"y"}, "properties": map[string]any{"x": sub}},
		map[string]any{"type": "object", "properties": map[string]any{"x": sub}},
	}}
}

// examplesBundles are a bundle whose CRD's spec.list items are an anyOf
// tree, with n examples of items items each, and the same with an
// optional field added (so that the examples are checked).
func examplesBundles(t testing.TB, n, items int) (old, new *Bundle) {
	crd := func(extra bool) *CRD {
		props := map[string]any{"list": map[string]any{"type": "array", "items": anyOfTree(12)}}
		if extra {
			props["extra"] = map[string]any{"type": "string"}
		}
		return mustParse(t, testCRDObject([]map[string]any{specVersion("v1", true, props)}))
	}
	var value any = "s"
	for range 12 {
		value = map[string]any{"x": value}
	}
	list := make([]any, items)
	for i := range list {
		list[i] = value
	}
	var examples []any
	for i := range n {
		examples = append(examples, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i)}, "spec": map[string]any{"list": list}})
	}
	text, err := json.Marshal(examples)
	if err != nil {
		t.Fatal(err)
	}
	old = &Bundle{Name: "old", CRDs: []*CRD{crd(false)}, HasCSV: true, examples: string(text)}
	return old, &Bundle{Name: "new", CRDs: []*CRD{crd(true)}}
}

// An example whose validation passes its budget is not checked, and says
// so; past the upgrade's budget, the examples left are one change.
func TestExampleBudget(t *testing.T) {
	ctx := deadline(t)
	old, new := examplesBundles(t, 1, 600) // 2.4M checks
	r, err := CompareBundles(ctx, old, new)
	if err != nil {
		t.Fatal(err)
	}
	u := r.Unsafe()
	if len(u) != 1 || u[0].Rule != RuleExamplesNotChecked || u[0].Example != "Widget w0" ||
		u[0].Message != "example Widget w0 of old (alm-examples[0]) was not checked: validation stopped after 200000 steps (the limit)" {
		t.Fatalf("unsafe = %+v", u)
	}

	withLimit(t, &limits.examplesSteps, 500_000)
	old, new = examplesBundles(t, 5, 600)
	r, err = CompareBundles(ctx, old, new)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, c := range r.Unsafe() {
		msgs = append(msgs, c.Message)
	}
	want := []string{
		"3 examples of old (alm-examples[2] and after) were not checked: validating the examples of one upgrade took more than 500000 steps (the limit)",
		"example Widget w0 of old (alm-examples[0]) was not checked: validation stopped after 200000 steps (the limit)",
		"example Widget w1 of old (alm-examples[1]) was not checked: validation stopped after 200000 steps (the limit)",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages:\n%s", strings.Join(msgs, "\n"))
	}
}

// alm-examples that cannot be read are examples-not-checked, when some
// CRD changed (else there is nothing to check).
func TestExamplesNotChecked(t *testing.T) {
	old, new := examplesBundles(t, 0, 0)
	tiny := `{"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}}`
	for _, tt := range []struct{ examples, want string }{
		{`[{"apiVersion": `, "not a JSON list of objects: unexpected EOF"},
		{"[" + strings.TrimSuffix(strings.Repeat(tiny+",", 1001), ",") + "]", "1001 examples, more than 1000"},
		{"[" + strings.Repeat(" ", MaxExamplesSize) + "]", fmt.Sprintf("%d bytes, more than %d", MaxExamplesSize+2, MaxExamplesSize)},
	} {
		ob := old.WithName("old")
		ob.examples = tt.examples
		r, err := CompareBundles(context.Background(), ob, new)
		if err != nil {
			t.Fatal(err)
		}
		u := r.Unsafe()
		want := "the examples of old (its CSV's alm-examples) were not checked against the new CRDs: " + tt.want
		if len(u) != 1 || u[0].Rule != RuleExamplesNotChecked || u[0].Message != want {
			t.Errorf("unsafe = %+v, want %q", u, want)
		}
		r, err = CompareBundles(context.Background(), ob, ob.WithName("same"))
		if err != nil || len(r.Changes) != 0 {
			t.Errorf("same CRDs: changes = %+v, %v", r.Changes, err)
		}
	}
}

// A Checker stops comparing once its budget is spent: the pairs left are
// one limit-reached change each.
func TestCheckerBudget(t *testing.T) {
	withLimit(t, &limits.checkSteps, 3)
	k := &Checker{Bundles: map[string]*Bundle{}}
	for i, n := range []int{1, 2, 3} {
		k.Bundles[fmt.Sprint("b", i)] = &Bundle{Name: fmt.Sprint("b", i), CRDs: []*CRD{enumCRD(t, "v", n)}}
	}
	ctx := deadline(t)
	r, err := k.Check(ctx, "b0", "b1")
	if err != nil || len(r.Changes) != 1 || r.Changes[0].Rule != RuleEnumValueAdded || !k.Spent() {
		t.Fatalf("first: %+v, %v, spent %v", r, err, k.Spent())
	}
	r, err = k.Check(ctx, "b1", "b2")
	if err != nil || len(r.Changes) != 1 || r.Changes[0].Rule != RuleLimitReached {
		t.Fatalf("second: %+v, %v", r, err)
	}
}

// CheckPackage counts the upgrades it could not check: bundles it does
// not know, and pairs left once the budget is spent.
func TestCheckPackageUnchecked(t *testing.T) {
	cfg, err := declcfg.LoadReader(strings.NewReader(`
{"schema": "olm.package", "name": "p", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "p", "name": "stable", "entries": [{"name": "b0"}, {"name": "b1", "replaces": "b0"}, {"name": "b2", "replaces": "b1"}, {"name": "b3", "replaces": "b2", "skips": ["b1"]}]}
{"schema": "olm.bundle", "package": "p", "name": "b0", "image": "x", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "0.0.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "b1", "image": "x", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "b2", "image": "x", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "2.0.0"}}]}
{"schema": "olm.bundle", "package": "p", "name": "b3", "image": "x", "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "3.0.0"}}]}
`), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	withLimit(t, &limits.checkSteps, 3)
	k := &Checker{Bundles: map[string]*Bundle{}}
	for i, name := range []string{"b1", "b2", "b3"} { // b0 unknown
		k.Bundles[name] = &Bundle{Name: name, CRDs: []*CRD{enumCRD(t, "v", i+1)}}
	}
	pc, err := k.CheckPackage(deadline(t), g.Packages[0])
	if err != nil {
		t.Fatal(err)
	}
	// b0->b1 unknown; b1->b2 compared (the budget spent); b2->b3, b1->b3 skipped
	if pc.Pairs != 4 || pc.Unknown != 1 || pc.Skipped != 2 || len(pc.Edges) != 0 {
		t.Fatalf("check = %+v", pc)
	}
}
