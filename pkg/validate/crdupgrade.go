package validate

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// CRD upgrade checks (--check-crd-upgrades).
//
// Every upgrade edge of every channel (replaces, skips and skipRange, as
// pkg/graph computes them) is checked with pkg/crd: the CRDs of the
// bundle it upgrades from and of the bundle it upgrades to, and the first
// bundle's example custom resources against the second's CRDs. Each
// unsafe change is a finding at the edge's element of the channel entry
// (its replaces, the skips item, its skipRange), naming both bundles, the
// CRD, the version and field, and who refuses the upgrade.

// CRDCodePrefix prefixes the rule codes of CRD changes: crd-field-removed
// is pkg/crd's field-removed.
const CRDCodePrefix = crd.CodePrefix

// CRDCode is the rule code of a pkg/crd rule: crd-field-removed for
// field-removed, crd-removed for crd-removed.
func CRDCode(rule string) string { return crd.Code(rule) }

// CRDUpgradeOptions turn on the CRD upgrade checks.
type CRDUpgradeOptions struct {
	// Pull, when set, returns the CRDs of bundles without olm.bundle.object
	// properties (catalogs with olm.csv.metadata), by bundle name, from
	// their images. Such bundles are not checked when it is nil.
	Pull func(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string]*crd.Bundle, error)
	// OLM aims the checks at one OLM: changes only the other one refuses
	// are not reported. 0 means both.
	OLM crd.Refusal
}

// Codes of the CRD upgrade checks besides pkg/crd's rules.
const (
	// CodeCRDUnreadable is a bundle whose CRD cannot be read, so that its
	// upgrades cannot be checked.
	CodeCRDUnreadable = "crd-unreadable"
	// CodeCRDUpgradesNotChecked is a package whose upgrades could not be
	// checked because their bundles carry no CRDs (olm.csv.metadata
	// catalogs, without --pull-bundles).
	CodeCRDUpgradesNotChecked = "crd-upgrades-not-checked"
)

// maxCRDFindings bounds the CRD findings of one package; past it, one
// crd-limit-reached finding says how many were left out.
const maxCRDFindings = 10_000

func init() {
	Rules = append(Rules,
		Rule{Code: CodeCRDUnreadable, Summary: "CRD upgrade (--check-crd-upgrades): a bundle's CRD cannot be read, so its upgrades are not checked."},
		Rule{Code: CodeCRDUpgradesNotChecked, Summary: "CRD upgrade (--check-crd-upgrades): upgrades of a package were not checked, as their bundles carry no CRDs (catalogs with olm.csv.metadata; --pull-bundles reads them from the bundle images)."})
	for _, name := range crd.UnsafeRules() {
		r, _ := crd.Rule(name)
		Rules = append(Rules, Rule{Code: CRDCode(name), Summary: "CRD upgrade (--check-crd-upgrades): " + r.Summary})
	}
	for from, to := range crd.RuleAliases {
		ruleAliases[CRDCode(from)] = CRDCode(to)
	}
}

// crdUpgradeChecks checks the edges of the group's channels.
func (g *group) crdUpgradeChecks(ctx context.Context, opts *CRDUpgradeOptions) ([]Finding, error) {
	bundles := map[string]*crd.Bundle{}
	var missing []*declcfg.Bundle
	cache := &crd.Cache{}
	for i := range g.cfg.Bundles {
		b := &g.cfg.Bundles[i]
		cb, ok, err := crd.FromDeclcfg(ctx, b, cache)
		if err != nil {
			// an unreadable CRD in a bundle: reported as such
			return []Finding{g.crdFinding(declcfg.KindBundle, i, "", b.Package, "", b.Name, CodeCRDUnreadable, err.Error())}, nil
		}
		if ok {
			bundles[b.Name] = cb
		} else {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 && opts.Pull != nil {
		pulled, err := opts.Pull(ctx, g.name, missing)
		if err != nil {
			return nil, err
		}
		for n, b := range pulled {
			bundles[n] = b
		}
	}
	gr, err := graph.New(versionsOnly(g.cfg))
	if err != nil {
		return nil, nil // bundles without versions: other rules report them
	}
	k := &crd.Checker{Bundles: bundles}
	var out []Finding
	left := 0 // findings not reported past maxCRDFindings
	for _, p := range gr.Packages {
		pc, err := k.CheckPackage(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, r := range pc.Edges {
			ci := channelIndex(g.cfg.Channels, r.Channel)
			if ci < 0 {
				continue
			}
			path := edgePath(g.cfg.Channels[ci].Entries, r.Edge)
			for _, c := range r.Unsafe() {
				if opts.OLM != 0 && c.Refused != 0 && c.Refused&opts.OLM == 0 {
					continue // refused only by the OLM the check is not aimed at
				}
				if len(out) >= maxCRDFindings {
					left++
					continue
				}
				f := g.crdFinding(declcfg.KindChannel, ci, path, p.Name, r.Channel, r.Edge.To, CRDCode(c.Rule), edgeMessage(r, c))
				f.Help = crdHelp(c)
				// distinct changes of one edge are distinct baseline records
				f.key += "#" + c.CRD + "/" + c.Version + "/" + c.Path + "/" + c.Example
				out = append(out, f)
			}
		}
		pi := slices.IndexFunc(g.cfg.Packages, func(x declcfg.Package) bool { return x.Name == p.Name })
		if pc.Unknown > 0 {
			msg := fmt.Sprintf("%d of the %d upgrades of package %s %s not checked: ", pc.Unknown, pc.Pairs, p.Name, wasWere(pc.Unknown))
			help := "--pull-bundles reads the CRDs of such bundles from their images"
			if opts.Pull != nil {
				msg += "a bundle of each has neither olm.bundle.object properties nor an image to read its CRDs from"
				help = "give each bundle its image, or render the catalog with its bundle objects"
			} else {
				msg += "a bundle of each carries no CRDs to compare (no olm.bundle.object properties, as in catalogs with olm.csv.metadata)"
			}
			f := g.packageFinding(pi, p.Name, CodeCRDUpgradesNotChecked, msg)
			f.Help = help
			out = append(out, f)
		}
		if pc.Skipped > 0 {
			f := g.packageFinding(pi, p.Name, CRDCode(crd.RuleLimitReached),
				fmt.Sprintf("%d of the %d upgrades of package %s %s not checked: the CRD checks of one package stop after %d steps (the limit)",
					pc.Skipped, pc.Pairs, p.Name, wasWere(pc.Skipped), crd.MaxCheckSteps))
			f.Help = crdRuleHint(crd.RuleLimitReached)
			out = append(out, f)
		}
	}
	if left > 0 {
		pi := slices.IndexFunc(g.cfg.Packages, func(x declcfg.Package) bool { return x.Name == g.name })
		f := g.packageFinding(pi, g.name, CRDCode(crd.RuleLimitReached),
			fmt.Sprintf("%d more CRD findings of package %s were not reported: more than %d in one package", left, g.name, maxCRDFindings))
		f.Help = "fix the first ones; opm crd diff OLD NEW lists every change of one upgrade"
		out = append(out, f)
	}
	return out, nil
}

// edgeMessage is the finding's message of a change on an upgrade edge.
func edgeMessage(r crd.EdgeReport, c crd.Change) string {
	msg := fmt.Sprintf("upgrade %s -> %s", r.Edge.From, r.Edge.To)
	if c.CRD != "" {
		msg += ": CRD " + c.CRD
		if c.Version != "" {
			msg += ", version " + c.Version
		}
	}
	msg += ": " + c.Message
	if c.Refused != 0 {
		msg += "; " + c.Refused.String() + " " + refuseVerb(c.Refused) + " it"
	}
	return msg
}

// packageFinding is a warning at the package's olm.package blob (the i-th
// of the group; -1: none).
func (g *group) packageFinding(i int, pkg, code, msg string) Finding {
	f := Finding{Severity: SeverityWarning, Code: code, Message: msg, Package: pkg}
	if i >= 0 {
		f.at = blobID{kind: declcfg.KindPackage, i: i, ok: true}
	}
	g.finish(&f)
	return f
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func (g *group) crdFinding(kind declcfg.BlobKind, i int, path, pkg, ch, bundle, code, msg string) Finding {
	f := Finding{Severity: SeverityWarning, Code: code, Message: msg, Package: pkg, Channel: ch, Bundle: bundle, Path: path,
		at: blobID{kind: kind, i: i, ok: true}}
	g.finish(&f)
	return f
}

func refuseVerb(r crd.Refusal) string {
	if r == crd.RefusedByV1|crd.RefusedByClassic {
		return "refuse"
	}
	return "refuses"
}

// edgePath is the element of a channel's entries that makes the edge.
func edgePath(entries []declcfg.ChannelEntry, e graph.Edge) string {
	k := slices.IndexFunc(entries, func(x declcfg.ChannelEntry) bool { return x.Name == e.To })
	if k < 0 {
		return "entries"
	}
	at := "entries[" + strconv.Itoa(k) + "]"
	switch e.Kind {
	case graph.KindReplaces:
		return at + ".replaces"
	case graph.KindSkips:
		if j := slices.Index(entries[k].Skips, e.From); j >= 0 {
			return at + ".skips[" + strconv.Itoa(j) + "]"
		}
	case graph.KindSkipRange:
		return at + ".skipRange"
	}
	return at
}

// crdHelp is the finding's help: the rule's hint, and where to see every
// change.
func crdHelp(c crd.Change) string {
	if r, _ := crd.Rule(c.Rule); r.NotChecked {
		return r.Hint
	}
	return crdRuleHint(c.Rule) + "; opm crd diff OLD NEW shows every change of the upgrade"
}

func crdRuleHint(rule string) string {
	r, _ := crd.Rule(rule)
	return r.Hint
}

// versionsOnly is cfg with each bundle's properties cut down to its
// olm.package: all pkg/graph needs to build the upgrade graph, without
// decoding every manifest of olm.bundle.object again.
func versionsOnly(cfg *declcfg.DeclarativeConfig) *declcfg.DeclarativeConfig {
	out := *cfg
	out.Bundles = make([]declcfg.Bundle, len(cfg.Bundles))
	for i, b := range cfg.Bundles {
		b.Properties = slices.DeleteFunc(slices.Clone(b.Properties), func(p property.Property) bool {
			return p.Type == property.TypeBundleObject || p.Type == property.TypeCSVMetadata
		})
		out.Bundles[i] = b
	}
	return &out
}
