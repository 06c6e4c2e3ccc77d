package view_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	graphaction "github.com/opmkit/opm/pkg/action/graph"
	gr "github.com/opmkit/opm/pkg/graph"
)

const example = "../../examples/catalog"

// checkGraph compares the drawn graph of a channel with `opm graph show
// -o json` for it: the same nodes (entries and the names their edges
// mention), the same edges by kind, the same head.
func checkGraph(t *testing.T, b *browser, refs []string, pkg, channel string) drawn {
	t.Helper()
	res, err := graphaction.Show(context.Background(), graphaction.Options{Refs: refs, Packages: []string{pkg}, Channels: []string{channel}})
	if err != nil {
		t.Fatal(err)
	}
	want := res.Graph.JSON().Packages[0].Channels[0]
	d := b.drawn()
	if d.Note != "" {
		t.Logf("%s/%s: %s", pkg, channel, d.Note)
		return d
	}
	names := map[string]bool{}
	for _, e := range want.Entries {
		names[e.Name] = true
	}
	for _, e := range want.Edges {
		names[e.From] = true
	}
	var gotNodes, wantNodes []string
	for n := range names {
		wantNodes = append(wantNodes, n)
	}
	head := ""
	for _, n := range d.Nodes {
		gotNodes = append(gotNodes, n.Name)
		if strings.Contains(" "+n.Class+" ", " head ") {
			head = n.Name
		}
	}
	sort.Strings(gotNodes)
	sort.Strings(wantNodes)
	if !reflect.DeepEqual(gotNodes, wantNodes) {
		t.Errorf("%s/%s: drawn nodes %v, opm graph show has %v", pkg, channel, gotNodes, wantNodes)
	}
	if head != want.Head {
		t.Errorf("%s/%s: drawn head %q, opm graph show says %q", pkg, channel, head, want.Head)
	}
	kinds := func(edges [][3]string) map[string]int {
		m := map[string]int{}
		for _, e := range edges {
			m[e[2]]++
		}
		return m
	}
	var gotEdges, wantEdges [][3]string
	for _, e := range d.Edges {
		gotEdges = append(gotEdges, [3]string{e.From, e.To, e.Kind})
	}
	seen := map[[3]string]bool{}
	for _, e := range want.Edges {
		k := [3]string{e.From, e.To, string(e.Kind)}
		if !seen[k] {
			seen[k] = true
			wantEdges = append(wantEdges, k)
		}
	}
	less := func(s [][3]string) func(i, j int) bool {
		return func(i, j int) bool { return strings.Join(s[i][:], "\x00") < strings.Join(s[j][:], "\x00") }
	}
	sort.Slice(gotEdges, less(gotEdges))
	sort.Slice(wantEdges, less(wantEdges))
	if !reflect.DeepEqual(gotEdges, wantEdges) {
		t.Errorf("%s/%s: drawn edges by kind %v, opm graph show has %v", pkg, channel, kinds(gotEdges), kinds(wantEdges))
	}
	return d
}

func TestBrowserExampleCatalog(t *testing.T) {
	base := startServer(t, example)
	b := newBrowser(t, base)
	refs := []string{example}

	// Catalog: every package, and the filter.
	b.open("/")
	rows := eval[int](b, `document.querySelectorAll("table.packages tbody tr[data-search]").length`)
	if rows != 3 {
		t.Errorf("catalog page lists %d packages, want 3", rows)
	}
	b.screenshot("catalog")
	b.run("filter", chromedp.SendKeys("#filter", "queue"))
	visible := eval[int](b, `Array.from(document.querySelectorAll("table.packages tbody tr[data-search]")).filter(r => !r.hidden).length`)
	if visible != 1 {
		t.Errorf("filtering by %q shows %d packages, want 1", "queue", visible)
	}
	b.check()

	// Click through: package, channel, bundle.
	b.open("/")
	b.clickNav("click the package", chromedp.Click(`a[href="/packages/cache-operator"]`, chromedp.NodeVisible))
	loc := b.location()
	if !strings.HasSuffix(loc, "/packages/cache-operator") {
		t.Fatalf("clicking the package went to %s", loc)
	}
	b.screenshot("package")
	b.clickNav("click the channel", chromedp.Click(`a[href="/packages/cache-operator/channels/fast"]`, chromedp.NodeVisible))
	b.screenshot("channel")
	d := checkGraph(t, b, refs, "cache-operator", "fast")
	// v1.1.0 is skipped by v1.1.1: OLM classic never upgrades to it.
	for _, n := range d.Nodes {
		if n.Name == "cache-operator.v1.1.0" && !strings.Contains(n.Class, "skipped") {
			t.Errorf("cache-operator.v1.1.0 is not marked skipped: class %q", n.Class)
		}
	}
	classicIgnored := 0
	for _, e := range d.Edges {
		if strings.Contains(e.Class, "no-classic") {
			classicIgnored++
		}
	}
	if classicIgnored == 0 {
		t.Errorf("no edge of cache-operator/fast is marked as not followed by OLM classic")
	}
	// Toggle OLM v1: the svg changes class.
	b.run("toggle v1", chromedp.Click(`button[data-sem="v1"]`))
	svgClass := eval[string](b, `document.querySelector("#graph svg").getAttribute("class")`)
	if !strings.Contains(svgClass, "sem-v1") {
		t.Errorf("after choosing OLM v1 the graph has class %q", svgClass)
	}
	b.clickNav("click a bundle", chromedp.Click(`#graph g.node[data-name="cache-operator.v1.2.0"]`))
	loc = b.location()
	if !strings.HasSuffix(loc, "/packages/cache-operator/bundles/cache-operator.v1.2.0") {
		t.Fatalf("clicking the node went to %s", loc)
	}
	b.screenshot("bundle")
	b.check()

	// Every channel of every package matches opm graph show.
	for _, pc := range [][2]string{{"cache-operator", "stable"}, {"queue-operator", "alpha"}, {"web-console", "stable"}} {
		b.open("/packages/" + pc[0] + "/channels/" + pc[1])
		checkGraph(t, b, refs, pc[0], pc[1])
	}
	b.check()

	// A path query through the form: the same answer as opm graph path.
	b.open("/packages/cache-operator/channels/stable")
	b.run("path form", chromedp.SendKeys(`.pathform input[name=from]`, "1.0.0"))
	b.clickNav("submit the path form", chromedp.Click(`.pathform button[type=submit]`))
	b.screenshot("path")
	loc = b.location()
	u, _ := url.Parse(loc)
	var got struct {
		Paths json.RawMessage `json:"paths"`
	}
	getJSON(t, base+"/api"+u.RequestURI(), &got)
	want, err := graphaction.Path(context.Background(), graphaction.PathOptions{Options: graphaction.Options{Refs: refs, Packages: []string{"cache-operator"}, Channels: []string{"stable"}}, From: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want.JSON().Paths)
	if !jsonEqual(t, got.Paths, wantJSON) {
		t.Errorf("path page answers %s\nopm graph path -o json answers %s", got.Paths, wantJSON)
	}
	steps := eval[int](b, `document.querySelectorAll("ol.steps li").length`)
	if steps != len(want.Paths[0].Steps) {
		t.Errorf("the page shows %d steps, opm graph path %d", steps, len(want.Paths[0].Steps))
	}
	onPath := eval[int](b, `document.querySelectorAll("#graph path.edge.on-path").length`)
	if onPath == 0 {
		t.Errorf("no edge of the path is highlighted")
	}
	b.check()
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

// conformance returns the path of a conformance catalog's input, or skips.
func conformance(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "conformance", "catalog", name, "input")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("conformance suite not found (%s): skipped", dir)
	}
	return dir
}

var _ = gr.Classic
