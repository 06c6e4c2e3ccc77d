package graph

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
)

// randomChannel is a channel of n entries over few versions (so versions
// repeat), with pre-releases and build metadata, repeated entry names,
// names without a bundle, and skipRanges of every shape the syntax has.
func randomChannel(rng *rand.Rand, n int) *declcfg.DeclarativeConfig {
	ver := func() string {
		v := fmt.Sprintf("%d.%d.%d", rng.Intn(3), rng.Intn(4), rng.Intn(3))
		switch rng.Intn(6) {
		case 0:
			v += "-rc." + fmt.Sprint(rng.Intn(3))
		case 1:
			v += "+b" + fmt.Sprint(rng.Intn(3))
		}
		return v
	}
	ops := []string{">", ">=", "<", "<=", "=", "", "!=", "=="}
	term := func() string {
		v := ver()
		switch rng.Intn(8) {
		case 0:
			v = fmt.Sprintf("%d.x", rng.Intn(3))
		case 1:
			v = fmt.Sprintf("%d.%d.x", rng.Intn(3), rng.Intn(4))
		}
		sp := ""
		if rng.Intn(5) == 0 {
			sp = " "
		}
		return ops[rng.Intn(len(ops))] + sp + v
	}
	rangeText := func() string {
		var alts []string
		for a := 0; a <= rng.Intn(3)/2; a++ {
			var terms []string
			for k := 0; k <= rng.Intn(3); k++ {
				terms = append(terms, term())
			}
			alts = append(alts, strings.Join(terms, " "))
		}
		return strings.Join(alts, " || ")
	}
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "p", DefaultChannel: "c"}}}
	var entries []declcfg.ChannelEntry
	names := map[string]bool{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p.e%d", i)
		if i > 0 && rng.Intn(10) == 0 {
			name = entries[rng.Intn(i)].Name // a repeated entry
		}
		e := declcfg.ChannelEntry{Name: name}
		if i > 0 && rng.Intn(2) == 0 {
			e.Replaces = entries[rng.Intn(i)].Name
		}
		if rng.Intn(5) == 0 {
			e.Skips = []string{fmt.Sprintf("p.gone%d", rng.Intn(3))}
		}
		if rng.Intn(3) > 0 {
			e.SkipRange = rangeText()
		}
		entries = append(entries, e)
		if !names[name] && rng.Intn(12) > 0 { // some entries have no bundle
			names[name] = true
			cfg.Bundles = append(cfg.Bundles, bundle("p", name, ver()))
		}
	}
	cfg.Channels = []declcfg.Channel{channel("p", "c", entries...)}
	return cfg
}

// scanEdges is what the skipRange edges are by definition: every range
// tested against every other versioned entry, in entry order.
func scanEdges(c *ChannelGraph) []Edge {
	out := append([]Edge(nil), c.baseEdges...)
	for _, i := range c.ranged {
		for j, n := range c.nodeAt {
			if j != i && n != nil && n.HasVersion && c.rangeAt[i].Contains(n.Version) {
				out = append(out, Edge{From: n.Name, To: c.Entries[i].Name, Kind: KindSkipRange, Range: c.Entries[i].SkipRange})
			}
		}
	}
	return out
}

// TestRangeIndexMatchesScan checks every use of the skipRange indexes
// against testing every range with every version, on random channels.
func TestRangeIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(30))
	for round := 0; round < 300; round++ {
		cfg := randomChannel(rng, 1+rng.Intn(40))
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := g.Package("p")
		c := p.Channel("c")
		all := scanEdges(c)
		if got := c.Edges(); !reflect.DeepEqual(got, all) && len(got)+len(all) > 0 {
			t.Fatalf("round %d: Edges\n got %v\nwant %v", round, got, all)
		}
		if got := c.EdgeCount(1 << 30); got != len(all) {
			t.Fatalf("round %d: EdgeCount %d, want %d", round, got, len(all))
		}
		for name := range p.Nodes {
			var want []Edge
			for _, e := range all {
				if e.From == name {
					want = append(want, e)
				}
			}
			if got := c.EdgesFrom(name); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: EdgesFrom(%s)\n got %v\nwant %v", round, name, got, want)
			}
		}
		in := map[string]bool{}
		for name := range p.Nodes {
			in[name] = rng.Intn(2) == 0
		}
		var want, got []Edge
		for _, e := range all {
			if in[e.From] && in[e.To] {
				want = append(want, e)
			}
		}
		c.VisitEdgesAmong(func(n string) bool { return in[n] }, func(e Edge) bool { got = append(got, e); return true })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: VisitEdgesAmong\n got %v\nwant %v", round, got, want)
		}
		// Successors by version, of versions in and out of the catalog.
		for k := 0; k < 10; k++ {
			v := semver.MustParse(fmt.Sprintf("%d.%d.%d", rng.Intn(3), rng.Intn(4), rng.Intn(3)))
			var wantTo []string
			for _, i := range c.ranged {
				if c.rangeAt[i].Contains(v) {
					wantTo = append(wantTo, c.Entries[i].Name)
				}
			}
			var gotTo []string
			for _, s := range c.successorsOf(p, Installed{Version: v, HasVersion: true}) {
				gotTo = append(gotTo, c.Entries[s.entry].Name)
			}
			if !slices.Equal(gotTo, wantTo) {
				t.Fatalf("round %d: successors of %s: %v, want %v", round, v, gotTo, wantTo)
			}
		}
	}
}

// sparseChannel is a channel of n entries, each replacing the one before
// and with a skipRange that covers only it: n skipRanges that cover
// almost nothing.
func sparseChannel(n int) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "p", DefaultChannel: "c"}}}
	entries := make([]declcfg.ChannelEntry, n)
	for k := range entries {
		entries[k].Name = fmt.Sprintf("p.v1.0.%d", k)
		if k > 0 {
			entries[k].Replaces = entries[k-1].Name
			entries[k].SkipRange = fmt.Sprintf(">=1.0.%d <1.0.%d", k-1, k)
		}
		cfg.Bundles = append(cfg.Bundles, bundle("p", entries[k].Name, fmt.Sprintf("1.0.%d", k)))
	}
	cfg.Channels = []declcfg.Channel{channel("p", "c", entries...)}
	return cfg
}

// TestSparseSkipRanges: 20,000 skipRanges that cover almost nothing cost
// a few range tests each, not one per entry (N² = 400 million: seconds
// to minutes in view, validate, catalog diff, render-graph and graph
// show), in every use: every edge, the edges from each bundle, the
// successors and paths, the edges among a page of nodes, and Mermaid.
func TestSparseSkipRanges(t *testing.T) {
	const n = 20000
	cfg := sparseChannel(n)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	rangeTests = &tested
	defer func() { rangeTests = nil }()
	p := g.Package("p")
	c := p.Channel("c")
	check := func(what string, edges int) {
		t.Helper()
		if tested > 4*n {
			t.Errorf("%s: %d range tests for %d entries", what, tested, n)
		}
		if edges != n-1 {
			t.Errorf("%s: %d skipRange edges, want %d", what, edges, n-1)
		}
		tested = 0
	}
	count := func(edges []Edge) int {
		k := 0
		for _, e := range edges {
			if e.Kind == KindSkipRange {
				k++
			}
		}
		return k
	}
	check("Edges", count(c.Edges()))
	check("EdgeCount", c.EdgeCount(MaxEdges)-(n-1))
	k := 0
	for _, e := range c.Entries {
		k += count(c.EdgesFrom(e.Name))
	}
	check("EdgesFrom", k)
	k = 0
	c.VisitEdgesAmong(func(string) bool { return true }, func(e Edge) bool {
		if e.Kind == KindSkipRange {
			k++
		}
		return true
	})
	check("VisitEdgesAmong", k)
	k = 0
	for _, e := range c.Entries {
		in, err := p.Resolve(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		succ, err := p.Successors(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range succ {
			k += count(s.Edges)
		}
	}
	check("Successors", k)
	var b strings.Builder
	if err := WriteMermaid(cfg, &b, MermaidOptions{}); err != nil {
		t.Fatal(err)
	}
	check("WriteMermaid", strings.Count(b.String(), `"skipRange(`))
	from, err := p.Resolve("p.v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	paths, err := p.Path(from, PathOptions{Semantics: V1})
	if err != nil {
		t.Fatal(err)
	}
	check("Path", len(paths[0].Steps))
}
