package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
)

// FuzzGraph builds a channel from arbitrary text (one entry per line:
// "name replaces skip,skip skipRange...") and checks that the channel
// invariants, successors and both semantics' paths terminate without
// panicking, and that every path climbs or follows the chain.
func FuzzGraph(f *testing.F) {
	f.Add("a.v1.0.0\nb.v1.1.0 a.v1.0.0\nc.v2.0.0 b.v1.1.0 a.v1.0.0 >=1.0.0 <2.0.0")
	f.Add("a.v1.0.0 c.v3.0.0\nc.v3.0.0 a.v1.0.0")
	f.Add("x.v1.0.0 - x.v1.0.0 <9.0.0\ny.v0.1.0-rc.1 x.v1.0.0")
	f.Fuzz(func(t *testing.T, text string) {
		var entries []declcfg.ChannelEntry
		var bundles []declcfg.Bundle
		seen := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || len(entries) > 50 {
				continue
			}
			e := declcfg.ChannelEntry{Name: fields[0]}
			if len(fields) > 1 && fields[1] != "-" {
				e.Replaces = fields[1]
			}
			if len(fields) > 2 && fields[2] != "-" {
				e.Skips = strings.Split(fields[2], ",")
			}
			if len(fields) > 3 {
				e.SkipRange = strings.Join(fields[3:], " ")
			}
			entries = append(entries, e)
			if i := strings.LastIndex(e.Name, ".v"); i >= 0 && !seen[e.Name] {
				seen[e.Name] = true
				bundles = append(bundles, bundle("p", e.Name, e.Name[i+2:]))
			}
		}
		cfg := &declcfg.DeclarativeConfig{
			Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "p", DefaultChannel: "c"}},
			Channels: []declcfg.Channel{channel("p", "c", entries...)},
			Bundles:  bundles,
		}
		g, err := New(cfg)
		if err != nil {
			return // a bundle version that does not parse
		}
		p := g.Package("p")
		c := p.Channel("c")
		_ = WriteDOT(g, &strings.Builder{})
		_ = WriteMermaid(cfg, &strings.Builder{}, MermaidOptions{V0Semantics: true})
		for _, e := range c.Entries {
			in, err := p.Resolve(e.Name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Successors(in, nil); err != nil {
				t.Fatal(err)
			}
			for _, sem := range []Semantics{Classic, V1} {
				paths, err := p.Path(in, PathOptions{Semantics: sem})
				if err != nil {
					t.Fatal(err)
				}
				checkPath(t, p, c, paths[0])
				if _, err := p.CheckClusterUpgrade(context.Background(), in, OpenShiftVersion{Major: 4, Minor: 19}, sem, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		// An installed bundle the catalog lacks: its name is assumed.
		if in, err := p.ResolveInstalled("0.0.1-gone", ""); err == nil && p.Nodes[in.Name] == nil {
			for _, sem := range []Semantics{Classic, V1} {
				paths, err := p.Path(in, PathOptions{Semantics: sem})
				if err != nil {
					t.Fatal(err)
				}
				checkPath(t, p, c, paths[0])
			}
		}
		for _, sem := range []Semantics{Classic, V1} {
			if _, err := p.AllPairs(sem, nil); err != nil {
				t.Fatal(fmt.Errorf("%s: %w", sem, err))
			}
		}
	})
}

// FuzzMaxOpenShiftVersion feeds arbitrary property values and cluster
// versions: no panic; an accepted value prints as <major>.<minor> and reads
// back the same, as a string and as a number.
func FuzzMaxOpenShiftVersion(f *testing.F) {
	for _, s := range []string{`"4.16"`, `4.17`, `"v4.16.0"`, `""`, `"4.16.1"`, `true`, `{"a":1}`, `1e2`, `"4.18.0-rc1"`, `"  4 "`} {
		f.Add(s, "4.18.3")
	}
	f.Fuzz(func(t *testing.T, raw, cluster string) {
		v, err := ParseMaxOpenShiftVersion(json.RawMessage(raw))
		if err == nil {
			for _, again := range []string{`"` + v.String() + `"`, v.String()} {
				w, err := ParseMaxOpenShiftVersion(json.RawMessage(again))
				if err != nil || w != v {
					t.Fatalf("%s -> %v, but %s -> %v, %v", raw, v, again, w, err)
				}
			}
		}
		if next, err := NextMinor(cluster); err == nil {
			n := &Node{HasBundle: true, MaxOpenShift: &v}
			if b, known := n.Blocks(next); !known || b != (v.Compare(next) < 0) {
				t.Fatalf("Blocks(%v) with max %v = %v, %v", next, v, b, known)
			}
		}
	})
}

// FuzzReleaseOrder checks that OLM v1's order of versions with build
// metadata is a total order: antisymmetric and transitive.
func FuzzReleaseOrder(f *testing.F) {
	f.Add("1.0.0+9", "1.0.0+10", "1.0.0+a.1")
	f.Add("1.0.0", "1.0.0+0", "1.0.0+00")
	f.Add("1.0.0-rc.1+2", "1.0.0+1", "2.0.0")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var nodes []*Node
		for _, s := range []string{a, b, c} {
			v, err := semver.Parse(s)
			if err != nil {
				return
			}
			nodes = append(nodes, newNode(s, v, ""))
		}
		for _, x := range nodes {
			for _, y := range nodes {
				if compareV1(x, y) != -compareV1(y, x) {
					t.Fatalf("compare(%s, %s) = %d, compare(%s, %s) = %d", x.Name, y.Name, compareV1(x, y), y.Name, x.Name, compareV1(y, x))
				}
				for _, z := range nodes {
					if compareV1(x, y) <= 0 && compareV1(y, z) <= 0 && compareV1(x, z) > 0 {
						t.Fatalf("not transitive: %s <= %s <= %s but %s > %s", x.Name, y.Name, z.Name, x.Name, z.Name)
					}
				}
			}
		}
	})
}
