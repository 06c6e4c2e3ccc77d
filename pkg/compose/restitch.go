package compose

import (
	"errors"
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// Keeping part of a channel.
//
// The entries kept keep what they declare, including replaces and skips
// that name removed bundles: those edges still upgrade a cluster that has
// the removed bundle installed, and the channel rules ignore names that
// are not entries. Two repairs keep every kept bundle upgrading as OLM
// upgraded it before, through the removed ones:
//
//   - The replaces chain. Where removed entries interrupt the chain between
//     two kept entries a (closer to the head) and b, a now replaces b and
//     skips the removed ones, so that clusters on them still upgrade to a.
//   - Entries off the chain. OLM classic upgrades such an entry x to the
//     chain entry closest to the head that replaces, skips or
//     skipRange-covers it. If that entry was removed, the first kept chain
//     entry above it now skips x; so does the original one if nothing kept
//     skips x any more (a skipRange does not keep x from being a head).
//
// No other edge is invented. Where selected entries cannot all stay (their
// upgrades all led to removed bundles above every kept one, so each would
// be a head of its own), the head whose upgrade graph holds the most kept
// entries stays and the entries that cannot reach it are dropped, with a
// note; so is an entry that would be stranded or would no longer reach the
// head. The result is checked with pkg/graph's channel rules: one head, no
// cycle, nothing stranded, and every kept entry that reached the head under
// OLM classic still does.

// keptChannel is the outcome of filtering one channel.
type keptChannel struct {
	entries []declcfg.ChannelEntry
	head    string
	dropped []droppedEntry
}

type droppedEntry struct {
	name   string
	reason string
}

// filterChannel returns the entries of c (declared as orig, in order) for
// the bundles keep selects. With nothing removed it returns orig itself.
func filterChannel(p *graph.PackageGraph, c *graph.ChannelGraph, orig []declcfg.ChannelEntry, keep map[string]bool) (*keptChannel, error) {
	all := true
	for _, e := range orig {
		if !keep[e.Name] {
			all = false
			break
		}
	}
	if all {
		return &keptChannel{entries: orig, head: c.Head}, nil
	}
	first := map[string]int{} // first declaration of each name
	for i, e := range orig {
		if _, ok := first[e.Name]; !ok {
			first[e.Name] = i
		}
	}
	kept := map[string]bool{}
	for n := range first {
		if keep[n] {
			kept[n] = true
		}
	}
	if len(kept) == 0 {
		return &keptChannel{}, nil
	}
	if c.ChainErr != nil {
		return nil, fmt.Errorf("cannot remove entries from a channel without a single head and replaces chain: %w", c.ChainErr)
	}

	chainIdx := map[string]int{}
	for i, n := range c.Chain {
		chainIdx[n] = i
	}
	reach, err := p.NewReach(graph.Classic, []string{c.Name})
	if err != nil {
		return nil, err
	}
	reachedOld, err := reach.ReachesEntries()
	if err != nil {
		return nil, err
	}
	// The entry OLM classic upgrades each off-chain entry to.
	succ := map[string]string{}
	for n := range first {
		if _, on := chainIdx[n]; on {
			continue
		}
		node := p.Nodes[n]
		if node == nil {
			continue
		}
		succs, err := p.Successors(graph.Installed{Name: n, Version: node.Version, HasVersion: node.HasVersion}, []string{c.Name})
		if err != nil {
			return nil, err
		}
		for _, s := range succs {
			if s.Classic {
				succ[n] = s.Node.Name
			}
		}
	}

	out := &keptChannel{}
	for {
		entries := restitch(c, orig, first, kept, chainIdx, succ)
		drop, why, head, err := checkKept(p, c, entries, kept, chainIdx, reachedOld)
		if err != nil {
			return nil, err
		}
		if len(drop) == 0 {
			out.entries, out.head = entries, head
			return out, nil
		}
		for _, n := range drop {
			delete(kept, n)
			out.dropped = append(out.dropped, droppedEntry{name: n, reason: why})
		}
	}
}

// restitch builds the kept entries, in declaration order, with the two
// repairs.
func restitch(c *graph.ChannelGraph, orig []declcfg.ChannelEntry, first map[string]int, kept map[string]bool, chainIdx map[string]int, succ map[string]string) []declcfg.ChannelEntry {
	byName := map[string]*declcfg.ChannelEntry{}
	var order []string
	for i, e := range orig {
		if !kept[e.Name] || first[e.Name] != i {
			continue
		}
		cp := e
		cp.Skips = slices.Clone(e.Skips)
		byName[e.Name] = &cp
		order = append(order, e.Name)
	}
	addSkip := func(to, name string) {
		e := byName[to]
		if !slices.Contains(e.Skips, name) {
			e.Skips = append(e.Skips, name)
		}
	}

	var keptChain []string
	for _, n := range c.Chain {
		if kept[n] {
			keptChain = append(keptChain, n)
		}
	}
	for i := 0; i+1 < len(keptChain); i++ {
		a, b := keptChain[i], keptChain[i+1]
		ia, ib := chainIdx[a], chainIdx[b]
		if ib == ia+1 {
			continue
		}
		byName[a].Replaces = b
		for _, r := range c.Chain[ia+1 : ib] {
			addSkip(a, r)
		}
	}

	skipped := map[string]bool{}
	for _, n := range order {
		for _, s := range byName[n].Skips {
			skipped[s] = true
		}
	}
	for _, x := range order {
		if _, on := chainIdx[x]; on {
			continue
		}
		s := succ[x]
		if s == "" {
			continue
		}
		target := ""
		if kept[s] {
			if !skipped[x] {
				target = s
			}
		} else if i, ok := chainIdx[s]; ok {
			for j := i; j >= 0; j-- {
				if kept[c.Chain[j]] {
					target = c.Chain[j]
					break
				}
			}
		}
		if target != "" {
			addSkip(target, x)
			skipped[x] = true
		}
	}

	out := make([]declcfg.ChannelEntry, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

// checkKept applies the channel rules to entries. It returns the head when
// they hold and every kept entry that reached the head still does;
// otherwise the entries to drop and why.
func checkKept(p *graph.PackageGraph, c *graph.ChannelGraph, entries []declcfg.ChannelEntry, kept map[string]bool, chainIdx map[string]int, reachedOld map[string]bool) (drop []string, why, head string, err error) {
	ch := &graph.Channel{Package: c.Package, Name: c.Name}
	for _, e := range entries {
		ch.Entries = append(ch.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
	}
	top := "" // the kept entry closest to the original head on the original chain
	for _, n := range c.Chain {
		if kept[n] {
			top = n
			break
		}
	}
	leadsToTop := func(h string) bool {
		if top == "" {
			return true
		}
		chain, err := ch.ChainFrom(h)
		return err == nil && slices.Contains(chain, top)
	}
	h, err := ch.Head()
	var multi *graph.MultipleHeadsError
	switch {
	case errors.As(err, &multi):
		// Keep the head whose upgrade graph holds the most kept entries
		// (then the one the kept part of the original chain leads to, then
		// the newest), and drop every entry outside that graph: the other
		// heads and what only they upgraded.
		keepHead, best := "", -1
		for _, h := range multi.Heads {
			size := len(upgradeGraph(entries, h))
			better := size > best
			if size == best {
				lt, blt := leadsToTop(h), leadsToTop(keepHead)
				better = (lt && !blt) || (lt == blt && versionOf(p, h).GT(versionOf(p, keepHead)))
			}
			if better {
				keepHead, best = h, size
			}
		}
		in := upgradeGraph(entries, keepHead)
		for _, e := range entries {
			if !in[e.Name] {
				drop = append(drop, e.Name)
			}
		}
		return drop, fmt.Sprintf("without the bundles filtered out it cannot upgrade to %s, the head kept (the one most kept bundles upgrade to)", nodeRef(p, keepHead)), "", nil
	case err != nil:
		return nil, "", "", err
	}
	if !leadsToTop(h) {
		return []string{h}, "it would become the channel head and cut off the kept bundles below it", "", nil
	}
	stranded, err := ch.Stranded()
	if err != nil {
		return nil, "", "", err
	}
	if len(stranded) > 0 {
		return stranded, "it would be stranded: off the replaces chain and skipped by no kept bundle", "", nil
	}

	// Every kept entry that reached the head under OLM classic must still.
	sub := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: c.Package, DefaultChannel: c.Name}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Name: c.Name, Package: c.Package, Entries: entries}},
	}
	for _, e := range entries {
		if n := p.Nodes[e.Name]; n != nil && n.HasVersion {
			sub.Bundles = append(sub.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: e.Name, Package: c.Package,
				Properties: []property.Property{property.MustBuild(property.Package{PackageName: c.Package, Version: n.Version.String()})}})
		}
	}
	g, err := graph.New(sub)
	if err != nil {
		return nil, "", "", err
	}
	reach, err := g.Package(c.Package).NewReach(graph.Classic, []string{c.Name})
	if err != nil {
		return nil, "", "", err
	}
	reachedNew, err := reach.ReachesEntries()
	if err != nil {
		return nil, "", "", err
	}
	for _, e := range entries {
		if reachedOld[e.Name] && !reachedNew[e.Name] {
			drop = append(drop, e.Name)
		}
	}
	if len(drop) > 0 {
		return drop, "it would no longer reach the channel head", "", nil
	}
	return nil, "", h, nil
}

// upgradeGraph returns the entries that can upgrade to h, h included,
// along the replaces and skips of entries.
func upgradeGraph(entries []declcfg.ChannelEntry, h string) map[string]bool {
	byName := map[string]*declcfg.ChannelEntry{}
	for i := range entries {
		if _, ok := byName[entries[i].Name]; !ok {
			byName[entries[i].Name] = &entries[i]
		}
	}
	seen := map[string]bool{h: true}
	queue := []string{h}
	for len(queue) > 0 {
		e := byName[queue[0]]
		queue = queue[1:]
		if e == nil {
			continue
		}
		for _, n := range append([]string{e.Replaces}, e.Skips...) {
			if _, ok := byName[n]; ok && !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	return seen
}

func versionOf(p *graph.PackageGraph, name string) semver.Version {
	if n := p.Nodes[name]; n != nil && n.HasVersion {
		return n.Version
	}
	return semver.Version{}
}
