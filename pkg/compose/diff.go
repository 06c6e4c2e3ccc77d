package compose

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// FailOn is a kind of change that a CI gate can fail on.
type FailOn string

// The kinds of change `diff --fail-on` gates on.
const (
	// FailRemoved: a package, channel or bundle was removed, or a channel
	// no longer lists a bundle that is still in the package.
	FailRemoved FailOn = "removed"
	// FailHeads: a channel head moved to a bundle that is not newer, or the
	// channel no longer has a single head.
	FailHeads FailOn = "heads"
	// FailPaths: a bundle that could upgrade to the head of its channel in
	// OLD cannot in NEW.
	FailPaths FailOn = "paths"
	// FailPruned: a channel or a channel entry of OLD is gone from NEW,
	// outside pre-release channels (gate.go).
	FailPruned FailOn = "pruned"
)

// FailOnKinds lists every FailOn, in documentation order.
var FailOnKinds = []FailOn{FailRemoved, FailHeads, FailPaths, FailPruned}

// ParseFailOn accepts "removed", "heads", "paths" and "pruned".
func ParseFailOn(s string) (FailOn, error) {
	for _, k := range FailOnKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown --fail-on kind %q, expected removed, heads, paths or pruned", s)
}

// DiffOptions configure [Diff].
type DiffOptions struct {
	// Fragment compares only the packages NEW has: NEW is a fragment (a
	// package or a few) meant to replace those packages in OLD, so the
	// packages it lacks are not removed.
	Fragment bool
	// Packages restricts the comparison to these packages (empty: all).
	Packages []string
	// Semantics decides which upgrade walk defines "reaches the head"
	// (default Classic).
	Semantics graph.Semantics
	// FailOn lists the kinds of change reported as Failures.
	FailOn []FailOn
	// PreReleaseChannels: FailPruned allows pruning in channels whose
	// names contain one of these (nil: DefaultPreReleaseChannels).
	PreReleaseChannels []string
	// Unreleased also lists what NEW ships that OLD does not
	// (Report.Unreleased).
	Unreleased bool
}

// Report is what changed from OLD to NEW.
type Report struct {
	Old       string          `json:"old"`
	New       string          `json:"new"`
	Fragment  bool            `json:"fragment,omitempty"`
	Semantics graph.Semantics `json:"semantics"`
	Summary   Counts          `json:"summary"`
	// Packages lists the packages with a change, by name.
	Packages []PackageDiff `json:"packages"`
	// FailOn and Failures: the kinds asked for and the changes of those
	// kinds, one each; any failure makes the gate fail.
	FailOn   []FailOn  `json:"failOn,omitempty"`
	Failures []Failure `json:"failures,omitempty"`
	// Unreleased is what NEW ships that OLD does not, when asked for.
	Unreleased *Unreleased `json:"-"`
}

// Counts sum the changes of a Report. Channels and bundles of added and
// removed packages count as added and removed; entries, heads and edges
// are counted in channels present on both sides.
type Counts struct {
	PackagesAdded   int `json:"packagesAdded"`
	PackagesRemoved int `json:"packagesRemoved"`
	PackagesChanged int `json:"packagesChanged"`
	ChannelsAdded   int `json:"channelsAdded"`
	ChannelsRemoved int `json:"channelsRemoved"`
	BundlesAdded    int `json:"bundlesAdded"`
	BundlesRemoved  int `json:"bundlesRemoved"`
	BundlesChanged  int `json:"bundlesChanged"`
	EntriesAdded    int `json:"entriesAdded"`
	EntriesRemoved  int `json:"entriesRemoved"`
	HeadsMoved      int `json:"headsMoved"`
	EdgesAdded      int `json:"edgesAdded"`
	EdgesRemoved    int `json:"edgesRemoved"`
	LostPaths       int `json:"lostPaths"`
}

// Package change kinds.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// PackageDiff is what changed in one package. An added or removed package
// lists its channels and bundles as added or removed, and nothing else.
type PackageDiff struct {
	Name   string `json:"name"`
	Change string `json:"change"`

	DefaultChannel *StringChange `json:"defaultChannel,omitempty"`
	// Metadata names the olm.package fields that changed besides the
	// default channel: description, icon, properties.
	Metadata []string `json:"metadata,omitempty"`

	ChannelsAdded   []ChannelRef   `json:"channelsAdded,omitempty"`
	ChannelsRemoved []ChannelRef   `json:"channelsRemoved,omitempty"`
	BundlesAdded    []BundleRef    `json:"bundlesAdded,omitempty"`
	BundlesRemoved  []BundleRef    `json:"bundlesRemoved,omitempty"`
	BundlesChanged  []BundleChange `json:"bundlesChanged,omitempty"`
	// Channels lists the channels present on both sides that changed.
	Channels []ChannelDiff `json:"channels,omitempty"`

	DeprecationsAdded   []DeprecationRef `json:"deprecationsAdded,omitempty"`
	DeprecationsRemoved []DeprecationRef `json:"deprecationsRemoved,omitempty"`
	// DeprecationsChanged hold the new message.
	DeprecationsChanged []DeprecationRef `json:"deprecationsChanged,omitempty"`

	// Other blobs (unknown schemas), as "schema name".
	OthersAdded   []string `json:"othersAdded,omitempty"`
	OthersRemoved []string `json:"othersRemoved,omitempty"`
	OthersChanged []string `json:"othersChanged,omitempty"`

	// LostPaths are the upgrade paths to the head that OLD had and NEW
	// has not.
	LostPaths []LostPath `json:"lostPaths,omitempty"`
}

// StringChange is a value before and after.
type StringChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// BundleRef names a bundle and its version.
type BundleRef struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

func (b BundleRef) String() string {
	if b.Version == "" {
		return b.Name
	}
	return b.Name + " (" + b.Version + ")"
}

// ChannelRef names a channel, its head and its number of entries.
type ChannelRef struct {
	Name    string     `json:"name"`
	Head    *BundleRef `json:"head,omitempty"`
	Entries int        `json:"entries"`
}

// BundleChange is a bundle present on both sides whose blob changed.
type BundleChange struct {
	Name    string        `json:"name"`
	Version string        `json:"version,omitempty"`
	Image   *StringChange `json:"image,omitempty"`
	// Related images, as "image" or "image (name)".
	RelatedImagesAdded   []string         `json:"relatedImagesAdded,omitempty"`
	RelatedImagesRemoved []string         `json:"relatedImagesRemoved,omitempty"`
	Properties           []PropertyChange `json:"properties,omitempty"`
}

// PropertyChange is how the values of one property type differ. Values
// are compared as a multiset (their order does not matter); values larger
// than 256 bytes are counted, not shown.
type PropertyChange struct {
	Type          string            `json:"type"`
	Added         int               `json:"added"`
	Removed       int               `json:"removed"`
	AddedValues   []json.RawMessage `json:"addedValues,omitempty"`
	RemovedValues []json.RawMessage `json:"removedValues,omitempty"`
}

// ChannelDiff is what changed in a channel present on both sides.
type ChannelDiff struct {
	Name           string            `json:"name"`
	Head           *HeadChange       `json:"head,omitempty"`
	EntriesAdded   []BundleRef       `json:"entriesAdded,omitempty"`
	EntriesRemoved []BundleRef       `json:"entriesRemoved,omitempty"`
	EdgesAdded     []graph.Edge      `json:"edgesAdded,omitempty"`
	EdgesRemoved   []graph.Edge      `json:"edgesRemoved,omitempty"`
	SkipRanges     []SkipRangeChange `json:"skipRanges,omitempty"`
}

// HeadChange is a channel head that moved. Old or New is nil when that
// side has no single head; its Problem says why.
type HeadChange struct {
	Old        *BundleRef `json:"old,omitempty"`
	New        *BundleRef `json:"new,omitempty"`
	OldProblem string     `json:"oldProblem,omitempty"`
	NewProblem string     `json:"newProblem,omitempty"`
	// Regressed is set when the new head is not newer than the old one, or
	// the channel lost its head.
	Regressed bool `json:"regressed"`
}

// SkipRangeChange is an entry whose skipRange text changed (the edges it
// makes are in EdgesAdded and EdgesRemoved).
type SkipRangeChange struct {
	Entry string `json:"entry"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// DeprecationRef is one deprecation entry.
type DeprecationRef struct {
	Schema  string `json:"schema"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// LostPath is a bundle that reached the head of its channel in OLD and
// does not in NEW (for V1: the newest version of the channel).
type LostPath struct {
	Channel string    `json:"channel"`
	From    BundleRef `json:"from"`
	// OldHead is what From reached in OLD; NewHead what it should reach
	// in NEW (nil when the channel has no single head).
	OldHead BundleRef  `json:"oldHead"`
	NewHead *BundleRef `json:"newHead,omitempty"`
	// Reason is why the walk in NEW stops short, from pkg/graph.
	Reason string `json:"reason"`
}

// Failure is one change of a kind the gate fails on.
type Failure struct {
	Kind    FailOn `json:"kind"`
	Package string `json:"package"`
	Message string `json:"message"`
}

// Failed reports whether the gate fails.
func (r *Report) Failed() bool { return len(r.Failures) > 0 }

// Empty reports whether nothing changed.
func (r *Report) Empty() bool { return len(r.Packages) == 0 }

// Diff compares two summaries.
func Diff(old, cur *Summary, opts DiffOptions) (*Report, error) {
	if opts.Semantics == "" {
		opts.Semantics = graph.Classic
	}
	if _, err := graph.ParseSemantics(string(opts.Semantics)); err != nil {
		return nil, err
	}
	r := &Report{Old: old.Source, New: cur.Source, Fragment: opts.Fragment, Semantics: opts.Semantics, FailOn: opts.FailOn, Packages: []PackageDiff{}}
	names := map[string]bool{}
	for n := range cur.Packages {
		names[n] = true
	}
	if !opts.Fragment {
		for n := range old.Packages {
			names[n] = true
		}
	}
	if len(opts.Packages) > 0 {
		want := map[string]bool{}
		for _, n := range opts.Packages {
			if old.Packages[n] == nil && cur.Packages[n] == nil {
				all := slices.Collect(maps.Keys(old.Packages))
				all = slices.AppendSeq(all, maps.Keys(cur.Packages))
				return nil, suggest.Unknown("package", n, fmt.Sprintf("in %s or %s", old.Source, cur.Source), all)
			}
			want[n] = true
		}
		for n := range names {
			if !want[n] {
				delete(names, n)
			}
		}
	}
	for _, name := range sortedNames(names) {
		op, np := old.Packages[name], cur.Packages[name]
		if name == "" {
			// Blobs of no package are compared as a whole, never added or
			// removed as a package.
			if op == nil {
				op = emptySummary()
			}
			if np == nil {
				np = emptySummary()
			}
		}
		var d *PackageDiff
		var err error
		switch {
		case op == nil:
			d = wholePackage(np, cur.Graph.Package(name), Added)
		case np == nil:
			d = wholePackage(op, old.Graph.Package(name), Removed)
		default:
			d, err = diffPackage(op, np, old.Graph.Package(name), cur.Graph.Package(name), opts.Semantics)
			if err != nil {
				return nil, err
			}
		}
		if d != nil {
			r.Packages = append(r.Packages, *d)
		}
	}
	r.count()
	r.failures()
	if slices.Contains(opts.FailOn, FailPruned) {
		pre := opts.PreReleaseChannels
		if pre == nil {
			pre = DefaultPreReleaseChannels
		}
		r.prunedFailures(pre)
	}
	if opts.Unreleased {
		r.Unreleased = FindUnreleased(old, cur, opts.Packages)
	}
	return r, nil
}

func emptySummary() *PackageSummary {
	return &PackageSummary{Bundles: map[string]*BundleSummary{}, Deprecations: map[declcfg.PackageScopedReference]string{}, meta: map[string]uint64{}, others: map[string][]uint64{}}
}

// emptyGraph stands in for a package that has blobs but no graph.
var emptyGraph = &graph.PackageGraph{Nodes: map[string]*graph.Node{}}

func channelRef(c *graph.ChannelGraph, p *graph.PackageGraph) ChannelRef {
	ref := ChannelRef{Name: c.Name, Entries: len(c.Entries)}
	if c.ChainErr == nil && c.Head != "" {
		h := nodeRef(p, c.Head)
		ref.Head = &h
	}
	return ref
}

func nodeRef(p *graph.PackageGraph, name string) BundleRef {
	ref := BundleRef{Name: name}
	if n := p.Nodes[name]; n != nil {
		ref.Version = n.VersionString()
	}
	return ref
}

func wholePackage(s *PackageSummary, g *graph.PackageGraph, change string) *PackageDiff {
	if g == nil {
		g = emptyGraph
	}
	d := &PackageDiff{Name: s.Name, Change: change}
	var chans []ChannelRef
	for _, c := range g.Channels {
		chans = append(chans, channelRef(c, g))
	}
	var bundles []BundleRef
	for _, n := range sortedNames(s.Bundles) {
		bundles = append(bundles, BundleRef{Name: n, Version: s.Bundles[n].Version})
	}
	if change == Added {
		d.ChannelsAdded, d.BundlesAdded = chans, bundles
	} else {
		d.ChannelsRemoved, d.BundlesRemoved = chans, bundles
	}
	return d
}

func diffPackage(op, np *PackageSummary, og, ng *graph.PackageGraph, sem graph.Semantics) (*PackageDiff, error) {
	if og == nil {
		og = emptyGraph
	}
	if ng == nil {
		ng = emptyGraph
	}
	d := &PackageDiff{Name: op.Name, Change: Changed}
	if op.DefaultChannel != np.DefaultChannel {
		d.DefaultChannel = &StringChange{Old: op.DefaultChannel, New: np.DefaultChannel}
	}
	for _, k := range []string{"description", "icon", "properties"} {
		if op.meta[k] != np.meta[k] {
			d.Metadata = append(d.Metadata, k)
		}
	}

	for _, c := range ng.Channels {
		if og.Channel(c.Name) == nil {
			d.ChannelsAdded = append(d.ChannelsAdded, channelRef(c, ng))
		}
	}
	for _, c := range og.Channels {
		if ng.Channel(c.Name) == nil {
			d.ChannelsRemoved = append(d.ChannelsRemoved, channelRef(c, og))
		}
	}

	for _, n := range sortedNames(np.Bundles) {
		if op.Bundles[n] == nil {
			d.BundlesAdded = append(d.BundlesAdded, BundleRef{Name: n, Version: np.Bundles[n].Version})
		}
	}
	for _, n := range sortedNames(op.Bundles) {
		nb := np.Bundles[n]
		if nb == nil {
			d.BundlesRemoved = append(d.BundlesRemoved, BundleRef{Name: n, Version: op.Bundles[n].Version})
			continue
		}
		if ch := diffBundle(op.Bundles[n], nb); ch != nil {
			d.BundlesChanged = append(d.BundlesChanged, *ch)
		}
	}

	for _, oc := range og.Channels {
		nc := ng.Channel(oc.Name)
		if nc == nil {
			continue
		}
		if cd := diffChannel(oc, nc, og, ng); cd != nil {
			d.Channels = append(d.Channels, *cd)
		}
		if sameWalks(oc, nc, og, ng) {
			continue
		}
		lost, err := lostPaths(oc, nc, og, ng, sem)
		if err != nil {
			return nil, err
		}
		d.LostPaths = append(d.LostPaths, lost...)
	}

	diffDeprecations(d, op, np)
	diffOthers(d, op, np)

	if d.DefaultChannel == nil && len(d.Metadata) == 0 && len(d.ChannelsAdded) == 0 && len(d.ChannelsRemoved) == 0 &&
		len(d.BundlesAdded) == 0 && len(d.BundlesRemoved) == 0 && len(d.BundlesChanged) == 0 && len(d.Channels) == 0 &&
		len(d.DeprecationsAdded) == 0 && len(d.DeprecationsRemoved) == 0 && len(d.DeprecationsChanged) == 0 &&
		len(d.OthersAdded) == 0 && len(d.OthersRemoved) == 0 && len(d.OthersChanged) == 0 && len(d.LostPaths) == 0 {
		return nil, nil
	}
	return d, nil
}

func diffBundle(o, n *BundleSummary) *BundleChange {
	ch := &BundleChange{Name: n.Name, Version: n.Version}
	changed := false
	if o.Image != n.Image {
		ch.Image = &StringChange{Old: o.Image, New: n.Image}
		changed = true
	}
	ch.RelatedImagesRemoved, ch.RelatedImagesAdded = sortedListDiff(o.RelatedImages, n.RelatedImages)
	if len(ch.RelatedImagesAdded)+len(ch.RelatedImagesRemoved) > 0 {
		changed = true
	}
	types := map[string]bool{}
	for _, t := range o.propertyTypes() {
		types[t] = true
	}
	for _, t := range n.propertyTypes() {
		types[t] = true
	}
	for _, t := range sortedNames(types) {
		if pc := diffProps(t, o.propsOf(t), n.propsOf(t)); pc != nil {
			ch.Properties = append(ch.Properties, *pc)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return ch
}

// diffProps compares two lists of values of one type, each sorted by
// hash, as multisets.
func diffProps(typ string, o, n []propSum) *PropertyChange {
	pc := &PropertyChange{Type: typ}
	i, j := 0, 0
	for i < len(o) || j < len(n) {
		switch {
		case j == len(n) || (i < len(o) && o[i].hash < n[j].hash):
			pc.Removed++
			if o[i].value != nil {
				pc.RemovedValues = append(pc.RemovedValues, o[i].value)
			}
			i++
		case i == len(o) || n[j].hash < o[i].hash:
			pc.Added++
			if n[j].value != nil {
				pc.AddedValues = append(pc.AddedValues, n[j].value)
			}
			j++
		default:
			i++
			j++
		}
	}
	if pc.Added == 0 && pc.Removed == 0 {
		return nil
	}
	return pc
}

// sortedListDiff returns what is only in a and only in b, both sorted.
func sortedListDiff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlyA, onlyB
}

func edgeKey(e graph.Edge) string { return e.From + "\x00" + e.To + "\x00" + string(e.Kind) }

func diffChannel(oc, nc *graph.ChannelGraph, og, ng *graph.PackageGraph) *ChannelDiff {
	cd := &ChannelDiff{Name: oc.Name}
	changed := false
	if oc.Head != nc.Head || (oc.ChainErr == nil) != (nc.ChainErr == nil) {
		hc := &HeadChange{}
		if oc.ChainErr != nil {
			hc.OldProblem = oc.ChainErr.Error()
		} else {
			r := nodeRef(og, oc.Head)
			hc.Old = &r
		}
		if nc.ChainErr != nil {
			hc.NewProblem = nc.ChainErr.Error()
		} else {
			r := nodeRef(ng, nc.Head)
			hc.New = &r
		}
		if hc.Old != nil {
			if hc.New == nil {
				hc.Regressed = true
			} else {
				on, nn := og.Nodes[oc.Head], ng.Nodes[nc.Head]
				hc.Regressed = on != nil && on.HasVersion && (nn == nil || !nn.HasVersion || !nn.Version.GT(on.Version))
			}
		}
		if hc.Old != nil || hc.New != nil {
			cd.Head = hc
			changed = true
		}
	}
	seen := map[string]bool{}
	for _, e := range oc.Entries {
		seen[e.Name] = true
	}
	newSeen := map[string]bool{}
	for _, e := range nc.Entries {
		newSeen[e.Name] = true
		if !seen[e.Name] {
			seen[e.Name] = true // report a duplicate entry once
			cd.EntriesAdded = append(cd.EntriesAdded, nodeRef(ng, e.Name))
		}
	}
	reported := map[string]bool{}
	for _, e := range oc.Entries {
		if !newSeen[e.Name] && !reported[e.Name] {
			reported[e.Name] = true
			cd.EntriesRemoved = append(cd.EntriesRemoved, nodeRef(og, e.Name))
		}
	}
	oldEdges, newEdges := map[string]graph.Edge{}, map[string]graph.Edge{}
	for _, e := range oc.Edges() {
		oldEdges[edgeKey(e)] = e
	}
	for _, e := range nc.Edges() {
		k := edgeKey(e)
		if _, dup := newEdges[k]; dup {
			continue
		}
		newEdges[k] = e
		if _, ok := oldEdges[k]; !ok {
			cd.EdgesAdded = append(cd.EdgesAdded, e)
		}
	}
	done := map[string]bool{}
	for _, e := range oc.Edges() {
		k := edgeKey(e)
		if _, ok := newEdges[k]; !ok && !done[k] {
			done[k] = true
			cd.EdgesRemoved = append(cd.EdgesRemoved, e)
		}
	}
	ranged := map[string]bool{}
	for _, e := range nc.Entries {
		if ranged[e.Name] {
			continue
		}
		ranged[e.Name] = true
		ne, _ := nc.Entry(e.Name) // the first entry of a name counts, as in the graph
		if oe, ok := oc.Entry(e.Name); ok && oe.SkipRange != ne.SkipRange {
			cd.SkipRanges = append(cd.SkipRanges, SkipRangeChange{Entry: e.Name, Old: oe.SkipRange, New: ne.SkipRange})
		}
	}
	if len(cd.EntriesAdded)+len(cd.EntriesRemoved)+len(cd.EdgesAdded)+len(cd.EdgesRemoved)+len(cd.SkipRanges) > 0 {
		changed = true
	}
	if !changed {
		return nil
	}
	return cd
}

// sameWalks reports whether every upgrade walk from the entries of oc is
// the same in nc: same entries, edges, versions and deprecations.
func sameWalks(oc, nc *graph.ChannelGraph, og, ng *graph.PackageGraph) bool {
	if len(oc.Entries) != len(nc.Entries) || oc.Head != nc.Head || (oc.ChainErr == nil) != (nc.ChainErr == nil) {
		return false
	}
	for i, oe := range oc.Entries {
		ne := nc.Entries[i]
		if oe.Name != ne.Name || oe.Replaces != ne.Replaces || oe.SkipRange != ne.SkipRange || strings.Join(oe.Skips, "\x00") != strings.Join(ne.Skips, "\x00") {
			return false
		}
		on, nn := og.Nodes[oe.Name], ng.Nodes[ne.Name]
		if (on == nil) != (nn == nil) {
			return false
		}
		if on != nil && (on.HasVersion != nn.HasVersion || on.Deprecated != nn.Deprecated || on.VersionString() != nn.VersionString()) {
			return false
		}
	}
	return true
}

// lostPaths finds the entries of oc that reach the head of oc in OLD and
// no longer reach the head of nc in NEW.
func lostPaths(oc, nc *graph.ChannelGraph, og, ng *graph.PackageGraph, sem graph.Semantics) ([]LostPath, error) {
	oldReach, err := og.NewReach(sem, []string{oc.Name})
	if err != nil {
		return nil, err
	}
	reached, err := oldReach.ReachesEntries()
	if err != nil {
		return nil, err
	}
	newReach, err := ng.NewReach(sem, []string{nc.Name})
	if err != nil {
		return nil, err
	}
	oldHead, newHead := target(oc, og, sem), target(nc, ng, sem)
	var out []LostPath
	var lostNodes []*graph.Node
	for _, name := range sortedNames(reached) {
		if !reached[name] {
			continue
		}
		on := og.Nodes[name]
		in := graph.Installed{Name: name, Version: on.Version, HasVersion: true}
		if nn := ng.Nodes[name]; nn != nil && nn.HasVersion {
			in.Version = nn.Version
		}
		ok, err := newReach.Reaches(in)
		if err != nil {
			return nil, err
		}
		if ok {
			continue
		}
		paths, err := ng.Path(in, graph.PathOptions{Semantics: sem, Channels: []string{nc.Name}})
		if err != nil {
			return nil, err
		}
		lp := LostPath{Channel: oc.Name, From: BundleRef{Name: name, Version: on.VersionString()}, Reason: paths[0].Reason}
		if oldHead != nil {
			lp.OldHead = *oldHead
		}
		lp.NewHead = newHead
		out = append(out, lp)
		lostNodes = append(lostNodes, on)
	}
	// Oldest first.
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return lostNodes[idx[a]].Version.LT(lostNodes[idx[b]].Version)
	})
	sorted := make([]LostPath, len(out))
	for i, k := range idx {
		sorted[i] = out[k]
	}
	return sorted, nil
}

// target is what a walk in c aims for: the head (Classic) or the newest
// version (V1); nil when there is none.
func target(c *graph.ChannelGraph, p *graph.PackageGraph, sem graph.Semantics) *BundleRef {
	if sem == graph.Classic {
		if c.ChainErr != nil || c.Head == "" {
			return nil
		}
		r := nodeRef(p, c.Head)
		return &r
	}
	var best *graph.Node
	for _, e := range c.Entries {
		if n := p.Nodes[e.Name]; n != nil && n.HasVersion && (best == nil || n.Version.GT(best.Version)) {
			best = n
		}
	}
	if best == nil {
		return nil
	}
	return &BundleRef{Name: best.Name, Version: best.VersionString()}
}

func refLess(a, b declcfg.PackageScopedReference) bool {
	if a.Schema != b.Schema {
		return a.Schema < b.Schema
	}
	return a.Name < b.Name
}

func diffDeprecations(d *PackageDiff, op, np *PackageSummary) {
	var refs []declcfg.PackageScopedReference
	seen := map[declcfg.PackageScopedReference]bool{}
	for r := range op.Deprecations {
		refs, seen[r] = append(refs, r), true
	}
	for r := range np.Deprecations {
		if !seen[r] {
			refs = append(refs, r)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refLess(refs[i], refs[j]) })
	for _, r := range refs {
		om, inOld := op.Deprecations[r]
		nm, inNew := np.Deprecations[r]
		switch {
		case !inOld:
			d.DeprecationsAdded = append(d.DeprecationsAdded, DeprecationRef{Schema: r.Schema, Name: r.Name, Message: nm})
		case !inNew:
			d.DeprecationsRemoved = append(d.DeprecationsRemoved, DeprecationRef{Schema: r.Schema, Name: r.Name, Message: om})
		case om != nm:
			d.DeprecationsChanged = append(d.DeprecationsChanged, DeprecationRef{Schema: r.Schema, Name: r.Name, Message: nm})
		}
	}
}

func diffOthers(d *PackageDiff, op, np *PackageSummary) {
	keys := map[string]bool{}
	for k := range op.others {
		keys[k] = true
	}
	for k := range np.others {
		keys[k] = true
	}
	for _, k := range sortedNames(keys) {
		o, inOld := op.others[k]
		n, inNew := np.others[k]
		switch {
		case !inOld:
			d.OthersAdded = append(d.OthersAdded, k)
		case !inNew:
			d.OthersRemoved = append(d.OthersRemoved, k)
		case !equalHashes(o, n):
			d.OthersChanged = append(d.OthersChanged, k)
		}
	}
}

func equalHashes(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (r *Report) count() {
	c := &r.Summary
	for _, p := range r.Packages {
		switch {
		case p.Name == "":
		case p.Change == Added:
			c.PackagesAdded++
		case p.Change == Removed:
			c.PackagesRemoved++
		default:
			c.PackagesChanged++
		}
		c.ChannelsAdded += len(p.ChannelsAdded)
		c.ChannelsRemoved += len(p.ChannelsRemoved)
		c.BundlesAdded += len(p.BundlesAdded)
		c.BundlesRemoved += len(p.BundlesRemoved)
		c.BundlesChanged += len(p.BundlesChanged)
		for _, ch := range p.Channels {
			c.EntriesAdded += len(ch.EntriesAdded)
			c.EntriesRemoved += len(ch.EntriesRemoved)
			c.EdgesAdded += len(ch.EdgesAdded)
			c.EdgesRemoved += len(ch.EdgesRemoved)
			if ch.Head != nil {
				c.HeadsMoved++
			}
		}
		c.LostPaths += len(p.LostPaths)
	}
}

func (r *Report) failures() {
	want := map[FailOn]bool{}
	for _, k := range r.FailOn {
		want[k] = true
	}
	add := func(k FailOn, pkg, format string, args ...any) {
		r.Failures = append(r.Failures, Failure{Kind: k, Package: pkg, Message: fmt.Sprintf(format, args...)})
	}
	for _, p := range r.Packages {
		if want[FailRemoved] {
			if p.Change == Removed {
				add(FailRemoved, p.Name, "package %q was removed (%s, %s)", p.Name, plural(len(p.ChannelsRemoved), "channel", "channels"), plural(len(p.BundlesRemoved), "bundle", "bundles"))
			} else {
				for _, c := range p.ChannelsRemoved {
					add(FailRemoved, p.Name, "package %q: channel %q was removed", p.Name, c.Name)
				}
				removed := map[string]bool{}
				for _, b := range p.BundlesRemoved {
					removed[b.Name] = true
					add(FailRemoved, p.Name, "package %q: bundle %s was removed", p.Name, quoteRef(b))
				}
				for _, c := range p.Channels {
					for _, e := range c.EntriesRemoved {
						if !removed[e.Name] {
							add(FailRemoved, p.Name, "package %q: channel %q no longer lists bundle %s", p.Name, c.Name, quoteRef(e))
						}
					}
				}
			}
		}
		if want[FailHeads] {
			for _, c := range p.Channels {
				h := c.Head
				if h == nil || !h.Regressed {
					continue
				}
				if h.New == nil {
					add(FailHeads, p.Name, "package %q: channel %q had the head %s and now has none: %s", p.Name, c.Name, h.Old, h.NewProblem)
				} else {
					add(FailHeads, p.Name, "package %q: the head of channel %q moved from %s to %s, which is not newer", p.Name, c.Name, h.Old, h.New)
				}
			}
		}
		if want[FailPaths] {
			for _, lp := range p.LostPaths {
				add(FailPaths, p.Name, "package %q: channel %q: lost the upgrade path from %s: %s", p.Name, lp.Channel, lp.From, lp.Reason)
			}
		}
	}
}

func quoteRef(b BundleRef) string {
	if b.Version == "" {
		return fmt.Sprintf("%q", b.Name)
	}
	return fmt.Sprintf("%q (%s)", b.Name, b.Version)
}
