package gencatalog

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// plan is the shape of one package, decided before any content is made:
// its versions, APIs, channels and dependencies. Plans are cheap and pure
// functions of (seed, index), so a package can consult another package's
// plan (for dependencies) without generating it.
type plan struct {
	index          int
	name           string
	versions       []string // ascending strict semver; the last is never a pre-release
	group          string
	crds           []crdPlan
	channels       []channelPlan // sorted by name
	defaultChannel string
	sizeFactor     float64 // scales description and schema sizes around the mean
	svgIcon        bool
	deprecated     bool
}

type crdPlan struct {
	kind, plural, singular string
	versions               []string // API versions, storage last
}

type channelPlan struct {
	name    string
	members []int // indices into plan.versions, ascending
}

func (g *Generator) planRand(i int) *rand.Rand {
	return rand.New(rand.NewPCG(g.opts.Seed, uint64(i)<<1))
}

func (g *Generator) contentRand(i int) *rand.Rand {
	return rand.New(rand.NewPCG(g.opts.Seed, uint64(i)<<1|1))
}

// packageName returns the name of package i (1-based), zero-padded so that
// byte order is numeric order.
func (g *Generator) packageName(i int) string {
	return fmt.Sprintf("pkg-%0*d", g.width, i)
}

func (g *Generator) plan(i int) *plan {
	r := g.planRand(i)
	p := &plan{
		index:      i,
		name:       g.packageName(i),
		sizeFactor: 0.75 + r.Float64()*0.5,
		svgIcon:    r.IntN(10) < 3,
		deprecated: r.IntN(100) < 15,
	}
	p.group = strings.ReplaceAll(p.name, "-", "") + ".gen.example.com"
	p.versions = versions(r, g.opts.Bundles)

	// 1-2 CRDs carrying 2-3 GVKs in all.
	nCRD := 1 + r.IntN(2)
	seen := map[string]bool{}
	for len(p.crds) < nCRD {
		kind := kindName(r)
		if seen[kind] {
			continue
		}
		seen[kind] = true
		lower := strings.ToLower(kind)
		p.crds = append(p.crds, crdPlan{kind: kind, plural: lower + "s", singular: lower, versions: []string{"v1"}})
	}
	switch {
	case nCRD == 1:
		p.crds[0].versions = []string{"v1alpha1", "v1beta1"}
	case r.IntN(2) == 0:
		p.crds[0].versions = []string{"v1alpha1", "v1"}
	}

	// Channels: 2 or 3, every bundle in at least one, each a non-empty
	// ascending run of the package's versions.
	all := make([]int, len(p.versions))
	for k := range all {
		all[k] = k
	}
	from := func(start int, stableOnly bool) []int {
		var m []int
		for k := start; k < len(p.versions); k++ {
			if stableOnly && strings.Contains(p.versions[k], "-") {
				continue
			}
			m = append(m, k)
		}
		return m
	}
	b := len(p.versions)
	if r.IntN(2) == 0 {
		p.channels = []channelPlan{
			{name: "candidate", members: all},
			{name: "fast", members: from(b/4, false)},
			{name: "stable", members: from(b/2, true)},
		}
	} else {
		p.channels = []channelPlan{
			{name: "fast", members: all},
			{name: "stable", members: from(b/3, true)},
		}
	}
	p.defaultChannel = "stable"
	if r.IntN(5) == 0 {
		p.defaultChannel = "fast"
	}
	return p
}

// versions returns n ascending strict semver versions: mostly patch bumps,
// some minor and major bumps, and release candidates followed by their
// release. The last version is never a pre-release.
func versions(r *rand.Rand, n int) []string {
	major, minor, patch := r.IntN(2), r.IntN(5), 0
	out := make([]string, 0, n)
	for len(out) < n {
		if len(out) > 0 {
			switch x := r.IntN(100); {
			case x < 5 && len(out) < n-1:
				minor, patch = minor+1, 0
				out = append(out, fmt.Sprintf("%d.%d.%d-rc.1", major, minor, patch))
			case x < 10:
				major, minor, patch = major+1, 0, 0
			case x < 35:
				minor, patch = minor+1, 0
			default:
				patch++
			}
		}
		out = append(out, fmt.Sprintf("%d.%d.%d", major, minor, patch))
	}
	return out[:n]
}

func (p *plan) bundleName(k int) string { return p.name + ".v" + p.versions[k] }

// entry is one olm.channel entry.
type entry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// entries builds a channel's entries so that it is valid for upstream: one
// head, no stranded bundle, no cycle. Each entry replaces the one before;
// sometimes an entry replaces the one two back and skips the one before it
// (never twice in a row, or the walk from the head would stop early);
// sometimes it carries a skipRange covering a few earlier versions.
func (p *plan) entries(r *rand.Rand, c channelPlan) []entry {
	es := make([]entry, len(c.members))
	skipped := false
	for j, k := range c.members {
		e := entry{Name: p.bundleName(k)}
		switch {
		case j == 0:
			if k > 0 && r.IntN(2) == 0 {
				e.Replaces = p.bundleName(k - 1)
			}
		case j >= 2 && !skipped && r.IntN(100) < 12:
			e.Replaces = es[j-2].Name
			e.Skips = []string{es[j-1].Name}
			skipped = true
		default:
			e.Replaces = es[j-1].Name
			skipped = false
		}
		if j >= 1 && r.IntN(100) < 20 {
			e.SkipRange = fmt.Sprintf(">=%s <%s", p.versions[c.members[max(0, j-3)]], p.versions[k])
		}
		es[j] = e
	}
	return es
}
