package compose

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

func summarize(t *testing.T, cfg *declcfg.DeclarativeConfig, name string) *Summary {
	t.Helper()
	s, err := Summarize(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func diffText(t *testing.T, old, cur *declcfg.DeclarativeConfig, opts DiffOptions) (*Report, string) {
	t.Helper()
	r, err := Diff(summarize(t, old, "old"), summarize(t, cur, "new"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDiffText(&buf, r); err != nil {
		t.Fatal(err)
	}
	return r, buf.String()
}

func TestDiffText(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{
		"stable": {"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0@>=1.0.0 <1.2.0"},
		"beta":   {"p.v1.2.0"},
	})
	old.Merge(testCatalog("gone", "stable", map[string][]string{"stable": {"gone.v1.0.0"}}))
	cur := testCatalog("p", "fast", map[string][]string{
		"stable": {"p.v1.1.0", "p.v1.2.0<p.v1.1.0@>=1.0.0 <1.3.0", "p.v1.3.0<p.v1.2.0"},
		"fast":   {"p.v1.3.0"},
	})
	cur.Merge(testCatalog("new", "stable", map[string][]string{"stable": {"new.v1.0.0", "new.v1.1.0<new.v1.0.0"}}))
	// A changed bundle: image and a small property.
	for i := range cur.Bundles {
		if cur.Bundles[i].Name == "p.v1.1.0" {
			cur.Bundles[i].Image = "quay.io/test/p.v1.1.0-fixed"
			cur.Bundles[i].Properties = append(cur.Bundles[i].Properties, property.Property{Type: "olm.maxOpenShiftVersion", Value: json.RawMessage(`"4.18"`)})
		}
	}
	cur.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Package: "p", Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "p.v1.1.0"}, Message: "use 1.2.0\nor later"},
	}}}
	r, text := diffText(t, old, cur, DiffOptions{FailOn: FailOnKinds})
	want := `- package "gone" (removed): 1 channel (stable); 1 bundle
+ package "new" (added): 1 channel (stable); 2 bundles
~ package "p":
    default channel: "stable" -> "fast"
    + channel "fast" (1 entry, head p.v1.3.0 (1.3.0))
    - channel "beta" (1 entry, head p.v1.2.0 (1.2.0))
    + bundle p.v1.3.0 (1.3.0)
    - bundle p.v1.0.0 (1.0.0)
    ~ bundle p.v1.1.0 (1.1.0):
        image: quay.io/test/p.v1.1.0 -> quay.io/test/p.v1.1.0-fixed
        + olm.maxOpenShiftVersion "4.18"
    ~ channel "stable":
        head: p.v1.2.0 (1.2.0) -> p.v1.3.0 (1.3.0)
        + entry p.v1.3.0 (1.3.0)
        - entry p.v1.0.0 (1.0.0)
        + edge p.v1.2.0 -> p.v1.3.0 (replaces)
        - edge p.v1.0.0 -> p.v1.1.0 (replaces)
        - edge p.v1.0.0 -> p.v1.2.0 (skipRange >=1.0.0 <1.2.0)
        ~ skipRange of p.v1.2.0: ">=1.0.0 <1.2.0" -> ">=1.0.0 <1.3.0"
    + deprecation of bundle "p.v1.1.0": use 1.2.0 ...

Summary: packages +1 -1 ~1; channels +2 -2; bundles +3 -2 ~1; entries +1 -1; heads moved 1; edges +1 -2; upgrade paths lost 0 (classic semantics)
`
	if text != want {
		t.Errorf("got:\n%s\nwant:\n%s", text, want)
	}
	// p.v1.0.0 was removed, and 1.2.0's skipRange still covers it: no
	// path lost. The gate trips on the removals, which prune the catalog
	// too (beta is no pre-release channel).
	var kinds []string
	for _, f := range r.Failures {
		kinds = append(kinds, string(f.Kind)+": "+f.Message)
	}
	wantFailures := []string{
		`removed: package "gone" was removed (1 channel, 1 bundle)`,
		`removed: package "p": channel "beta" was removed`,
		`removed: package "p": bundle "p.v1.0.0" (1.0.0) was removed`,
		`pruned: package "gone" was pruned: channel "stable"`,
		`pruned: package "p": channel "beta" was pruned (1 entry)`,
		`pruned: package "p": channel "stable": entry "p.v1.0.0" (1.0.0) was pruned`,
	}
	if strings.Join(kinds, "\n") != strings.Join(wantFailures, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(wantFailures, "\n"))
	}
}

func TestDiffNoChange(t *testing.T) {
	cfg := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v1.1.0<p.v1.0.0"}})
	r, text := diffText(t, cfg, cfg, DiffOptions{FailOn: FailOnKinds})
	if !r.Empty() || r.Failed() || text != "No differences between old and new.\n" {
		t.Errorf("report %+v, text %q", r, text)
	}
}

func TestDiffLostPathsAndHeads(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v2.0.0<p.v1.1.0"}})
	// NEW: 2.0.0 is pulled, 1.1.0 is the head again, and 1.5.0 replaces
	// nothing that was installed.
	cur := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v1.1.0<p.v1.0.0"}})
	r, _ := diffText(t, old, cur, DiffOptions{FailOn: []FailOn{FailHeads, FailPaths}})
	if len(r.Packages) != 1 {
		t.Fatalf("packages %+v", r.Packages)
	}
	p := r.Packages[0]
	if len(p.LostPaths) != 1 || p.LostPaths[0].From.Name != "p.v2.0.0" || p.LostPaths[0].NewHead == nil || p.LostPaths[0].NewHead.Name != "p.v1.1.0" {
		t.Errorf("lost paths %+v", p.LostPaths)
	}
	if h := p.Channels[0].Head; h == nil || !h.Regressed {
		t.Errorf("head %+v", h)
	}
	if len(r.Failures) != 2 || r.Failures[0].Kind != FailHeads || r.Failures[1].Kind != FailPaths {
		t.Errorf("failures %+v", r.Failures)
	}
	if !strings.Contains(r.Failures[1].Message, `channel "stable": lost the upgrade path from p.v2.0.0 (2.0.0): `) {
		t.Errorf("message %q", r.Failures[1].Message)
	}
}

func TestDiffSemanticsV1(t *testing.T) {
	// NEW is the seed's example: 3.0.0 skips 2.0.0, whose skipRange covers
	// 1.0.0, which is gone. OLM classic leaves a cluster on 1.0.0 stuck
	// (2.0.0 is off the replaces chain); OLM v1 takes it to 2.0.0, then
	// 3.0.0.
	old := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v2.0.0<p.v1.0.0", "p.v3.0.0<p.v2.0.0"}})
	cur := testCatalog("p", "stable", map[string][]string{"stable": {"p.v2.0.0@>=1.0.0 <2.0.0", "p.v3.0.0|p.v2.0.0"}})
	for sem, want := range map[graph.Semantics]string{graph.Classic: "p.v1.0.0", graph.V1: ""} {
		r, _ := diffText(t, old, cur, DiffOptions{Semantics: sem})
		var lost []string
		for _, p := range r.Packages {
			for _, lp := range p.LostPaths {
				lost = append(lost, lp.From.Name)
			}
		}
		if strings.Join(lost, ",") != want {
			t.Errorf("%s: lost %q, want %q", sem, lost, want)
		}
	}
}

func TestDiffFragmentAndPackages(t *testing.T) {
	old := testCatalog("a", "stable", map[string][]string{"stable": {"a.v1.0.0"}})
	old.Merge(testCatalog("b", "stable", map[string][]string{"stable": {"b.v1.0.0"}}))
	frag := testCatalog("b", "stable", map[string][]string{"stable": {"b.v1.0.0", "b.v1.1.0<b.v1.0.0"}})
	r, _ := diffText(t, old, frag, DiffOptions{Fragment: true, FailOn: FailOnKinds})
	if len(r.Packages) != 1 || r.Packages[0].Name != "b" || r.Failed() {
		t.Errorf("fragment: %+v, failures %+v", r.Packages, r.Failures)
	}
	r, _ = diffText(t, old, frag, DiffOptions{FailOn: FailOnKinds})
	if len(r.Packages) != 2 || r.Packages[0].Change != Removed || !r.Failed() {
		t.Errorf("whole: %+v", r.Packages)
	}
	r, _ = diffText(t, old, frag, DiffOptions{Packages: []string{"a"}})
	if len(r.Packages) != 1 || r.Packages[0].Name != "a" {
		t.Errorf("package a: %+v", r.Packages)
	}
	if _, err := Diff(summarize(t, old, "old"), summarize(t, frag, "new"), DiffOptions{Packages: []string{"zz"}}); err == nil {
		t.Error("unknown package: no error")
	}
}

func TestDiffLargeProperties(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0"}})
	cur := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0"}})
	big := func(c byte) property.Property {
		return property.Property{Type: property.TypeBundleObject, Value: json.RawMessage(`{"data":"` + strings.Repeat(string(c), 400) + `"}`)}
	}
	old.Bundles[0].Properties = append(old.Bundles[0].Properties, big('a'), big('b'))
	cur.Bundles[0].Properties = append(cur.Bundles[0].Properties, big('b'), big('c'))
	_, text := diffText(t, old, cur, DiffOptions{})
	if !strings.Contains(text, "        ~ olm.bundle.object: 1 value changed\n") {
		t.Errorf("text:\n%s", text)
	}
	// Order does not matter.
	cur.Bundles[0].Properties[1], cur.Bundles[0].Properties[2] = cur.Bundles[0].Properties[2], cur.Bundles[0].Properties[1]
	old.Bundles[0].Properties[1], old.Bundles[0].Properties[2] = big('b'), big('c')
	r, _ := diffText(t, old, cur, DiffOptions{})
	if !r.Empty() {
		t.Errorf("reordered properties reported: %+v", r.Packages)
	}
}

func TestFailOnParse(t *testing.T) {
	for _, k := range FailOnKinds {
		if got, err := ParseFailOn(string(k)); err != nil || got != k {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := ParseFailOn("everything"); err == nil {
		t.Error("no error")
	}
}

func TestDiffBlobsWithoutPackage(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0"}})
	cur := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0"}})
	cur.Others = []declcfg.Meta{{Schema: "my.catalog", Name: "info", Blob: json.RawMessage(`{"name":"info","schema":"my.catalog"}`)}}
	r, text := diffText(t, old, cur, DiffOptions{FailOn: FailOnKinds})
	if r.Failed() || r.Summary.PackagesChanged != 0 || len(r.Packages) != 1 || r.Packages[0].Change != Changed {
		t.Errorf("report %+v", r)
	}
	if !strings.Contains(text, "~ blobs without a package:\n    + blob my.catalog info\n") {
		t.Errorf("text:\n%s", text)
	}
}
