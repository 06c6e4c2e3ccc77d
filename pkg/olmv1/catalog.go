package olmv1

import (
	"context"
	"slices"

	"github.com/opmkit/opm/pkg/graph"
)

// Channels and packages.
//
// A ClusterExtension names a package and, optionally, channels and a
// version range. For a first install OLM v1 takes every bundle of the
// package in those channels (all of them when none is named) and in the
// range, ranks bundles the package deprecates last, and installs the
// highest version; only then does it check the bundle, and refuses it if
// it breaks a rule: it never falls back to a lower version. So a channel
// whose newest bundle OLM v1 refuses cannot be installed from without
// pinning a version, however many of its older bundles are fine. Upgrades
// follow the same order among the successors of the installed bundle
// (pkg/graph, semantics V1).

// PackageReport is OLM v1's view of one package.
type PackageReport struct {
	Name           string
	DefaultChannel string
	// Verdicts are the bundles' verdicts, by name.
	Verdicts map[string]*Verdict
	// Pick is the bundle a ClusterExtension naming only the package
	// installs ("" when the package has no versioned bundle).
	Pick string
	// Channels are the package's channels, by name.
	Channels []ChannelReport
}

// ChannelReport is OLM v1's view of one channel.
type ChannelReport struct {
	Name string
	// Pick is the bundle a ClusterExtension naming this channel installs.
	Pick string
	// Upgrades are the entries from which OLM v1 and OLM classic upgrade
	// to different bundles in this channel, and those from which OLM v1's
	// upgrade goes to a bundle it refuses, in entry order.
	Upgrades []Upgrade
}

// Upgrade is what OLM classic and OLM v1 do from one installed bundle of
// a channel.
type Upgrade struct {
	From string
	// Classic and V1 are the bundles each upgrades to ("" for none);
	// ClassicEdges and V1Edges the edges that make them successors.
	Classic, V1           string
	ClassicEdges, V1Edges []graph.Edge
	// Stays is why OLM v1 picks no successor although there are some.
	Stays string
	// Refused is set when V1 is a bundle OLM v1 refuses while From is
	// installable.
	Refused bool
}

// Differs reports whether OLM classic and OLM v1 upgrade differently.
func (u Upgrade) Differs() bool { return u.Classic != u.V1 }

// Installable reports whether OLM v1 installs the bundle named name
// (false for a bundle without a verdict).
func (r *PackageReport) Installable(name string) bool {
	v := r.Verdicts[name]
	return v != nil && v.Installable
}

// CheckPackage reports on package p of a graph, given the verdicts of its
// bundles (by name; bundles without one are taken as installable, as far
// as upgrades go, and reported by nobody). Channels without a single head
// (which validation reports) get no classic comparison.
func CheckPackage(ctx context.Context, p *graph.PackageGraph, verdicts map[string]*Verdict) (*PackageReport, error) {
	r := &PackageReport{Name: p.Name, DefaultChannel: p.DefaultChannel, Verdicts: verdicts}
	r.Pick = freshPick(p, p.Channels)
	for _, c := range p.Channels {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cr := ChannelReport{Name: c.Name, Pick: freshPick(p, []*graph.ChannelGraph{c})}
		seen := map[string]bool{}
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if seen[e.Name] || n == nil || !n.HasBundle {
				continue
			}
			seen[e.Name] = true
			in, err := p.Resolve(e.Name)
			if err != nil {
				continue
			}
			succ, err := p.Successors(in, []string{c.Name})
			if err != nil {
				return nil, err
			}
			u := Upgrade{From: e.Name}
			for _, s := range succ {
				if s.Classic {
					u.Classic, u.ClassicEdges = s.Node.Name, s.Edges
				}
				if s.V1 {
					u.V1, u.V1Edges = s.Node.Name, s.Edges
				}
			}
			if u.V1 == "" {
				u.Stays = graph.V1Stays(in, succ)
			}
			if c.ChainErr != nil {
				u.Classic, u.ClassicEdges = u.V1, nil // no classic answer to compare
			}
			fromOK := verdicts[u.From] == nil || verdicts[u.From].Installable
			if u.V1 != "" && fromOK && verdicts[u.V1] != nil && !verdicts[u.V1].Installable {
				u.Refused = true
			}
			if u.Differs() || u.Refused {
				cr.Upgrades = append(cr.Upgrades, u)
			}
		}
		r.Channels = append(r.Channels, cr)
	}
	return r, nil
}

// freshPick is the bundle OLM v1 installs from chans ("" for none).
func freshPick(p *graph.PackageGraph, chans []*graph.ChannelGraph) string {
	names := make([]string, len(chans))
	for i, c := range chans {
		names[i] = c.Name
	}
	n, err := Resolve(p, names, nil)
	if err != nil {
		return ""
	}
	return n.Name
}

// better ranks a above b as OLM v1's resolver does: not deprecated first,
// then the highest version and release, then (for a stable answer) the
// name.
func better(a, b *graph.Node) bool {
	if a.Deprecated != b.Deprecated {
		return !a.Deprecated
	}
	if c := graph.CompareVersions(a, b); c != 0 {
		return c > 0
	}
	return a.Name < b.Name
}

// InstallableVersions returns the bundles of chans (all channels when
// empty) OLM v1 installs, highest first: what a ClusterExtension can pin
// when its pick is refused.
func (r *PackageReport) InstallableVersions(p *graph.PackageGraph, chans []string) []*graph.Node {
	var out []*graph.Node
	seen := map[string]bool{}
	for _, c := range p.Channels {
		if len(chans) > 0 && !slices.Contains(chans, c.Name) {
			continue
		}
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if seen[e.Name] || n == nil || !n.HasVersion || !r.Installable(e.Name) {
				continue
			}
			seen[e.Name] = true
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *graph.Node) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}
