package graph

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

var (
	catalogsMu sync.Mutex
	catalogs   = map[string]*declcfg.DeclarativeConfig{}
)

// loadCatalog loads a conformance catalog once for all tests of the
// package (the large ones take seconds, many more under -race).
func loadCatalog(t *testing.T, dir string) *declcfg.DeclarativeConfig {
	t.Helper()
	catalogsMu.Lock()
	defer catalogsMu.Unlock()
	if cfg, ok := catalogs[dir]; ok {
		return cfg
	}
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	catalogs[dir] = cfg
	return cfg
}

// TestPathRealCatalogs walks every real catalog of the conformance suite:
// from every bundle of every channel, under both semantics, the path
// terminates, each step follows an edge of the channel upwards (v1) or
// along the chain (classic), and it reaches its target or says why not.
func TestPathRealCatalogs(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "conformance", "catalog")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "input"))
	if err != nil || len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", root)
	}
	if testing.Short() {
		t.Skip("loads every conformance catalog")
	}
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir))
		t.Run("Success/"+name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "validate.args")); err != nil {
				t.Skip("no validate run")
			}
			cfg := loadCatalog(t, dir)
			g, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var paths, reached, steps int
			for _, p := range g.Packages {
				for _, c := range p.Channels {
					for _, e := range c.Entries {
						in, err := p.Resolve(e.Name)
						if err != nil {
							t.Fatalf("%s/%s: %v", p.Name, c.Name, err)
						}
						for _, sem := range []Semantics{Classic, V1} {
							res, err := p.Path(in, PathOptions{Semantics: sem, Channels: []string{c.Name}})
							if err != nil {
								t.Fatalf("%s/%s from %s (%s): %v", p.Name, c.Name, e.Name, sem, err)
							}
							for _, r := range res {
								paths++
								steps += len(r.Steps)
								checkPath(t, p, c, r)
								if r.Reached {
									reached++
								}
							}
						}
					}
				}
			}
			t.Logf("%d packages, %d paths (%d reached their target), %d steps", len(g.Packages), paths, reached, steps)
		})
	}
}

func checkPath(t *testing.T, p *PackageGraph, c *ChannelGraph, r *Path) {
	t.Helper()
	if r.Reason == "" {
		t.Errorf("%s/%s from %s (%s): no reason given", p.Name, c.Name, r.From.Label(), r.Semantics)
	}
	if len(r.Steps) > len(c.Entries) {
		t.Errorf("%s/%s from %s (%s): %d steps in a channel of %d entries", p.Name, c.Name, r.From.Label(), r.Semantics, len(r.Steps), len(c.Entries))
	}
	seen := map[string]bool{r.From.Name: true}
	for i, s := range r.Steps {
		if seen[s.To.Name] {
			t.Errorf("%s/%s from %s (%s): step %d revisits %s", p.Name, c.Name, r.From.Label(), r.Semantics, i, s.To.Name)
		}
		seen[s.To.Name] = true
		if !c.Has(s.To.Name) || len(s.Edges) == 0 {
			t.Errorf("%s/%s: step %d to %s has no edge", p.Name, c.Name, i, s.To.Name)
		}
		switch r.Semantics {
		case Classic:
			if c.ChainIndex(s.To.Name) < 0 {
				t.Errorf("%s/%s: classic step %d to %s leaves the chain", p.Name, c.Name, i, s.To.Name)
			}
		case V1:
			if s.From.HasVersion && compareV1(s.To, s.From) <= 0 {
				t.Errorf("%s/%s: v1 step %d from %s to %s does not go up", p.Name, c.Name, i, s.From.Label(), s.To.Label())
			}
		}
	}
	if r.Semantics == Classic && r.Reached && c.ChainErr == nil && r.End().Name != c.Head {
		t.Errorf("%s/%s from %s: classic reached %s, not the head %s", p.Name, c.Name, r.From.Label(), r.End().Label(), c.Head)
	}
}
