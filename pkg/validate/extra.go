package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Rule codes of the checks upstream lacks (warnings; errors under
// --strict).
const (
	CodeSkipRangeVPrefix      = "skiprange-v-prefix"
	CodeSkipRangeCoversNone   = "skiprange-covers-nothing"
	CodeVersionShared         = "version-shared"
	CodeEdgeTargetMissing     = "edge-target-missing"
	CodeSkippedAndReplaced    = "skipped-and-replaced"
	CodePackageRequiredUnmet  = "package-required-unsatisfied"
	CodeGVKRequiredUnmet      = "gvk-required-unsatisfied"
	CodeVersionRangeInvalid   = "version-range-invalid"
	CodeConstraintKindMissing = "constraint-kind-missing"
)

// bundleFacts are the properties of one bundle blob the extra checks use.
type bundleFacts struct {
	b           *declcfg.Bundle
	i           int // index in the group's Bundles
	version     semver.Version
	hasVersion  bool
	release     string
	pkgProp     int // index of the olm.package property (-1: none)
	gvks        []property.GVK
	pkgRequired []indexed[property.PackageRequired]
	gvkRequired []indexed[property.GVKRequired]
	constraints []indexed[json.RawMessage]
}

// indexed is a property value with the index of its property.
type indexed[T any] struct {
	v T
	i int
}

func gatherFacts(b *declcfg.Bundle, i int) bundleFacts {
	f := bundleFacts{b: b, i: i, pkgProp: -1}
	npkg := 0
	for j, p := range b.Properties {
		switch p.Type {
		case property.TypePackage:
			var v property.Package
			if json.Unmarshal(p.Value, &v) == nil {
				npkg++
				if f.pkgProp < 0 {
					f.pkgProp = j
				}
				if ver, err := semver.Parse(v.Version); err == nil {
					f.version, f.hasVersion, f.release = ver, true, v.Release
				}
			}
		case property.TypeGVK:
			var v property.GVK
			if json.Unmarshal(p.Value, &v) == nil {
				f.gvks = append(f.gvks, v)
			}
		case property.TypePackageRequired:
			var v property.PackageRequired
			if json.Unmarshal(p.Value, &v) == nil {
				f.pkgRequired = append(f.pkgRequired, indexed[property.PackageRequired]{v, j})
			}
		case property.TypeGVKRequired:
			var v property.GVKRequired
			if json.Unmarshal(p.Value, &v) == nil {
				f.gvkRequired = append(f.gvkRequired, indexed[property.GVKRequired]{v, j})
			}
		case property.TypeConstraint:
			f.constraints = append(f.constraints, indexed[json.RawMessage]{p.Value, j})
		}
	}
	if npkg != 1 {
		f.hasVersion = false
	}
	return f
}

var vPrefixRE = regexp.MustCompile(`(^|[\s<>=!~^,|])v[0-9]`)

// catalogFacts are what the checks of required packages and APIs need to
// know about the whole catalog: gathered group by group, checked at the
// end.
type catalogFacts struct {
	versions map[string][]semver.Version // package -> versions of its bundles
	provided map[property.GVK]bool
	pkgReqs  []requirement[property.PackageRequired]
	gvkReqs  []requirement[property.GVKRequired]
}

// requirement is a required package or API and the finding to report
// when nothing provides it.
type requirement[T any] struct {
	req T
	rng *versionrange.SkipRange
	f   Finding
}

func (c *catalogFacts) merge(o *catalogFacts) {
	if c.versions == nil {
		c.versions = map[string][]semver.Version{}
		c.provided = map[property.GVK]bool{}
	}
	for p, vs := range o.versions {
		c.versions[p] = append(c.versions[p], vs...)
	}
	for g := range o.provided {
		c.provided[g] = true
	}
	c.pkgReqs = append(c.pkgReqs, o.pkgReqs...)
	c.gvkReqs = append(c.gvkReqs, o.gvkReqs...)
}

// addProviders counts the bundles of another catalog (one of
// DependencyOptions.With) as providers of packages and APIs, so that a
// requirement met there is not reported as unmet here.
func (c *catalogFacts) addProviders(cfg *declcfg.DeclarativeConfig) {
	o := catalogFacts{versions: map[string][]semver.Version{}, provided: map[property.GVK]bool{}}
	for i := range cfg.Bundles {
		f := gatherFacts(&cfg.Bundles[i], i)
		if f.hasVersion {
			o.versions[f.b.Package] = append(o.versions[f.b.Package], f.version)
		}
		for _, gvk := range f.gvks {
			o.provided[gvk] = true
		}
	}
	c.merge(&o)
}

// unmet reports the requirements nothing in the catalog provides.
func (c *catalogFacts) unmet() []Finding {
	var out []Finding
	for _, r := range c.pkgReqs {
		met := false
		for _, v := range c.versions[r.req.PackageName] {
			if r.rng.Contains(v) {
				met = true
				break
			}
		}
		if !met {
			out = append(out, r.f)
		}
	}
	for _, r := range c.gvkReqs {
		if !c.provided[property.GVK(r.req)] {
			out = append(out, r.f)
		}
	}
	return out
}

// extraChecks runs the checks upstream lacks on one group. They work from
// the blobs, so they run whether or not the conversion succeeded. Checks
// of required packages and APIs are left in facts, to run once every
// group is known.
func (g *group) extraChecks(facts *catalogFacts) []Finding {
	cfg := g.cfg
	var out []Finding
	warn := func(code string, at blobID, path, pkg, ch, b, help, format string, args ...any) Finding {
		f := Finding{Severity: SeverityWarning, Code: code, Message: fmt.Sprintf(format, args...),
			Package: pkg, Channel: ch, Bundle: b, Help: help, Path: path, at: at}
		g.finish(&f)
		return f
	}
	bundleAt := func(f *bundleFacts) blobID { return blobID{kind: declcfg.KindBundle, i: f.i, ok: true} }
	propPath := func(i int, rest string) string { return "properties[" + strconv.Itoa(i) + "]" + rest }

	facts.versions = map[string][]semver.Version{}
	facts.provided = map[property.GVK]bool{}
	bundleFactsList := make([]bundleFacts, len(cfg.Bundles))
	byPkg := map[string][]*bundleFacts{}
	byName := map[string]map[string]bool{} // package -> bundle and entry names
	for i := range cfg.Bundles {
		bundleFactsList[i] = gatherFacts(&cfg.Bundles[i], i)
		f := &bundleFactsList[i]
		byPkg[f.b.Package] = append(byPkg[f.b.Package], f)
		addName(byName, f.b.Package, f.b.Name)
		if f.hasVersion {
			facts.versions[f.b.Package] = append(facts.versions[f.b.Package], f.version)
		}
		for _, gvk := range f.gvks {
			facts.provided[gvk] = true
		}
	}
	for _, ch := range cfg.Channels {
		for _, e := range ch.Entries {
			addName(byName, ch.Package, e.Name)
		}
	}

	// Channel entries: skipRange, edge targets, skipped replaces targets.
	byBundle := map[string]*bundleFacts{} // "package\x00name"
	for i := range bundleFactsList {
		f := &bundleFactsList[i]
		byBundle[f.b.Package+"\x00"+f.b.Name] = f
	}
	versionOf := func(pkg, name string) (semver.Version, bool) {
		if f := byBundle[pkg+"\x00"+name]; f != nil && f.hasVersion {
			return f.version, true
		}
		return semver.Version{}, false
	}
	// The versions of each package's bundles (of byPkg), indexed for
	// skipRanges: a range finds the versions it covers without testing
	// all of them.
	indexes := map[string]*versionrange.Index{}
	pkgVersions := func(pkg string) *versionrange.Index {
		x := indexes[pkg]
		if x == nil {
			fs := byPkg[pkg]
			vers := make([]semver.Version, len(fs))
			for i, f := range fs {
				vers[i] = f.version
			}
			x = versionrange.NewIndex(vers, func(i int) bool { return fs[i].hasVersion })
			indexes[pkg] = x
		}
		return x
	}
	for ci, ch := range cfg.Channels {
		chAt := blobID{kind: declcfg.KindChannel, i: ci, ok: true}
		entryPath := func(k int, rest string) string { return "entries[" + strconv.Itoa(k) + "]" + rest }
		entries := map[string]int{}
		skippedBy := map[string][]int{}
		for k, e := range ch.Entries {
			if _, ok := entries[e.Name]; !ok {
				entries[e.Name] = k
			}
			for _, s := range e.Skips {
				skippedBy[s] = append(skippedBy[s], k)
			}
		}
		hist := newHistory(ch, byPkg[ch.Package], versionOf)
		for k, e := range ch.Entries {
			if e.SkipRange != "" {
				if vPrefixRE.MatchString(e.SkipRange) {
					out = append(out, warn(CodeSkipRangeVPrefix, chAt, entryPath(k, ".skipRange"), ch.Package, ch.Name, e.Name,
						`write versions without "v", e.g. ">=1.0.0 <1.2.0"; upstream rejects the range`,
						"skipRange %q of bundle %q uses a \"v\" prefix", e.SkipRange, e.Name))
				} else if r, err := versionrange.ParseSkipRange(e.SkipRange); err == nil {
					covered := false
					fs := byPkg[ch.Package]
					pkgVersions(ch.Package).Visit(r, nil, func(i int) bool {
						covered = fs[i].b.Name != e.Name
						return !covered
					})
					// A range of versions older than the bundle's own,
					// none of which the package has, speaks of history
					// this catalog no longer has (pruned, or never shipped
					// here): the usual state of a shipped catalog.
					if v, ok := versionOf(ch.Package, e.Name); ok && !covered && r.Older(v) {
						covered = true
					}
					if !covered {
						out = append(out, warn(CodeSkipRangeCoversNone, chAt, entryPath(k, ".skipRange"), ch.Package, ch.Name, e.Name,
							"check the range's bounds against the versions the package ships",
							"skipRange %q of bundle %q covers no version of package %q", e.SkipRange, e.Name, ch.Package))
					}
				}
			}
			if t := e.Replaces; t != "" && !byName[ch.Package][t] && !hist.pruned(k, t) {
				out = append(out, warn(CodeEdgeTargetMissing, chAt, entryPath(k, ".replaces"), ch.Package, ch.Name, e.Name,
					hist.help(t), "bundle %q %s %q, which is not a bundle of package %q", e.Name, "replaces", t, ch.Package))
			}
			for j, t := range e.Skips {
				if t == "" || byName[ch.Package][t] || hist.pruned(k, t) {
					continue
				}
				out = append(out, warn(CodeEdgeTargetMissing, chAt, entryPath(k, ".skips["+strconv.Itoa(j)+"]"), ch.Package, ch.Name, e.Name,
					hist.help(t), "bundle %q %s %q, which is not a bundle of package %q", e.Name, "skips", t, ch.Package))
			}
		}
		// The replaces chain from the head, ignoring upstream's "skipped
		// target" cut: a skipped bundle on it means the replaces edge to it
		// is ignored.
		gr := graph.Channel{Package: ch.Package, Name: ch.Name}
		for _, e := range ch.Entries {
			gr.Entries = append(gr.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		head, err := gr.Head()
		k, ok := entries[head]
		ok = ok && err == nil
		seen := map[string]bool{}
		for ok {
			cur := ch.Entries[k]
			if seen[cur.Name] {
				break
			}
			seen[cur.Name] = true
			next, in := entries[cur.Replaces]
			if cur.Replaces == "" || !in {
				break
			}
			// An entry that both replaces and skips a bundle says what it
			// means; another entry skipping it cuts the chain silently.
			if by := otherThan(ch.Entries, skippedBy[cur.Replaces], cur.Name); by >= 0 {
				j := slices.Index(ch.Entries[by].Skips, cur.Replaces)
				out = append(out, warn(CodeSkippedAndReplaced, chAt, entryPath(by, ".skips["+strconv.Itoa(j)+"]"), ch.Package, ch.Name, cur.Replaces,
					"remove it from skips, or point replaces past it: OLM ignores a replaces edge to a skipped bundle",
					"bundle %q is replaced by %q and skipped by %q in channel %q, so the replaces chain stops at %q", cur.Replaces, cur.Name, ch.Entries[by].Name, ch.Name, cur.Name))
				break
			}
			k = next
		}
	}

	// Versions shared by bundles whose version strings differ (upstream
	// reports identical strings).
	for _, pkg := range sortedKeys(byPkg) {
		fs := byPkg[pkg]
		groups := map[string][]*bundleFacts{}
		for _, f := range fs {
			if !f.hasVersion {
				continue
			}
			v := f.version
			v.Build = nil
			key := v.String() + "\x00" + f.release
			groups[key] = append(groups[key], f)
		}
		for _, key := range sortedKeys(groups) {
			gs := groups[key]
			strs := map[string]bool{}
			names := map[string]bool{}
			for _, f := range gs {
				strs[f.version.String()+"-"+f.release] = true
				names[f.b.Name] = true
			}
			if len(strs) < 2 || len(names) < 2 {
				continue
			}
			list := sortedKeys(names)
			for _, f := range gs {
				out = append(out, warn(CodeVersionShared, bundleAt(f), propPath(f.pkgProp, ".value.version"), pkg, "", f.b.Name,
					"build metadata does not order versions: give each bundle its own version or a release",
					"bundles %s share version %s (they differ only in build metadata)", strings.Join(quoteAll(list), ", "), strings.SplitN(key, "\x00", 2)[0]))
			}
		}
	}

	// Dependencies: what can be checked on the bundle alone now, the rest
	// once the catalog is known.
	for i := range bundleFactsList {
		f := &bundleFactsList[i]
		for _, req := range f.pkgRequired {
			// OLM classic reads a dependency's versionRange in the
			// skipRange dialect (blang/semver's ParseRange).
			r, err := versionrange.ParseSkipRange(req.v.VersionRange)
			if err != nil {
				out = append(out, warn(CodeVersionRangeInvalid, bundleAt(f), propPath(req.i, ".value.versionRange"), f.b.Package, "", f.b.Name, "",
					"bundle %q requires package %q with invalid versionRange %q: %v", f.b.Name, req.v.PackageName, req.v.VersionRange, err))
				continue
			}
			facts.pkgReqs = append(facts.pkgReqs, requirement[property.PackageRequired]{req: req.v, rng: r,
				f: warn(CodePackageRequiredUnmet, bundleAt(f), propPath(req.i, ""), f.b.Package, "", f.b.Name,
					"add a bundle that satisfies it, or make sure the catalog it comes from is installed",
					"bundle %q requires package %q %s, which no bundle in the catalog provides", f.b.Name, req.v.PackageName, req.v.VersionRange)})
		}
		for _, req := range f.gvkRequired {
			facts.gvkReqs = append(facts.gvkReqs, requirement[property.GVKRequired]{req: req.v,
				f: warn(CodeGVKRequiredUnmet, bundleAt(f), propPath(req.i, ""), f.b.Package, "", f.b.Name,
					"add a bundle that provides the API, or make sure the catalog it comes from is installed",
					"bundle %q requires API %s/%s %s, which no bundle in the catalog provides", f.b.Name, req.v.Group, req.v.Version, req.v.Kind)})
		}
		for _, c := range f.constraints {
			if msg := constraintKindProblem(c.v); msg != "" {
				out = append(out, warn(CodeConstraintKindMissing, bundleAt(f), propPath(c.i, ".value"), f.b.Package, "", f.b.Name,
					"an olm.constraint needs exactly one of gvk, package, cel, all, any or not", "bundle %q: %s", f.b.Name, msg))
			}
		}
	}
	return out
}

// history tells an edge to a bundle the catalog no longer has (pruned
// history: upgrades from clusters that still run it) from a mistake, in
// one channel.
type history struct {
	ch        declcfg.Channel
	versionOf func(pkg, name string) (semver.Version, bool)
	entries   map[string]bool
	prefixes  []string // "<prefix>" of the package's bundle names "<prefix><version>"
	names     []string // the package's bundle names, for suggestions

	byVersion *versionrange.Index // the entries' versions, built on first use
}

func newHistory(ch declcfg.Channel, bundles []*bundleFacts, versionOf func(string, string) (semver.Version, bool)) *history {
	h := &history{ch: ch, versionOf: versionOf, entries: map[string]bool{}}
	for _, e := range ch.Entries {
		h.entries[e.Name] = true
	}
	seen := map[string]bool{}
	for _, f := range bundles {
		h.names = append(h.names, f.b.Name)
		if !f.hasVersion {
			continue
		}
		if p, ok := strings.CutSuffix(f.b.Name, f.version.String()); ok && p != "" && !seen[p] {
			seen[p] = true
			h.prefixes = append(h.prefixes, p)
		}
	}
	return h
}

// version returns the version a bundle name gives, when the name follows
// the package's naming (<prefix><version>, "v" optional).
func (h *history) version(name string) (semver.Version, bool) {
	for _, p := range h.prefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if v, err := versionrange.ParseVersion(rest); err == nil {
				return v, true
			}
		}
	}
	return semver.Version{}, false
}

// pruned reports whether entry k's edge to target, a name the package does
// not have, is pruned history rather than a mistake: the target is named
// as the package names its bundles (<prefix><version>), and either its
// version is below the entry's own, or the entry is the channel's oldest
// (it upgrades from no entry of the channel, so whatever it names came
// before: a version scheme may have changed since). A name that does not
// follow the package's naming is reported, and so is a version at or above
// the entry's on an entry that upgrades from others.
func (h *history) pruned(k int, target string) bool {
	tv, ok := h.version(target)
	if !ok {
		return false
	}
	e := h.ch.Entries[k]
	if ev, ok := h.versionOf(h.ch.Package, e.Name); ok && tv.LT(ev) {
		return true
	}
	return h.isTail(e)
}

// isTail reports whether e upgrades from no entry of the channel: none of
// its replaces and skips names one, and its skipRange covers none.
func (h *history) isTail(e declcfg.ChannelEntry) bool {
	if h.entries[e.Replaces] && e.Replaces != e.Name {
		return false
	}
	for _, s := range e.Skips {
		if h.entries[s] && s != e.Name {
			return false
		}
	}
	if e.SkipRange != "" {
		r, err := versionrange.ParseSkipRange(e.SkipRange)
		if err != nil {
			return false
		}
		if h.byVersion == nil {
			vers := make([]semver.Version, len(h.ch.Entries))
			has := make([]bool, len(h.ch.Entries))
			for i, o := range h.ch.Entries {
				vers[i], has[i] = h.versionOf(h.ch.Package, o.Name)
			}
			h.byVersion = versionrange.NewIndex(vers, func(i int) bool { return has[i] })
		}
		tail := true
		h.byVersion.Visit(r, nil, func(i int) bool {
			tail = h.ch.Entries[i].Name == e.Name
			return tail
		})
		return tail
	}
	return true
}

// help is the advice on a missing edge target: the nearest names of the
// package's bundles, when some are near.
func (h *history) help(target string) string {
	const fix = "fix the name, or drop the edge if the bundle was removed on purpose"
	if s := suggest.Closest(target, h.names); len(s) > 0 {
		return fmt.Sprintf("did you mean %s? %s", suggest.Alternatives(s), fix)
	}
	return fix
}

// constraintKindProblem reports an olm.constraint (or a nested one) that
// has no kind at all; the CUE schema reports constraints with several.
func constraintKindProblem(raw json.RawMessage) string {
	var c map[string]json.RawMessage
	if json.Unmarshal(raw, &c) != nil {
		return ""
	}
	n := 0
	for _, k := range []string{"gvk", "package", "cel", "all", "any", "not"} {
		if _, ok := c[k]; ok {
			n++
		}
	}
	if n == 0 {
		return "olm.constraint has none of gvk, package, cel, all, any or not"
	}
	for _, k := range []string{"all", "any", "not"} {
		var comp struct {
			Constraints []json.RawMessage `json:"constraints"`
		}
		if v, ok := c[k]; ok && json.Unmarshal(v, &comp) == nil {
			for _, sub := range comp.Constraints {
				if msg := constraintKindProblem(sub); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// otherThan returns the first of the entries ks whose name is not name,
// or -1.
func otherThan(entries []declcfg.ChannelEntry, ks []int, name string) int {
	for _, k := range ks {
		if entries[k].Name != name {
			return k
		}
	}
	return -1
}

func addName(m map[string]map[string]bool, pkg, name string) {
	if m[pkg] == nil {
		m[pkg] = map[string]bool{}
	}
	m[pkg][name] = true
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
