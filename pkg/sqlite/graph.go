package sqlite

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// ErrPackageNotInIndex is returned by PackageGraph for a package the
// contents do not have.
var ErrPackageNotInIndex = errors.New("package not in the index")

// node is the graph node of a bundle row.
func (b *Bundle) node() GraphNode {
	return GraphNode{Name: b.Name, Version: b.Version.String, Path: b.Path.String}
}

// PackageGraph reads a package's channels as upstream's semver modes read
// them from a database: each channel's bundles and what each replaces or
// skips, and its head, the one bundle nothing in the channel replaces.
func (c *Contents) PackageGraph(pkg string) (*PackageGraph, error) {
	g := &PackageGraph{Name: pkg, Channels: map[string]*ChannelGraph{}}
	p := c.Packages[pkg]
	if p == nil {
		return g, ErrPackageNotInIndex
	}
	g.DefaultChannel = p.DefaultChannel.String
	byID := map[int64]*Entry{}
	for i := range c.Entries {
		byID[c.Entries[i].ID] = &c.Entries[i]
	}
	keyOf := func(bundle string) GraphNode {
		if b := c.Bundles[bundle]; b != nil {
			return b.node()
		}
		return GraphNode{Name: bundle}
	}
	existing := map[GraphNode]bool{}
	var entries []*Entry
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.Package.String != pkg || !e.Package.Valid {
			continue
		}
		entries = append(entries, e)
		if b := c.Bundles[e.Bundle.String]; b != nil && e.Bundle.Valid {
			existing[b.node()] = true
		}
	}
	candidates := map[string]map[GraphNode]bool{}
	channel := func(name string) *ChannelGraph {
		ch := g.Channels[name]
		if ch == nil {
			ch = &ChannelGraph{Nodes: map[GraphNode][]GraphNode{}}
			g.Channels[name] = ch
			g.ChannelOrder = append(g.ChannelOrder, name)
		}
		return ch
	}
	for _, e := range entries {
		ch := channel(e.Channel.String)
		k := keyOf(e.Bundle.String)
		if !existing[k] {
			continue
		}
		ch.addNode(k)
		if candidates[e.Channel.String] == nil {
			candidates[e.Channel.String] = map[GraphNode]bool{}
		}
		candidates[e.Channel.String][k] = true
	}
	for _, e := range entries {
		if !e.Replaces.Valid {
			continue
		}
		r, ok := byID[e.Replaces.Int64]
		if !ok {
			continue
		}
		rk := keyOf(r.Bundle.String)
		if rk == (GraphNode{}) {
			continue
		}
		ch := channel(e.Channel.String)
		k := keyOf(e.Bundle.String)
		ch.addNode(k)
		ch.addEdge(k, rk)
		delete(candidates[e.Channel.String], rk)
	}
	// Channels with no bundle of the index are left out, as upstream
	// leaves them.
	var order []string
	for _, name := range g.ChannelOrder {
		if candidates[name] == nil {
			delete(g.Channels, name)
			continue
		}
		order = append(order, name)
	}
	g.ChannelOrder = order
	for _, name := range g.ChannelOrder {
		heads := candidates[name]
		switch len(heads) {
		case 0:
			return nil, fmt.Errorf("no channel head found for %s", name)
		case 1:
			for h := range heads {
				g.Channels[name].Head = h
			}
		default:
			var names []string
			for h := range heads {
				names = append(names, h.Name)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("multiple candidate channel heads found for %s: %s", name, strings.Join(names, ", "))
		}
	}
	return g, nil
}

func (ch *ChannelGraph) addNode(k GraphNode) {
	if _, ok := ch.Nodes[k]; !ok {
		ch.Nodes[k] = nil
		ch.Order = append(ch.Order, k)
	}
}

func (ch *ChannelGraph) addEdge(from, to GraphNode) {
	if !slices.Contains(ch.Nodes[from], to) {
		ch.Nodes[from] = append(ch.Nodes[from], to)
	}
}

// AddBundleToGraph places a bundle in each of its channels by version, as
// upstream's semver modes do: it replaces the greatest version below it,
// the least version above it now replaces it alone (or it becomes the
// head); with skipPatch it skips, and removes from the channel, the lower
// versions of its major.minor, and replaces the greatest version below
// them. The package's default channel is
// the bundle's when it names one, else stays, else is the first of its
// channels by name.
func AddBundleToGraph(g *PackageGraph, b GraphNode, channels []string, defaultChannel string, skipPatch bool) error {
	v, err := semver.Make(b.Version)
	if err != nil {
		return fmt.Errorf("bundle %s: version %q is not valid semver, which the semver modes need", b.Name, b.Version)
	}
	b.Version = v.String()
	if defaultChannel != "" {
		g.DefaultChannel = defaultChannel
	}
	if g.DefaultChannel == "" {
		sorted := slices.Sorted(slices.Values(channels))
		if len(sorted) == 0 {
			return fmt.Errorf("bundle %s: default channel is missing and can't be inferred", b.Name)
		}
		g.DefaultChannel = sorted[0]
	}
	if g.Channels == nil {
		g.Channels = map[string]*ChannelGraph{}
	}
	for _, name := range channels {
		ch, ok := g.Channels[name]
		if !ok {
			ch = &ChannelGraph{Head: b, Nodes: map[GraphNode][]GraphNode{}}
			ch.addNode(b)
			g.Channels[name] = ch
			g.ChannelOrder = append(g.ChannelOrder, name)
			continue
		}
		var (
			lowestAhead, greatestBehind *GraphNode
			la, gb                      semver.Version
			replaces                    []GraphNode
			skipped                     []GraphNode
		)
		for _, n := range ch.Order {
			nv, err := semver.Make(n.Version)
			if err != nil {
				return fmt.Errorf("unable to parse the version of bundle %s in the index: %q", n.Name, n.Version)
			}
			skip := skipPatch && nv.Major == v.Major && nv.Minor == v.Minor && v.GT(nv)
			switch nv.Compare(v) {
			case 0:
				return fmt.Errorf("bundle %s: version %s is already in channel %q (bundle %s)", b.Name, v, name, n.Name)
			case 1:
				if lowestAhead == nil || nv.LT(la) {
					n := n
					lowestAhead, la = &n, nv
				}
			case -1:
				// Upstream takes the greatest version below, even one it
				// is about to skip and remove: then the walk cannot get
				// past the bundle and fails ("Invalid graph"), which it
				// does for every patch release added below an older minor.
				// The greatest version below that stays in the channel
				// continues it instead; where upstream succeeds, that is
				// the same bundle.
				if !skip && (greatestBehind == nil || nv.GT(gb)) {
					n := n
					greatestBehind, gb = &n, nv
				}
			}
			if skip {
				skipped = append(skipped, n)
				replaces = append(replaces, n)
			}
		}
		if greatestBehind != nil && !slices.Contains(replaces, *greatestBehind) {
			replaces = append(replaces, *greatestBehind)
		}
		if lowestAhead != nil {
			ch.Nodes[*lowestAhead] = []GraphNode{b}
		} else {
			ch.Head = b
		}
		for _, s := range skipped {
			delete(ch.Nodes, s)
			ch.Order = slices.DeleteFunc(ch.Order, func(n GraphNode) bool { return n == s })
		}
		ch.addNode(b)
		ch.Nodes[b] = replaces
	}
	return nil
}

// Reaches reports whether a bundle image is reached from the head of a
// channel by following what each bundle replaces or skips.
func (g *PackageGraph) Reaches(channel, image string) bool {
	ch := g.Channels[channel]
	if ch == nil {
		return false
	}
	seen := map[GraphNode]bool{}
	for next := []GraphNode{ch.Head}; len(next) > 0; next = next[1:] {
		n := next[0]
		if n.Path == image {
			return true
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		next = append(next, ch.Nodes[n]...)
	}
	return false
}
