package compose

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// e builds a channel entry from "name", "name<replaced", "name<replaced|skip1,skip2"
// and a trailing "@range" for a skipRange: "b.v2.0.0<b.v1.0.0|b.v1.5.0@>=1.0.0 <2.0.0".
func e(spec string) declcfg.ChannelEntry {
	var ce declcfg.ChannelEntry
	spec, ce.SkipRange, _ = strings.Cut(spec, "@")
	spec, skips, _ := strings.Cut(spec, "|")
	ce.Name, ce.Replaces, _ = strings.Cut(spec, "<")
	if skips != "" {
		ce.Skips = strings.Split(skips, ",")
	}
	return ce
}

// versionOfName is the part of a bundle name after ".v".
func versionOfName(name string) string { return name[strings.LastIndex(name, ".v")+2:] }

func testBundle(pkg, name string) declcfg.Bundle {
	return declcfg.Bundle{
		Schema: declcfg.SchemaBundle, Name: name, Package: pkg, Image: "quay.io/test/" + name,
		Properties: []property.Property{property.MustBuild(property.Package{PackageName: pkg, Version: versionOfName(name)})},
	}
}

// testCatalog builds one package with the given channels (name -> entry
// specs); every entry gets a bundle.
func testCatalog(pkg, def string, channels map[string][]string) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: def}}}
	seen := map[string]bool{}
	for _, name := range sortedNames(channels) {
		ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Name: name, Package: pkg}
		for _, s := range channels[name] {
			ce := e(s)
			ch.Entries = append(ch.Entries, ce)
			if !seen[ce.Name] {
				seen[ce.Name] = true
				cfg.Bundles = append(cfg.Bundles, testBundle(pkg, ce.Name))
			}
		}
		cfg.Channels = append(cfg.Channels, ch)
	}
	return cfg
}

// entrySpecs renders entries back into the e() syntax.
func entrySpecs(entries []declcfg.ChannelEntry) []string {
	var out []string
	for _, ce := range entries {
		s := ce.Name
		if ce.Replaces != "" {
			s += "<" + ce.Replaces
		}
		if len(ce.Skips) > 0 {
			s += "|" + strings.Join(ce.Skips, ",")
		}
		if ce.SkipRange != "" {
			s += "@" + ce.SkipRange
		}
		out = append(out, s)
	}
	return out
}

// reachAll returns, for a channel of cfg, the entries that reach its head
// under OLM classic, computed with graph.Path (not Reach).
func reachAll(t *testing.T, cfg *declcfg.DeclarativeConfig, pkg, channel string) map[string]bool {
	t.Helper()
	g, err := graphOf(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := g.Package(pkg)
	c := p.Channel(channel)
	out := map[string]bool{}
	for _, en := range c.Entries {
		n := p.Nodes[en.Name]
		paths, err := p.Path(graph.Installed{Name: n.Name, Version: n.Version, HasVersion: true}, graph.PathOptions{Semantics: graph.Classic, Channels: []string{channel}})
		if err != nil {
			t.Fatal(err)
		}
		out[en.Name] = paths[0].Reached
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Conformance catalogs, loaded once per test binary.

var (
	confMu    sync.Mutex
	confCache = map[string]*declcfg.DeclarativeConfig{}
)

func conformanceRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..", "..", "shared", "conformance", "catalog")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("conformance suite not found at %s", root)
	}
	if testing.Short() {
		t.Skip("loads the conformance catalogs")
	}
	return root
}

// conformanceCatalogs lists the catalogs upstream validates (name -> input
// directory).
func conformanceCatalogs(t *testing.T) map[string]string {
	root := conformanceRoot(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "input"))
	out := map[string]string{}
	for _, d := range dirs {
		exit, err := os.ReadFile(filepath.Join(filepath.Dir(d), "validate.exit"))
		if err != nil || strings.TrimSpace(string(exit)) != "0" {
			continue
		}
		out[filepath.Base(filepath.Dir(d))] = d
	}
	if len(out) == 0 {
		t.Skip("no valid conformance catalog found")
	}
	return out
}

// loadConformance loads (once) a conformance catalog; callers must not
// modify it.
func loadConformance(t *testing.T, dir string) *declcfg.DeclarativeConfig {
	t.Helper()
	confMu.Lock()
	defer confMu.Unlock()
	if cfg, ok := confCache[dir]; ok {
		return cfg
	}
	cfg, err := Load(context.Background(), dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	confCache[dir] = cfg
	return cfg
}
