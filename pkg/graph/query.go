package graph

import (
	"context"
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
	// Release is the olm.package release of the catalog's bundle.
	Release string
	// Deprecated is set when the catalog deprecates the bundle.
	Deprecated bool
	// Assumed is set when Name was not given but assumed (see
	// [PackageGraph.ResolveInstalled]); Note says so in a sentence.
	Assumed bool
	Note    string
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
	if !in.HasVersion {
		return &Node{Name: in.Name, Deprecated: in.Deprecated}
	}
	n := newNode(in.Name, in.Version, in.Release)
	n.Deprecated = in.Deprecated
	return n
}

func installedFrom(n *Node) Installed {
	return Installed{Name: n.Name, Version: n.Version, HasVersion: n.HasVersion, Release: n.Release, Deprecated: n.Deprecated}
}

// ResolveInstalled identifies the installed bundle from a version or bundle
// name (from) and, optionally, the installed bundle's name (bundle), for
// installed bundles the catalog may no longer have: replaces and skips
// match them by name, skipRange by version.
//
//   - from alone is resolved as [PackageGraph.Resolve] does; when it is a
//     version that no bundle of the package has, the name is assumed:
//     <prefix>.v<version>, where the prefix is the one every bundle of the
//     package is named with (<prefix>.v<its version>), or else the package
//     name. Installed.Assumed and Note say so.
//   - bundle names the installed bundle. When the catalog has it, from (if
//     given) must be its version; otherwise from (if given) must be a
//     version and is taken as the installed bundle's.
func (p *PackageGraph) ResolveInstalled(from, bundle string) (Installed, error) {
	if bundle == "" {
		in, err := p.Resolve(from)
		if err != nil || in.Name != "" || !in.HasVersion {
			return in, err
		}
		prefix, why := p.namePrefix()
		in.Name = prefix + ".v" + in.Version.String()
		in.Assumed = true
		in.Note = fmt.Sprintf("assumed installed bundle name %q: no bundle of package %q has version %s, and %s", in.Name, p.Name, in.Version, why)
		return in, nil
	}
	if n := p.Nodes[bundle]; n != nil && n.HasBundle {
		in := installedFrom(n)
		if from == "" || from == bundle {
			return in, nil
		}
		v, err := versionrange.ParseVersion(from)
		if err != nil || v.String() != n.Version.String() {
			return Installed{}, fmt.Errorf("package %q: bundle %q has version %s, not %s", p.Name, bundle, n.Version, from)
		}
		return in, nil
	}
	in := Installed{Name: bundle}
	if n := p.Nodes[bundle]; n != nil {
		in.Deprecated = n.Deprecated
	}
	if from == "" {
		return in, nil
	}
	v, err := versionrange.ParseVersion(from)
	if err != nil {
		return Installed{}, fmt.Errorf("package %q has no bundle named %q, so --from must give its version: %w", p.Name, bundle, err)
	}
	in.Version, in.HasVersion = v, true
	return in, nil
}

// namePrefix returns the prefix of <prefix>.v<version> that every bundle of
// the package is named with, or the package name, and why.
func (p *PackageGraph) namePrefix() (string, string) {
	prefix, n := "", 0
	for _, node := range p.Nodes {
		if !node.HasBundle {
			continue
		}
		pre, ok := strings.CutSuffix(node.Name, ".v"+node.Version.String())
		if !ok || pre == "" || (n > 0 && pre != prefix) {
			return p.Name, fmt.Sprintf("its bundles follow no single <name>.v<version> pattern, so the name is %s.v<version>", p.Name)
		}
		prefix = pre
		n++
	}
	if n == 0 {
		return p.Name, fmt.Sprintf("it has no bundles, so the name is %s.v<version>", p.Name)
	}
	return prefix, fmt.Sprintf("its bundles are named %s.v<version>", prefix)
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
	v, err := versionrange.ParseVersion(s)
	if err != nil {
		e := p.UnknownBundle(s)
		e.Hint = "give a bundle name or a version"
		return Installed{}, e
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
		if len(c.ranged) > 0 {
			_, byRange := c.indexes()
			for _, i := range byRange.holding(nil, in.Version, c.rangeAt) {
				add(i)
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
	cur := in.node()
	var out []Successor
	for _, c := range chans {
		best := -1
		for _, sc := range c.successorsOf(p, in) {
			e := c.Entries[sc.entry]
			n := p.Nodes[e.Name]
			s := Successor{Node: n, Channel: c.Name, Edges: sc.edges, ChainIndex: c.ChainIndex(e.Name), Lower: !isHigher(n, cur)}
			if s.ChainIndex >= 0 && (best < 0 || s.ChainIndex < out[best].ChainIndex) {
				best = len(out)
			}
			out = append(out, s)
		}
		if best >= 0 {
			out[best].Classic = true
		}
	}
	if pick, _ := pickV1(out, cur); pick != nil {
		for i := range out {
			if out[i].Node == pick {
				out[i].V1 = true
			}
		}
	}
	return out, nil
}

// V1Stays explains why OLM v1 picks none of succ (the successors of in, as
// [PackageGraph.Successors] returns them): "" when it picks one or there
// is nothing to pick.
func V1Stays(in Installed, succ []Successor) string {
	pick, deprecated := pickV1(succ, in.node())
	if pick != nil || len(deprecated) == 0 {
		return ""
	}
	return staysReason(in.Label(), deprecated)
}

// staysReason is the reason OLM v1 keeps a non-deprecated bundle whose
// successors are all deprecated.
func staysReason(label string, deprecated []*Node) string {
	names := make([]string, len(deprecated))
	for i, n := range deprecated {
		names[i] = n.Label()
	}
	return fmt.Sprintf("stays: the only successors are deprecated (%s), and OLM v1 ranks %s, which is not, above them", strings.Join(names, ", "), label)
}

// isHigher reports whether n may follow cur under OLM v1: it is above cur
// in OLM v1's order (version, then release), or either version is unknown.
func isHigher(n, cur *Node) bool {
	if !n.HasVersion || !cur.HasVersion {
		return true
	}
	return compareV1(n, cur) > 0
}

// v1Less ranks OLM v1 candidates: not deprecated first, then the highest
// version (then release), then by name for a stable answer.
func v1Less(a, b *Node) bool {
	if a.Deprecated != b.Deprecated {
		return !a.Deprecated
	}
	if c := compareV1(a, b); c != 0 {
		return c > 0
	}
	return a.Name < b.Name
}

// pickV1 returns OLM v1's pick among the successors above cur. OLM v1 ranks
// the installed bundle among the candidates and deprecated bundles after
// the others: a non-deprecated cur whose successors are all deprecated
// stays (pick nil; the deprecated successors are returned, sorted).
func pickV1(succ []Successor, cur *Node) (*Node, []*Node) {
	var best *Node
	for _, s := range succ {
		if s.Lower || !s.Node.HasVersion {
			continue
		}
		if best == nil || v1Less(s.Node, best) {
			best = s.Node
		}
	}
	if best == nil || !best.Deprecated || cur.Deprecated {
		return best, nil
	}
	var dep []*Node
	seen := map[*Node]bool{}
	for _, s := range succ {
		if !s.Lower && s.Node.HasVersion && !seen[s.Node] {
			seen[s.Node] = true
			dep = append(dep, s.Node)
		}
	}
	sortNodes(dep)
	return nil, dep
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
			return nil, p.UnknownChannel(n)
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
	// versions up to it at each step. Build metadata in To counts as a
	// release (OLM v1's order); ToRelease is the target bundle's
	// olm.package release, when it has one.
	To        *semver.Version
	ToRelease string
	// Range, when set, bounds every step as OLM v1's spec.version does:
	// V1 only moves to versions in it; Classic follows its walk and stops
	// at the last version in it.
	Range *versionrange.Range
	// Context, when set, stops the walk once done: Path then returns its
	// error.
	Context context.Context
}

// canceled reports whether the walk must stop.
func (o PathOptions) canceled() bool { return o.Context != nil && o.Context.Err() != nil }

// Step is one upgrade.
type Step struct {
	From *Node
	To   *Node
	// Channel is the channel whose entry makes the step.
	Channel string
	// Edges are the fields of To's entry that allow the step.
	Edges []Edge
	// Note explains an OLM v1 step between versions that differ only in
	// release ("" otherwise).
	Note string
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
		if opts.canceled() {
			return nil, opts.Context.Err()
		}
		return out, nil
	case V1:
		chans, err := p.selectChannels(opts.Channels)
		if err != nil {
			return nil, err
		}
		path := p.v1Path(chans, in, opts)
		if opts.canceled() {
			return nil, opts.Context.Err()
		}
		return []*Path{path}, nil
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
	to := opts.target()
	cur := in
	visited := map[string]bool{in.Name: true}
	for !opts.canceled() {
		if to != nil && cur.HasVersion && compareV1(cur.node(), to) == 0 {
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
		path.Reached = end.HasVersion && compareV1(end, to) == 0
		if path.Reached {
			path.Reason = fmt.Sprintf("reached version %s", to.label())
		} else {
			path.Reason = fmt.Sprintf("OLM classic's walk in channel %q from %s ends at %s and never visits version %s", c.Name, in.Label(), end.Label(), to.label())
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

// stepNode returns the graph node for in, or a node built from it (also
// when the graph only knows the name and in has a version).
func stepNode(p *PackageGraph, in Installed) *Node {
	if n := p.Nodes[in.Name]; n != nil && in.Name != "" && (n.HasVersion || !in.HasVersion) {
		return n
	}
	return in.node()
}

// target is the node form of To, or nil.
func (o PathOptions) target() *Node {
	if o.To == nil {
		return nil
	}
	return newNode("", *o.To, o.ToRelease)
}

// label is the version, with the release when it is an olm.package one.
func (n *Node) label() string {
	if n.Release != "" {
		return n.Version.String() + " (release " + n.Release + ")"
	}
	return n.Version.String()
}

func (p *PackageGraph) v1Path(chans []*ChannelGraph, in Installed, opts PathOptions) *Path {
	path := &Path{Package: p.Name, Semantics: V1, From: in}
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = c.Name
	}
	path.Channels = names
	to := opts.target()
	allowed := func(n *Node) bool {
		if opts.Range != nil && (!n.HasVersion || !opts.Range.ContainsVersion(n.Version)) {
			return false
		}
		if to != nil && (!n.HasVersion || compareV1(n, to) > 0) {
			return false
		}
		return true
	}
	cur := stepNode(p, in)
	var stays string // set when cur stays because its successors are deprecated
	for !opts.canceled() {
		if to != nil && cur.HasVersion && compareV1(cur, to) == 0 {
			break
		}
		// OLM v1 ranks the installed bundle among the candidates, and
		// deprecated bundles after the others.
		var best *Node
		var bestStep Step
		var deprecated []*Node
		for _, c := range chans {
			for _, sc := range c.successorsOf(p, installedFrom(cur)) {
				e := c.Entries[sc.entry]
				n := p.Nodes[e.Name]
				// OLM v1 orders by version: an entry without a bundle
				// is never a candidate (and every step but the first
				// starts from a versioned bundle, so the walk climbs).
				if !n.HasVersion || !isHigher(n, cur) || !allowed(n) {
					continue
				}
				if n.Deprecated && !cur.Deprecated {
					deprecated = append(deprecated, n)
					continue
				}
				if best == nil || v1Less(n, best) {
					best = n
					bestStep = Step{From: cur, To: n, Channel: c.Name, Edges: sc.edges}
				}
			}
		}
		if best == nil {
			if len(deprecated) > 0 {
				sortNodes(deprecated)
				deprecated = uniqNodes(deprecated)
				stays = staysReason(cur.Label(), deprecated)
			}
			break
		}
		if bestStep.From.HasVersion && bestStep.From.Version.Compare(best.Version) == 0 {
			bestStep.Note = releaseNote(bestStep.From, best)
		}
		path.Steps = append(path.Steps, bestStep)
		cur = best
	}
	end := path.End()
	switch {
	case opts.To != nil:
		path.Reached = end.HasVersion && compareV1(end, to) == 0
		switch {
		case path.Reached:
			path.Reason = fmt.Sprintf("reached version %s", to.label())
		case stays != "":
			path.Reason = stays
		default:
			path.Reason = fmt.Sprintf("OLM v1 finds no upgrade from %s toward version %s in channels %s", end.Label(), to.label(), strings.Join(names, ", "))
		}
	case opts.Range != nil:
		path.Reached = end.HasVersion && opts.Range.ContainsVersion(end.Version)
		switch {
		case path.Reached && stays != "":
			path.Reason = fmt.Sprintf("%s is in %q; it %s", end.Label(), opts.Range, stays)
		case path.Reached:
			path.Reason = fmt.Sprintf("%s is the newest version in %q that OLM v1 reaches", end.Label(), opts.Range)
		case stays != "":
			path.Reason = stays
		default:
			path.Reason = fmt.Sprintf("OLM v1 finds no upgrade from %s to a version in %q in channels %s", end.Label(), opts.Range, strings.Join(names, ", "))
		}
	default:
		newest := newestEntry(p, chans)
		switch {
		case newest == nil:
			path.Reason = "the channels have no versioned entry"
		case end.HasVersion && compareV1(end, newest) >= 0:
			path.Reached = true
			if len(path.Steps) == 0 {
				path.Reason = fmt.Sprintf("%s is already the newest version of channels %s", end.Label(), strings.Join(names, ", "))
			} else {
				path.Reason = fmt.Sprintf("reached the newest version of channels %s", strings.Join(names, ", "))
			}
		case stays != "":
			path.Reason = stays
		case !end.HasVersion:
			path.Reason = fmt.Sprintf("%s has no version, so OLM v1 cannot order upgrades from it", end.Label())
		default:
			path.Reason = fmt.Sprintf("no entry of channels %s replaces, skips or skipRange-covers %s (the newest version is %s)", strings.Join(names, ", "), end.Label(), newest.Label())
		}
	}
	return path
}

// releaseNote explains why OLM v1 takes to over from, two versions equal
// but for their release.
func releaseNote(from, to *Node) string {
	what := "build metadata"
	if to.Release != "" || from.Release != "" {
		what = "the olm.package release"
	}
	fr, tr := strings.Join(from.rel, "."), strings.Join(to.rel, ".")
	if fr == "" {
		return fmt.Sprintf("OLM v1 orders equal versions by %s: %s is newer than none", what, tr)
	}
	return fmt.Sprintf("OLM v1 orders equal versions by %s: %s is newer than %s", what, tr, fr)
}

// uniqNodes drops repeats from sorted nodes.
func uniqNodes(nodes []*Node) []*Node {
	out := nodes[:0]
	for i, n := range nodes {
		if i == 0 || n != nodes[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// newestEntry returns the highest-versioned entry of chans.
func newestEntry(p *PackageGraph, chans []*ChannelGraph) *Node {
	var best *Node
	for _, c := range chans {
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if n.HasVersion && (best == nil || compareV1(n, best) > 0) {
				best = n
			}
		}
	}
	return best
}
