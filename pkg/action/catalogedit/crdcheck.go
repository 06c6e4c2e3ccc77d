package catalogedit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	ce "github.com/opmkit/opm/pkg/catalogedit"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// CRD upgrade checks of the edges an edit creates (promote, add-bundle):
// every upgrade edge the edited channels have after the edit and did not
// have before, whose two bundles carry their CRDs (olm.bundle.object, or
// the bundle being added), is checked with pkg/crd. An unsafe one refuses
// the edit unless Force.

// CRDEdge is a new upgrade edge with unsafe CRD changes.
type CRDEdge struct {
	Package string `json:"package"`
	Channel string `json:"channel"`
	From    string `json:"from"`
	To      string `json:"to"`
	// RefusedBy lists who refuses the upgrade: "v1", "classic".
	RefusedBy []string     `json:"refusedBy"`
	Changes   []crd.Change `json:"changes"`
}

// UnsafeCRDError refuses an edit that creates upgrade edges OLM refuses
// (or that lose data).
type UnsafeCRDError struct {
	Catalog string
	Edges   []CRDEdge
}

func (e *UnsafeCRDError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refusing the edit: it creates upgrade edges with unsafe CRD changes (use --force to make it anyway; opm crd diff shows every change):")
	for _, x := range e.Edges {
		b.WriteString("\n  " + describeEdge(x))
		for i, c := range x.Changes {
			if i == maxShownChanges {
				fmt.Fprintf(&b, "\n    ... and %d more", len(x.Changes)-maxShownChanges)
				break
			}
			v := ""
			if c.Version != "" {
				v = " " + c.Version
			}
			fmt.Fprintf(&b, "\n    %s%s: %s [%s]", c.CRD, v, c.Message, c.Rule)
		}
	}
	return b.String()
}

const maxShownChanges = 5

// DescribeCRDEdge is one line about an unsafe edge: its channel, bundles
// and who refuses it, and its first change.
func DescribeCRDEdge(x CRDEdge) string {
	s := describeEdge(x)
	if len(x.Changes) > 0 {
		c := x.Changes[0]
		s += " CRD " + c.CRD + ": " + c.Message
		if len(x.Changes) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(x.Changes)-1)
		}
	}
	return s
}

func describeEdge(x CRDEdge) string {
	who := "neither OLM refuses it"
	if len(x.RefusedBy) > 0 {
		who = "refused by OLM " + strings.Join(x.RefusedBy, " and OLM ")
	}
	return fmt.Sprintf("channel %s of %s: %s -> %s (%s):", x.Channel, x.Package, x.From, x.To, who)
}

// crdCheck says whether an edit's new edges are checked, and gives the
// CRDs of bundles the result does not carry (the bundle being added,
// before it was migrated to olm.csv.metadata).
type crdCheck struct {
	extra map[string]*crd.Bundle
}

// newUnsafeEdges returns the unsafe edges of after (the touched packages)
// that before does not have.
func (k *crdCheck) newUnsafeEdges(ctx context.Context, before, after *declcfg.DeclarativeConfig, touched map[string]bool) ([]CRDEdge, error) {
	ga, err := graph.New(ce.OnlyPackages(after, touched))
	if err != nil {
		return nil, nil // a bundle without a version: validation reports it
	}
	// Every edge is compared: bound them (skipRanges that all cover each
	// other make quadratically many).
	if err := ga.CheckEdges(graph.MaxEdges); err != nil {
		return nil, err
	}
	old := map[string]bool{}
	if gb, err := graph.New(ce.OnlyPackages(before, touched)); err == nil && gb.CheckEdges(graph.MaxEdges) == nil {
		for _, p := range gb.Packages {
			for _, c := range p.Channels {
				for _, e := range c.Edges() {
					old[p.Name+"\x00"+c.Name+"\x00"+e.From+"\x00"+e.To] = true
				}
			}
		}
	}
	bundles := map[string]*crd.Bundle{}
	cache := &crd.Cache{}
	for _, cfg := range []*declcfg.DeclarativeConfig{before, after} {
		for i := range cfg.Bundles {
			b := &cfg.Bundles[i]
			if !touched[b.Package] || bundles[b.Package+"\x00"+b.Name] != nil {
				continue
			}
			if cb, ok, err := crd.FromDeclcfg(ctx, b, cache); err == nil && ok {
				bundles[b.Package+"\x00"+b.Name] = cb
			}
		}
	}
	var out []CRDEdge
	for _, p := range ga.Packages {
		chk := &crd.Checker{Bundles: map[string]*crd.Bundle{}}
		for key, b := range bundles {
			if pkg, name, _ := strings.Cut(key, "\x00"); pkg == p.Name {
				chk.Bundles[name] = b
			}
		}
		for name, b := range k.extra {
			chk.Bundles[name] = b
		}
		seen := map[string]bool{}
		for _, c := range p.Channels {
			for _, e := range c.Edges() {
				key := p.Name + "\x00" + c.Name + "\x00" + e.From + "\x00" + e.To
				if old[key] || seen[key] {
					continue
				}
				seen[key] = true
				r, err := chk.Check(ctx, e.From, e.To)
				if err != nil {
					return nil, err
				}
				if r == nil || len(r.Unsafe()) == 0 {
					continue
				}
				out = append(out, CRDEdge{Package: p.Name, Channel: c.Name, From: e.From, To: e.To, RefusedBy: r.Refused().List(), Changes: r.Unsafe()})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Channel != b.Channel {
			return a.Channel < b.Channel
		}
		return a.From+"\x00"+a.To < b.From+"\x00"+b.To
	})
	return out, nil
}
