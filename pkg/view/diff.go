package view

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/graph"
)

// The diff pages: `opm catalog diff`'s report (pkg/compose, the same code),
// and per changed channel the union of its OLD and NEW graphs with what was
// added and removed and the bundles that lost their upgrade path.

func (s *Server) oldNew() (*Catalog, *Catalog) { return s.cats[0], s.cats[1] }

func (s *Server) diffPage(*http.Request) (*page, error) {
	old, cur := s.oldNew()
	pg := &page{Title: "diff", Data: s.diff, Crumbs: []crumb{{"diff", "/"}, {"old catalog", s.url(old)}, {"new catalog", s.url(cur)}}}
	return pg, nil
}

// DiffGraphData is a channel drawn from both sides of a diff.
type DiffGraphData struct {
	*GraphData
	Old  string             `json:"old"`
	New  string             `json:"new"`
	Lost []compose.LostPath `json:"lostPaths"`
	// LostGroups are the lost paths by reason, for the page: a removed
	// entry often strands many bundles for one reason.
	LostGroups []LostGroup `json:"-"`
}

// LostGroup is the bundles that lost their upgrade path for one reason.
type LostGroup struct {
	Reason string
	From   []compose.BundleRef
}

// groupLost groups lost paths by reason, in the order reasons first come.
func groupLost(lost []compose.LostPath) []LostGroup {
	var out []LostGroup
	at := map[string]int{}
	for _, lp := range lost {
		i, ok := at[lp.Reason]
		if !ok {
			i = len(out)
			at[lp.Reason] = i
			out = append(out, LostGroup{Reason: lp.Reason})
		}
		out[i].From = append(out[i].From, lp.From)
	}
	return out
}

func (s *Server) diffChannelPage(r *http.Request) (*page, error) {
	old, cur := s.oldNew()
	name, chName := pathValue(r, "pkg"), pathValue(r, "ch")
	op, np := old.pkg(name), cur.pkg(name)
	if op == nil && np == nil {
		return nil, unknown(suggest.Unknown("package", name, "in either catalog", append(slices.Clone(old.names), cur.names...)))
	}
	var oc, nc *graph.ChannelGraph
	if op != nil {
		oc = op.graph.Channel(chName)
	}
	if np != nil {
		nc = np.graph.Channel(chName)
	}
	if oc == nil && nc == nil {
		var chans []string
		for _, p := range []*pkgIndex{op, np} {
			if p != nil {
				chans = append(chans, p.graph.ChannelNames()...)
			}
		}
		return nil, unknown(suggest.Unknown("channel", chName, fmt.Sprintf("of package %q in either catalog", name), chans))
	}
	o, err := graphQuery(r)
	if err != nil {
		return nil, err
	}
	o.semantics = s.diff.Semantics
	o.limit, o.page = MaxNodeLimit, 1
	var og, ng *GraphData
	if oc != nil {
		og = channelGraph(op, []*graph.ChannelGraph{oc}, o)
	}
	if nc != nil {
		ng = channelGraph(np, []*graph.ChannelGraph{nc}, o)
	}
	d := &DiffGraphData{GraphData: mergeDiff(og, ng), Old: old.Source, New: cur.Source, Lost: []compose.LostPath{}}
	for _, pd := range s.diff.Packages {
		if pd.Name != name {
			continue
		}
		for _, lp := range pd.LostPaths {
			if lp.Channel == chName {
				d.Lost = append(d.Lost, lp)
			}
		}
	}
	d.LostGroups = groupLost(d.Lost)
	lost := map[string]string{}
	for _, lp := range d.Lost {
		lost[lp.From.Name] = lp.Reason
	}
	for i := range d.Nodes {
		d.Nodes[i].Lost = lost[d.Nodes[i].Name]
	}
	pg := &page{Title: "diff: " + name + " / " + chName, Data: d}
	pg.Crumbs = []crumb{{"diff", "/"}, {name + " / " + chName, r.URL.EscapedPath()}}
	pg.Graph = "/api" + r.URL.RequestURI()
	pg.Bundles = s.url(cur, "packages", name, "bundles") + "/"
	pg.OldBundles = s.url(old, "packages", name, "bundles") + "/"
	return pg, nil
}

// mergeDiff unions the OLD and NEW graphs of a channel: what only OLD has
// is "removed", what only NEW has "added". Flags come from NEW where both
// have a node or edge.
func mergeDiff(og, ng *GraphData) *GraphData {
	switch {
	case og == nil:
		mark(ng, "added")
		return ng
	case ng == nil:
		mark(og, "removed")
		return og
	}
	out := *ng
	out.Nodes = append([]GraphNode(nil), ng.Nodes...)
	out.Edges = append([]GraphEdge(nil), ng.Edges...)
	oldNodes := map[string]bool{}
	for _, n := range og.Nodes {
		oldNodes[n.Name] = true
	}
	newNodes := map[string]bool{}
	for i, n := range out.Nodes {
		newNodes[n.Name] = true
		if !oldNodes[n.Name] {
			out.Nodes[i].Diff = "added"
		}
	}
	for _, n := range og.Nodes {
		if !newNodes[n.Name] {
			n.Diff, n.Head = "removed", false
			out.Nodes = append(out.Nodes, n)
		}
	}
	type key struct {
		from, to string
		kind     graph.EdgeKind
	}
	oldEdges := map[key]bool{}
	for _, e := range og.Edges {
		oldEdges[key{e.From, e.To, e.Kind}] = true
	}
	newEdges := map[key]bool{}
	for i, e := range out.Edges {
		k := key{e.From, e.To, e.Kind}
		newEdges[k] = true
		if !oldEdges[k] {
			out.Edges[i].Diff = "added"
		}
	}
	for _, e := range og.Edges {
		if !newEdges[key{e.From, e.To, e.Kind}] {
			e.Diff = "removed"
			out.Edges = append(out.Edges, e)
		}
	}
	out.TotalNodes, out.TotalEdges = len(out.Nodes), len(out.Edges)
	if og.Note != "" {
		out.Note += " (old: " + og.Note + ")"
	}
	return &out
}

func mark(g *GraphData, diff string) {
	for i := range g.Nodes {
		g.Nodes[i].Diff = diff
	}
	for i := range g.Edges {
		g.Edges[i].Diff = diff
	}
}
