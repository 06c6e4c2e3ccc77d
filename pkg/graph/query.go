package graph

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/versionrange"
)

// Semantics is a way of choosing upgrades.
type Semantics string

// The two semantics OLM has used.
const (
	// Classic is OLM v0's resolver: candidates are on the channel's
	// replaces chain, and the one closest to the head wins.
	Classic Semantics = "classic"
	// V1 is operator-controller's: any entry of the selected channels that
	// replaces, skips or skipRange-covers the installed bundle; the highest
	// version wins, deprecated bundles rank last, never downwards.
	V1 Semantics = "v1"
)

// ParseSemantics accepts "classic" and "v1".
func ParseSemantics(s string) (Semantics, error) {
	switch Semantics(s) {
	case Classic, V1:
		return Semantics(s), nil
	}
	return "", fmt.Errorf("unknown semantics %q, expected classic or v1", s)
}

// Installed identifies the bundle an upgrade starts from: by name (for
// replaces and skips) and by version (for skipRange and ordering). Either
// may be unknown when the bundle is not in the catalog.
type Installed struct {
	Name       string
	Version    semver.Version
	HasVersion bool
}

// Label is "name (version)", or whichever of the two is known.
func (in Installed) Label() string {
	switch {
	case in.Name == "":
		return in.Version.String()
	case !in.HasVersion:
		return in.Name
	}
	return fmt.Sprintf("%s (%s)", in.Name, in.Version)
}

func (in Installed) node() *Node {
	return &Node{Name: in.Name, Version: in.Version, HasVersion: in.HasVersion}
}

func installedFrom(n *Node) Installed {
	return Installed{Name: n.Name, Version: n.Version, HasVersion: n.HasVersion}
}

// Resolve finds the bundle that s names in the package: a bundle name, or
// a version (strict semver) held by exactly one bundle. A version no bundle
// holds is returned without a name (only skipRanges can match it); a name
// with no bundle but referred to by replaces or skips is returned without a
// version.
func (p *PackageGraph) Resolve(s string) (Installed, error) {
	if n := p.Nodes[s]; n != nil {
		return installedFrom(n), nil
	}
	v, err := semver.Parse(s)
	if err != nil {
		return Installed{}, fmt.Errorf("package %q has no bundle named %q, and it is not a version: %w", p.Name, s, err)
	}
	var names []string
	for _, n := range p.Nodes {
		if n.HasVersion && n.Version.String() == v.String() {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		for _, n := range p.Nodes {
			if n.HasVersion && n.Version.Equals(v) {
				names = append(names, n.Name)
			}
		}
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		return Installed{Version: v, HasVersion: true}, nil
	case 1:
		return installedFrom(p.Nodes[names[0]]), nil
	}
	return Installed{}, fmt.Errorf("package %q: bundles %s all have version %s; name one of them instead", p.Name, strings.Join(names, ", "), v)
}

// succ is an entry (by index) that upgrades from some installed bundle,
// with the edges that make it one.
type succ struct {
	entry int
	edges []Edge
}

// successorsOf returns the entries of c that upgrade directly from in, in
// entry order, each with its edges in the order replaces, skips,
// skipRange. Results for bundles of the catalog are cached.
func (c *ChannelGraph) successorsOf(p *PackageGraph, in Installed) []succ {
	cacheable := false
	if n := p.Nodes[in.Name]; n != nil && n.HasVersion == in.HasVersion && (!in.HasVersion || n.Version.Equals(in.Version)) {
		cacheable = true
		c.mu.Lock()
		s, ok := c.succs[in.Name]
		c.mu.Unlock()
		if ok {
			return s
		}
	}
	edges := map[int][]Edge{}
	if in.Name != "" {
		for _, i := range c.byReplaces[in.Name] {
			edges[i] = append(edges[i], Edge{From: in.Name, To: c.Entries[i].Name, Kind: KindReplaces})
		}
		for _, i := range c.bySkips[in.Name] {
			edges[i] = append(edges[i], Edge{From: in.Name, To: c.Entries[i].Name, Kind: KindSkips})
		}
	}
	if in.HasVersion {
		from := in.Name
		if from == "" {
			from = in.Version.String()
		}
		add := func(i int) {
			e := c.Entries[i]
			edges[i] = append(edges[i], Edge{From: from, To: e.Name, Kind: KindSkipRange, Range: e.SkipRange})
		}
		if j, ok := c.entries[in.Name]; ok && cacheable {
			for _, i := range c.coveredBy[j] { // computed when the channel was built
				add(i)
			}
		} else {
			for _, i := range c.ranged {
				if c.rangeAt[i].Contains(in.Version) {
					add(i)
				}
			}
		}
	}
	out := make([]succ, 0, len(edges))
	for i, e := range edges {
		if in.Name != "" && c.Entries[i].Name == in.Name {
			continue
		}
		out = append(out, succ{entry: i, edges: e})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].entry < out[b].entry })
	if cacheable {
		c.mu.Lock()
		c.succs[in.Name] = out
		c.mu.Unlock()
	}
	return out
}

// Successor is a channel entry that upgrades directly from an installed
// bundle.
type Successor struct {
	Node    *Node
	Channel string
	// Edges are the fields of the entry that make it a successor.
	Edges []Edge
	// ChainIndex is the entry's position on the channel's replaces chain
	// (0 = head), or -1 when it is not on the chain.
	ChainIndex int
	// Classic is set on the entry OLM classic picks in this channel.
	Classic bool
	// V1 is set on the bundle OLM v1 picks across the queried channels
	// (on each channel's row for it).
	V1 bool
	// Lower is set when the entry's version is not above the installed
	// one: OLM v1 never takes it.
	Lower bool
}

// Successors returns every direct successor of in within channels (all of
// the package's channels when empty), by channel then entry order, with
// the pick of each semantics marked.
func (p *PackageGraph) Successors(in Installed, channels []string) ([]Successor, error) {
	chans, err := p.selectChannels(channels)
	if err != nil {
		return nil, err
	}
	var out []Successor
	for _, c := range chans {
		best := -1
		for _, sc := range c.successorsOf(p, in) {
			e := c.Entries[sc.entry]
			n := p.Nodes[e.Name]
			s := Successor{Node: n, Channel: c.Name, Edges: sc.edges, ChainIndex: c.ChainIndex(e.Name), Lower: !isHigher(n, in)}
			if s.ChainIndex >= 0 && (best < 0 || s.ChainIndex < out[best].ChainIndex) {
				best = len(out)
			}
			out = append(out, s)
		}
		if best >= 0 {
			out[best].Classic = true
		}
	}
	if pick := pickV1(out, in); pick != nil {
		for i := range out {
			if out[i].Node == pick {
				out[i].V1 = true
			}
		}
	}
	return out, nil
}

// isHigher reports whether n may follow in under OLM v1: its version is
// above in's, or either version is unknown.
func isHigher(n *Node, in Installed) bool {
	if !n.HasVersion || !in.HasVersion {
		return true
	}
	return n.Version.GT(in.Version)
}

// v1Less ranks OLM v1 candidates: not deprecated first, then the highest
// version, then by name for a stable answer.
func v1Less(a, b *Node) bool {
	if a.Deprecated != b.Deprecated {
		return !a.Deprecated
	}
	if c := a.Version.Compare(b.Version); c != 0 {
		return c > 0
	}
	return a.Name < b.Name
}

func pickV1(succ []Successor, in Installed) *Node {
	var best *Node
	for _, s := range succ {
		if s.Lower {
			continue
		}
		if best == nil || v1Less(s.Node, best) {
			best = s.Node
		}
	}
	return best
}

func (p *PackageGraph) selectChannels(names []string) ([]*ChannelGraph, error) {
	if len(names) == 0 {
		return p.Channels, nil
	}
	var out []*ChannelGraph
	seen := map[string]bool{}
	for _, n := range names {
		c := p.Channel(n)
		if c == nil {
			return nil, fmt.Errorf("package %q has no channel %q (channels: %s)", p.Name, n, strings.Join(p.ChannelNames(), ", "))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// PathOptions configure [PackageGraph.Path].
type PathOptions struct {
	Semantics Semantics
	// Channels to follow. Empty means the package's default channel under
	// Classic (a subscription follows one channel) and every channel under
	// V1 (a ClusterExtension without channels). Classic gives one path per
	// channel; V1 one path over all of them.
	Channels []string
	// To, when set, is the version to reach. Classic follows its fixed
	// walk and stops there if the walk visits it; V1 only considers
	// versions up to it at each step.
	To *semver.Version
	// Range, when set, bounds every step as OLM v1's spec.version does:
	// V1 only moves to versions in it; Classic follows its walk and stops
	// at the last version in it.
	Range *versionrange.Range
}

// Step is one upgrade.
type Step struct {
	From *Node
	To   *Node
	// Channel is the channel whose entry makes the step.
	Channel string
	// Edges are the fields of To's entry that allow the step.
	Edges []Edge
}

// Path is the answer to an upgrade-path query.
type Path struct {
	Package   string
	Semantics Semantics
	Channels  []string
	From      Installed
	Steps     []Step
	// Reached is whether the target was reached: the channel head
	// (Classic), the newest version of the channels (V1), the --to version
	// or a version in the range.
	Reached bool
	// Reason explains the end of the walk, reached or not.
	Reason string
}

// End is the last node of the path (the starting point when no step was
// taken).
func (p *Path) End() *Node {
	if len(p.Steps) == 0 {
		return p.From.node()
	}
	return p.Steps[len(p.Steps)-1].To
}

// Path computes the upgrade path from in under opts. Classic returns one
// path per channel.
func (p *PackageGraph) Path(in Installed, opts PathOptions) ([]*Path, error) {
	switch opts.Semantics {
	case Classic:
		names := opts.Channels
		if len(names) == 0 {
			if p.DefaultChannel == "" {
				return nil, fmt.Errorf("package %q has no default channel; name a channel", p.Name)
			}
			names = []string{p.DefaultChannel}
		}
		chans, err := p.selectChannels(names)
		if err != nil {
			return nil, err
		}
		var out []*Path
		for _, c := range chans {
			out = append(out, p.classicPath(c, in, opts))
		}
		return out, nil
	case V1:
		chans, err := p.selectChannels(opts.Channels)
		if err != nil {
			return nil, err
		}
		return []*Path{p.v1Path(chans, in, opts)}, nil
	}
	return nil, fmt.Errorf("unknown semantics %q, expected classic or v1", opts.Semantics)
}

var errNoStep = errors.New("no step")

// classicStep returns the chain entry closest to the head that upgrades
// from in.
func (c *ChannelGraph) classicStep(p *PackageGraph, in Installed) (Entry, []Edge, error) {
	best, bestPos := -1, -1
	for i, sc := range c.successorsOf(p, in) {
		pos := c.ChainIndex(c.Entries[sc.entry].Name)
		if pos >= 0 && (best < 0 || pos < bestPos) {
			best, bestPos = i, pos
		}
	}
	if best < 0 {
		return Entry{}, nil, errNoStep
	}
	sc := c.successorsOf(p, in)[best]
	return c.Entries[sc.entry], sc.edges, nil
}

func (p *PackageGraph) classicPath(c *ChannelGraph, in Installed, opts PathOptions) *Path {
	path := &Path{Package: p.Name, Semantics: Classic, Channels: []string{c.Name}, From: in}
	if c.ChainErr != nil {
		path.Reason = fmt.Sprintf("channel %q has no replaces chain to follow: %v", c.Name, c.ChainErr)
		return path
	}
	head := p.Nodes[c.Head]
	cur := in
	visited := map[string]bool{in.Name: true}
	for {
		if opts.To != nil && cur.HasVersion && cur.Version.Equals(*opts.To) {
			break
		}
		if cur.Name == head.Name {
			break // the head is where OLM classic stops
		}
		e, edges, err := c.classicStep(p, cur)
		if err != nil {
			break
		}
		next := p.Nodes[e.Name]
		if visited[next.Name] {
			path.Reason = fmt.Sprintf("the walk loops back to %s", next.Label())
			return path
		}
		visited[next.Name] = true
		path.Steps = append(path.Steps, Step{From: stepNode(p, cur), To: next, Channel: c.Name, Edges: edges})
		cur = installedFrom(next)
	}
	end := path.End()
	switch {
	case opts.To != nil:
		path.Reached = end.HasVersion && end.Version.Equals(*opts.To)
		if path.Reached {
			path.Reason = fmt.Sprintf("reached version %s", opts.To)
		} else {
			path.Reason = fmt.Sprintf("OLM classic's walk in channel %q from %s ends at %s and never visits version %s", c.Name, in.Label(), end.Label(), opts.To)
		}
	case opts.Range != nil:
		last := -1
		if in.HasVersion && opts.Range.ContainsVersion(in.Version) {
			last = 0
		}
		for i, s := range path.Steps {
			if s.To.HasVersion && opts.Range.ContainsVersion(s.To.Version) {
				last = i + 1
			}
		}
		if last < 0 {
			path.Reason = fmt.Sprintf("OLM classic's walk in channel %q from %s visits no version in %q", c.Name, in.Label(), opts.Range)
			return path
		}
		path.Steps = path.Steps[:last]
		path.Reached = true
		path.Reason = fmt.Sprintf("%s is the last version in %q on OLM classic's walk", path.End().Label(), opts.Range)
	case end.Name == head.Name:
		path.Reached = true
		if len(path.Steps) == 0 {
			path.Reason = fmt.Sprintf("%s is already the head of channel %q", end.Label(), c.Name)
		} else {
			path.Reason = fmt.Sprintf("reached the head of channel %q", c.Name)
		}
	default:
		path.Reason = classicStuck(c, end, head)
	}
	return path
}

// classicStuck explains why OLM classic cannot move on from n.
func classicStuck(c *ChannelGraph, n, head *Node) string {
	var why string
	switch {
	case n.Name == "":
		why = "no entry on it has a skipRange covering that version"
	case !c.Has(n.Name):
		why = "it is not in the channel, and no entry on the chain replaces, skips or skipRange-covers it"
	case c.skippedBy[n.Name]:
		why = "it is skipped, and no entry on the chain replaces, skips or skipRange-covers it"
	case c.ChainIndex(n.Name) < 0:
		why = "it is stranded: not on the replaces chain, and no entry on the chain upgrades from it"
	default:
		why = "no entry closer to the head upgrades from it"
	}
	return fmt.Sprintf("no OLM classic upgrade from %s toward the head %s of channel %q: %s", n.Label(), head.Label(), c.Name, why)
}

// stepNode returns the graph node for in, or a node built from it.
func stepNode(p *PackageGraph, in Installed) *Node {
	if n := p.Nodes[in.Name]; n != nil && in.Name != "" {
		return n
	}
	return in.node()
}

func (p *PackageGraph) v1Path(chans []*ChannelGraph, in Installed, opts PathOptions) *Path {
	path := &Path{Package: p.Name, Semantics: V1, From: in}
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = c.Name
	}
	path.Channels = names
	allowed := func(n *Node) bool {
		if opts.Range != nil && (!n.HasVersion || !opts.Range.ContainsVersion(n.Version)) {
			return false
		}
		if opts.To != nil && (!n.HasVersion || n.Version.GT(*opts.To)) {
			return false
		}
		return true
	}
	cur := in
	for {
		if opts.To != nil && cur.HasVersion && cur.Version.Equals(*opts.To) {
			break
		}
		var best *Node
		var bestStep Step
		for _, c := range chans {
			for _, sc := range c.successorsOf(p, cur) {
				e := c.Entries[sc.entry]
				n := p.Nodes[e.Name]
				if !isHigher(n, cur) || !allowed(n) {
					continue
				}
				// OLM v1 orders by version: an entry without a bundle
				// is never a candidate (and every step but the first
				// starts from a versioned bundle, so the walk climbs).
				if !n.HasVersion {
					continue
				}
				if best == nil || v1Less(n, best) {
					best = n
					bestStep = Step{From: stepNode(p, cur), To: n, Channel: c.Name, Edges: sc.edges}
				}
			}
		}
		if best == nil {
			break
		}
		path.Steps = append(path.Steps, bestStep)
		cur = installedFrom(best)
	}
	end := path.End()
	switch {
	case opts.To != nil:
		path.Reached = end.HasVersion && end.Version.Equals(*opts.To)
		if path.Reached {
			path.Reason = fmt.Sprintf("reached version %s", opts.To)
		} else {
			path.Reason = fmt.Sprintf("OLM v1 finds no upgrade from %s toward version %s in channels %s", end.Label(), opts.To, strings.Join(names, ", "))
		}
	case opts.Range != nil:
		path.Reached = end.HasVersion && opts.Range.ContainsVersion(end.Version)
		if path.Reached {
			path.Reason = fmt.Sprintf("%s is the newest version in %q that OLM v1 reaches", end.Label(), opts.Range)
		} else {
			path.Reason = fmt.Sprintf("OLM v1 finds no upgrade from %s to a version in %q in channels %s", end.Label(), opts.Range, strings.Join(names, ", "))
		}
	default:
		newest := newestEntry(p, chans)
		switch {
		case newest == nil:
			path.Reason = "the channels have no versioned entry"
		case end.HasVersion && !end.Version.LT(newest.Version):
			path.Reached = true
			if len(path.Steps) == 0 {
				path.Reason = fmt.Sprintf("%s is already the newest version of channels %s", end.Label(), strings.Join(names, ", "))
			} else {
				path.Reason = fmt.Sprintf("reached the newest version of channels %s", strings.Join(names, ", "))
			}
		case !end.HasVersion:
			path.Reason = fmt.Sprintf("%s has no version, so OLM v1 cannot order upgrades from it", end.Label())
		default:
			path.Reason = fmt.Sprintf("no entry of channels %s replaces, skips or skipRange-covers %s (the newest version is %s)", strings.Join(names, ", "), end.Label(), newest.Label())
		}
	}
	return path
}

// newestEntry returns the highest-versioned entry of chans.
func newestEntry(p *PackageGraph, chans []*ChannelGraph) *Node {
	var best *Node
	for _, c := range chans {
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if n.HasVersion && (best == nil || n.Version.GT(best.Version)) {
				best = n
			}
		}
	}
	return best
}
