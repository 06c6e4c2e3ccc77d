package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// MaxExamples bounds the example custom resources read from one CSV, and
// MaxExamplesSize the size of its alm-examples (the largest in the
// community and certified catalogs are 60 KB): past them, the examples
// are not checked, and a change says so.
const (
	MaxExamples     = 1000
	MaxExamplesSize = 1 << 20
)

// Bundle is what the upgrade checks need of one bundle: its CRDs and the
// example custom resources of its CSV (the alm-examples annotation), the
// objects a user most likely created from it.
type Bundle struct {
	// Name names the bundle in messages (its olm.bundle name, or the CSV's
	// name, or a path).
	Name string
	// CRDs are the bundle's CRDs, sorted by name.
	CRDs []*CRD
	// HasCSV is set when the bundle had a ClusterServiceVersion.
	HasCSV bool

	// examples is the CSV's alm-examples annotation, parsed by Examples.
	examples    string
	once        sync.Once
	exampleList []Example
	exampleErr  error
}

// Example is one object of a CSV's alm-examples.
type Example struct {
	// Index is the object's index in the annotation's list.
	Index  int
	Object map[string]any
}

// Label names the example: "Kind name" (or "Kind #i" without a name).
func (e Example) Label() string {
	kind, _ := e.Object["kind"].(string)
	name := ""
	if meta, ok := e.Object["metadata"].(map[string]any); ok {
		name, _ = meta["name"].(string)
	}
	if name == "" {
		name = "#" + strconv.Itoa(e.Index)
	}
	return kind + " " + name
}

// CRD returns the bundle's CRD called name, or nil.
func (b *Bundle) CRD(name string) *CRD {
	i := sort.Search(len(b.CRDs), func(i int) bool { return b.CRDs[i].Name >= name })
	if i < len(b.CRDs) && b.CRDs[i].Name == name {
		return b.CRDs[i]
	}
	return nil
}

// Object is one manifest of a bundle: its JSON and, when it was read from
// a file, its source (for positions).
type Object struct {
	JSON   []byte
	Source *Source
}

// NewBundle gathers the CRDs and the CSV's examples among a bundle's
// objects; other objects are ignored. A CRD that does not parse and two
// CRDs of one name are errors naming the bundle. cache (may be nil)
// shares the CRDs of identical manifests between bundles; it is not used
// for objects with a Source.
func NewBundle(ctx context.Context, name string, objs []Object, cache *Cache) (*Bundle, error) {
	b := &Bundle{Name: name}
	var sources []*Source // of b.CRDs, for errors
	for _, o := range objs {
		kind := stringMember(o.JSON, "kind")
		switch {
		case IsCRD(stringMember(o.JSON, "apiVersion"), kind):
			var c *CRD
			var err error
			if o.Source == nil {
				c, err = cache.parse(ctx, o.JSON)
			} else {
				c, err = parse(ctx, o.JSON, nil)
			}
			if err != nil {
				return nil, fmt.Errorf("bundle %s: %s%w", name, where(o.Source), err)
			}
			if o.Source != nil {
				c.Source = o.Source
			}
			b.CRDs = append(b.CRDs, c)
			sources = append(sources, o.Source)
		case kind == "ClusterServiceVersion" && !b.HasCSV:
			b.HasCSV = true
			b.examples = stringMember(member(member(o.JSON, "metadata"), "annotations"), "alm-examples")
		}
	}
	// sorted by name once (not as they come: a bundle may hold thousands)
	order := make([]int, len(b.CRDs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return b.CRDs[order[i]].Name < b.CRDs[order[j]].Name })
	sorted := make([]*CRD, len(order))
	for i, k := range order {
		sorted[i] = b.CRDs[k]
		if i > 0 && sorted[i-1].Name == sorted[i].Name {
			return nil, fmt.Errorf("bundle %s: %sCRD %s shipped twice", name, where(sources[k]), sorted[i].Name)
		}
	}
	b.CRDs = sorted
	return b, nil
}

// Examples returns the CSV's alm-examples (objects only), read on first
// use. alm-examples that do not parse are an error naming the bundle.
func (b *Bundle) Examples() ([]Example, error) {
	list, err := b.parsedExamples()
	if err != nil {
		return nil, fmt.Errorf("bundle %s: alm-examples: %w", b.Name, err)
	}
	return list, nil
}

// parsedExamples is Examples with the parse error as it is.
func (b *Bundle) parsedExamples() ([]Example, error) {
	b.once.Do(func() {
		b.exampleList, b.exampleErr = parseExamples(b.examples)
	})
	return b.exampleList, b.exampleErr
}

func where(s *Source) string {
	if s == nil {
		return ""
	}
	return s.File + ": "
}

// parseExamples reads an alm-examples annotation: a JSON list of objects.
func parseExamples(text string) ([]Example, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if len(text) > MaxExamplesSize {
		return nil, fmt.Errorf("%d bytes, more than %d", len(text), MaxExamplesSize)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var list []any
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("not a JSON list of objects: %w", err)
	}
	if len(list) > MaxExamples {
		return nil, fmt.Errorf("%d examples, more than %d", len(list), MaxExamples)
	}
	var out []Example
	for i, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, Example{Index: i, Object: m})
		}
	}
	return out, nil
}

// FromDeclcfg gathers the CRDs and examples of a catalog's bundle from its
// olm.bundle.object properties. ok is false when the bundle has none (a
// bundle carrying olm.csv.metadata only, whose CRDs are in its image).
func FromDeclcfg(ctx context.Context, b *declcfg.Bundle, cache *Cache) (bundle *Bundle, ok bool, err error) {
	var objs []Object
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		data, ok := bundleObjectData(p.Value)
		if !ok {
			return nil, false, fmt.Errorf("bundle %s: properties[%d]: olm.bundle.object: not {\"data\": \"<base64>\"}", b.Name, i)
		}
		objs = append(objs, Object{JSON: bytes.TrimSpace(data)})
	}
	if len(objs) == 0 {
		return nil, false, nil
	}
	out, err := NewBundle(ctx, b.Name, objs, cache)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// BundleReport is what an upgrade from one bundle to another changes.
type BundleReport struct {
	From, To string
	// Changes are every CRD change (safe ones included) and every example
	// that no longer validates, sorted.
	Changes []Change
	// Omitted counts the safe changes not kept: past MaxChanges for one
	// CRD, they are counted only.
	Omitted int
}

// Unsafe returns the changes that are not safe (the checks that could
// not run included).
func (r *BundleReport) Unsafe() []Change {
	var out []Change
	for _, c := range r.Changes {
		if !c.Safe {
			out = append(out, c)
		}
	}
	return out
}

// Refused returns who refuses the upgrade.
func (r *BundleReport) Refused() Refusal {
	var out Refusal
	for _, c := range r.Changes {
		out |= c.Refused
	}
	return out
}

// CompareBundles compares the CRDs of two bundles (a CRD of the old
// bundle the new one lacks is crd-removed, a new one crd-added) and
// validates the old bundle's examples against the new CRDs: an example
// valid under the old CRD (its defaults applied, as the API server applies
// them on reading) that fails the new one is example-invalid. Examples
// that cannot be checked (see checkExamples) are examples-not-checked.
func CompareBundles(ctx context.Context, old, new *Bundle) (*BundleReport, error) {
	r, _, err := compareBundles(ctx, old, new, limits.checkSteps)
	return r, err
}

// compareBundles is CompareBundles within a budget of steps (schema nodes
// compared, example values validated, changes found): once it is spent,
// the CRDs and examples left are not checked (a limit-reached change says
// so). It also returns the steps spent, which may pass budget by one
// CRD's or one upgrade's examples' limit.
func compareBundles(ctx context.Context, old, new *Bundle, budget int) (*BundleReport, int, error) {
	r := &BundleReport{From: old.Name, To: new.Name}
	steps := len(old.CRDs) + len(new.CRDs)
	for i, oc := range old.CRDs {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if steps >= budget {
			r.Changes = append(r.Changes, Change{Rule: RuleLimitReached,
				Message: fmt.Sprintf("%d CRDs of %s (%s and after) and its examples were not compared: the check stopped after %d steps (the limit)", len(old.CRDs)-i, old.Name, oc.Name, limits.checkSteps)})
			sortChanges(r.Changes)
			return r, steps, nil
		}
		nc := new.CRD(oc.Name)
		if nc == nil {
			r.Changes = append(r.Changes, Change{Rule: RuleCRDRemoved, CRD: oc.Name, Old: oc.Name, Path: "metadata.name", at: "metadata.name", source: oc.Source, inOld: true,
				Message: fmt.Sprintf("%s no longer ships CRD %s: nothing upgrades it any more", new.Name, oc.Name)})
			continue
		}
		if oc.Same(nc) {
			continue
		}
		cs, err := compare(ctx, oc, nc)
		if err != nil {
			return nil, 0, err
		}
		r.Changes = append(r.Changes, cs.changes...)
		r.Omitted += cs.omitted
		steps += cs.steps
	}
	for i, nc := range new.CRDs {
		if i&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if old.CRD(nc.Name) == nil {
			r.Changes = append(r.Changes, Change{Rule: RuleCRDAdded, CRD: nc.Name, New: nc.Name, Path: "metadata.name", at: "metadata.name", source: nc.Source, Safe: true,
				Message: fmt.Sprintf("%s ships the new CRD %s", new.Name, nc.Name)})
		}
	}
	if steps >= budget && strings.TrimSpace(old.examples) != "" && crdsChanged(old, new) {
		r.Changes = append(r.Changes, Change{Rule: RuleLimitReached,
			Message: fmt.Sprintf("the examples of %s were not checked: the check stopped after %d steps (the limit)", old.Name, limits.checkSteps)})
	} else if steps < budget {
		ex, exSteps, err := checkExamples(ctx, old, new)
		if err != nil {
			return nil, 0, err
		}
		r.Changes = append(r.Changes, ex...)
		steps += exSteps
	}
	sortChanges(r.Changes)
	// changes count too: a pair of bundles of a thousand CRDs each, all
	// removed, costs no comparison
	return r, steps + len(r.Changes), nil
}

// checkExamples validates the old bundle's examples against the new
// bundle's CRDs, when some CRD changed. What it cannot check is an
// examples-not-checked change: alm-examples that do not parse or hold
// more than MaxExamples objects, an example whose validation takes more
// than MaxExampleSteps (or whose validation fails to run otherwise), and
// the examples left once the upgrade's MaxExamplesSteps are spent.
func checkExamples(ctx context.Context, old, new *Bundle) ([]Change, int, error) {
	if !crdsChanged(old, new) {
		return nil, 0, nil
	}
	examples, err := old.parsedExamples()
	if err != nil {
		return []Change{{Rule: RuleExamplesNotChecked,
			Message: fmt.Sprintf("the examples of %s (its CSV's alm-examples) were not checked against the new CRDs: %v", old.Name, err)}}, 0, nil
	}
	var out []Change
	left := limits.examplesSteps
	stopped := -1 // the first example left unchecked once left is spent
	for i, e := range examples {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if left <= 0 {
			stopped = i
			break
		}
		oc, ov := crdOf(old, e.Object)
		nc, nv := crdOf(new, e.Object)
		if ov == nil || nv == nil || !ov.Served || !nv.Served || oc.Same(nc) {
			continue
		}
		// Stored objects are read through the old CRD, its defaults
		// applied; they must validate under the new schema as they are.
		obj := ov.Default(e.Object)
		before, used, err := ov.check(ctx, obj, min(limits.exampleSteps, left))
		left -= used
		if err == nil && before.Valid() {
			var after *Result
			after, used, err = nv.check(ctx, obj, min(limits.exampleSteps, left))
			left -= used
			if err == nil && !after.Valid() {
				out = append(out, exampleInvalid(old, e, nc, nv, after))
			}
		}
		var sl *StepLimitError
		switch {
		case errors.As(err, &sl) && left <= 0:
			stopped = i
		case ctx.Err() != nil:
			return nil, 0, ctx.Err()
		case err != nil:
			// its budget spent (or the validator refused it): not
			// checked, which must not stop the other checks
			out = append(out, Change{Rule: RuleExamplesNotChecked, CRD: nc.Name, Version: nv.Name, Example: e.Label(),
				Path: "spec.versions[" + nv.Name + "].schema.openAPIV3Schema", at: nv.SchemaPath, source: nc.Source,
				Message: fmt.Sprintf("example %s of %s (alm-examples[%d]) was not checked: %v", e.Label(), old.Name, e.Index, err)})
		}
		if stopped >= 0 {
			break
		}
	}
	if stopped >= 0 {
		n := len(examples) - stopped
		out = append(out, Change{Rule: RuleExamplesNotChecked,
			Message: fmt.Sprintf("%d %s of %s (alm-examples[%d] and after) %s not checked: validating the examples of one upgrade took more than %d steps (the limit)",
				n, plural(n, "example", "examples"), old.Name, examples[stopped].Index, plural(n, "was", "were"), limits.examplesSteps)})
	}
	return out, limits.examplesSteps - left, nil
}

// crdsChanged reports whether some CRD of old differs in new (or is gone
// from it): only then can an example stop validating.
func crdsChanged(old, new *Bundle) bool {
	for _, oc := range old.CRDs {
		if nc := new.CRD(oc.Name); nc == nil || !oc.Same(nc) {
			return true
		}
	}
	return false
}

// exampleInvalid is the change of an example valid under the old CRD that
// the new version nv of nc refuses.
func exampleInvalid(old *Bundle, e Example, nc *CRD, nv *Version, after *Result) Change {
	var msgs []string
	for _, fe := range after.Errors {
		msgs = append(msgs, fe.String())
	}
	refused := RefusedByClassic
	note := ""
	if nc.Conversion == "Webhook" {
		refused = 0
		note = " (OLM classic only warns: the new CRD converts through a webhook)"
	}
	return Change{Rule: RuleExampleInvalid, CRD: nc.Name, Version: nv.Name, Example: e.Label(),
		Path: "spec.versions[" + nv.Name + "].schema.openAPIV3Schema", at: nv.SchemaPath, source: nc.Source,
		Message: fmt.Sprintf("example %s of %s (alm-examples[%d]) is invalid under the new schema%s: %s", e.Label(), old.Name, e.Index, note, strings.Join(msgs, "; ")),
		Refused: refused}
}

// crdOf returns the CRD and version of b an object belongs to.
func crdOf(b *Bundle, obj map[string]any) (*CRD, *Version) {
	for _, c := range b.CRDs {
		if v, err := c.versionOf(obj); err == nil {
			return c, v
		}
	}
	return nil, nil
}

// FromBundleDir reads the CRDs and examples of the bundle directory dir
// (manifests/ and metadata/), as pkg/bundle parses it. CRDs carry their
// manifest's text, so their changes have positions.
func FromBundleDir(ctx context.Context, dir string) (*Bundle, error) {
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	pb, err := bundle.ParseFS(ctx, fsys)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	var objs []Object
	for _, o := range pb.Objects {
		obj := Object{JSON: o.JSON}
		if IsCRD(o.APIVersion, o.Kind) {
			if data, err := fsys.ReadFile(o.File); err == nil {
				if docs, err := SplitDocuments(filepath.Join(dir, filepath.FromSlash(o.File)), data); err == nil && len(docs) > 0 {
					obj.Source = docs[0].Source
				}
			}
		}
		objs = append(objs, obj)
	}
	name := pb.Name
	if name == "" {
		name = dir
	}
	return NewBundle(ctx, name, objs, nil)
}

// EdgeReport is the check of one upgrade edge of a channel.
type EdgeReport struct {
	Channel string
	Edge    graph.Edge
	*BundleReport
}

// Checker compares bundles once per pair, however many edges (channels,
// replaces and skips and skipRange) join them, within MaxCheckSteps over
// all the pairs.
type Checker struct {
	// Bundles are the CRDs of the bundles, by bundle name; a bundle
	// missing here is not checked.
	Bundles map[string]*Bundle
	memo    map[[2]string]*BundleReport
	// steps are the steps spent by the comparisons so far.
	steps int
}

// Spent reports whether the Checker has spent its MaxCheckSteps.
func (k *Checker) Spent() bool { return k.steps >= limits.checkSteps }

// Check compares the bundles from and to (nil when either is unknown).
// Once the Checker has spent its budget (see Spent), a pair not compared
// yet is a report of one limit-reached change.
func (k *Checker) Check(ctx context.Context, from, to string) (*BundleReport, error) {
	key := [2]string{from, to}
	if r, ok := k.memo[key]; ok {
		return r, nil
	}
	a, b := k.Bundles[from], k.Bundles[to]
	if a == nil || b == nil {
		return nil, nil
	}
	if k.Spent() {
		return &BundleReport{From: from, To: to, Changes: []Change{{Rule: RuleLimitReached,
			Message: fmt.Sprintf("not compared: the CRD checks of this run stopped after %d steps (the limit)", limits.checkSteps)}}}, nil
	}
	r, steps, err := compareBundles(ctx, a, b, limits.checkSteps-k.steps)
	if err != nil {
		return nil, err
	}
	k.steps += steps
	if k.memo == nil {
		k.memo = map[[2]string]*BundleReport{}
	}
	k.memo[key] = r
	return r, nil
}

// PackageCheck is what CheckPackage found.
type PackageCheck struct {
	// Edges are the edges with unsafe changes, by channel, then edge
	// order.
	Edges []EdgeReport
	// Pairs counts the distinct upgrades (from, to) of the package's
	// edges; Unknown those with a bundle the Checker does not know (its
	// CRDs were not read), and Skipped those not compared once the
	// Checker had spent its MaxCheckSteps.
	Pairs, Unknown, Skipped int
}

// CheckPackage checks every upgrade edge of every channel of p (replaces,
// skips and skipRange, as pkg/graph computes them) whose two bundles are
// known, and returns the edges with unsafe changes and what was not
// checked.
func (k *Checker) CheckPackage(ctx context.Context, p *graph.PackageGraph) (*PackageCheck, error) {
	out := &PackageCheck{}
	seen := map[[2]string]bool{}
	for _, c := range p.Channels {
		// Every edge is compared: bound them (skipRanges that all cover
		// each other make quadratically many).
		if c.EdgeCount(graph.MaxEdges) > graph.MaxEdges {
			return nil, &graph.TooManyEdgesError{Package: p.Name, Channel: c.Name, Limit: graph.MaxEdges}
		}
		for i, e := range c.Edges() {
			if i&1023 == 1023 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			key := [2]string{e.From, e.To}
			first := !seen[key]
			seen[key] = true
			if first {
				out.Pairs++
			}
			_, known := k.memo[key]
			switch {
			case k.Bundles[e.From] == nil || k.Bundles[e.To] == nil:
				if first {
					out.Unknown++
				}
				continue
			case !known && k.Spent():
				if first {
					out.Skipped++
				}
				continue
			}
			r, err := k.Check(ctx, e.From, e.To)
			if err != nil {
				return nil, err
			}
			if len(r.Unsafe()) > 0 {
				out.Edges = append(out.Edges, EdgeReport{Channel: c.Name, Edge: e, BundleReport: r})
			}
		}
	}
	return out, nil
}

// WithName returns the bundle under another name (the CRDs and examples
// are shared).
func (b *Bundle) WithName(name string) *Bundle {
	return &Bundle{Name: name, CRDs: b.CRDs, HasCSV: b.HasCSV, examples: b.examples}
}
