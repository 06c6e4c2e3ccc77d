package validate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
const CRDCodePrefix = "crd-"

// CRDCode is the rule code of a pkg/crd rule: crd-field-removed for
// field-removed, crd-removed for crd-removed.
func CRDCode(rule string) string {
	return CRDCodePrefix + strings.TrimPrefix(rule, CRDCodePrefix)
}

// CRDUpgradeOptions turn on the CRD upgrade checks.
type CRDUpgradeOptions struct {
	// Pull, when set, returns the CRDs of bundles without olm.bundle.object
	// properties (catalogs with olm.csv.metadata), by bundle name, from
	// their images. Such bundles are not checked when it is nil.
	Pull func(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string]*crd.Bundle, error)
}

// CodeCRDUnreadable is a bundle whose CRD cannot be read, so that its
// upgrades cannot be checked.
const CodeCRDUnreadable = "crd-unreadable"

func init() {
	Rules = append(Rules, Rule{Code: CodeCRDUnreadable, Summary: "CRD upgrade (--check-crd-upgrades): a bundle's CRD cannot be read, so its upgrades are not checked."})
	for _, name := range crd.UnsafeRules() {
		r, _ := crd.Rule(name)
		Rules = append(Rules, Rule{Code: CRDCode(name), Summary: "CRD upgrade (--check-crd-upgrades): " + r.Summary})
	}
}

// crdUpgradeChecks checks the edges of the group's channels.
func (g *group) crdUpgradeChecks(ctx context.Context, opts *CRDUpgradeOptions) ([]Finding, error) {
	bundles := map[string]*crd.Bundle{}
	var missing []*declcfg.Bundle
	cache := &crd.Cache{}
	for i := range g.cfg.Bundles {
		b := &g.cfg.Bundles[i]
		cb, ok, err := crd.FromDeclcfg(b, cache)
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
	if len(bundles) < 2 {
		return nil, nil
	}
	gr, err := graph.New(versionsOnly(g.cfg))
	if err != nil {
		return nil, nil // bundles without versions: other rules report them
	}
	k := &crd.Checker{Bundles: bundles}
	var out []Finding
	for _, p := range gr.Packages {
		reports, err := k.CheckPackage(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, r := range reports {
			ci := channelIndex(g.cfg.Channels, r.Channel)
			if ci < 0 {
				continue
			}
			path := edgePath(g.cfg.Channels[ci].Entries, r.Edge)
			for _, c := range r.Unsafe() {
				msg := fmt.Sprintf("upgrade %s -> %s: CRD %s", r.Edge.From, r.Edge.To, c.CRD)
				if c.Version != "" {
					msg += ", version " + c.Version
				}
				msg += ": " + c.Message
				if c.Refused != 0 {
					msg += "; " + c.Refused.String() + " " + refuseVerb(c.Refused) + " it"
				}
				f := g.crdFinding(declcfg.KindChannel, ci, path, p.Name, r.Channel, r.Edge.To, CRDCode(c.Rule), msg)
				f.Help = crdHelp(c)
				// distinct changes of one edge are distinct baseline records
				f.key += "#" + c.CRD + "/" + c.Version + "/" + c.Path + "/" + c.Example
				out = append(out, f)
			}
		}
	}
	return out, nil
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

func crdHelp(c crd.Change) string {
	switch {
	case c.Rule == crd.RuleExampleInvalid:
		return "keep the new schema accepting what the old one accepted, or convert through a webhook; opm crd diff compares two bundles"
	case c.Refused&crd.RefusedByV1 != 0:
		return "keep the change compatible (new optional fields, new versions), or ship it in a new version; opm crd diff OLD NEW shows every change"
	}
	return "opm crd diff OLD NEW shows every change of the upgrade"
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
