package graph

import (
	"fmt"
	"sort"
	"sync"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/versionrange"
)

// EdgeKind says which field of a channel entry makes an upgrade edge.
type EdgeKind string

// Edge kinds, in the order upstream draws them.
const (
	KindSkips     EdgeKind = "skips"
	KindSkipRange EdgeKind = "skipRange"
	KindReplaces  EdgeKind = "replaces"
)

// Edge is an upgrade from From (the older bundle) to To (the channel entry
// that declares the edge).
type Edge struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Kind  EdgeKind `json:"kind"`
	Range string   `json:"range,omitempty"` // the skipRange, for skipRange edges
}

// Node is a bundle of a package, or a name that replaces or skips refers to
// without any bundle carrying it (HasVersion false).
type Node struct {
	Name       string
	Version    semver.Version
	HasVersion bool
	// HasBundle is set for the bundles of the catalog (and clear for names
	// that only edges mention, and for installed bundles the catalog
	// lacks).
	HasBundle bool
	// Release is the olm.package property's release, when set.
	Release    string
	Deprecated bool
	Pos        declcfg.Position

	// MaxOpenShift is the bundle's olm.maxOpenShiftVersion (nil when it
	// has none); MaxOpenShiftErr says why it is malformed.
	MaxOpenShift    *OpenShiftVersion
	MaxOpenShiftErr error

	// rel is what OLM v1 orders equal versions by: Release, or the build
	// metadata (see compareV1).
	rel []string
}

// newNode returns a versioned node with its OLM v1 order key.
func newNode(name string, v semver.Version, release string) *Node {
	return &Node{Name: name, Version: v, HasVersion: true, Release: release, rel: releaseOf(v, release)}
}

// VersionString is the node's version, or "" when it has none.
func (n *Node) VersionString() string {
	if !n.HasVersion {
		return ""
	}
	return n.Version.String()
}

// Label is "name (version)", or the name alone for nodes without a version.
func (n *Node) Label() string {
	switch {
	case n.Name == "":
		return n.Version.String()
	case !n.HasVersion:
		return n.Name
	}
	return fmt.Sprintf("%s (%s)", n.Name, n.Version)
}

// ChannelGraph is one channel with its derived upgrade graph.
type ChannelGraph struct {
	Package    string
	Name       string
	Entries    []Entry
	Deprecated bool
	Pos        declcfg.Position

	// Head and Chain are the channel head and the replaces chain from it;
	// ChainErr is set (and they are empty) when the channel has no single
	// head or its chain has a cycle.
	Head     string
	Chain    []string
	ChainErr error
	Stranded []string

	// baseEdges are the replaces and skips edges, in entry order (of To);
	// Edges adds the skipRange edges on demand. baseFrom indexes them by
	// From.
	baseEdges []Edge
	baseFrom  map[string][]int
	// RangeErrors holds skipRanges that do not parse, by entry name; such
	// a range makes no edge.
	RangeErrors map[string]error

	entries   map[string]int // name -> index in Entries
	ranges    map[string]*versionrange.SkipRange
	chainPos  map[string]int
	skippedBy map[string]bool

	// Reverse index for successor queries: entries (by index, first
	// occurrence of each name only) by the name they replace or skip, and
	// the entries with a valid skipRange.
	byReplaces map[string][]int
	bySkips    map[string][]int
	ranged     []int
	rangeAt    []*versionrange.SkipRange // by entry index
	nodeAt     []*Node                   // by entry index (nil for a repeated name)

	mu    sync.Mutex
	succs map[string][]succ // successors of catalog nodes, by name

	// The skipRange indexes (rangeindex.go), built on first use: the
	// versioned entries by version, and the ranges by the versions they
	// hold.
	indexOnce sync.Once
	byVersion *versionrange.Index
	byRange   *rangeIndex
}

// indexes returns the channel's skipRange indexes.
func (c *ChannelGraph) indexes() (*versionrange.Index, *rangeIndex) {
	c.indexOnce.Do(func() {
		c.byVersion = versionrange.NewIndex(c.versions(), c.versioned)
		c.byRange = newRangeIndex(c.ranged, c.rangeAt)
	})
	return c.byVersion, c.byRange
}

// versions returns the entries' versions, by entry index (zero for
// entries without one).
func (c *ChannelGraph) versions() []semver.Version {
	vers := make([]semver.Version, len(c.nodeAt))
	for j, n := range c.nodeAt {
		if n != nil {
			vers[j] = n.Version
		}
	}
	return vers
}

// versioned reports whether entry j is the first of its name and has a
// version: the entries skipRange edges join.
func (c *ChannelGraph) versioned(j int) bool {
	n := c.nodeAt[j]
	return n != nil && n.HasVersion
}

// Has reports whether name is an entry of the channel.
func (c *ChannelGraph) Has(name string) bool {
	_, ok := c.entries[name]
	return ok
}

// Entry returns the entry called name.
func (c *ChannelGraph) Entry(name string) (Entry, bool) {
	i, ok := c.entries[name]
	if !ok {
		return Entry{}, false
	}
	return c.Entries[i], true
}

// ChainIndex is name's position on the replaces chain (0 = head), or -1.
func (c *ChannelGraph) ChainIndex(name string) int {
	if i, ok := c.chainPos[name]; ok {
		return i
	}
	return -1
}

// PackageGraph is the upgrade graph of one package.
type PackageGraph struct {
	Name           string
	DefaultChannel string
	Deprecated     bool
	// Nodes holds every bundle of the package and every name its channels'
	// replaces and skips refer to.
	Nodes    map[string]*Node
	Channels []*ChannelGraph // sorted by name
}

// Channel returns the channel called name, or nil.
func (p *PackageGraph) Channel(name string) *ChannelGraph {
	for _, c := range p.Channels {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ChannelNames returns the channel names, sorted.
func (p *PackageGraph) ChannelNames() []string {
	out := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = c.Name
	}
	return out
}

// UnknownChannel is the error for a channel the package does not have.
func (p *PackageGraph) UnknownChannel(name string) *suggest.UnknownError {
	return suggest.Unknown("channel", name, fmt.Sprintf("of package %q", p.Name), p.ChannelNames())
}

// UnknownBundle is the error for a bundle the package does not have.
func (p *PackageGraph) UnknownBundle(name string) *suggest.UnknownError {
	var names []string
	for _, n := range p.Nodes {
		if n.HasBundle {
			names = append(names, n.Name)
		}
	}
	return suggest.Unknown("bundle", name, fmt.Sprintf("of package %q", p.Name), names)
}

// Graph holds the upgrade graphs of every package of a catalog.
type Graph struct {
	Packages []*PackageGraph // sorted by name
}

// Package returns the package called name, or nil.
func (g *Graph) Package(name string) *PackageGraph {
	i := sort.Search(len(g.Packages), func(i int) bool { return g.Packages[i].Name >= name })
	if i < len(g.Packages) && g.Packages[i].Name == name {
		return g.Packages[i]
	}
	return nil
}

// PackageNames returns the package names, sorted.
func (g *Graph) PackageNames() []string {
	out := make([]string, len(g.Packages))
	for i, p := range g.Packages {
		out[i] = p.Name
	}
	return out
}

// UnknownPackage is the error for a package the catalog does not have.
func (g *Graph) UnknownPackage(name string) *suggest.UnknownError {
	return suggest.Unknown("package", name, "", g.PackageNames())
}

// New builds the upgrade graphs of cfg. Every package that has a blob,
// channel or bundle gets a graph. Bundle versions come from each bundle's
// single olm.package property; a bundle without a valid one is an error
// naming the bundle and where it was loaded from. Channel invariants
// (heads, cycles) are not errors here: they are recorded on each channel.
func New(cfg *declcfg.DeclarativeConfig) (*Graph, error) {
	pkgs := map[string]*PackageGraph{}
	get := func(name string) *PackageGraph {
		p := pkgs[name]
		if p == nil {
			p = &PackageGraph{Name: name, Nodes: map[string]*Node{}}
			pkgs[name] = p
		}
		return p
	}
	for _, p := range cfg.Packages {
		get(p.Name).DefaultChannel = p.DefaultChannel
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		p := get(b.Package)
		if _, dup := p.Nodes[b.Name]; dup {
			continue
		}
		v, release, err := bundleVersionRelease(b)
		if err != nil {
			return nil, fmt.Errorf("%s: package %q: %w", b.Pos, b.Package, err)
		}
		n := newNode(b.Name, v, release)
		n.HasBundle, n.Pos = true, b.Pos
		n.MaxOpenShift, n.MaxOpenShiftErr = maxOpenShiftOf(b)
		p.Nodes[b.Name] = n
	}
	for _, c := range cfg.Channels {
		p := get(c.Package)
		if p.Channel(c.Name) != nil {
			continue // duplicate channel: the first wins (validation reports it)
		}
		cg := &ChannelGraph{Package: c.Package, Name: c.Name, Pos: c.Pos}
		for _, e := range c.Entries {
			cg.Entries = append(cg.Entries, Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
			for _, n := range append([]string{e.Name, e.Replaces}, e.Skips...) {
				if n != "" && p.Nodes[n] == nil {
					p.Nodes[n] = &Node{Name: n}
				}
			}
		}
		p.Channels = append(p.Channels, cg)
	}
	for _, d := range cfg.Deprecations {
		p := pkgs[d.Package]
		if p == nil {
			continue
		}
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				p.Deprecated = true
			case declcfg.SchemaChannel:
				if c := p.Channel(e.Reference.Name); c != nil {
					c.Deprecated = true
				}
			case declcfg.SchemaBundle:
				if n := p.Nodes[e.Reference.Name]; n != nil {
					n.Deprecated = true
				}
			}
		}
	}
	g := &Graph{}
	for _, p := range pkgs {
		sort.Slice(p.Channels, func(i, j int) bool { return p.Channels[i].Name < p.Channels[j].Name })
		for _, c := range p.Channels {
			c.build(p)
		}
		g.Packages = append(g.Packages, p)
	}
	sort.Slice(g.Packages, func(i, j int) bool { return g.Packages[i].Name < g.Packages[j].Name })
	return g, nil
}

// build derives the channel's head, chain, stranded entries and edges.
func (c *ChannelGraph) build(p *PackageGraph) {
	ch := &Channel{Package: c.Package, Name: c.Name, Entries: c.Entries}
	c.entries = ch.index()
	c.skippedBy = ch.skipped()
	c.ranges = map[string]*versionrange.SkipRange{}
	c.chainPos = map[string]int{}
	if head, err := ch.Head(); err != nil {
		c.ChainErr = err
	} else {
		c.Head = head
		if chain, err := ch.ReplacesChain(); err != nil {
			c.ChainErr = err
		} else {
			c.Chain = chain
			for i, n := range chain {
				c.chainPos[n] = i
			}
			c.Stranded, _ = ch.Stranded()
		}
	}
	c.byReplaces = map[string][]int{}
	c.bySkips = map[string][]int{}
	c.baseFrom = map[string][]int{}
	c.succs = map[string][]succ{}
	c.rangeAt = make([]*versionrange.SkipRange, len(c.Entries))
	c.nodeAt = make([]*Node, len(c.Entries))
	for i, e := range c.Entries {
		if c.entries[e.Name] != i {
			continue // duplicate entry name: the first wins
		}
		c.nodeAt[i] = p.Nodes[e.Name]
		if e.Replaces != "" {
			c.byReplaces[e.Replaces] = append(c.byReplaces[e.Replaces], i)
		}
		for j, s := range e.Skips {
			if s != "" && !contains(e.Skips[:j], s) {
				c.bySkips[s] = append(c.bySkips[s], i)
			}
		}
		if e.Replaces != "" {
			c.addBase(Edge{From: e.Replaces, To: e.Name, Kind: KindReplaces})
		}
		for _, s := range e.Skips {
			if s != "" {
				c.addBase(Edge{From: s, To: e.Name, Kind: KindSkips})
			}
		}
		if e.SkipRange == "" {
			continue
		}
		r, err := versionrange.ParseSkipRange(e.SkipRange)
		if err != nil {
			if c.RangeErrors == nil {
				c.RangeErrors = map[string]error{}
			}
			c.RangeErrors[e.Name] = fmt.Errorf("invalid skipRange %q: %w", e.SkipRange, err)
			continue
		}
		c.ranges[e.Name] = r
		c.rangeAt[i] = r
		c.ranged = append(c.ranged, i)
	}
	// skipRange edges are not built here: a channel of N entries whose
	// every skipRange covers every other version has N² of them (a 1 MB
	// catalog, gigabytes of edges), while a query needs the few that leave
	// the bundles it visits. Queries test the ranges of the bundles they
	// visit; Edges builds them all for the commands that draw the graph,
	// after EdgeCount has bounded them.
}

// addBase adds a replaces or skips edge.
func (c *ChannelGraph) addBase(e Edge) {
	c.baseFrom[e.From] = append(c.baseFrom[e.From], len(c.baseEdges))
	c.baseEdges = append(c.baseEdges, e)
}

// Edges returns every edge of the channel: the replaces and skips edges
// in entry order (of To), then the skipRange edges by the entry that has
// the range, each from every other entry whose version it covers, in
// entry order. They are built on each call; a channel can have
// quadratically many skipRange edges, so a caller with an untrusted
// catalog bounds them first with EdgeCount or [Graph.CheckEdges].
func (c *ChannelGraph) Edges() []Edge {
	out := append([]Edge(nil), c.baseEdges...)
	c.rangeEdges(func(i, j int) bool {
		e := c.Entries[i]
		out = append(out, Edge{From: c.nodeAt[j].Name, To: e.Name, Kind: KindSkipRange, Range: e.SkipRange})
		return true
	})
	return out
}

// EdgesFrom returns the edges of Edges whose From is name, in the same
// order, without building the others.
func (c *ChannelGraph) EdgesFrom(name string) []Edge {
	var out []Edge
	for _, k := range c.baseFrom[name] {
		out = append(out, c.baseEdges[k])
	}
	j, ok := c.entries[name]
	if !ok || !c.versioned(j) {
		return out
	}
	_, byRange := c.indexes()
	for _, i := range byRange.holding(nil, c.nodeAt[j].Version, c.rangeAt) {
		if i != j {
			e := c.Entries[i]
			out = append(out, Edge{From: name, To: e.Name, Kind: KindSkipRange, Range: e.SkipRange})
		}
	}
	return out
}

// VisitEdgesAmong calls fn for the edges of Edges whose two ends satisfy
// in, in Edges' order, until fn returns false. Only edges between such
// names are built: each skipRange of an entry that satisfies in is
// searched among the others that do (a view of a few hundred entries of a
// channel of thousands).
func (c *ChannelGraph) VisitEdgesAmong(in func(name string) bool, fn func(Edge) bool) {
	for _, e := range c.baseEdges {
		if in(e.From) && in(e.To) && !fn(e) {
			return
		}
	}
	if len(c.ranged) == 0 {
		return
	}
	all, _ := c.indexes()
	among := versionrange.NewIndex(all.Versions(), func(j int) bool { return c.versioned(j) && in(c.nodeAt[j].Name) })
	var hits []int
	for _, i := range c.ranged {
		e := c.Entries[i]
		if !in(e.Name) {
			continue
		}
		hits = among.Members(hits[:0], c.rangeAt[i], rangeTests)
		for _, j := range hits {
			if j != i && !fn(Edge{From: c.nodeAt[j].Name, To: e.Name, Kind: KindSkipRange, Range: e.SkipRange}) {
				return
			}
		}
	}
}

// rangeEdges calls fn for every skipRange edge, from entry j to entry i,
// in Edges' order, until fn returns false.
func (c *ChannelGraph) rangeEdges(fn func(i, j int) bool) {
	if len(c.ranged) == 0 {
		return
	}
	byVersion, _ := c.indexes()
	var hits []int
	for _, i := range c.ranged {
		hits = byVersion.Members(hits[:0], c.rangeAt[i], rangeTests)
		for _, j := range hits {
			if j != i && !fn(i, j) {
				return
			}
		}
	}
}

// EdgeCount returns the number of edges Edges would return, counting no
// further than limit+1.
func (c *ChannelGraph) EdgeCount(limit int) int {
	n := len(c.baseEdges)
	if n > limit {
		return n
	}
	c.rangeEdges(func(int, int) bool {
		n++
		return n <= limit
	})
	return n
}

// MaxEdges bounds the edges of one channel that the commands drawing a
// graph (opm graph show, alpha render-graph, catalog diff) build. Real
// channels have hundreds to a few thousands; a channel of a few thousand
// entries whose skipRanges all cover each other has millions.
const MaxEdges = 1_000_000

// TooManyEdgesError is a channel with more edges than a drawing holds.
type TooManyEdgesError struct {
	Package, Channel string
	Limit            int
}

func (e *TooManyEdgesError) Error() string {
	return fmt.Sprintf("package %q, channel %q: more than %d upgrade edges (its skipRanges cover each other's versions); too many to draw or compare: query it with opm graph path or successors, or select other channels", e.Package, e.Channel, e.Limit)
}

// CheckEdges returns a *TooManyEdgesError for the first channel with more
// than limit edges.
func (g *Graph) CheckEdges(limit int) error {
	for _, p := range g.Packages {
		for _, c := range p.Channels {
			if c.EdgeCount(limit) > limit {
				return &TooManyEdgesError{Package: p.Name, Channel: c.Name, Limit: limit}
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
