package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/versionrange"
)

// predicate tests one candidate bundle. Every dependency is one predicate:
// "the solution contains at least one bundle matching it".
type predicate interface {
	match(ctx context.Context, b *bundle) bool
	// describe is the predicate in words, for explanations.
	describe() string
}

// gvkPredicate matches bundles that provide an API.
type gvkPredicate struct{ gvk property.GVK }

func (p gvkPredicate) match(_ context.Context, b *bundle) bool { return containsGVK(b.gvks, p.gvk) }
func (p gvkPredicate) describe() string                        { return describeGVK(p.gvk) }

func describeGVK(g property.GVK) string {
	return fmt.Sprintf("kind %s in group %s, version %s", g.Kind, g.Group, g.Version)
}

// packagePredicate matches bundles of a package whose version is in a
// range, with OLM classic's range semantics (blang/semver: pre-releases
// are ordinary versions, build metadata is ignored).
type packagePredicate struct {
	name string
	text string
	rng  *versionrange.SkipRange
}

func newPackagePredicate(name, rangeText string) (packagePredicate, error) {
	r, err := versionrange.ParseSkipRange(rangeText)
	if err != nil {
		return packagePredicate{}, fmt.Errorf("invalid version range %q for package %q: %w", rangeText, name, err)
	}
	return packagePredicate{name: name, text: rangeText, rng: r}, nil
}

func (p packagePredicate) match(_ context.Context, b *bundle) bool {
	return b.pkg == p.name && b.versionOK && p.rng.Contains(b.version)
}

func (p packagePredicate) describe() string {
	return fmt.Sprintf("package %s in version range %s", p.name, p.text)
}

// labelPredicate matches bundles with an olm.label property.
type labelPredicate struct{ label string }

func (p labelPredicate) match(_ context.Context, b *bundle) bool {
	for _, l := range b.labels {
		if l == p.label {
			return true
		}
	}
	return false
}

func (p labelPredicate) describe() string { return "label " + p.label }

// compoundPredicate is all, any or not over children, evaluated against
// one candidate at a time.
type compoundPredicate struct {
	op       string // "all", "any" or "not"
	children []predicate
	message  string
}

func (p compoundPredicate) match(ctx context.Context, b *bundle) bool {
	switch p.op {
	case "all":
		for _, c := range p.children {
			if !c.match(ctx, b) {
				return false
			}
		}
		return true
	case "any":
		for _, c := range p.children {
			if c.match(ctx, b) {
				return true
			}
		}
		return false
	default: // not: none of the children (NOT of OR)
		for _, c := range p.children {
			if c.match(ctx, b) {
				return false
			}
		}
		return true
	}
}

func (p compoundPredicate) describe() string {
	parts := make([]string, len(p.children))
	for i, c := range p.children {
		parts[i] = c.describe()
	}
	word := map[string]string{"all": "all of", "any": "any of", "not": "none of"}[p.op]
	return withMessage(fmt.Sprintf("%s (%s)", word, strings.Join(parts, "; ")), p.message)
}

// celPredicate evaluates a CEL rule against the candidate's properties;
// an evaluation error means no match.
type celPredicate struct {
	rule    string
	message string
	prg     *celRule
}

func (p celPredicate) match(ctx context.Context, b *bundle) bool {
	props, err := b.celProperties()
	if err != nil {
		return false
	}
	ok, err := p.prg.eval(ctx, props)
	return err == nil && ok
}

func (p celPredicate) describe() string {
	return withMessage(fmt.Sprintf("CEL rule %q", p.rule), p.message)
}

func withMessage(s, msg string) string {
	if msg == "" {
		return s
	}
	return fmt.Sprintf("%s (failure message: %q)", s, msg)
}

// TypeLabelRequired is the olm.label.required property type: a dependency
// on a bundle with an olm.label property of the same label.
const TypeLabelRequired = "olm.label.required"

// dependency is one dependency property of a bundle.
type dependency struct {
	index int    // the property's index in the bundle
	kind  string // property type
	pred  predicate
	// message is an olm.constraint's failureMessage.
	message string
}

// describe is the requirement in words.
func (d *dependency) describe() string {
	switch p := d.pred.(type) {
	case gvkPredicate:
		return "an API: " + p.describe()
	case packagePredicate:
		return p.describe()
	case labelPredicate:
		return "a bundle with " + p.describe()
	}
	return "a bundle matching " + d.pred.describe()
}

// compileCache holds compiled CEL rules by text, and the meter of their
// aggregate cost; the zero value works (with no aggregate bound).
type compileCache struct {
	rules map[string]*celRule
	meter *celMeter
}

// parseDependencies reads a bundle's dependency properties (§4). An
// invalid value is an error of the whole resolution.
func parseDependencies(b *bundle, cache compileCache) ([]*dependency, error) {
	var deps []*dependency
	for i, p := range b.props[:b.nOwn] {
		var d *dependency
		var err error
		switch p.Type {
		case property.TypeGVKRequired:
			var v property.GVKRequired
			if err = json.Unmarshal(p.Value, &v); err == nil {
				d = &dependency{pred: gvkPredicate{gvk: property.GVK(v)}}
			}
		case property.TypePackageRequired:
			var v property.PackageRequired
			if err = json.Unmarshal(p.Value, &v); err == nil {
				var pp packagePredicate
				if pp, err = newPackagePredicate(v.PackageName, v.VersionRange); err == nil {
					d = &dependency{pred: pp}
				}
			}
		case TypeLabelRequired:
			var v struct {
				Label string `json:"label"`
			}
			if err = json.Unmarshal(p.Value, &v); err == nil {
				d = &dependency{pred: labelPredicate{label: v.Label}}
			}
		case property.TypeConstraint:
			var c *Constraint
			if c, err = ParseConstraint(p.Value); err == nil {
				var pr predicate
				if pr, err = buildPredicate(c, cache); err == nil {
					d = &dependency{pred: pr, message: c.FailureMessage}
				}
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bundle %q (%s): parse %s: %w", b.name, b.where(), p.Type, err)
		}
		d.index, d.kind = i, p.Type
		deps = append(deps, d)
	}
	return deps, nil
}

func (b *bundle) where() string {
	s := "catalog " + b.catalog
	if b.pos.IsValid() {
		s += ", " + b.pos.String()
	}
	return s
}

// buildPredicate turns a parsed olm.constraint into a predicate, in OLM's
// order of precedence when several keys are set.
func buildPredicate(c *Constraint, cache compileCache) (predicate, error) {
	switch {
	case c.GVK != nil:
		return gvkPredicate{gvk: property.GVK{Group: c.GVK.Group, Version: c.GVK.Version, Kind: c.GVK.Kind}}, nil
	case c.Package != nil:
		return newPackagePredicate(c.Package.PackageName, c.Package.VersionRange)
	case c.All != nil, c.Any != nil, c.Not != nil:
		op, comp := "all", c.All
		if c.All == nil && c.Any != nil {
			op, comp = "any", c.Any
		} else if c.All == nil {
			op, comp = "not", c.Not
		}
		out := compoundPredicate{op: op, message: c.FailureMessage}
		for i := range comp.Constraints {
			child, err := buildPredicate(&comp.Constraints[i], cache)
			if err != nil {
				return nil, err
			}
			out.children = append(out.children, child)
		}
		return out, nil
	case c.Cel != nil:
		prg, ok := cache.rules[c.Cel.Rule]
		if !ok {
			var err error
			if prg, err = compileCel(c.Cel.Rule); err != nil {
				return nil, err
			}
			prg.meter = cache.meter
			if cache.rules != nil {
				cache.rules[c.Cel.Rule] = prg
			}
		}
		return celPredicate{rule: c.Cel.Rule, message: c.FailureMessage, prg: prg}, nil
	}
	return nil, ErrEmptyConstraint
}

// candidatePackages narrows the packages of cat whose bundles can match p;
// all is true when it cannot be narrowed.
func candidatePackages(p predicate, cat *catalog) (pkgs []string, all bool) {
	switch p := p.(type) {
	case gvkPredicate:
		return cat.providers[p.gvk], false
	case packagePredicate:
		return []string{p.name}, false
	case compoundPredicate:
		switch p.op {
		case "all":
			var set map[string]bool
			for _, c := range p.children {
				cp, call := candidatePackages(c, cat)
				if call {
					continue
				}
				next := map[string]bool{}
				for _, x := range cp {
					if set == nil || set[x] {
						next[x] = true
					}
				}
				set = next
			}
			if set == nil {
				return nil, true
			}
			return sortedSet(set), false
		case "any":
			set := map[string]bool{}
			for _, c := range p.children {
				cp, call := candidatePackages(c, cat)
				if call {
					return nil, true
				}
				for _, x := range cp {
					set[x] = true
				}
			}
			return sortedSet(set), false
		}
	}
	return nil, true
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
