package view

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// GraphData is a drawn upgrade graph: the nodes and edges of one channel
// (or the union of a few, for OLM v1 paths and diffs), at most Limit nodes
// at a time, newest first.
type GraphData struct {
	Package            string   `json:"package"`
	Channels           []string `json:"channels"`
	Semantics          string   `json:"semantics"`
	Head               string   `json:"head,omitempty"`
	Default            bool     `json:"default"`
	Deprecated         bool     `json:"deprecated"`
	DeprecationMessage string   `json:"deprecationMessage,omitempty"`
	// Error: the channel has no single head or a replaces cycle (OLM
	// classic has no chain to follow). Warnings: skipRanges that do not
	// parse.
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`

	// TotalNodes and TotalEdges count the whole graph; Page (from 1) of
	// Pages shows at most Limit nodes, and the edges between them (at most
	// MaxEdges). Note says what was left out.
	TotalNodes int    `json:"totalNodes"`
	TotalEdges int    `json:"totalEdges"`
	Page       int    `json:"page"`
	Pages      int    `json:"pages"`
	Limit      int    `json:"limit"`
	Note       string `json:"note,omitempty"`

	// Next is the cluster's next OpenShift minor version when a cluster
	// version was given; nodes then say whether they block it.
	Next string `json:"nextOpenShift,omitempty"`
}

// GraphNode is a channel entry, or a name that replaces or skips refer to
// without an entry (Entry false).
type GraphNode struct {
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Bundle     bool   `json:"bundle"`
	Entry      bool   `json:"entry"`
	Deprecated bool   `json:"deprecated"`
	Head       bool   `json:"head"`
	// Chain is the place on the replaces chain (0 = head), -1 off it.
	Chain    int  `json:"chain"`
	Skipped  bool `json:"skipped"`
	Stranded bool `json:"stranded"`
	// Blocks: the bundle's olm.maxOpenShiftVersion blocks the cluster's
	// next minor version (only with a cluster version).
	Blocks bool `json:"blocks,omitempty"`
	// Diff is "added" or "removed" on a diff graph; Lost is the reason a
	// bundle lost its upgrade path to the head.
	Diff string `json:"diff,omitempty"`
	Lost string `json:"lost,omitempty"`
}

// GraphEdge is an upgrade edge, from the older bundle to the entry that
// declares it.
type GraphEdge struct {
	From  string         `json:"from"`
	To    string         `json:"to"`
	Kind  graph.EdgeKind `json:"kind"`
	Range string         `json:"range,omitempty"`
	// Classic: OLM classic can follow it (its target is on the replaces
	// chain). V1: OLM v1 can (its target's version is higher).
	Classic bool `json:"classic"`
	V1      bool `json:"v1"`
	// Layout: the edge ranks the graph (replaces, skips, and of each
	// entry's skipRange edges the one from the newest version); the others
	// are drawn over the layout.
	Layout bool   `json:"layout"`
	Diff   string `json:"diff,omitempty"`
}

// Graph limits: nodes drawn at once (a page), and edges drawn at once.
const (
	DefaultNodeLimit = 250
	MaxNodeLimit     = 1000
	MaxEdges         = 4000
)

// graphOptions select what a graph shows.
type graphOptions struct {
	semantics graph.Semantics
	page      int // from 1
	limit     int
	next      *graph.OpenShiftVersion
}

// channelGraph builds the drawn graph of channels of p (one, or several
// unioned).
func channelGraph(p *pkgIndex, chans []*graph.ChannelGraph, o graphOptions) *GraphData {
	out := &GraphData{Package: p.name, Semantics: string(o.semantics), Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	names := map[string]bool{}
	skipped := map[string]bool{}
	type key struct {
		from, to string
		kind     graph.EdgeKind
	}
	var edges []GraphEdge
	seen := map[key]bool{}
	for _, ch := range chans {
		out.Channels = append(out.Channels, ch.Name)
		for _, e := range ch.Entries {
			names[e.Name] = true
			for _, s := range e.Skips {
				skipped[s] = true
			}
		}
		for _, e := range ch.Edges() {
			k := key{e.From, e.To, e.Kind}
			if seen[k] {
				continue
			}
			seen[k] = true
			names[e.From] = true
			edges = append(edges, GraphEdge{From: e.From, To: e.To, Kind: e.Kind, Range: e.Range,
				Classic: ch.ChainIndex(e.To) >= 0, V1: v1Upgrade(p.graph.Nodes[e.From], p.graph.Nodes[e.To])})
		}
		for _, err := range ch.RangeErrors {
			out.Warnings = append(out.Warnings, err.Error())
		}
	}
	sort.Strings(out.Warnings)
	if len(chans) == 1 {
		ch := chans[0]
		out.Head, out.Default = ch.Head, ch.Name == p.defaultChannel()
		out.DeprecationMessage, out.Deprecated = p.deprecation(declcfg.SchemaChannel, ch.Name)
		if ch.ChainErr != nil {
			out.Error = ch.ChainErr.Error()
		}
	}
	if o.next != nil {
		out.Next = o.next.String()
	}

	// Nodes, newest first, paged.
	nodes := make([]*graph.Node, 0, len(names))
	for n := range names {
		if gn := p.graph.Nodes[n]; gn != nil {
			nodes = append(nodes, gn)
		} else {
			nodes = append(nodes, &graph.Node{Name: n})
		}
	}
	sortNewestFirst(nodes)
	out.TotalNodes, out.TotalEdges = len(nodes), len(edges)
	out.Limit = o.limit
	if out.Limit <= 0 {
		out.Limit = DefaultNodeLimit
	}
	out.Limit = min(out.Limit, MaxNodeLimit)
	out.Pages = max(1, (len(nodes)+out.Limit-1)/out.Limit)
	out.Page = min(max(o.page, 1), out.Pages)
	lo := (out.Page - 1) * out.Limit
	hi := min(lo+out.Limit, len(nodes))
	shown := map[string]bool{}
	for _, n := range nodes[lo:hi] {
		shown[n.Name] = true
		gn := GraphNode{Name: n.Name, Version: n.VersionString(), Bundle: n.HasBundle, Deprecated: n.Deprecated, Chain: -1, Skipped: skipped[n.Name]}
		for _, ch := range chans {
			if ch.Has(n.Name) {
				gn.Entry = true
				if i := ch.ChainIndex(n.Name); i >= 0 && (gn.Chain < 0 || i < gn.Chain) {
					gn.Chain = i
				}
			}
			if ch.Head == n.Name {
				gn.Head = true
			}
		}
		if len(chans) == 1 && gn.Entry && gn.Chain < 0 && !gn.Skipped && chans[0].ChainErr == nil {
			gn.Stranded = true
		}
		if o.next != nil && n.HasBundle {
			gn.Blocks, _ = n.Blocks(*o.next)
		}
		out.Nodes = append(out.Nodes, gn)
	}

	// Edges between shown nodes; of each entry's skipRange edges, the one
	// from the newest version ranks the layout.
	rank := map[string]int{}
	for i, n := range nodes {
		rank[n.Name] = i
	}
	var kept []GraphEdge
	omitted := 0
	bestRange := map[string]int{} // entry -> index in kept of its layout skipRange edge
	for _, e := range edges {
		if !shown[e.From] || !shown[e.To] {
			omitted++
			continue
		}
		switch e.Kind {
		case graph.KindSkipRange:
			if i, ok := bestRange[e.To]; !ok || rank[e.From] < rank[kept[i].From] {
				if ok {
					kept[i].Layout = false
				}
				e.Layout = true
				bestRange[e.To] = len(kept)
			}
		default:
			e.Layout = true
		}
		kept = append(kept, e)
	}
	var notes []string
	if out.Pages > 1 {
		notes = append(notes, fmt.Sprintf("%d of %d nodes shown (page %d of %d, newest first)", hi-lo, len(nodes), out.Page, out.Pages))
	}
	if omitted > 0 {
		notes = append(notes, fmt.Sprintf("%d edges to nodes on other pages not drawn", omitted))
	}
	if len(kept) > MaxEdges {
		// Keep the edges that rank the layout, then as many others as fit.
		var cut []GraphEdge
		for _, layout := range []bool{true, false} {
			for _, e := range kept {
				if e.Layout == layout && len(cut) < MaxEdges {
					cut = append(cut, e)
				}
			}
		}
		notes = append(notes, fmt.Sprintf("%d of %d edges between the shown nodes not drawn (at most %d are; skipRange edges go first)", len(kept)-len(cut), len(kept), MaxEdges))
		kept = cut
	}
	out.Edges = append(out.Edges, kept...)
	out.Note = strings.Join(notes, "; ")
	return out
}

// v1Upgrade reports whether OLM v1 may take an edge: the target's version
// is above the source's (unknown versions do not forbid it).
func v1Upgrade(from, to *graph.Node) bool {
	if from == nil || to == nil || !from.HasVersion || !to.HasVersion {
		return true
	}
	return graph.CompareVersions(to, from) > 0
}
