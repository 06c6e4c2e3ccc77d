package view

import (
	"context"
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
	// ctx is the request's: drawing stops when the client leaves.
	ctx       context.Context
	semantics graph.Semantics
	page      int // from 1
	limit     int
	next      *graph.OpenShiftVersion
}

// channelGraph builds the drawn graph of channels of p (one, or several
// unioned). Only the edges between the nodes of the page are built: a
// channel whose skipRanges cover each other has quadratically many edges
// (millions for a few thousand entries), which are counted, up to
// graph.MaxEdges, but never all held.
func channelGraph(p *pkgIndex, chans []*graph.ChannelGraph, o graphOptions) *GraphData {
	out := &GraphData{Package: p.name, Semantics: string(o.semantics), Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	// The nodes: the entries, and the names their replaces and skips
	// name (the ends of every edge: a skipRange edge joins two entries).
	names := map[string]bool{}
	skipped := map[string]bool{}
	for _, ch := range chans {
		out.Channels = append(out.Channels, ch.Name)
		for _, e := range ch.Entries {
			names[e.Name] = true
			if e.Replaces != "" {
				names[e.Replaces] = true
			}
			for _, s := range e.Skips {
				if s != "" {
					skipped[s] = true
					names[s] = true
				}
			}
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
	out.TotalNodes = len(nodes)
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
	rank := make(map[string]int, len(nodes))
	for i, n := range nodes {
		rank[n.Name] = i
	}

	// The edges between shown nodes, in two passes over them. The first
	// counts them and finds, of each entry's skipRange edges, the one from
	// the newest version: it ranks the layout with replaces and skips. The
	// second keeps every layout edge and, of the others, as many as fit
	// in MaxEdges, in their order.
	type key struct {
		from, to string
		kind     graph.EdgeKind
	}
	visit := func(fn func(ch *graph.ChannelGraph, e graph.Edge)) {
		seen := map[key]bool{}
		n := 0
		for _, ch := range chans {
			ch.VisitEdgesAmong(func(n string) bool { return shown[n] }, func(e graph.Edge) bool {
				if n++; n%1024 == 0 && canceled(o.ctx) {
					return false
				}
				k := key{e.From, e.To, e.Kind}
				if !seen[k] {
					seen[k] = true
					fn(ch, e)
				}
				return true
			})
		}
	}
	within, layout := 0, 0
	bestRange := map[string]string{} // entry -> the newest version its range covers
	visit(func(_ *graph.ChannelGraph, e graph.Edge) {
		within++
		if e.Kind != graph.KindSkipRange {
			layout++
		} else if b, ok := bestRange[e.To]; !ok || rank[e.From] < rank[b] {
			if !ok {
				layout++
			}
			bestRange[e.To] = e.From
		}
	})
	others := MaxEdges - layout
	visit(func(ch *graph.ChannelGraph, e graph.Edge) {
		isLayout := e.Kind != graph.KindSkipRange || bestRange[e.To] == e.From
		if !isLayout {
			if others <= 0 {
				return
			}
			others--
		}
		out.Edges = append(out.Edges, GraphEdge{From: e.From, To: e.To, Kind: e.Kind, Range: e.Range, Layout: isLayout,
			Classic: ch.ChainIndex(e.To) >= 0, V1: v1Upgrade(p.graph.Nodes[e.From], p.graph.Nodes[e.To])})
	})

	// Every edge: with every node shown, those just visited. Otherwise
	// each channel's, counted no further than graph.MaxEdges; the
	// channels of a union share edges, so their sum is an upper bound.
	total, over, upTo := within, false, false
	if hi-lo < len(nodes) {
		total = 0
		for _, ch := range chans {
			if canceled(o.ctx) {
				break
			}
			n := ch.EdgeCount(graph.MaxEdges)
			over = over || n > graph.MaxEdges
			total += n
		}
		upTo = len(chans) > 1
	}
	out.TotalEdges = total

	var notes []string
	if out.Pages > 1 {
		notes = append(notes, fmt.Sprintf("%d of %d nodes shown (page %d of %d, newest first)", hi-lo, len(nodes), out.Page, out.Pages))
	}
	switch {
	case over:
		notes = append(notes, fmt.Sprintf("more than %d edges in all (its skipRanges cover each other's versions); only those between the shown nodes are drawn", graph.MaxEdges))
	case upTo && total > within:
		notes = append(notes, fmt.Sprintf("up to %d edges to nodes on other pages not drawn", total-within))
	case total > within:
		notes = append(notes, fmt.Sprintf("%d edges to nodes on other pages not drawn", total-within))
	}
	if within > len(out.Edges) {
		notes = append(notes, fmt.Sprintf("%d of %d edges between the shown nodes not drawn (at most %d are; skipRange edges go first)", within-len(out.Edges), within, MaxEdges))
	}
	out.Note = strings.Join(notes, "; ")
	return out
}

// canceled reports whether a request's client has left (a nil context
// never ends).
func canceled(ctx context.Context) bool { return ctx != nil && ctx.Err() != nil }

// v1Upgrade reports whether OLM v1 may take an edge: the target's version
// is above the source's (unknown versions do not forbid it).
func v1Upgrade(from, to *graph.Node) bool {
	if from == nil || to == nil || !from.HasVersion || !to.HasVersion {
		return true
	}
	return graph.CompareVersions(to, from) > 0
}
