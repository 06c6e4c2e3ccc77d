package view_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	viewaction "github.com/opmkit/opm/pkg/action/view"
	"github.com/opmkit/opm/pkg/view"
)

// The browser tests drive Debian's chromium (installed by .ci/run) with
// chromedp against the real server on 127.0.0.1. They skip, saying why,
// when no chromium is installed.

// chromiumPath finds the browser: $OPM_CHROMIUM, or chromium on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OPM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install chromium, as .ci/run does; or set OPM_CHROMIUM): browser tests skipped")
	return ""
}

// browser is one headless chromium for a test, with what its pages did:
// the requests they sent, and console errors and exceptions.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the server's URL, without a trailing slash

	mu       sync.Mutex
	requests []string
	errors   []string
	dialogs  []string
}

// screenshotDir is where screenshots go: bin/view-screenshots at the
// repository root (not committed), or $OPM_VIEW_SCREENSHOTS.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("OPM_VIEW_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin", "view-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newBrowser starts chromium for the server at base.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root in CI
		chromedp.DisableGPU,
		chromedp.WindowSize(1360, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
	}
	b := &browser{t: t, base: strings.TrimSuffix(base, "/")}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b.ctx = ctx
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// listen records what the pages do.
func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.errors = append(b.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			b.errors = append(b.errors, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *page.EventJavascriptDialogOpening:
		b.dialogs = append(b.dialogs, ev.Message)
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

// run runs actions, failing the test on error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression into a T.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// location is the page's URL.
func (b *browser) location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

// open navigates to path and waits for the page (and its graph, when it
// has one) to be ready.
func (b *browser) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady("body"))
	b.waitGraph()
}

// clickNav clicks a link (or submits a form, with submit) and waits for
// the next page to be loaded and drawn.
func (b *browser) clickNav(what string, action chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	before := b.location()
	b.run(what, action)
	deadline := time.Now().Add(30 * time.Second)
	for b.location() == before {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: still on %s", what, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.run(what, chromedp.WaitReady("footer"))
	for eval[string](b, `document.readyState`) != "complete" {
		time.Sleep(20 * time.Millisecond)
	}
	b.waitGraph()
}

// waitGraph waits until a page with a graph has drawn it.
func (b *browser) waitGraph() {
	b.t.Helper()
	if eval[bool](b, `!!document.getElementById("graph")`) {
		b.run("wait for the graph", chromedp.WaitReady(`body[data-graph-ready]`))
		if state := eval[string](b, `document.body.getAttribute("data-graph-ready")`); state != "1" {
			b.t.Fatalf("the graph was not drawn: %s", eval[string](b, `document.getElementById("graph").textContent`))
		}
	}
}

// screenshot saves the page as name.png in the screenshot directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(screenshotDir(b.t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// check fails the test on console errors, exceptions, dialogs and any
// request to another host than the server, then forgets them.
func (b *browser) check() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	base, _ := url.Parse(b.base)
	for _, r := range b.requests {
		u, err := url.Parse(r)
		if err != nil || u.Host != base.Host || u.Scheme != "http" {
			b.t.Errorf("a page requested %q: nothing may leave %s", r, base.Host)
		}
		if u != nil && u.Hostname() != "127.0.0.1" {
			b.t.Errorf("a page requested %q, not on 127.0.0.1", r)
		}
	}
	for _, e := range b.errors {
		b.t.Errorf("browser error: %s", e)
	}
	for _, d := range b.dialogs {
		b.t.Errorf("a page opened a dialog: %q", d)
	}
	b.requests, b.errors, b.dialogs = nil, nil, nil
}

// startServer serves the catalogs (one, or OLD and NEW) on 127.0.0.1 as
// `opm view` does, checking the Host header.
func startServer(t *testing.T, refs ...string) string {
	t.Helper()
	loaded, err := viewaction.Load(context.Background(), viewaction.Options{Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	h, err := view.New(view.Options{Catalogs: loaded.Catalogs, Diff: loaded.Diff, Hosts: view.LoopbackHosts(ts.Listener.Addr().String())})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// getJSON fetches a JSON endpoint of the server.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// drawn is what the page's SVG shows.
type drawn struct {
	Nodes []struct {
		Name  string `json:"name"`
		Class string `json:"class"`
	} `json:"nodes"`
	Edges []struct {
		From, To, Kind, Class string
	} `json:"edges"`
	Note string `json:"note"`
}

const drawnJS = `(() => ({
  nodes: Array.from(document.querySelectorAll("#graph g.node")).map(g => ({name: g.getAttribute("data-name"), class: g.getAttribute("class")})),
  edges: Array.from(document.querySelectorAll("#graph path.edge")).map(p => ({From: p.getAttribute("data-from"), To: p.getAttribute("data-to"), Kind: p.getAttribute("data-kind"), Class: p.getAttribute("class")})),
  note: (document.getElementById("graph-note") || {}).textContent || ""
}))()`

func (b *browser) drawn() drawn {
	b.t.Helper()
	return eval[drawn](b, drawnJS)
}
