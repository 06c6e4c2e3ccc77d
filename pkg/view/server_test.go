package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	graphaction "github.com/opmkit/opm/pkg/action/graph"
	viewaction "github.com/opmkit/opm/pkg/action/view"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/view"
)

func get(t *testing.T, h http.Handler, host, path string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if host != "" {
		req.Host = host
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func newServer(t testing.TB, hosts []string, refs ...string) *view.Server {
	t.Helper()
	loaded, err := viewaction.Load(context.Background(), viewaction.Options{Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := view.New(view.Options{Catalogs: loaded.Catalogs, Diff: loaded.Diff, Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPagesAndHeaders(t *testing.T) {
	s := newServer(t, nil, example)
	for _, tc := range []struct {
		path, ctype string
		code        int
	}{
		{"/", "text/html", 200},
		{"/?q=cache", "text/html", 200},
		{"/packages/cache-operator", "text/html", 200},
		{"/packages/cache-operator/channels/fast", "text/html", 200},
		{"/packages/cache-operator/channels/fast?semantics=v1&page=1&limit=10", "text/html", 200},
		{"/packages/cache-operator/bundles/cache-operator.v1.1.0", "text/html", 200},
		{"/packages/cache-operator/path", "text/html", 200},
		{"/packages/cache-operator/path?from=1.0.0&semantics=v1&cluster-version=4.18", "text/html", 200},
		{"/api/", "application/json", 200},
		{"/api/packages/cache-operator", "application/json", 200},
		{"/api/packages/cache-operator/channels/fast", "application/json", 200},
		{"/api/packages/cache-operator/graph?channel=fast&channel=stable", "application/json", 200},
		{"/static/app.js", "text/javascript", 200},
		{"/static/app.css", "text/css", 200},
		{"/static/dagre.min.js", "text/javascript", 200},
		{"/packages/nope", "text/html", 404},
		{"/api/packages/nope", "application/json", 404},
		{"/packages/cache-operator/channels/nope", "text/html", 404},
		{"/packages/cache-operator/bundles/nope", "text/html", 404},
		{"/packages/cache-operator/channels/fast?semantics=v2", "text/html", 400},
		{"/api/packages/cache-operator/channels/fast?page=0", "application/json", 400},
		{"/packages/cache-operator/path?from=1.0.0&semantics=v0", "text/html", 400},
		{"/api/packages/cache-operator/path?from=9.9.9&to=1.0.0&version=1.x", "application/json", 400},
		{"/packages/web-console/icon", "image/svg+xml", 200},
		{"/packages/cache-operator/icon", "text/plain", 404},
		{"/static/", "text/plain", 404},
	} {
		resp := get(t, s, "", tc.path)
		if resp.StatusCode != tc.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("GET %s: %d %q, want %d %q: %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.code, tc.ctype, body)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") && !strings.HasSuffix(tc.path, "/icon") {
			t.Errorf("GET %s: CSP %q", tc.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: headers %v", tc.path, resp.Header)
		}
	}
}

// TestHostHeader: a name that resolves to 127.0.0.1 (DNS rebinding) gets
// nothing.
func TestHostHeader(t *testing.T) {
	s := newServer(t, view.LoopbackHosts("127.0.0.1:8123"), example)
	for host, code := range map[string]int{"127.0.0.1:8123": 200, "localhost:8123": 200, "LOCALHOST:8123": 200, "evil.example:8123": 421, "127.0.0.1:9999": 421, "": 421} {
		if resp := get(t, s, host, "/api/"); resp.StatusCode != code {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, code)
		}
	}
}

// TestJSONTwins: the JSON of the path page is `opm graph path -o json`'s
// (and upgradeable's), and a channel's edges are `opm graph show`'s.
func TestJSONTwins(t *testing.T) {
	s := newServer(t, nil, example)
	ctx := context.Background()
	opts := graphaction.Options{Refs: []string{example}, Packages: []string{"cache-operator"}}
	for _, q := range []struct {
		query string
		opts  graphaction.PathOptions
	}{
		{"from=1.0.0", graphaction.PathOptions{From: "1.0.0"}},
		{"from=1.1.0&semantics=v1", graphaction.PathOptions{From: "1.1.0", Semantics: "v1"}},
		{"from=1.0.0&channel=fast&to=1.1.1", graphaction.PathOptions{From: "1.0.0", To: "1.1.1", Options: graphaction.Options{Channels: []string{"fast"}}}},
		{"from=0.9.0&from-bundle=cache-operator.v0.9.0&semantics=v1&version=%3C1.2.0", graphaction.PathOptions{From: "0.9.0", FromBundle: "cache-operator.v0.9.0", Semantics: "v1", Version: "<1.2.0"}},
	} {
		var got struct {
			Paths json.RawMessage `json:"paths"`
		}
		resp := get(t, s, "", "/api/packages/cache-operator/path?"+q.query)
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		po := q.opts
		po.Refs, po.Packages = opts.Refs, opts.Packages
		want, err := graphaction.Path(ctx, po)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want.JSON().Paths)
		if !jsonEqual(t, got.Paths, wantJSON) {
			t.Errorf("path?%s: %s\nwant %s", q.query, got.Paths, wantJSON)
		}
	}

	var pd view.PathData
	resp := get(t, s, "", "/api/packages/cache-operator/path?from=1.0.0&cluster-version=4.18.2")
	if err := json.NewDecoder(resp.Body).Decode(&pd); err != nil {
		t.Fatal(err)
	}
	up, err := graphaction.Upgradeable(ctx, graphaction.UpgradeableOptions{Options: opts, ClusterVersion: "4.18.2",
		Installed: []graphaction.InstalledOperator{{Package: "cache-operator", From: "1.0.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	gotUp, _ := json.Marshal(pd.Cluster)
	wantUp, _ := json.Marshal(up.JSON().Operators[0])
	if !jsonEqual(t, gotUp, wantUp) || pd.Next != "4.19" {
		t.Errorf("cluster check %s (next %s)\nwant %s", gotUp, pd.Next, wantUp)
	}

	show, err := graphaction.Show(ctx, graphaction.Options{Refs: []string{example}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range show.Graph.JSON().Packages {
		for _, ch := range p.Channels {
			var g view.GraphData
			resp := get(t, s, "", "/api/packages/"+p.Name+"/channels/"+ch.Name)
			if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
				t.Fatal(err)
			}
			if g.Head != ch.Head || len(g.Edges) != len(ch.Edges) || g.TotalEdges != len(ch.Edges) {
				t.Errorf("%s/%s: head %q, %d edges; opm graph show: head %q, %d edges", p.Name, ch.Name, g.Head, len(g.Edges), ch.Head, len(ch.Edges))
			}
			for i, e := range ch.Edges {
				found := false
				for _, ge := range g.Edges {
					found = found || (ge.From == e.From && ge.To == e.To && ge.Kind == e.Kind && ge.Range == e.Range)
				}
				if !found {
					t.Errorf("%s/%s: edge %d %+v not drawn", p.Name, ch.Name, i, e)
				}
			}
		}
	}
}

// TestGraphBounds: a 10,000-entry channel is drawn a page at a time.
func TestGraphBounds(t *testing.T) {
	s := newServer(t, nil, writeHostile(t))
	var g view.GraphData
	resp := get(t, s, "", "/api/packages/big/channels/stable?limit=100000&page=3")
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != view.MaxNodeLimit || g.Limit != view.MaxNodeLimit || g.Page != 3 || g.Pages != bigChannel/view.MaxNodeLimit || g.TotalNodes != bigChannel || len(g.Edges) > view.MaxEdges {
		t.Errorf("page 3 of the big channel: %d nodes, %d edges, limit %d, page %d of %d, total %d", len(g.Nodes), len(g.Edges), g.Limit, g.Page, g.Pages, g.TotalNodes)
	}
	if !strings.Contains(g.Note, "1000 of 10000 nodes shown") || !strings.Contains(g.Note, "edges to nodes on other pages") {
		t.Errorf("note %q", g.Note)
	}
	// Pages past the end show the last one.
	resp = get(t, s, "", "/api/packages/big/channels/stable?page=999")
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if g.Page != g.Pages {
		t.Errorf("page 999 shows page %d of %d", g.Page, g.Pages)
	}
}

// TestDenseGraphBounds: a channel of 3,000 entries whose skipRanges cover
// each other has 9 million edges; a page builds only those between its
// nodes (it built them all: 36 s and 9.5 GB for 4,000 entries) and says
// how many it left out.
func TestDenseGraphBounds(t *testing.T) {
	s := newServer(t, nil, writeHostile(t))
	var g view.GraphData
	for _, path := range []string{"/api/packages/dense/channels/stable", "/api/packages/dense/channels/stable?limit=1000&page=2", "/api/packages/dense/graph"} {
		resp := get(t, s, "", path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		g = view.GraphData{}
		if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
			t.Fatal(err)
		}
		if g.TotalNodes != denseChannel || len(g.Edges) != view.MaxEdges || g.TotalEdges <= graph.MaxEdges {
			t.Errorf("GET %s: %d of %d nodes, %d edges drawn of %d", path, len(g.Nodes), g.TotalNodes, len(g.Edges), g.TotalEdges)
		}
		if !strings.Contains(g.Note, "more than 1000000 edges in all") || !strings.Contains(g.Note, "edges between the shown nodes not drawn") {
			t.Errorf("GET %s: note %q", path, g.Note)
		}
		// Every shown node's layout edges are kept: the replaces chain
		// and, per entry, the skipRange edge from the newest version.
		layout := 0
		for _, e := range g.Edges {
			if e.Layout {
				layout++
			}
		}
		if want := 2*len(g.Nodes) - 1; layout != want {
			t.Errorf("GET %s: %d layout edges, want %d", path, layout, want)
		}
	}
	body, err := io.ReadAll(get(t, s, "", "/packages/dense").Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(">more than 1000000</td>")) {
		t.Errorf("the package page does not say the channel has more than a million edges")
	}
}

// TestQueryBounds: a search of 30,000 words (7.6 s a request, before) and
// a query string of megabytes are refused at once, saying why; repeated
// channels draw the union once.
func TestQueryBounds(t *testing.T) {
	s := newServer(t, nil, example)
	words := strings.TrimSpace(strings.Repeat("a ", 30000))
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/?q=" + strings.ReplaceAll(words, " ", "+"), http.StatusRequestURITooLong, "bytes: at most 4096 are read"},
		{"/api/?q=" + strings.Repeat("cache+", 50), http.StatusBadRequest, "at most 256"},
		{"/api/packages/cache-operator/path?from=" + strings.Repeat("1", 5000), http.StatusRequestURITooLong, "at most 4096 are read"},
		{"/api/?q=cache+cache+operator", http.StatusOK, `"name": "cache-operator"`},
	} {
		resp := get(t, s, "", tc.path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %.60s...: %d, want %d with %q: %.300s", tc.path, resp.StatusCode, tc.code, tc.want, body)
		}
	}
	var one, many view.GraphData
	getInto := func(path string, v any) {
		if err := json.NewDecoder(get(t, s, "", path).Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	getInto("/api/packages/cache-operator/graph?channel=fast", &one)
	getInto("/api/packages/cache-operator/graph?"+strings.TrimSuffix(strings.Repeat("channel=fast&", 300), "&"), &many)
	if len(many.Channels) != 1 || len(many.Edges) != len(one.Edges) {
		t.Errorf("channel=fast 300 times: channels %v, %d edges; once: %d edges", many.Channels, len(many.Edges), len(one.Edges))
	}
}

func TestDiffPages(t *testing.T) {
	s := newServer(t, nil, example, writeNewExample(t))
	for path, code := range map[string]int{
		"/": 200, "/api/": 200, "/old/": 200, "/new/": 200, "/api/new/packages/web-console": 200,
		"/old/packages/web-console/bundles/web-console.v2.1.0": 200, "/new/packages/web-console/bundles/web-console.v2.1.0": 404,
		"/diff/packages/web-console/channels/stable": 200, "/api/diff/packages/web-console/channels/stable": 200,
		"/diff/packages/web-console/channels/nope": 404, "/packages/web-console": 404,
	} {
		if resp := get(t, s, "", path); resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	var d view.DiffGraphData
	if err := json.NewDecoder(get(t, s, "", "/api/diff/packages/web-console/channels/stable").Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if len(d.Lost) != 1 || d.Lost[0].From.Name != "web-console.v2.1.0" {
		t.Errorf("lost paths %+v", d.Lost)
	}
}

// writeDotNames writes a catalog whose package, channel and bundles are
// named ".", ".." and "~x", with a description holding an aligned table.
func writeDotNames(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	bundle := func(name, version string) map[string]any {
		return map[string]any{"schema": "olm.bundle", "package": "..", "name": name, "image": "example.com/dots:" + version,
			"properties": []map[string]any{{"type": "olm.package", "value": map[string]any{"packageName": "..", "version": version}}}}
	}
	for _, v := range []any{
		map[string]any{"schema": "olm.package", "name": "..", "defaultChannel": ".",
			"description": "| left | center | right |\n|:-----|:------:|------:|\n| a | b | c |\n"},
		map[string]any{"schema": "olm.channel", "package": "..", "name": ".", "entries": []map[string]any{
			{"name": "."}, {"name": "..", "replaces": "."}, {"name": "~x", "replaces": ".."}}},
		bundle(".", "1.0.0"), bundle("..", "1.1.0"), bundle("~x", "1.2.0"),
	} {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDotNames: names "." and ".." link to their own pages, not to the
// start page a browser would resolve /packages/.. to; "~2E" stands for
// each dot, a leading "~" of another name is "~7E".
func TestDotNames(t *testing.T) {
	s := newServer(t, nil, writeDotNames(t))
	body, _ := io.ReadAll(get(t, s, "", "/").Body)
	if !bytes.Contains(body, []byte(`href="/packages/~2E~2E"`)) {
		t.Errorf("the catalog page does not link the package \"..\" as /packages/~2E~2E")
	}
	for _, tc := range []struct{ path, title, link string }{
		{"/packages/~2E~2E", "<title>.. · opm view</title>", `href="/packages/~2E~2E/channels/~2E"`},
		{"/packages/~2E~2E/channels/~2E", "<title>.. / . · opm view</title>", `data-bundles="/packages/~2E~2E/bundles/"`},
		{"/packages/~2E~2E/bundles/~2E~2E", "<title>.. · opm view</title>", `href="/packages/~2E~2E/channels/~2E"`},
		{"/packages/~2E~2E/bundles/~2E", "<title>. · opm view</title>", ""},
		{"/packages/~2E~2E/bundles/~7Ex", "<title>~x · opm view</title>", ""},
	} {
		resp := get(t, s, "", tc.path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(tc.title)) || !bytes.Contains(body, []byte(tc.link)) {
			t.Errorf("GET %s: %d, want %s and %s in it", tc.path, resp.StatusCode, tc.title, tc.link)
		}
		for _, bad := range []string{`href="/packages/.."`, `href="/packages/../`, `/bundles/.."`, `/channels/."`} {
			if bytes.Contains(body, []byte(bad)) {
				t.Errorf("GET %s: a link %s", tc.path, bad)
			}
		}
	}
	// The package page's bundle list and the aligned table.
	body, _ = io.ReadAll(get(t, s, "", "/packages/~2E~2E").Body)
	for _, want := range []string{`href="/packages/~2E~2E/bundles/~7Ex"`, `<th class="align-center">center</th>`, `<td class="align-right">c</td>`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("the package page lacks %s", want)
		}
	}
	if bytes.Contains(body, []byte(" style=")) {
		t.Errorf("the package page has a style attribute, which its CSP refuses")
	}
}

// TestBundleDescriptionOnce: a bundle page says its description once: not
// again as a summary the description holds already (quay), nor in the
// olm.csv.metadata property shown in full (rabbitmq).
func TestBundleDescriptionOnce(t *testing.T) {
	s := newServer(t, nil, conformance(t, "community-operators-prod-v4.20"))
	for _, tc := range []struct{ page, summary string }{
		{"/packages/project-quay/bundles/quay-operator.v3.17.3", ""},
		{"/packages/rabbitmq-cluster-operator/bundles/rabbitmq-cluster-operator.v2.22.3", "the CSV metadata this page shows"},
	} {
		var d view.BundleData
		if err := json.NewDecoder(get(t, s, "", "/api"+tc.page).Body).Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.CSV == nil || d.CSV.Description == "" || (tc.summary == "" && d.CSV.Summary == "") {
			t.Fatalf("%s: no description or summary", tc.page)
		}
		body, _ := io.ReadAll(get(t, s, "", tc.page).Body)
		text := strings.Join(strings.Fields(string(body)), " ")
		summary := template.HTMLEscapeString(strings.Join(strings.Fields(d.CSV.Summary), " "))
		if strings.Contains(strings.Join(strings.Fields(d.CSV.Description), " "), strings.Join(strings.Fields(d.CSV.Summary), " ")) && strings.Contains(text, `<p class="lead">`+summary) {
			t.Errorf("%s: the summary is shown above a description that holds it", tc.page)
		}
		for _, p := range d.Properties {
			if p.Type == "olm.csv.metadata" && (p.Value != "" || !strings.Contains(p.Summary, tc.summary)) {
				t.Errorf("%s: olm.csv.metadata shown as %q / %q", tc.page, p.Value, p.Summary)
			}
		}
	}
}
