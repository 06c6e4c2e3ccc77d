package view_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opmkit/opm/pkg/declcfg"
)

// outsideJS lists what is drawn outside the SVG's viewBox: every edge,
// node and count label, with every filter lifted for the measure.
const outsideJS = `(() => {
  const svg = document.querySelector("#graph svg");
  if (!svg) return ["no graph"];
  const cls = svg.getAttribute("class");
  svg.setAttribute("class", cls.split(" ").filter(c => !c.startsWith("hide-")).join(" "));
  const box = svg.getBoundingClientRect(), out = [];
  for (const e of svg.querySelectorAll("path.edge, g.node, g.rlabel")) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) { out.push("not drawn: " + (e.getAttribute("data-from") || "") + " -> " + (e.getAttribute("data-to") || e.getAttribute("data-name"))); continue; }
    if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1)
      out.push((e.getAttribute("data-from") || "") + " -> " + (e.getAttribute("data-to") || e.getAttribute("data-name")) + " at " + [r.left - box.left, r.top - box.top, r.right - box.left, r.bottom - box.top].map(Math.round).join(","));
  }
  svg.setAttribute("class", cls);
  return out.slice(0, 5);
})()`

// fittedJS reports whether the whole graph shows in its box: nothing to
// scroll to.
const fittedJS = `(() => {
  const box = document.getElementById("graph"), svg = box.querySelector("svg");
  return box.scrollWidth <= box.clientWidth + 1 && box.scrollHeight <= box.clientHeight + 1 && svg.getBoundingClientRect().height <= box.clientHeight;
})()`

// shownJS: is the edge from -> to drawn and shown?
const shownJS = `((from, to) => {
  const p = Array.from(document.querySelectorAll("#graph path.edge")).find(p => p.getAttribute("data-from") === from && p.getAttribute("data-to") === to);
  if (!p) return "no edge";
  if (getComputedStyle(p).display === "none") return "hidden: " + p.getAttribute("class");
  return p.classList.contains("on-path") ? "" : "not marked on-path: " + p.getAttribute("class");
})`

// TestBrowserGraphLayout checks, on the community catalog's dense and
// long channels, that every edge is inside the drawing (dagre routed the
// skips edge v2.9.0 -> v2.28.0 of opendatahub-operator/fast to x -4.5),
// that a graph larger than its box opens fitted to it and keeps its zoom
// in the URL, that skipRange edges are bundled (one per range, with its
// count, expandable), and that a path shows every edge it takes.
func TestBrowserGraphLayout(t *testing.T) {
	dir := conformance(t, "community-operators-prod-v4.20")
	base := startServer(t, dir)
	b := newBrowser(t, base)

	for _, ch := range []string{"/packages/opendatahub-operator/channels/fast", "/packages/infinispan/channels/stable"} {
		b.open(ch)
		b.screenshot("layout-" + strings.ReplaceAll(strings.TrimPrefix(ch, "/packages/"), "/", "-"))
		if out := eval[[]string](b, outsideJS); len(out) > 0 {
			t.Errorf("%s: drawn outside the viewBox: %q", ch, out)
		}
		if !eval[bool](b, fittedJS) {
			t.Errorf("%s: the graph does not open fitted to its box", ch)
		}
		// Bundled: one skipRange edge shown per entry with a range, each
		// with its count; a count shows its range's edges.
		shown := eval[int](b, `Array.from(document.querySelectorAll("#graph path.edge.skipRange")).filter(p => getComputedStyle(p).display !== "none").length`)
		labels := eval[int](b, `document.querySelectorAll("#graph g.rlabel").length`)
		if labels == 0 || shown > eval[int](b, `document.querySelectorAll("#graph g.node").length`) {
			t.Errorf("%s: %d skipRange edges shown, %d count labels: not bundled", ch, shown, labels)
			continue
		}
		b.run("expand a range", chromedp.Click(`#graph g.rlabel:last-of-type`))
		if more := eval[int](b, `Array.from(document.querySelectorAll("#graph path.edge.skipRange")).filter(p => getComputedStyle(p).display !== "none").length`); more <= shown {
			t.Errorf("%s: clicking a range's count shows %d skipRange edges, %d before", ch, more, shown)
		}
		b.check()
	}

	// Zoom in: readable labels, and the URL keeps the view.
	b.open("/packages/infinispan/channels/stable")
	b.run("zoom in", chromedp.Click(`[data-zoom="fit"]`))
	for i := 0; i < 8; i++ {
		b.run("zoom in", chromedp.Click(`[data-zoom="in"]`))
	}
	loc := b.location()
	if !strings.Contains(loc, "zoom=") || !strings.Contains(loc, "at=") {
		t.Fatalf("zooming left the URL %s without the view", loc)
	}
	if px := eval[float64](b, `document.querySelector("#graph g.node text.name").getBoundingClientRect().height`); px < 11 {
		t.Errorf("node names are %.1f px high at the zoom of %s", px, loc)
	}
	width := eval[string](b, `document.querySelector("#graph svg").getAttribute("width")`)
	b.run("reopen", chromedp.Navigate(loc))
	b.waitGraph()
	if w := eval[string](b, `document.querySelector("#graph svg").getAttribute("width")`); w != width || eval[bool](b, fittedJS) {
		t.Errorf("the linked view %s opens %s wide, zoomed %s wide", loc, w, width)
	}
	b.check()

	// The path's first hop is a skipRange edge that ranks nothing: drawn,
	// shown and on the path all the same, whatever the filters say.
	b.open("/packages/opendatahub-operator/path?from=2.15.0&channel=fast")
	b.screenshot("layout-path")
	hop := func() string {
		return eval[string](b, `(`+shownJS+`)("opendatahub-operator.v2.15.0", "opendatahub-operator.v2.28.0")`)
	}
	if h := hop(); h != "" {
		t.Errorf("the first hop of the path: %s", h)
	}
	b.run("hide skipRange edges", chromedp.Click(`input[data-kind="skipRange"]`))
	if h := hop(); h != "" {
		t.Errorf("the first hop of the path with skipRange edges hidden: %s", h)
	}
	if out := eval[[]string](b, outsideJS); len(out) > 0 {
		t.Errorf("path page: drawn outside the viewBox: %q", out)
	}
	b.check()
}

// TestBrowserDiffLostGrouped: a removed entry strands 30 bundles for one
// reason; the page says it once, with the bundles.
func TestBrowserDiffLostGrouped(t *testing.T) {
	old := filepath.Join(conformance(t, "community-operators-prod-v4.20"), "opendatahub-operator")
	cfg, err := declcfg.LoadDir(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.Channels {
		if c := &cfg.Channels[i]; c.Name == "fast" {
			var keep []declcfg.ChannelEntry
			for _, e := range c.Entries {
				if e.Name != "opendatahub-operator.v2.28.0" {
					keep = append(keep, e)
				}
			}
			c.Entries = keep
		}
	}
	var buf bytes.Buffer
	if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	cur := t.TempDir()
	if err := os.WriteFile(filepath.Join(cur, "catalog.json"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, old, cur)
	b := newBrowser(t, base)
	b.open("/diff/packages/opendatahub-operator/channels/fast")
	b.screenshot("diff-lost-grouped")
	if n := eval[int](b, `document.querySelectorAll("li.lost").length`); n != 1 {
		t.Errorf("%d lost-path entries, want 1 (one reason)", n)
	}
	if txt := eval[string](b, `document.querySelector("li.lost").textContent`); !strings.Contains(txt, "30 bundles lost their paths") || !strings.Contains(txt, "opendatahub-operator.v2.10.0") {
		t.Errorf("the lost paths say %q", txt)
	}
	if out := eval[[]string](b, outsideJS); len(out) > 0 {
		t.Errorf("diff page: drawn outside the viewBox: %q", out)
	}
	b.check()
}

// TestBrowserDotNames: the node of a bundle named ".." opens its own page,
// and an aligned markdown table costs no CSP error.
func TestBrowserDotNames(t *testing.T) {
	base := startServer(t, writeDotNames(t))
	b := newBrowser(t, base)
	b.open("/packages/~2E~2E")
	b.screenshot("dot-names-package")
	if n := eval[int](b, `document.querySelectorAll(".markdown td.align-right, .markdown th.align-center").length`); n != 2 {
		t.Errorf("%d aligned table cells, want 2", n)
	}
	b.check() // a style attribute would be a CSP error here
	b.open("/packages/~2E~2E/channels/~2E")
	b.clickNav("click the node ..", chromedp.Click(`#graph g.node[data-name=".."]`))
	if loc := b.location(); !strings.HasSuffix(loc, "/packages/~2E~2E/bundles/~2E~2E") {
		t.Errorf("clicking the node \"..\" went to %s", loc)
	}
	if h1 := eval[string](b, `document.querySelector("h1").textContent`); !strings.HasPrefix(strings.TrimSpace(h1), "..") {
		t.Errorf("the bundle page of \"..\" is titled %q", h1)
	}
	b.check()
}
