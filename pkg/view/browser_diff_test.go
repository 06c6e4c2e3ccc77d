package view_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// writeNewExample writes the example catalog with web-console 2.1.0
// pulled (its bundle and channel entry): the release the docs of
// `opm catalog diff` pull too.
func writeNewExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.Walk(example, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(example, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == filepath.Join("web-console", "catalog.yaml") {
			var keep []string
			for _, doc := range strings.Split(string(data), "\n---\n") {
				if strings.Contains(doc, "name: web-console.v2.1.0\n") && strings.Contains(doc, "schema: olm.bundle") {
					continue
				}
				keep = append(keep, doc)
			}
			data = []byte(strings.Join(keep, "\n---\n"))
			data = []byte(strings.Replace(string(data), "- name: web-console.v2.1.0\n  replaces: web-console.v2.0.0\n", "", 1))
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBrowserDiff(t *testing.T) {
	newDir := writeNewExample(t)
	base := startServer(t, example, newDir)
	b := newBrowser(t, base)

	b.open("/")
	if txt := eval[string](b, `document.querySelector("main").textContent`); !strings.Contains(txt, "web-console.v2.1.0") || !strings.Contains(txt, "lost the upgrade path") {
		t.Errorf("the diff page does not show the removed bundle and the lost path: %s", txt)
	}
	b.screenshot("diff")
	b.check()

	b.clickNav("open the changed channel", chromedp.Click(`a.badge[href="/diff/packages/web-console/channels/stable"]`, chromedp.NodeVisible))
	d := b.drawn()
	var removed, lost bool
	for _, n := range d.Nodes {
		if n.Name == "web-console.v2.1.0" {
			removed = strings.Contains(n.Class, "diff-removed") && strings.Contains(n.Class, "lost")
		}
		lost = lost || strings.Contains(n.Class, "lost")
	}
	if !removed {
		t.Errorf("web-console.v2.1.0 is not drawn as removed with a lost path: %+v", d.Nodes)
	}
	var removedEdge bool
	for _, e := range d.Edges {
		removedEdge = removedEdge || (e.To == "web-console.v2.1.0" && strings.Contains(e.Class, "diff-removed"))
	}
	if !removedEdge {
		t.Errorf("the edge into web-console.v2.1.0 is not drawn as removed")
	}
	b.screenshot("diff-channel")
	b.check()

	// Both catalogs can be browsed; a removed bundle links to OLD's page.
	b.clickNav("open the removed bundle", chromedp.Click(`#graph g.node[data-name="web-console.v2.1.0"]`))
	if loc := b.location(); !strings.HasSuffix(loc, "/old/packages/web-console/bundles/web-console.v2.1.0") {
		t.Errorf("the removed bundle links to %s", loc)
	}
	b.open("/new/packages/web-console/channels/stable")
	b.open("/old/")
	b.check()
}
