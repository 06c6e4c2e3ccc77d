package view_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/view"

	graphaction "github.com/opmkit/opm/pkg/action/graph"
)

// paintJS reads the browser's timings of the page: first contentful paint
// and the graph's own (data, layout, drawing).
const paintJS = `new Promise(resolve => {
  const done = () => {
    const p = performance.getEntriesByName("first-contentful-paint")[0];
    const n = performance.getEntriesByType("navigation")[0];
    resolve({fcp: p ? p.startTime : -1, server: n ? n.responseStart - n.requestStart : -1, graph: window.opmViewTiming || null});
  };
  if (performance.getEntriesByName("first-contentful-paint").length) { done(); return; }
  new PerformanceObserver(done).observe({type: "paint", buffered: true});
  setTimeout(done, 3000);
})`

type paint struct {
	FCP    float64 `json:"fcp"`
	Server float64 `json:"server"`
	Graph  *struct {
		FetchMs, LayoutMs, DrawMs float64
	} `json:"graph"`
}

// serverTime is how long the server takes to answer a GET.
func serverTime(t *testing.T, u string) time.Duration {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	var sink json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&sink)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	return time.Since(start)
}

// TestBrowserConformanceCatalogs opens every page kind on the largest
// conformance catalogs: the catalog, its biggest package, that package's
// channels (each checked against opm graph show), its head bundle and an
// upgrade path (checked against opm graph path). It logs the server's and
// the browser's times.
func TestBrowserConformanceCatalogs(t *testing.T) {
	for _, name := range []string{"certified-operators-v4.22", "community-operators-prod-v4.20"} {
		t.Run(name, func(t *testing.T) {
			dir := conformance(t, name)
			base := startServer(t, dir)
			b := newBrowser(t, base)

			start := time.Now()
			b.open("/")
			p := eval[paint](b, paintJS)
			t.Logf("catalog page: server %.0f ms, first contentful paint %.0f ms (loaded in %s)", p.Server, p.FCP, time.Since(start).Round(time.Millisecond))
			b.check()

			var cat view.CatalogData
			getJSON(t, base+"/api/", &cat)
			if rows := eval[int](b, `document.querySelectorAll("table.packages tbody tr[data-search]").length`); rows != len(cat.Packages) {
				t.Errorf("the catalog page lists %d packages, its JSON %d", rows, len(cat.Packages))
			}
			sort.SliceStable(cat.Packages, func(i, j int) bool { return cat.Packages[i].Bundles > cat.Packages[j].Bundles })
			big := cat.Packages[0]

			pkgURL := "/packages/" + url.PathEscape(big.Name)
			st := serverTime(t, base+"/api"+pkgURL)
			b.open(pkgURL)
			p = eval[paint](b, paintJS)
			t.Logf("package %s (%d bundles, %d channels): JSON %s; page: server %.0f ms, first contentful paint %.0f ms", big.Name, big.Bundles, big.Channels, st.Round(time.Millisecond), p.Server, p.FCP)
			b.check()

			var pd view.PackageData
			getJSON(t, base+"/api"+pkgURL, &pd)
			chans := pd.ChannelRows
			sort.SliceStable(chans, func(i, j int) bool { return chans[i].Entries > chans[j].Entries })
			if len(chans) > 4 {
				chans = chans[:4]
			}
			for _, ch := range chans {
				u := pkgURL + "/channels/" + url.PathEscape(ch.Name)
				st := serverTime(t, base+"/api"+u)
				b.open(u)
				p := eval[paint](b, paintJS)
				checkGraph(t, b, []string{dir}, big.Name, ch.Name)
				if p.Graph != nil {
					t.Logf("channel %s (%d entries, %d edges): JSON %s; page: server %.0f ms, first contentful paint %.0f ms, graph data %.0f ms + layout %.0f ms + drawing %.0f ms",
						ch.Name, ch.Entries, ch.Edges, st.Round(time.Millisecond), p.Server, p.FCP, p.Graph.FetchMs, p.Graph.LayoutMs, p.Graph.DrawMs)
				}
				b.check()
			}
			if name == "certified-operators-v4.22" {
				b.screenshot("conformance-channel")
			}

			// The channel with the most edges in the catalog (skipRanges
			// that cover many entries).
			var densest struct {
				pkg string
				ch  view.ChannelRow
			}
			for _, row := range cat.Packages {
				var pd view.PackageData
				getJSON(t, base+"/api/packages/"+url.PathEscape(row.Name), &pd)
				for _, ch := range pd.ChannelRows {
					if ch.Edges > densest.ch.Edges {
						densest.pkg, densest.ch = row.Name, ch
					}
				}
			}
			if densest.pkg != "" {
				u := "/packages/" + url.PathEscape(densest.pkg) + "/channels/" + url.PathEscape(densest.ch.Name)
				st := serverTime(t, base+"/api"+u)
				b.open(u)
				p := eval[paint](b, paintJS)
				checkGraph(t, b, []string{dir}, densest.pkg, densest.ch.Name)
				if p.Graph != nil {
					t.Logf("densest channel %s/%s (%d entries, %d edges): JSON %s; page: server %.0f ms, first contentful paint %.0f ms, graph data %.0f ms + layout %.0f ms + drawing %.0f ms",
						densest.pkg, densest.ch.Name, densest.ch.Entries, densest.ch.Edges, st.Round(time.Millisecond), p.Server, p.FCP, p.Graph.FetchMs, p.Graph.LayoutMs, p.Graph.DrawMs)
				}
				b.check()
				if name == "certified-operators-v4.22" {
					b.screenshot("conformance-densest")
				}
			}

			// The head of the default channel, and a path to it from the
			// oldest bundle of that channel.
			var def view.ChannelRow
			for _, ch := range pd.ChannelRows {
				if ch.Default {
					def = ch
				}
			}
			if def.Head != "" {
				b.open(pkgURL + "/bundles/" + url.PathEscape(def.Head))
				b.check()
			}
			var oldest string
			for i := len(pd.BundleRows) - 1; i >= 0; i-- {
				r := pd.BundleRows[i]
				if r.HasBundle && r.Version != "" && contains(r.Channels, def.Name) {
					oldest = r.Version
					break
				}
			}
			if oldest == "" {
				return
			}
			q := url.Values{"from": {oldest}}
			b.open(pkgURL + "/path?" + q.Encode())
			b.check()
			var got struct {
				Paths json.RawMessage `json:"paths"`
			}
			getJSON(t, base+"/api"+pkgURL+"/path?"+q.Encode(), &got)
			want, err := graphaction.Path(context.Background(), graphaction.PathOptions{Options: graphaction.Options{Refs: []string{dir}, Packages: []string{big.Name}}, From: oldest})
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(want.JSON().Paths)
			if !jsonEqual(t, got.Paths, wantJSON) {
				t.Errorf("path from %s: the page answers %s\nopm graph path answers %s", oldest, got.Paths, wantJSON)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
