package graph

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
)

// Select returns the graph restricted to the named packages and channels
// (empty = all). Naming a package that does not exist, or a channel that
// none of the selected packages has, is an error.
func (g *Graph) Select(packages, channels []string) (*Graph, error) {
	out := &Graph{}
	if len(packages) == 0 {
		out.Packages = g.Packages
	} else {
		seen := map[string]bool{}
		for _, name := range packages {
			p := g.Package(name)
			if p == nil {
				return nil, g.UnknownPackage(name)
			}
			if !seen[name] {
				seen[name] = true
				out.Packages = append(out.Packages, p)
			}
		}
		sort.Slice(out.Packages, func(i, j int) bool { return out.Packages[i].Name < out.Packages[j].Name })
	}
	if len(channels) == 0 {
		return out, nil
	}
	want := map[string]bool{}
	for _, c := range channels {
		want[c] = true
	}
	found := map[string]bool{}
	var pkgs []*PackageGraph
	for _, p := range out.Packages {
		cp := *p
		cp.Channels = nil
		for _, c := range p.Channels {
			if want[c.Name] {
				found[c.Name] = true
				cp.Channels = append(cp.Channels, c)
			}
		}
		if len(cp.Channels) > 0 {
			pkgs = append(pkgs, &cp)
		}
	}
	for _, c := range channels {
		if found[c] {
			continue
		}
		if len(out.Packages) == 1 {
			return nil, out.Packages[0].UnknownChannel(c)
		}
		var all []string
		for _, p := range out.Packages {
			all = append(all, p.ChannelNames()...)
		}
		return nil, suggest.Unknown("channel", c, "in any of the packages", all)
	}
	out.Packages = pkgs
	return out, nil
}

// JSON forms, for `opm graph show -o json`.
type (
	// GraphJSON is a whole graph.
	GraphJSON struct {
		Packages []PackageJSON `json:"packages"`
	}
	// PackageJSON is one package.
	PackageJSON struct {
		Name           string        `json:"name"`
		DefaultChannel string        `json:"defaultChannel"`
		Deprecated     bool          `json:"deprecated"`
		Channels       []ChannelJSON `json:"channels"`
	}
	// ChannelJSON is one channel with its invariants and edges.
	ChannelJSON struct {
		Name       string      `json:"name"`
		Deprecated bool        `json:"deprecated"`
		Head       string      `json:"head,omitempty"`
		Chain      []string    `json:"replacesChain"`
		Stranded   []string    `json:"stranded"`
		Error      string      `json:"error,omitempty"`
		Warnings   []string    `json:"warnings,omitempty"`
		Entries    []EntryJSON `json:"entries"`
		Edges      []Edge      `json:"edges"`
	}
	// EntryJSON is one channel entry with its bundle's version.
	EntryJSON struct {
		Name       string   `json:"name"`
		Version    string   `json:"version,omitempty"`
		Deprecated bool     `json:"deprecated"`
		Replaces   string   `json:"replaces,omitempty"`
		Skips      []string `json:"skips,omitempty"`
		SkipRange  string   `json:"skipRange,omitempty"`
	}
)

// JSON returns the graph in its JSON form. Slices are never nil, so jq
// sees [] rather than null. It holds every edge: bound them first
// ([Graph.CheckEdges]) for a catalog that may be hostile.
func (g *Graph) JSON() GraphJSON {
	out := GraphJSON{Packages: []PackageJSON{}}
	for _, p := range g.Packages {
		pj := PackageJSON{Name: p.Name, DefaultChannel: p.DefaultChannel, Deprecated: p.Deprecated, Channels: []ChannelJSON{}}
		for _, c := range p.Channels {
			cj := ChannelJSON{Name: c.Name, Deprecated: c.Deprecated, Head: c.Head,
				Chain: nonNil(c.Chain), Stranded: nonNil(c.Stranded), Entries: []EntryJSON{}, Edges: c.Edges()}
			if cj.Edges == nil {
				cj.Edges = []Edge{}
			}
			if c.ChainErr != nil {
				cj.Error = c.ChainErr.Error()
			}
			for i, e := range c.Entries {
				if c.entries[e.Name] != i {
					continue
				}
				n := p.Nodes[e.Name]
				cj.Entries = append(cj.Entries, EntryJSON{Name: e.Name, Version: n.VersionString(), Deprecated: n.Deprecated,
					Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
				if err := c.RangeErrors[e.Name]; err != nil {
					cj.Warnings = append(cj.Warnings, fmt.Sprintf("entry %q: %v", e.Name, err))
				}
			}
			pj.Channels = append(pj.Channels, cj)
		}
		out.Packages = append(out.Packages, pj)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteDOT writes the graph in Graphviz DOT: a cluster per package and per
// channel, a node per entry labelled with its name and version, and an edge
// per replaces (solid), skips (dashed) and skipRange (dotted, labelled with
// the range), from the older bundle to the newer. The head has a bold
// border, stranded entries are orange, deprecated ones filled grey, and
// names that edges refer to without an entry in the channel are drawn
// dashed. Channels with more than MaxEdges edges are refused.
func WriteDOT(g *Graph, w io.Writer) error {
	if err := g.CheckEdges(MaxEdges); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph upgrades {\n")
	bw.WriteString("  rankdir=LR;\n")
	bw.WriteString("  node [shape=box, style=rounded];\n")
	for _, p := range g.Packages {
		fmt.Fprintf(bw, "  subgraph %s {\n", dotID("cluster_"+p.Name))
		fmt.Fprintf(bw, "    label=%s;\n", dotID(p.Name))
		if p.Deprecated {
			bw.WriteString("    style=filled; fillcolor=\"#989695\";\n")
		}
		for _, c := range p.Channels {
			writeDOTChannel(bw, p, c)
		}
		bw.WriteString("  }\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func writeDOTChannel(bw *bufio.Writer, p *PackageGraph, c *ChannelGraph) {
	prefix := p.Name + "/" + c.Name + "/"
	fmt.Fprintf(bw, "    subgraph %s {\n", dotID("cluster_"+p.Name+"/"+c.Name))
	label := c.Name
	if c.ChainErr != nil {
		label += "\n" + c.ChainErr.Error()
	}
	fmt.Fprintf(bw, "      label=%s;\n", dotID(label))
	if c.Deprecated {
		bw.WriteString("      style=filled; fillcolor=\"#DCD0FF\";\n")
	}
	stranded := map[string]bool{}
	for _, s := range c.Stranded {
		stranded[s] = true
	}
	drawn := map[string]bool{}
	node := func(name string) {
		if drawn[name] {
			return
		}
		drawn[name] = true
		n := p.Nodes[name]
		label := name
		if n != nil && n.HasVersion {
			label += "\n" + n.Version.String()
		}
		var attrs []string
		attrs = append(attrs, "label="+dotID(label))
		var styles []string
		switch {
		case !c.Has(name):
			styles = append(styles, "dashed")
		case stranded[name]:
			attrs = append(attrs, `color=orange`)
		}
		if name == c.Head {
			attrs = append(attrs, "penwidth=2")
		}
		if n != nil && n.Deprecated {
			styles = append(styles, "filled")
			attrs = append(attrs, `fillcolor="#E8960F"`)
		}
		if len(styles) > 0 {
			attrs = append(attrs, "style="+dotID("rounded,"+strings.Join(styles, ",")))
		}
		fmt.Fprintf(bw, "      %s [%s];\n", dotID(prefix+name), strings.Join(attrs, ", "))
	}
	for i, e := range c.Entries {
		if c.entries[e.Name] == i {
			node(e.Name)
		}
	}
	edges := c.Edges()
	for _, e := range edges {
		node(e.From)
	}
	for _, e := range edges {
		var attrs string
		switch e.Kind {
		case KindReplaces:
			attrs = `label="replaces"`
		case KindSkips:
			attrs = `label="skips", style=dashed, color=red`
		case KindSkipRange:
			attrs = fmt.Sprintf("label=%s, style=dotted, color=blue", dotID("skipRange("+e.Range+")"))
		}
		fmt.Fprintf(bw, "      %s -> %s [%s];\n", dotID(prefix+e.From), dotID(prefix+e.To), attrs)
	}
	bw.WriteString("    }\n")
}

// DOTString quotes s as WriteDOT quotes its IDs and labels, for statements
// added to its output (opm graph show --olm-v1 marks nodes).
func DOTString(s string) string { return dotID(s) }

// dotID quotes s as a DOT string: backslashes and double quotes escaped,
// newlines as \n.
func dotID(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
