package graph

import "fmt"

// Reach answers, for many starting bundles, whether OLM's upgrade walk gets
// to the end [PackageGraph.Path] aims for when it has no target: the
// channel head under Classic (one channel), the newest version of the
// channels under V1. It answers exactly as Path does, and remembers every
// bundle a walk passes: the walk from a bundle is deterministic, so every
// bundle on it shares its outcome, and asking for all the entries of a
// channel costs little more than one walk per branch.
//
// A Reach is not safe for concurrent use.
type Reach struct {
	p    *PackageGraph
	opts PathOptions
	memo map[string]bool // by bundle name, for versioned bundles of the package
}

// NewReach prepares reachability queries under sem: Classic follows exactly
// one channel (default: the package's default channel), V1 any number
// (default: all).
func (p *PackageGraph) NewReach(sem Semantics, channels []string) (*Reach, error) {
	switch sem {
	case Classic:
		if len(channels) == 0 {
			if p.DefaultChannel == "" {
				return nil, fmt.Errorf("package %q has no default channel; name a channel", p.Name)
			}
			channels = []string{p.DefaultChannel}
		}
		if len(channels) != 1 {
			return nil, fmt.Errorf("OLM classic follows one channel at a time, got %d", len(channels))
		}
	case V1:
	default:
		return nil, fmt.Errorf("unknown semantics %q, expected classic or v1", sem)
	}
	if _, err := p.selectChannels(channels); err != nil {
		return nil, err
	}
	return &Reach{p: p, opts: PathOptions{Semantics: sem, Channels: channels}, memo: map[string]bool{}}, nil
}

// Reaches reports whether the walk from in gets to the head (Classic) or
// the newest version (V1). For the reason of a failure, ask
// [PackageGraph.Path].
func (r *Reach) Reaches(in Installed) (bool, error) {
	key := ""
	if n := r.p.Nodes[in.Name]; n != nil && in.Name != "" && n.HasVersion && in.HasVersion && n.Version.Equals(in.Version) {
		key = in.Name
		if v, ok := r.memo[key]; ok {
			return v, nil
		}
	}
	paths, err := r.p.Path(in, r.opts)
	if err != nil {
		return false, err
	}
	path := paths[0]
	if key != "" {
		r.memo[key] = path.Reached
	}
	for _, s := range path.Steps {
		if s.To.Name != "" && s.To.HasVersion {
			r.memo[s.To.Name] = path.Reached
		}
	}
	return path.Reached, nil
}

// ReachesEntries answers Reaches for every versioned entry of the
// channels, by name. Under Classic it starts from the tail of the replaces
// chain, so that one walk settles the whole chain.
func (r *Reach) ReachesEntries() (map[string]bool, error) {
	chans, err := r.p.selectChannels(r.opts.Channels)
	if err != nil {
		return nil, err
	}
	var order []string
	for _, c := range chans {
		for i := len(c.Chain) - 1; i >= 0; i-- {
			order = append(order, c.Chain[i])
		}
		for _, e := range c.Entries {
			order = append(order, e.Name)
		}
	}
	out := map[string]bool{}
	for _, name := range order {
		if _, done := out[name]; done {
			continue
		}
		n := r.p.Nodes[name]
		if n == nil || !n.HasVersion {
			continue
		}
		ok, err := r.Reaches(installedFrom(n))
		if err != nil {
			return nil, err
		}
		out[name] = ok
	}
	return out, nil
}
