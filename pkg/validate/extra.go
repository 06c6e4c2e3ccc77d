package validate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

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
	version     semver.Version
	hasVersion  bool
	release     string
	gvks        []property.GVK
	pkgRequired []property.PackageRequired
	gvkRequired []property.GVKRequired
	constraints []json.RawMessage
}

func gatherFacts(b *declcfg.Bundle) bundleFacts {
	f := bundleFacts{b: b}
	npkg := 0
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypePackage:
			var v property.Package
			if json.Unmarshal(p.Value, &v) == nil {
				npkg++
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
				f.pkgRequired = append(f.pkgRequired, v)
			}
		case property.TypeGVKRequired:
			var v property.GVKRequired
			if json.Unmarshal(p.Value, &v) == nil {
				f.gvkRequired = append(f.gvkRequired, v)
			}
		case property.TypeConstraint:
			f.constraints = append(f.constraints, p.Value)
		}
	}
	if npkg != 1 {
		f.hasVersion = false
	}
	return f
}

var vPrefixRE = regexp.MustCompile(`(^|[\s<>=!~^,|])v[0-9]`)

// extraChecks runs the checks upstream lacks. They work from the blobs, so
// they run whether or not the conversion succeeded.
func extraChecks(cfg *declcfg.DeclarativeConfig) []Finding {
	var out []Finding
	warn := func(code string, pos declcfg.Position, pkg, ch, b, help, format string, args ...any) {
		out = append(out, Finding{Severity: SeverityWarning, Code: code, Message: fmt.Sprintf(format, args...),
			File: pos.File, Line: pos.Line, Column: pos.Column, Package: pkg, Channel: ch, Bundle: b, Help: help})
	}

	facts := make([]bundleFacts, len(cfg.Bundles))
	byPkg := map[string][]*bundleFacts{}
	byName := map[string]map[string]bool{} // package -> bundle and entry names
	provided := map[property.GVK]bool{}
	for i := range cfg.Bundles {
		facts[i] = gatherFacts(&cfg.Bundles[i])
		f := &facts[i]
		byPkg[f.b.Package] = append(byPkg[f.b.Package], f)
		addName(byName, f.b.Package, f.b.Name)
		for _, g := range f.gvks {
			provided[g] = true
		}
	}
	for _, ch := range cfg.Channels {
		for _, e := range ch.Entries {
			addName(byName, ch.Package, e.Name)
		}
	}

	// Channel entries: skipRange, edge targets, skipped replaces targets.
	for _, ch := range cfg.Channels {
		entries := map[string]declcfg.ChannelEntry{}
		skippedBy := map[string][]string{}
		for _, e := range ch.Entries {
			if _, ok := entries[e.Name]; !ok {
				entries[e.Name] = e
			}
			for _, s := range e.Skips {
				skippedBy[s] = append(skippedBy[s], e.Name)
			}
		}
		for _, e := range ch.Entries {
			if e.SkipRange != "" {
				if vPrefixRE.MatchString(e.SkipRange) {
					warn(CodeSkipRangeVPrefix, ch.Pos, ch.Package, ch.Name, e.Name,
						`write versions without "v", e.g. ">=1.0.0 <1.2.0"; upstream rejects the range`,
						"skipRange %q of bundle %q uses a \"v\" prefix", e.SkipRange, e.Name)
				} else if r, err := versionrange.ParseSkipRange(e.SkipRange); err == nil {
					covered := false
					for _, f := range byPkg[ch.Package] {
						if f.hasVersion && f.b.Name != e.Name && r.Contains(f.version) {
							covered = true
							break
						}
					}
					if !covered {
						warn(CodeSkipRangeCoversNone, ch.Pos, ch.Package, ch.Name, e.Name,
							"check the range's bounds against the versions the package ships",
							"skipRange %q of bundle %q covers no version of package %q", e.SkipRange, e.Name, ch.Package)
					}
				}
			}
			targets := append([]string(nil), e.Skips...)
			if e.Replaces != "" {
				targets = append([]string{e.Replaces}, targets...)
			}
			for j, t := range targets {
				if t == "" || byName[ch.Package][t] {
					continue
				}
				kind := "skips"
				if j == 0 && e.Replaces != "" {
					kind = "replaces"
				}
				warn(CodeEdgeTargetMissing, ch.Pos, ch.Package, ch.Name, e.Name,
					"fix the name, or drop the edge if the bundle was removed on purpose",
					"bundle %q %s %q, which is not a bundle of package %q", e.Name, kind, t, ch.Package)
			}
		}
		// The replaces chain from the head, ignoring upstream's "skipped
		// target" cut: a skipped bundle on it means the replaces edge to it
		// is ignored.
		g := graph.Channel{Package: ch.Package, Name: ch.Name}
		for _, e := range ch.Entries {
			g.Entries = append(g.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		head, err := g.Head()
		cur, ok := entries[head]
		ok = ok && err == nil
		seen := map[string]bool{}
		for ok && !seen[cur.Name] {
			seen[cur.Name] = true
			next, in := entries[cur.Replaces]
			if cur.Replaces == "" || !in {
				break
			}
			// An entry that both replaces and skips a bundle says what it
			// means; another entry skipping it cuts the chain silently.
			if by := otherThan(skippedBy[cur.Replaces], cur.Name); by != "" {
				warn(CodeSkippedAndReplaced, ch.Pos, ch.Package, ch.Name, cur.Replaces,
					"remove it from skips, or point replaces past it: OLM ignores a replaces edge to a skipped bundle",
					"bundle %q is replaced by %q and skipped by %q in channel %q, so the replaces chain stops at %q", cur.Replaces, cur.Name, by, ch.Name, cur.Name)
				break
			}
			cur = next
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
			g := groups[key]
			strs := map[string]bool{}
			names := map[string]bool{}
			for _, f := range g {
				strs[f.version.String()+"-"+f.release] = true
				names[f.b.Name] = true
			}
			if len(strs) < 2 || len(names) < 2 {
				continue
			}
			list := sortedKeys(names)
			for _, f := range g {
				warn(CodeVersionShared, f.b.Pos, pkg, "", f.b.Name,
					"build metadata does not order versions: give each bundle its own version or a release",
					"bundles %s share version %s (they differ only in build metadata)", strings.Join(quoteAll(list), ", "), strings.SplitN(key, "\x00", 2)[0])
			}
		}
	}

	// Dependencies no bundle in the catalog provides.
	for i := range facts {
		f := &facts[i]
		for _, req := range f.pkgRequired {
			// OLM classic reads a dependency's versionRange in the
			// skipRange dialect (blang/semver's ParseRange).
			r, err := versionrange.ParseSkipRange(req.VersionRange)
			if err != nil {
				warn(CodeVersionRangeInvalid, f.b.Pos, f.b.Package, "", f.b.Name, "",
					"bundle %q requires package %q with invalid versionRange %q: %v", f.b.Name, req.PackageName, req.VersionRange, err)
				continue
			}
			met := false
			for _, o := range byPkg[req.PackageName] {
				if o.hasVersion && r.Contains(o.version) {
					met = true
					break
				}
			}
			if !met {
				warn(CodePackageRequiredUnmet, f.b.Pos, f.b.Package, "", f.b.Name,
					"add a bundle that satisfies it, or make sure the catalog it comes from is installed",
					"bundle %q requires package %q %s, which no bundle in the catalog provides", f.b.Name, req.PackageName, req.VersionRange)
			}
		}
		for _, req := range f.gvkRequired {
			if !provided[property.GVK(req)] {
				warn(CodeGVKRequiredUnmet, f.b.Pos, f.b.Package, "", f.b.Name,
					"add a bundle that provides the API, or make sure the catalog it comes from is installed",
					"bundle %q requires API %s/%s %s, which no bundle in the catalog provides", f.b.Name, req.Group, req.Version, req.Kind)
			}
		}
		for _, c := range f.constraints {
			if msg := constraintKindProblem(c); msg != "" {
				warn(CodeConstraintKindMissing, f.b.Pos, f.b.Package, "", f.b.Name,
					"an olm.constraint needs exactly one of gvk, package, cel, all, any or not", "bundle %q: %s", f.b.Name, msg)
			}
		}
	}
	return out
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

// otherThan returns the first name of names that is not name.
func otherThan(names []string, name string) string {
	for _, n := range names {
		if n != name {
			return n
		}
	}
	return ""
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
