package graph

import (
	"fmt"
	"sort"
)

// PairTable answers "what is the upgrade path from bundle a to bundle b"
// for every pair of bundles of a channel selection at once, under one
// semantics. Building it costs O(n² + e log e) time and 8·n² bytes for n
// bundles and e successor edges; each answer then costs O(path length).
// Its answers are those of [PackageGraph.Path] with To set to b's version.
type PairTable struct {
	Semantics Semantics
	Channels  []string
	// Nodes are the versioned entries of the channels, by increasing
	// version (then release, then name).
	Nodes []*Node

	index map[string]int
	n     int
	// classic: next[x] is the step from x. v1: next[t*n+x] is the step
	// from x toward t. -1: none.
	next []int32
	// dist[t*n+x] is the number of steps from x to t, or -1.
	dist []int32
	// rank[i] orders Nodes[i]'s version among the distinct versions.
	rank []int32
}

// AllPairs builds the table for channels (Classic: exactly one, default
// the package's default channel; V1: any, default all).
func (p *PackageGraph) AllPairs(sem Semantics, channels []string) (*PairTable, error) {
	if sem == Classic && len(channels) == 0 {
		if p.DefaultChannel == "" {
			return nil, fmt.Errorf("package %q has no default channel; name a channel", p.Name)
		}
		channels = []string{p.DefaultChannel}
	}
	chans, err := p.selectChannels(channels)
	if err != nil {
		return nil, err
	}
	if sem == Classic && len(chans) != 1 {
		return nil, fmt.Errorf("OLM classic follows one channel at a time, got %d", len(chans))
	}
	if sem != Classic && sem != V1 {
		return nil, fmt.Errorf("unknown semantics %q, expected classic or v1", sem)
	}
	t := &PairTable{Semantics: sem, index: map[string]int{}}
	for _, c := range chans {
		t.Channels = append(t.Channels, c.Name)
		for _, e := range c.Entries {
			if n := p.Nodes[e.Name]; n.HasVersion {
				if _, ok := t.index[n.Name]; !ok {
					t.index[n.Name] = -1
					t.Nodes = append(t.Nodes, n)
				}
			}
		}
	}
	sortNodes(t.Nodes)
	t.rank = make([]int32, len(t.Nodes))
	for i, n := range t.Nodes {
		t.index[n.Name] = i
		if i > 0 {
			t.rank[i] = t.rank[i-1]
			if compareV1(n, t.Nodes[i-1]) > 0 {
				t.rank[i]++
			}
		}
	}
	t.n = len(t.Nodes)
	t.dist = make([]int32, t.n*t.n)
	for i := range t.dist {
		t.dist[i] = -1
	}
	if sem == Classic {
		t.buildClassic(p, chans[0])
	} else {
		t.buildV1(p, chans)
	}
	return t, nil
}

func (t *PairTable) buildClassic(p *PackageGraph, c *ChannelGraph) {
	n := t.n
	t.next = make([]int32, n)
	for x, node := range t.Nodes {
		t.next[x] = -1
		if c.ChainErr != nil || node.Name == c.Head {
			continue
		}
		if e, _, err := c.classicStep(p, installedFrom(node)); err == nil {
			if y, ok := t.index[e.Name]; ok && y >= 0 {
				t.next[x] = int32(y)
			}
		}
	}
	if c.ChainErr != nil {
		return // no chain to walk: no pair is reachable, as Path says
	}
	for x := 0; x < n; x++ {
		t.dist[x*n+x] = 0
		d := int32(0)
		for y := int(t.next[x]); y >= 0 && t.dist[y*n+x] < 0; y = int(t.next[y]) {
			d++
			t.dist[y*n+x] = d
		}
	}
}

func (t *PairTable) buildV1(p *PackageGraph, chans []*ChannelGraph) {
	n := t.n
	t.next = make([]int32, n*n)
	for i := range t.next {
		t.next[i] = -1
	}
	type cand struct {
		node int
		dep  bool
	}
	for x, node := range t.Nodes {
		// The successors of x above its version, by increasing version
		// then decreasing name: sweeping targets upwards, the last one
		// passed at a version is the best of that version.
		seen := map[int]bool{}
		var cands []cand
		for _, c := range chans {
			for _, sc := range c.successorsOf(p, installedFrom(node)) {
				y, ok := t.index[c.Entries[sc.entry].Name]
				if !ok || y < 0 || seen[y] || t.rank[y] <= t.rank[x] {
					continue
				}
				seen[y] = true
				cands = append(cands, cand{node: y, dep: t.Nodes[y].Deprecated})
			}
		}
		// Nodes are sorted by version then name, so by node index with the
		// names of a version reversed.
		sort.Slice(cands, func(i, j int) bool {
			a, b := cands[i].node, cands[j].node
			if t.rank[a] != t.rank[b] {
				return t.rank[a] < t.rank[b]
			}
			return a > b
		})
		k, best, bestDep := 0, int32(-1), int32(-1)
		for tt := 0; tt < n; tt++ {
			for k < len(cands) && t.rank[cands[k].node] <= t.rank[tt] {
				if cands[k].dep {
					bestDep = int32(cands[k].node)
				} else {
					best = int32(cands[k].node)
				}
				k++
			}
			if tt == x {
				continue // at the target already
			}
			// OLM v1 ranks the installed bundle among the candidates and
			// deprecated bundles last: a bundle that is not deprecated
			// stays rather than move to a deprecated one.
			if best >= 0 {
				t.next[tt*n+x] = best
			} else if node.Deprecated {
				t.next[tt*n+x] = bestDep
			}
		}
	}
	// Steps strictly climb, so walking nodes from the highest version down,
	// the step target's distance is known first.
	for tt := 0; tt < n; tt++ {
		next := t.next[tt*n : (tt+1)*n]
		dist := t.dist[tt*n : (tt+1)*n]
		dist[tt] = 0
		for x := n - 1; x >= 0; x-- {
			if x == tt {
				continue
			}
			if y := next[x]; y >= 0 && dist[y] >= 0 {
				dist[x] = dist[y] + 1
			}
		}
	}
}

// Steps returns the number of upgrades from bundle a to bundle b, or -1
// when the semantics never leads from a to b.
func (t *PairTable) Steps(a, b string) int {
	x, ok1 := t.index[a]
	y, ok2 := t.index[b]
	if !ok1 || !ok2 {
		return -1
	}
	return int(t.dist[y*t.n+x])
}

// Path returns the bundles from a to b (both included), or nil when the
// semantics never leads from a to b.
func (t *PairTable) Path(a, b string) []string {
	d := t.Steps(a, b)
	if d < 0 {
		return nil
	}
	x, y := t.index[a], t.index[b]
	out := make([]string, 0, d+1)
	out = append(out, a)
	for x != y {
		if t.Semantics == Classic {
			x = int(t.next[x])
		} else {
			x = int(t.next[y*t.n+x])
		}
		out = append(out, t.Nodes[x].Name)
	}
	return out
}
