package view_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/view"
)

// safetyJS lists what a hostile catalog must never produce in a page:
// scripts other than ours, javascript: or data: links, images from
// elsewhere, inline event handlers.
const safetyJS = `(() => {
  const bad = [];
  for (const s of document.scripts) if (!s.src || new URL(s.src).origin !== location.origin || !new URL(s.src).pathname.startsWith("/static/")) bad.push("script " + (s.src || s.textContent.slice(0, 60)));
  for (const a of document.querySelectorAll("a[href]")) { const u = new URL(a.href, location.href); if (!["http:", "https:", "mailto:"].includes(u.protocol)) bad.push("link " + a.getAttribute("href")); }
  for (const a of document.querySelectorAll("svg a[href]")) { const u = new URL(a.getAttribute("href"), location.href); if (u.origin !== location.origin) bad.push("graph link " + a.getAttribute("href")); }
  for (const i of document.querySelectorAll("img")) { if (new URL(i.src).origin !== location.origin) bad.push("img " + i.src); }
  for (const e of document.querySelectorAll("*")) for (const at of e.getAttributeNames()) if (at.startsWith("on")) bad.push("handler " + e.tagName + " " + at);
  if (document.querySelector("main b, main i:not(.sw), main iframe, main object, main embed, svg script, svg foreignObject")) bad.push("element from catalog text");
  return bad;
})()`

func TestBrowserHostileCatalog(t *testing.T) {
	dir := writeHostile(t)
	base := startServer(t, dir)
	b := newBrowser(t, base)
	safe := func(page string) {
		t.Helper()
		if bad := eval[[]string](b, safetyJS); len(bad) > 0 {
			t.Errorf("%s: %q", page, bad)
		}
		b.check() // no dialog opened, no console error, nothing left 127.0.0.1
	}

	b.open("/")
	safe("catalog")
	// The SVG icon is shown through <img>, with its own URL.
	if n := eval[int](b, `document.querySelectorAll('img[src="/packages/evil/icon"]').length`); n != 1 {
		t.Errorf("the evil icon is shown %d times through <img>, want 1", n)
	}
	if eval[int](b, `document.querySelectorAll('img[src="/packages/huge-icon/icon"]').length`) != 0 {
		t.Errorf("the huge icon is shown")
	}
	b.screenshot("hostile-catalog")

	evil := "/packages/evil"
	b.open(evil)
	safe("package")
	if txt := eval[string](b, `document.querySelector(".markdown").innerHTML`); strings.Contains(txt, "javascript") || strings.Contains(txt, "evil.example") && strings.Contains(txt, "<img") {
		t.Errorf("the description kept a javascript link or a remote image: %s", txt)
	}
	if !strings.Contains(eval[string](b, `document.querySelector(".markdown").innerHTML`), `href="https://example.com/ok"`) {
		t.Errorf("the description lost its https link")
	}

	ch := evil + "/channels/" + url.PathEscape(htmlChannel)
	b.open(ch)
	safe("channel")
	if h1 := eval[string](b, `document.querySelector("h1").textContent`); !strings.Contains(h1, htmlChannel) {
		t.Errorf("the channel heading is %q, want the channel name as text", h1)
	}
	if n := eval[int](b, `Array.from(document.querySelectorAll("#graph g.node")).filter(g => g.getAttribute("data-name") === `+jsString(htmlBundle)+`).length`); n != 1 {
		t.Errorf("the bundle with HTML in its name is drawn %d times", n)
	}
	b.screenshot("hostile-channel")

	b.open(evil + "/bundles/" + url.PathEscape(htmlBundle))
	safe("bundle")
	if h1 := eval[string](b, `document.querySelector("h1").textContent`); !strings.Contains(h1, htmlBundle) {
		t.Errorf("the bundle heading is %q", h1)
	}
	b.screenshot("hostile-bundle")

	b.open(evil + "/path?from=0.9.0")
	safe("path")

	// Icons: types from content, CSP, nosniff; the huge one refused.
	resp, err := http.Get(base + "/packages/evil/icon")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct, csp := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"); ct != "image/svg+xml" || !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("SVG icon served as %q with CSP %q", ct, csp)
	}
	resp, err = http.Get(base + "/packages/huge-icon/icon")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the 2 MiB icon is served: %s", resp.Status)
	}

	// The 10,000-bundle channel: one page of the newest nodes, the rest
	// on other pages, and the page says so.
	start := time.Now()
	b.open("/packages/big/channels/stable")
	took := time.Since(start)
	safe("big channel")
	d := b.drawn()
	if len(d.Nodes) != view.DefaultNodeLimit {
		t.Errorf("the 10,000-entry channel draws %d nodes, want %d", len(d.Nodes), view.DefaultNodeLimit)
	}
	if !strings.Contains(d.Note, "of 10000 nodes shown") {
		t.Errorf("the page does not say how much it shows: %q", d.Note)
	}
	if took > 20*time.Second {
		t.Errorf("the 10,000-entry channel took %s to draw", took)
	}
	t.Logf("10,000-entry channel: drawn in %s", took.Round(time.Millisecond))
	b.screenshot("hostile-big")
	b.open("/packages/big/channels/stable?page=40")
	if d := b.drawn(); len(d.Nodes) != bigChannel-39*view.DefaultNodeLimit {
		t.Errorf("the last page draws %d nodes", len(d.Nodes))
	}
	b.open("/packages/big")
	safe("big package")
	if n := eval[int](b, `document.querySelectorAll("table.list tbody tr").length`); n > 600 {
		t.Errorf("the package page lists %d rows", n)
	}
	b.open("/packages/big/path?from=1.0.0")
	safe("big path")
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
