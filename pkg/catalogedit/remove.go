package catalogedit

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Removing bundles, and re-stitching the channels they leave.
//
// When an entry X leaves a channel, every entry that upgraded from X (it
// replaces or skips X) takes over X's own incoming edges: one that
// replaced X now replaces what X replaced and skips what X skipped; one
// that skipped X now skips what X replaced and skipped. So every bundle
// that could upgrade through X still can. When X was the head, the
// entries it replaced or skipped become heads; the newest one stays head
// and skips the others. X's name stays in the skips of the entries that
// took over, which is how OLM lets installs of a bundle that left the
// catalog upgrade (reported as kept paths); DropEdges drops it, and those
// installs have nowhere to go. What the new graph can no longer do is
// reported as lost paths.

// StubResolver returns the name of the bundle a template's stub image
// renders to.
type StubResolver func(ctx context.Context, image string) (string, error)

// RemoveOptions configure RemoveBundles.
type RemoveOptions struct {
	// DropEdges drops the removed bundles' names from the skips of the
	// entries that upgraded from them: installs of a removed bundle are
	// then left without an upgrade. By default the names are kept.
	DropEdges bool
	// Resolve names a template's bundle stubs that carry no name.
	Resolve StubResolver
}

// LostPath is an upgrade that the catalog no longer offers.
type LostPath struct {
	Channel string `json:"channel"`
	// From is the bundle that loses the upgrades.
	From string `json:"from"`
	// To lists the bundles From no longer reaches; empty when From was
	// removed and its installs have no upgrade left in the channel.
	To      []string `json:"to,omitempty"`
	Removed bool     `json:"removed,omitempty"`
	Message string   `json:"message"`
}

// KeptPath is a removed bundle whose installs still upgrade in a channel,
// through the edges that keep its name.
type KeptPath struct {
	Channel string `json:"channel"`
	// From is the removed bundle; To the bundles its installs upgrade to.
	From    string   `json:"from"`
	To      []string `json:"to"`
	Message string   `json:"message"`
}

// KeptPaths returns the removed bundles whose installs still upgrade,
// after RemoveBundles.
func (c *Catalog) KeptPaths() []KeptPath { return c.kept }

// RemoveBundles removes bundles of pkg, re-stitches its channels and
// returns the upgrade paths lost.
func (c *Catalog) RemoveBundles(ctx context.Context, pkg string, names []string, opts RemoveOptions) ([]LostPath, error) {
	pb, err := c.requirePackage(pkg)
	if err != nil {
		return nil, err
	}
	remove := map[string]bool{}
	for _, n := range names {
		n, err := c.resolveBundle(pkg, n)
		if err != nil {
			return nil, err
		}
		remove[n] = true
	}
	all := c.bundleNames(pkg)
	left := 0
	for n := range all {
		if !remove[n] {
			left++
		}
	}
	if left == 0 {
		return nil, refusef("removing %s would leave package %q without bundles", strings.Join(sortedKeys(remove), ", "), pkg)
	}
	before := c.packageConfig(pkg)

	removedChannels := map[string]bool{}
	for _, chb := range c.Channels(pkg) {
		es := chb.ch.Entries
		hit := false
		for _, e := range es {
			if remove[e.Name] {
				hit = true
			}
		}
		if !hit {
			continue
		}
		after, err := c.restitch(pkg, chb.Name, es, remove, !opts.DropEdges)
		if err != nil {
			return nil, err
		}
		if len(after) == 0 {
			if chb.Name == pb.pkg.DefaultChannel {
				return nil, refusef("removing %s would empty channel %q, the default channel of package %q; make another channel the default first (opm catalog set-default-channel)", strings.Join(sortedKeys(remove), ", "), chb.Name, pkg)
			}
			c.Delete(chb)
			removedChannels[chb.Name] = true
			c.note(Change{Kind: KindChannelRemoved, Package: pkg, Channel: chb.Name, File: c.fileOf(chb), Message: fmt.Sprintf("removed channel %s (no bundle left in it)", chb.Name)})
			continue
		}
		if err := checkChannelEdit("removing "+strings.Join(sortedKeys(remove), ", "), pkg, chb.Name, es, after); err != nil {
			return nil, err
		}
		c.noteEntryChanges(pkg, chb, es, after)
		if err := c.writeEntries(chb, after); err != nil {
			return nil, err
		}
	}

	// the bundle blobs (a template's stubs)
	if c.Template {
		if err := c.removeStubs(ctx, pkg, sortedKeys(remove), opts.Resolve); err != nil {
			return nil, err
		}
	} else {
		for _, n := range sortedKeys(remove) {
			b := c.Bundle(pkg, n)
			c.Delete(b)
			c.note(Change{Kind: KindBundleRemoved, Package: pkg, Bundle: n, File: c.fileOf(b), Message: "removed bundle " + n})
		}
	}

	// deprecations of what is gone
	if d := c.Deprecation(pkg); d != nil {
		var drop []int
		for i, e := range d.dep.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaBundle:
				if remove[e.Reference.Name] {
					drop = append(drop, i)
				}
			case declcfg.SchemaChannel:
				if removedChannels[e.Reference.Name] {
					drop = append(drop, i)
				}
			}
		}
		if len(drop) > 0 {
			for _, i := range drop {
				r := d.dep.Entries[i].Reference
				kind := strings.TrimPrefix(r.Schema, "olm.")
				c.note(Change{Kind: KindUndeprecated, Package: pkg, Channel: pick(kind == TargetChannel, r.Name), Bundle: pick(kind == TargetBundle, r.Name), File: c.fileOf(d),
					Message: fmt.Sprintf("removed the deprecation of %s %s", kind, r.Name)})
			}
			if err := c.dropDeprecationEntries(pkg, d, drop); err != nil {
				return nil, err
			}
		}
	}
	return c.lostPaths(pkg, before, remove)
}

// bundleNames returns the bundles of pkg (for a template: its entries).
func (c *Catalog) bundleNames(pkg string) map[string]bool {
	if c.Template {
		return c.entryNames(pkg)
	}
	out := map[string]bool{}
	for _, b := range c.Bundles(pkg) {
		out[b.Name] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// restitch removes the entries in remove from a channel's entries and
// reconnects the rest (see the top of this file).
func (c *Catalog) restitch(pkg, chName string, entries []declcfg.ChannelEntry, remove map[string]bool, keepEdges bool) ([]declcfg.ChannelEntry, error) {
	es := make([]declcfg.ChannelEntry, len(entries))
	for i, e := range entries {
		es[i] = e
		es[i].Skips = slices.Clone(e.Skips)
	}
	addSkip := func(e *declcfg.ChannelEntry, s string) {
		if s == "" || s == e.Name || s == e.Replaces || slices.Contains(e.Skips, s) {
			return
		}
		if remove[s] && c.rangeCovers(pkg, e.SkipRange, s) {
			return // a removed bundle whose installs e's skipRange takes
		}
		e.Skips = append(e.Skips, s)
	}
	var order []string
	for _, e := range es {
		if remove[e.Name] {
			order = append(order, e.Name)
		}
	}
	for _, x := range order {
		xi := slices.IndexFunc(es, func(e declcfg.ChannelEntry) bool { return e.Name == x })
		ex := es[xi]
		upgraded := false
		for i := range es {
			if i == xi {
				continue
			}
			e := &es[i]
			repl := e.Replaces == x
			skip := slices.Contains(e.Skips, x)
			if !repl && !skip {
				continue
			}
			upgraded = true
			// x's name is kept for its installs, unless e's skipRange
			// already takes them
			keepX := keepEdges && !c.rangeCovers(pkg, e.SkipRange, x)
			if !keepX {
				e.Skips = slices.DeleteFunc(e.Skips, func(s string) bool { return s == x })
			}
			if repl {
				e.Replaces = ex.Replaces
				if e.Replaces == e.Name {
					e.Replaces = ""
				}
				e.Skips = slices.DeleteFunc(e.Skips, func(s string) bool { return s == e.Replaces })
			} else {
				addSkip(e, ex.Replaces)
			}
			if keepX {
				addSkip(e, x) // where x already was, or last
			}
			for _, s := range ex.Skips {
				addSkip(e, s)
			}
		}
		es = slices.Delete(es, xi, xi+1)
		if upgraded || len(es) == 0 {
			continue
		}
		// x was the head: the newest of the new heads takes over
		_, err := (&graph.Channel{Entries: graphEntries(es)}).Head()
		mh, ok := err.(*graph.MultipleHeadsError)
		if !ok {
			continue
		}
		newest := ""
		var best semver.Version
		for _, h := range mh.Heads {
			v, known := c.versionOf(pkg, h)
			if !known {
				return nil, refusef("removing %s, the head of channel %q of package %q, leaves %s as heads, and their versions are unknown; remove them together or edit the channel", x, chName, pkg, strings.Join(mh.Heads, ", "))
			}
			if newest == "" || v.GT(best) {
				newest, best = h, v
			}
		}
		i := slices.IndexFunc(es, func(e declcfg.ChannelEntry) bool { return e.Name == newest })
		for _, h := range mh.Heads {
			if h != newest {
				addSkip(&es[i], h)
			}
		}
	}
	return es, nil
}

// rangeCovers reports whether skipRange covers the version of bundle x of
// pkg: then installs of x upgrade through the range, and x's name need not
// be kept in skips.
func (c *Catalog) rangeCovers(pkg, skipRange, x string) bool {
	if skipRange == "" {
		return false
	}
	v, ok := c.versionOf(pkg, x)
	if !ok {
		return false
	}
	r, err := versionrange.ParseSkipRange(skipRange)
	return err == nil && r.Contains(v)
}

// noteEntryChanges records how a channel's entries changed.
func (c *Catalog) noteEntryChanges(pkg string, chb *Blob, before, after []declcfg.ChannelEntry) {
	now := map[string]declcfg.ChannelEntry{}
	for _, e := range after {
		now[e.Name] = e
	}
	for _, e := range before {
		n, ok := now[e.Name]
		switch {
		case !ok:
			c.note(Change{Kind: KindEntryRemoved, Package: pkg, Channel: chb.Name, Bundle: e.Name, File: c.fileOf(chb),
				Message: fmt.Sprintf("removed %s from channel %s", e.Name, chb.Name)})
		case n.Replaces != e.Replaces || !slices.Equal(n.Skips, e.Skips):
			c.note(Change{Kind: KindEntryChanged, Package: pkg, Channel: chb.Name, Bundle: e.Name, File: c.fileOf(chb),
				Message: fmt.Sprintf("%s in channel %s: %s (was: %s)", e.Name, chb.Name, describeEdges(n), describeEdges(e))})
		}
	}
}

func describeEdges(e declcfg.ChannelEntry) string {
	var parts []string
	if e.Replaces != "" {
		parts = append(parts, "replaces "+e.Replaces)
	}
	if len(e.Skips) > 0 {
		parts = append(parts, "skips "+strings.Join(e.Skips, ", "))
	}
	if e.SkipRange != "" {
		parts = append(parts, "skipRange "+e.SkipRange)
	}
	if len(parts) == 0 {
		return "no upgrade edges"
	}
	return strings.Join(parts, "; ")
}

// removeStubs removes the template stubs of the named bundles: a stub
// that carries the bundle's name, else one whose image renders to it.
func (c *Catalog) removeStubs(ctx context.Context, pkg string, names []string, resolve StubResolver) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	found := map[string]*Blob{}
	for _, s := range c.Stubs() {
		if want[s.Name] && found[s.Name] == nil {
			found[s.Name] = s
		}
	}
	if len(found) < len(want) {
		if resolve == nil {
			return refusef("cannot tell which bundle stubs of the template are %s: stubs name only images", strings.Join(missing(want, found), ", "))
		}
		for _, s := range c.stubsNear(pkg) {
			if len(found) == len(want) {
				break
			}
			if s.Name != "" && want[s.Name] {
				continue
			}
			img := s.bundle.Image
			name, err := resolve(ctx, img)
			if err != nil {
				return fmt.Errorf("render bundle stub %s: %w", img, err)
			}
			if want[name] && found[name] == nil {
				found[name] = s
			}
		}
		if len(found) < len(want) {
			return refusef("no bundle stub of the template renders to %s", strings.Join(missing(want, found), ", "))
		}
	}
	for _, n := range names {
		s := found[n]
		c.Delete(s)
		c.note(Change{Kind: KindBundleRemoved, Bundle: n, File: c.fileOf(s), Message: fmt.Sprintf("removed bundle stub %s (%s)", s.bundle.Image, n)})
	}
	return nil
}

// stubsNear returns a template's stubs, those among pkg's items first.
func (c *Catalog) stubsNear(pkg string) []*Blob {
	near := map[*Blob]bool{}
	var out []*Blob
	for _, b := range c.templateBlock(pkg) {
		if !b.deleted && b.Schema == declcfg.SchemaBundle && b.Package == "" {
			near[b] = true
			out = append(out, b)
		}
	}
	for _, b := range c.Stubs() {
		if !near[b] {
			out = append(out, b)
		}
	}
	return out
}

func missing(want map[string]bool, found map[string]*Blob) []string {
	var out []string
	for n := range want {
		if found[n] == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// PruneSet returns the bundles of pkg that prune removes: those not among
// the keepLast newest of any channel, or those older than before.
func (c *Catalog) PruneSet(pkg string, keepLast int, before *semver.Version) ([]string, error) {
	if _, err := c.requirePackage(pkg); err != nil {
		return nil, err
	}
	if c.Template {
		return nil, refusef("prune needs bundle versions, which a basic template's bundle stubs do not carry; render the template first, or remove bundles by name with remove-bundle")
	}
	remove := map[string]bool{}
	switch {
	case before != nil:
		for _, b := range c.Bundles(pkg) {
			v, ok := c.versionOf(pkg, b.Name)
			if !ok {
				return nil, refusef("bundle %q of package %q has no valid version", b.Name, pkg)
			}
			if v.LT(*before) {
				remove[b.Name] = true
			}
		}
	case keepLast > 0:
		keep := map[string]bool{}
		for _, ch := range c.Channels(pkg) {
			type nv struct {
				name string
				v    semver.Version
			}
			var es []nv
			for _, e := range ch.ch.Entries {
				v, ok := c.versionOf(pkg, e.Name)
				if !ok {
					keep[e.Name] = true
					continue
				}
				es = append(es, nv{e.Name, v})
			}
			sort.SliceStable(es, func(i, j int) bool { return es[i].v.GT(es[j].v) })
			for i := 0; i < len(es) && i < keepLast; i++ {
				keep[es[i].name] = true
			}
		}
		for _, b := range c.Bundles(pkg) {
			if !keep[b.Name] {
				remove[b.Name] = true
			}
		}
	default:
		return nil, refusef("prune needs --keep-last N (N > 0) or --before VERSION")
	}
	return sortedKeys(remove), nil
}

// packageConfig returns the live typed blobs of pkg.
func (c *Catalog) packageConfig(pkg string) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	for _, b := range c.Blobs() {
		if b.Package != pkg {
			continue
		}
		switch {
		case b.pkg != nil:
			cfg.Packages = append(cfg.Packages, *b.pkg)
		case b.ch != nil:
			cfg.Channels = append(cfg.Channels, *b.ch)
		case b.bundle != nil && b.Package != "":
			cfg.Bundles = append(cfg.Bundles, *b.bundle)
		case b.dep != nil:
			cfg.Deprecations = append(cfg.Deprecations, *b.dep)
		}
	}
	return cfg
}

// lostPaths compares pkg's upgrade graphs before and after a removal.
func (c *Catalog) lostPaths(pkg string, before *declcfg.DeclarativeConfig, removed map[string]bool) ([]LostPath, error) {
	gb, err := graph.New(before)
	if err == nil {
		err = gb.CheckEdges(graph.MaxEdges) // reach walks every edge
	}
	if err != nil {
		return nil, err
	}
	ga, err := graph.New(c.packageConfig(pkg))
	if err != nil {
		return nil, err
	}
	pbefore, pafter := gb.Package(pkg), ga.Package(pkg)
	if pbefore == nil || pafter == nil {
		return nil, nil
	}
	var out []LostPath
	for _, chb := range pbefore.Channels {
		cha := pafter.Channel(chb.Name)
		if cha == nil {
			out = append(out, LostPath{Channel: chb.Name, Removed: true, Message: fmt.Sprintf("channel %s is gone with all its bundles", chb.Name)})
			continue
		}
		rb, ra := reach(chb), reach(cha)
		for _, e := range chb.Entries {
			if removed[e.Name] {
				continue
			}
			var lost []string
			for _, t := range sortedKeys(rb[e.Name]) {
				if !removed[t] && !ra[e.Name][t] {
					lost = append(lost, t)
				}
			}
			if len(lost) > 0 {
				out = append(out, LostPath{Channel: chb.Name, From: e.Name, To: lost,
					Message: fmt.Sprintf("%s: %s no longer upgrades to %s", chb.Name, e.Name, strings.Join(lost, ", "))})
			}
		}
		for _, e := range chb.Entries {
			if !removed[e.Name] {
				continue
			}
			in := graph.Installed{Name: e.Name}
			if n := pbefore.Nodes[e.Name]; n != nil && n.HasVersion {
				in.Version, in.HasVersion = n.Version, true
			}
			succ, err := pafter.Successors(in, []string{chb.Name})
			if err != nil {
				return nil, err
			}
			switch {
			case len(succ) > 0:
				to := make([]string, len(succ))
				for i, n := range succ {
					to[i] = n.Node.Name
				}
				c.kept = append(c.kept, KeptPath{Channel: chb.Name, From: e.Name, To: to,
					Message: fmt.Sprintf("%s: installs of %s (removed) still upgrade to %s", chb.Name, e.Name, strings.Join(to, ", "))})
			case len(rb[e.Name]) > 0:
				out = append(out, LostPath{Channel: chb.Name, From: e.Name, Removed: true,
					Message: fmt.Sprintf("%s: installs of %s (removed) have no upgrade left", chb.Name, e.Name)})
			}
		}
	}
	return out, nil
}

// reach returns, for every entry of a channel, the entries it can upgrade
// to through any number of edges.
func reach(ch *graph.ChannelGraph) map[string]map[string]bool {
	next := map[string][]string{}
	for _, e := range ch.Edges() {
		next[e.From] = append(next[e.From], e.To)
	}
	out := map[string]map[string]bool{}
	for _, e := range ch.Entries {
		seen := map[string]bool{}
		stack := []string{e.Name}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, t := range next[n] {
				if !seen[t] && t != e.Name {
					seen[t] = true
					stack = append(stack, t)
				}
			}
		}
		out[e.Name] = seen
	}
	return out
}
