package validate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/olmv1"
)

// OLM v1 readiness (--target olm-v1).
//
// Every bundle of a package is checked with pkg/olmv1 (what OLM v1's
// resolver and applier refuse, what it installs only given something,
// what it installs but a migration from OLM classic should look at), and
// every channel for what a ClusterExtension installs from it and where
// OLM v1 upgrades. A bundle's findings point at the olm.bundle element
// they come from: the dependency property, the olm.bundle.object that
// holds the manifest (the element inside the manifest named in the
// message), or the olm.csv.metadata field. Refusals are errors; the rest
// warnings.

// OLMv1Options turn on the OLM v1 readiness checks.
type OLMv1Options struct {
	// Gates are the feature gates the verdicts assume.
	Gates olmv1.Gates
	// Pull, when set, returns the manifests of bundles without
	// olm.bundle.object properties, by bundle name, from their images.
	// Such bundles are checked from their properties alone when it is nil.
	Pull func(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string][]olmv1.Object, error)
}

// errorByDefault are the rules whose findings are errors without
// --strict, although upstream does not enforce them.
var errorByDefault = map[string]bool{}

func init() {
	for _, r := range olmv1.Rules {
		Rules = append(Rules, Rule{Code: r.Code, Summary: "OLM v1 (--target olm-v1): " + r.Summary})
		if r.Level == olmv1.Refused {
			errorByDefault[r.Code] = true
		}
	}
}

// olmv1Checks checks the group's bundles and channels, and counts them.
func (g *group) olmv1Checks(ctx context.Context, opts *OLMv1Options) ([]Finding, *olmv1.Summary, error) {
	sum := olmv1.NewSummary(opts.Gates)
	if len(g.cfg.Packages) != 1 {
		return nil, sum, nil // blobs without a package: other rules report them
	}
	type loaded struct {
		b  *olmv1.Bundle
		at []int // property of each object; nil when pulled
	}
	bundles := make([]loaded, len(g.cfg.Bundles))
	var missing []*declcfg.Bundle
	for i := range g.cfg.Bundles {
		b := &g.cfg.Bundles[i]
		ob, at := olmv1.FromDeclcfg(b)
		bundles[i] = loaded{ob, at}
		if ob.Objects == nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 && opts.Pull != nil {
		pulled, err := opts.Pull(ctx, g.name, missing)
		if err != nil {
			return nil, nil, err
		}
		for i := range bundles {
			if objs, ok := pulled[g.cfg.Bundles[i].Name]; ok && bundles[i].b.Objects == nil {
				bundles[i].b.Objects = objs
			}
		}
	}
	var out []Finding
	verdicts := map[string]*olmv1.Verdict{}
	for i, l := range bundles {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b := &g.cfg.Bundles[i]
		if _, dup := verdicts[b.Name]; dup {
			continue
		}
		v := olmv1.Check(l.b, opts.Gates)
		verdicts[b.Name] = v
		for _, is := range v.Issues {
			out = append(out, g.olmv1Finding(i, l.b, l.at, is))
		}
	}
	gr, err := graph.New(versionsOnly(g.cfg))
	if err != nil {
		// bundles without versions: other rules report them
		for _, v := range verdicts {
			sum.AddBundle(v)
		}
		return out, sum, nil
	}
	p := gr.Package(g.cfg.Packages[0].Name)
	if p == nil {
		return out, sum, nil
	}
	r, err := olmv1.CheckPackage(ctx, p, verdicts)
	if err != nil {
		return nil, nil, err
	}
	sum.Add(r)
	out = append(out, g.olmv1ChannelFindings(p, r)...)
	return out, sum, nil
}

// olmv1Finding places one bundle issue.
func (g *group) olmv1Finding(i int, b *olmv1.Bundle, at []int, is olmv1.Issue) Finding {
	bl := &g.cfg.Bundles[i]
	f := Finding{Severity: SeverityWarning, Code: is.Code, Message: is.Message, Package: bl.Package, Bundle: bl.Name,
		at: blobID{kind: declcfg.KindBundle, i: i, ok: true}}
	if is.Level() == olmv1.Refused {
		f.Severity = SeverityError
	}
	inner := ""
	switch {
	case is.Object >= 0:
		inner = b.Describe(is.Object)
		if is.Path != "" && is.Path != "kind" {
			inner += ", " + is.Path
		}
		if at != nil {
			f.Path = "properties[" + strconv.Itoa(at[is.Object]) + "]"
			f.Message += " (" + inner + ")"
		} else {
			f.Message += " (" + inner + ", in the bundle image)"
		}
	case is.Property >= 0:
		f.Path = "properties[" + strconv.Itoa(is.Property) + "]"
		if is.Path != "" {
			f.Path += ".value." + is.Path
		}
	}
	f.Help = is.HelpText()
	g.finish(&f)
	if inner != "" {
		// distinct elements of one manifest are distinct baseline records
		f.key += "#" + inner
	}
	return f
}

// olmv1ChannelFindings reports the channels whose newest bundle OLM v1
// refuses, and the upgrades it takes differently from OLM classic or into
// a bundle it refuses. (The bundle a ClusterExtension naming no channel
// installs is the pick of the channel that holds it, so it needs no
// finding of its own.)
func (g *group) olmv1ChannelFindings(p *graph.PackageGraph, r *olmv1.PackageReport) []Finding {
	var out []Finding
	reasons := func(name string) string {
		v := r.Verdicts[name]
		if v == nil {
			return ""
		}
		return strings.Join(v.Codes(olmv1.Refused), ", ")
	}
	pinHelp := func(chans []string) string {
		ok := r.InstallableVersions(p, chans)
		if len(ok) == 0 {
			return "no bundle there is installable by OLM v1: make the newest one installable"
		}
		return fmt.Sprintf("pin an installable version (spec.source.catalog.version: %q, %s), or make the newest bundle installable", ok[0].VersionString(), ok[0].Name)
	}
	for _, c := range r.Channels {
		ci := channelIndex(g.cfg.Channels, c.Name)
		if ci < 0 {
			continue
		}
		entries := g.cfg.Channels[ci].Entries
		if c.Pick != "" && !r.Installable(c.Pick) && r.Verdicts[c.Pick] != nil {
			f := g.crdFinding(declcfg.KindChannel, ci, "entries["+strconv.Itoa(entryIndex(entries, c.Pick, 0))+"]", p.Name, c.Name, c.Pick, olmv1.CodePickRefused,
				fmt.Sprintf("a ClusterExtension for package %q in channel %q installs %q, the channel's newest bundle, which OLM v1 refuses (%s)", p.Name, c.Name, c.Pick, reasons(c.Pick)))
			f.Severity = SeverityError
			f.Help = pinHelp([]string{c.Name})
			out = append(out, f)
		}
		for _, u := range c.Upgrades {
			if u.Refused {
				path := edgePath(entries, u.V1Edges[0])
				f := g.crdFinding(declcfg.KindChannel, ci, path, p.Name, c.Name, u.V1, olmv1.CodeUpgradeRefused,
					fmt.Sprintf("from %q, OLM v1 upgrades to %q (its highest successor), which it refuses (%s): installations of %q stay there", u.From, u.V1, reasons(u.V1), u.From))
				f.Help = "make " + u.V1 + " installable, or give " + u.From + " an installable successor of a higher version"
				f.key += "#" + u.From
				out = append(out, f)
			}
			if u.Differs() {
				path := "entries[" + strconv.Itoa(entryIndex(entries, u.From, 0)) + "]"
				if len(u.V1Edges) > 0 {
					path = edgePath(entries, u.V1Edges[0])
				}
				f := g.crdFinding(declcfg.KindChannel, ci, path, p.Name, c.Name, u.From, olmv1.CodeUpgradeDiffers,
					fmt.Sprintf("from %q, OLM classic upgrades to %s, OLM v1 to %s", u.From, describePick(u.Classic, u.ClassicEdges, ""), describePick(u.V1, u.V1Edges, u.Stays)))
				f.Help = "opm graph path --from " + u.From + " --semantics v1 shows OLM v1's whole path"
				f.key += "#" + u.From
				out = append(out, f)
			}
		}
	}
	return out
}

// describePick is a successor and the edges that make it one, or why there
// is none.
func describePick(name string, edges []graph.Edge, stays string) string {
	if name == "" {
		if stays != "" {
			return "none (" + stays + ")"
		}
		return "none"
	}
	kinds := make([]string, len(edges))
	for i, e := range edges {
		kinds[i] = string(e.Kind)
	}
	return fmt.Sprintf("%q (%s)", name, strings.Join(kinds, ", "))
}
