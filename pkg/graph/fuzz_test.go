package graph

import (
	"fmt"
	"strings"
	"testing"

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
			}
		}
		for _, sem := range []Semantics{Classic, V1} {
			if _, err := p.AllPairs(sem, nil); err != nil {
				t.Fatal(fmt.Errorf("%s: %w", sem, err))
			}
		}
	})
}
