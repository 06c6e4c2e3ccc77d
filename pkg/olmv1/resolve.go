package olmv1

import (
	"fmt"
	"slices"
	"strings"

	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Resolve returns the bundle a ClusterExtension for package p installs
// first: among the bundles of channels (every channel when empty) whose
// version is in version (any when nil), the one OLM v1's resolver ranks
// first (not deprecated, then the highest version and release). Checking
// the bundle comes after: OLM v1 never falls back to a lower version.
func Resolve(p *graph.PackageGraph, channels []string, version *versionrange.Range) (*graph.Node, error) {
	var chans []*graph.ChannelGraph
	for _, name := range channels {
		c := p.Channel(name)
		if c == nil {
			return nil, p.UnknownChannel(name)
		}
		if !slices.Contains(chans, c) {
			chans = append(chans, c)
		}
	}
	if len(chans) == 0 {
		chans = p.Channels
	}
	var best *graph.Node
	for _, c := range chans {
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if n == nil || !n.HasBundle || !n.HasVersion {
				continue
			}
			if version != nil && !version.ContainsVersion(n.Version) {
				continue
			}
			if best == nil || better(n, best) {
				best = n
			}
		}
	}
	if best == nil {
		where := "in any channel"
		if len(channels) > 0 {
			where = "in channel " + strings.Join(quoted(channels), ", ")
		}
		if version != nil {
			return nil, fmt.Errorf("package %q has no bundle %s with a version in %q", p.Name, where, version)
		}
		return nil, fmt.Errorf("package %q has no bundle %s", p.Name, where)
	}
	return best, nil
}
