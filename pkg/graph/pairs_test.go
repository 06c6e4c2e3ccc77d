package graph

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// randomCatalog builds a package with two channels of n entries whose
// replaces, skips and skipRanges are drawn at random (cycles, several heads
// and stranded entries included).
func randomCatalog(t testing.TB, r *rand.Rand, n int) *PackageGraph {
	var bundles []declcfg.Bundle
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("op.v1.%d.%d", i/5, i%5)
		bundles = append(bundles, bundle("op", names[i], fmt.Sprintf("1.%d.%d", i/5, i%5)))
	}
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "op", DefaultChannel: "a"}}, Bundles: bundles}
	var deps []declcfg.DeprecationEntry
	for _, ch := range []string{"a", "b"} {
		var entries []declcfg.ChannelEntry
		for i := range names {
			if r.Intn(5) == 0 {
				continue
			}
			e := declcfg.ChannelEntry{Name: names[i]}
			if i > 0 && r.Intn(4) != 0 {
				e.Replaces = names[r.Intn(n)]
			}
			for k := r.Intn(3); k > 0; k-- {
				e.Skips = append(e.Skips, names[r.Intn(n)])
			}
			if r.Intn(3) == 0 {
				lo := r.Intn(n)
				e.SkipRange = fmt.Sprintf(">=1.%d.%d <1.%d.%d", lo/5, lo%5, i/5, i%5)
			}
			entries = append(entries, e)
		}
		cfg.Channels = append(cfg.Channels, channel("op", ch, entries...))
	}
	for i := range names {
		if r.Intn(10) == 0 {
			deps = append(deps, declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: names[i]}, Message: "x"})
		}
	}
	cfg.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Package: "op", Entries: deps}}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g.Package("op")
}

// TestAllPairsMatchesPath checks every answer of the pair table against a
// Path query with --to, on random graphs, under both semantics.
func TestAllPairsMatchesPath(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		p := randomCatalog(t, r, 25)
		for _, tc := range []struct {
			sem      Semantics
			channels []string
		}{{Classic, []string{"a"}}, {Classic, []string{"b"}}, {V1, nil}, {V1, []string{"b"}}} {
			name := fmt.Sprintf("Success/seed %d %s %v", seed, tc.sem, tc.channels)
			t.Run(name, func(t *testing.T) {
				tab, err := p.AllPairs(tc.sem, tc.channels)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range tab.Nodes {
					for _, b := range tab.Nodes {
						v := b.Version
						paths, err := p.Path(installedFrom(a), PathOptions{Semantics: tc.sem, Channels: tc.channels, To: &v})
						if err != nil {
							t.Fatal(err)
						}
						var want []string
						if paths[0].Reached {
							want = []string{a.Name}
							for _, s := range paths[0].Steps {
								want = append(want, s.To.Name)
							}
						}
						if got := tab.Path(a.Name, b.Name); !reflect.DeepEqual(got, want) {
							t.Fatalf("%s -> %s: table %v, Path %v (%s)", a.Name, b.Name, got, want, paths[0].Reason)
						}
						if got := tab.Steps(a.Name, b.Name); got != len(want)-1 {
							t.Fatalf("%s -> %s: Steps = %d, want %d", a.Name, b.Name, got, len(want)-1)
						}
					}
				}
			})
		}
	}
}

func TestAllPairsErrors(t *testing.T) {
	p := seedEtcd(t)
	_, err := p.AllPairs(Classic, []string{"alpha", "alpha2"})
	checkErr(t, err, `unknown channel "alpha2" of package "etcd"; did you mean "alpha"?`)
	_, err = p.AllPairs("v0", nil)
	checkErr(t, err, `unknown semantics "v0", expected classic or v1`)
	tab, err := p.AllPairs(Classic, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Path("etcdoperator.v0.9.1", "etcdoperator.v0.9.2"); !reflect.DeepEqual(got, []string{"etcdoperator.v0.9.1", "etcdoperator.v0.9.2"}) {
		t.Errorf("Path = %v", got)
	}
	if tab.Path("nope", "etcdoperator.v0.9.2") != nil || tab.Steps("etcdoperator.v0.9.0", "etcdoperator.v0.9.1") != -1 {
		t.Error("unknown or unreachable pairs have a path")
	}
}

// benchChannel is a channel of n entries in minor versions of 20 patches:
// each replaces the previous entry; each patch release skipRange-covers the
// earlier patches of its minor, and the first of a minor the whole previous
// minor; every 10th entry replaces the one two back and skips the one in
// between (the etcd pattern). The channel is valid: one head, no cycle,
// nothing stranded.
func benchChannel(b testing.TB, n int) *PackageGraph {
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "op", DefaultChannel: "stable"}}}
	var entries []declcfg.ChannelEntry
	name := func(i int) string { return fmt.Sprintf("op.v1.%d.%d", i/20, i%20) }
	for i := 0; i < n; i++ {
		minor, patch := i/20, i%20
		e := declcfg.ChannelEntry{Name: name(i)}
		if i > 0 {
			e.Replaces = name(i - 1)
		}
		switch {
		case i%10 == 0 && i >= 2:
			e.Replaces = name(i - 2)
			e.Skips = []string{name(i - 1)}
		}
		switch {
		case patch > 0:
			e.SkipRange = fmt.Sprintf(">=1.%d.0 <1.%d.%d", minor, minor, patch)
		case minor > 0:
			e.SkipRange = fmt.Sprintf(">=1.%d.0 <1.%d.0", minor-1, minor)
		}
		entries = append(entries, e)
		cfg.Bundles = append(cfg.Bundles, bundle("op", name(i), fmt.Sprintf("1.%d.%d", minor, patch)))
	}
	cfg.Channels = []declcfg.Channel{channel("op", "stable", entries...)}
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p := g.Package("op")
	if c := p.Channel("stable"); c.ChainErr != nil || len(c.Stranded) != 0 {
		b.Fatalf("benchmark channel is invalid: %v, stranded %v", c.ChainErr, c.Stranded)
	}
	return p
}

// BenchmarkAllPairs2000 computes the upgrade path between every pair of a
// 2,000-entry channel (4 million pairs), building the graph included.
func BenchmarkAllPairs2000(b *testing.B) {
	for _, sem := range []Semantics{Classic, V1} {
		b.Run(string(sem), func(b *testing.B) {
			b.ReportAllocs()
			reached := 0
			for i := 0; i < b.N; i++ {
				p := benchChannel(b, 2000)
				tab, err := p.AllPairs(sem, nil)
				if err != nil {
					b.Fatal(err)
				}
				reached = 0
				for x := range tab.Nodes {
					for y := range tab.Nodes {
						if tab.dist[y*tab.n+x] >= 0 {
							reached++
						}
					}
				}
			}
			b.ReportMetric(float64(reached), "reachable-pairs")
		})
	}
}

// BenchmarkPathFromEvery2000 runs one Path query (to the newest version
// the semantics allows) from every entry of a 2,000-entry channel.
func BenchmarkPathFromEvery2000(b *testing.B) {
	for _, sem := range []Semantics{Classic, V1} {
		b.Run(string(sem), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p := benchChannel(b, 2000)
				for _, e := range p.Channel("stable").Entries {
					paths, err := p.Path(installedFrom(p.Nodes[e.Name]), PathOptions{Semantics: sem})
					if err != nil || !paths[0].Reached {
						b.Fatalf("from %s: %v %v", e.Name, err, paths[0].Reason)
					}
				}
			}
		})
	}
}
