package crd

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Change is one difference between an old and a new CRD.
type Change struct {
	Rule string `json:"rule"`
	// CRD is the CRD's name.
	CRD string `json:"crd"`
	// Version is the version the change is in; for a difference between
	// two served versions of the new CRD, "v1 -> v2"; "" for the CRD as a
	// whole.
	Version string `json:"version,omitempty"`
	// Path is the element of the CRD the change is about, such as
	// spec.versions[v1beta2].schema.openAPIV3Schema.properties.spec.properties.replicas
	// (versions named, not numbered).
	Path string `json:"path,omitempty"`
	// Field is the field of the custom resource, such as .spec.replicas
	// (items are [*], additionalProperties values .*).
	Field string `json:"field,omitempty"`
	// Old and New are the values before and after, as JSON or text.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Message says what changed, in a sentence.
	Message string `json:"message"`
	// Safe is set for the changes neither OLM refuses and that lose
	// nothing.
	Safe bool `json:"safe"`
	// Refused says which OLM refuses the upgrade because of it (in JSON,
	// refusedBy: a list of "v1" and "classic").
	Refused Refusal `json:"refusedBy"`
	// Example names the example custom resource, for example-invalid.
	Example string `json:"example,omitempty"`

	// at locates the change in the new CRD's manifest (or the old one's
	// for what is gone): a path with versions numbered.
	at     string
	inOld  bool
	source *Source
}

// Pos returns where the change is in its CRD's manifest, when the CRD
// was read from a file (see [Source]): the element in the new CRD, or in
// the old one for what the new CRD no longer has.
func (c Change) Pos() (file string, line, col int, ok bool) {
	if c.source == nil {
		return "", 0, 0, false
	}
	line, col, ok = c.source.Locate(c.at)
	return c.source.File, line, col, ok
}

// RefusedBy names who refuses the change ("neither" for safe changes).
func (c Change) RefusedBy() string { return c.Refused.String() }

// Compare reports every change from old to new, the unsafe ones and the
// safe ones, sorted by version, path and rule. The error is only for a
// cancelled context.
func Compare(ctx context.Context, old, new *CRD) ([]Change, error) {
	cmp := &comparer{ctx: ctx, old: old, new: new}
	cmp.crdWide()
	for _, ov := range old.Versions {
		nv := new.Version(ov.Name)
		if nv == nil {
			continue
		}
		cmp.version, cmp.oldV, cmp.newV = ov.Name, ov, nv
		cmp.node(ov.Schema, nv.Schema, &step{})
		if cmp.err != nil {
			return nil, cmp.err
		}
	}
	if new.Conversion != "Webhook" {
		cmp.servedPairs()
	}
	if cmp.err != nil {
		return nil, cmp.err
	}
	sortChanges(cmp.out)
	return cmp.out, nil
}

func sortChanges(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.CRD != b.CRD {
			return a.CRD < b.CRD
		}
		if a.Safe != b.Safe {
			return !a.Safe
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

// comparer walks two CRDs.
type comparer struct {
	ctx      context.Context
	old, new *CRD
	// version is the version being compared ("v1 -> v2" for served
	// pairs), oldV and newV its entries.
	version    string
	oldV, newV *Version
	// pair is set while served versions of one CRD are compared.
	pair  bool
	out   []Change
	steps int
	err   error
}

// step is a path element from the version's schema root: a property
// name, or a keyword (items, additionalProperties, allOf[1], ...).
type step struct {
	parent *step
	prop   string // a property name (under properties)
	kw     string // a keyword step, e.g. "items", "allOf[1]", "patternProperties.x"
}

func (s *step) child(prop string) *step { return &step{parent: s, prop: prop} }
func (s *step) key(kw string) *step     { return &step{parent: s, kw: kw} }

func (s *step) list() []*step {
	var out []*step
	for p := s; p != nil && (p.prop != "" || p.kw != ""); p = p.parent {
		out = append(out, p)
	}
	slices.Reverse(out)
	return out
}

// schemaPath is the path below the schema root: properties.spec.properties.x.
func (s *step) schemaPath() string {
	var b strings.Builder
	for _, p := range s.list() {
		if p.prop != "" {
			b.WriteString(".properties." + quoteKey(p.prop))
		} else {
			b.WriteString("." + p.kw)
		}
	}
	return b.String()
}

// field is the custom resource's field: .spec.containers[*].name.
func (s *step) field() string {
	var b strings.Builder
	for _, p := range s.list() {
		switch {
		case p.prop != "":
			b.WriteString("." + quoteKey(p.prop))
		case p.kw == "items":
			b.WriteString("[*]")
		case p.kw == "additionalProperties":
			b.WriteString(".*")
		default:
			b.WriteString("<" + p.kw + ">")
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// add records a change about the element at st (nil: the CRD as a
// whole, with where the element of the manifest), or about its keyword
// where (a keyword of the schema node: "type", "enum", ...).
func (c *comparer) add(rule string, st *step, where string, inOld bool, old, new, format string, args ...any) {
	info, _ := Rule(rule)
	ch := Change{Rule: rule, CRD: c.new.Name, Version: c.version, Old: old, New: new,
		Message: fmt.Sprintf(format, args...), Refused: info.Refused, Safe: info.Refused == 0 && rule != RuleCRDRemoved}
	if c.pair {
		// both sides of a served pair are versions of the new CRD; the pair
		// is checked by OLM v1 only
		ch.Refused &= RefusedByV1
	}
	src := c.new
	if inOld {
		src = c.old
	}
	ch.source, ch.inOld = src.Source, inOld
	switch {
	case st != nil:
		v := c.newV
		if inOld {
			v = c.oldV
		}
		ch.Path = "spec.versions[" + v.Name + "].schema.openAPIV3Schema" + st.schemaPath()
		ch.Field = st.field()
		ch.at = v.SchemaPath + st.schemaPath()
		if where != "" {
			ch.at += "." + where
		}
	default:
		ch.Path = where
		ch.at = where
	}
	c.out = append(c.out, ch)
}

// crdWide compares scope and versions.
func (c *comparer) crdWide() {
	old, new := c.old, c.new
	if old.Scope != new.Scope {
		c.add(RuleScopeChanged, nil, "spec.scope", false, old.Scope, new.Scope,
			"scope changed from %s to %s", orNone(old.Scope), orNone(new.Scope))
	}
	stored := old.Stored()
	for _, ov := range old.Versions {
		nv := new.Version(ov.Name)
		switch {
		case nv == nil && slices.Contains(stored, ov.Name):
			c.add(RuleStoredVersionRemoved, nil, versionAt(old, ov), true, ov.Name, "",
				"stored version %s removed: objects stored in it can no longer be read", ov.Name)
		case slices.Contains(stored, ov.Name):
		case nv == nil && ov.Served:
			c.add(RuleServedVersionRemoved, nil, versionAt(old, ov), true, ov.Name, "",
				"served version %s removed: clients of %s break", ov.Name, ov.Name)
		case nv != nil && ov.Served && !nv.Served:
			c.add(RuleServedVersionRemoved, nil, versionAt(new, nv)+".served", false, "true", "false",
				"version %s is no longer served: clients of %s break", ov.Name, ov.Name)
		}
	}
	for _, s := range stored {
		if old.Version(s) == nil && new.Version(s) == nil {
			c.add(RuleStoredVersionRemoved, nil, "status.storedVersions", true, s, "",
				"stored version %s (status.storedVersions) is not a version of the new CRD", s)
		}
	}
	for _, nv := range new.Versions {
		if old.Version(nv.Name) == nil {
			c.add(RuleVersionAdded, nil, versionAt(new, nv), false, "", nv.Name, "version %s added", nv.Name)
		}
	}
	if os, ns := old.StorageVersion(), new.StorageVersion(); os != ns && os != "" && new.Version(os) != nil {
		c.add(RuleStorageMoved, nil, "spec.versions", false, os, ns, "storage version changed from %s to %s", os, orNone(ns))
	}
}

func versionAt(c *CRD, v *Version) string {
	if v.Index < 0 {
		return "spec.version"
	}
	return "spec.versions[" + strconv.Itoa(v.Index) + "]"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// tick counts work and checks for cancellation now and then.
func (c *comparer) tick() bool {
	if c.err != nil {
		return false
	}
	c.steps++
	if c.steps&1023 == 0 {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			return false
		}
	}
	return true
}

// node compares two schema nodes at the same place.
func (c *comparer) node(o, n *Schema, st *step) {
	if o.hash == n.hash || !c.tick() {
		return
	}
	c.keywords(o, n, st)
	// properties
	for _, k := range slices.Sorted(maps.Keys(o.Properties)) {
		np, ok := n.Properties[k]
		if !ok {
			c.removed(st.child(k), o.Properties[k])
			continue
		}
		c.node(o.Properties[k], np, st.child(k))
	}
	for _, k := range slices.Sorted(maps.Keys(n.Properties)) {
		if _, ok := o.Properties[k]; !ok && !slices.Contains(n.required, k) {
			c.add(RuleFieldAdded, st.child(k), "", false, "", typeName(n.Properties[k]), "optional field %s added", st.child(k).field())
		}
	}
	// a keyword whose form changed (true to a schema, a schema to a list)
	// is reported by keywords; addedIsUnhandled only when it kept its form
	c.childPair(o.Items, n.Items, st.key("items"), false)
	c.childPair(o.AdditionalProperties, n.AdditionalProperties, st.key("additionalProperties"), o.kw["additionalProperties"] == n.kw["additionalProperties"])
	c.childPair(o.AdditionalItems, n.AdditionalItems, st.key("additionalItems"), o.kw["additionalItems"] == n.kw["additionalItems"])
	c.childPair(o.Not, n.Not, st.key("not"), true)
	if o.kw["items"] == n.kw["items"] {
		c.listPair(o.ItemsList, n.ItemsList, st, "items")
	}
	c.listPair(o.AllOf, n.AllOf, st, "allOf")
	c.listPair(o.AnyOf, n.AnyOf, st, "anyOf")
	c.mapPair(o.PatternProperties, n.PatternProperties, st, "patternProperties")
	c.mapPair(o.Definitions, n.Definitions, st, "definitions")
	c.mapPair(o.Dependencies, n.Dependencies, st, "dependencies")
	c.oneOf(o, n, st)
}

// removed reports a field the new schema no longer has.
func (c *comparer) removed(st *step, o *Schema) {
	c.add(RuleFieldRemoved, st, "", true, typeName(o), "", "field %s removed", st.field())
}

// childPair compares a subschema keyword: gone is field-removed; new is
// a change OLM v1 cannot judge (unhandled) unless addedIsUnhandled is
// false (items: OLM v1 does not compare a missing items with a new one).
func (c *comparer) childPair(o, n *Schema, st *step, addedIsUnhandled bool) {
	switch {
	case o != nil && n != nil:
		c.node(o, n, st)
	case o != nil:
		c.removed(st, o)
	case n != nil && addedIsUnhandled:
		c.add(RuleUnhandled, st.parent, st.kw, false, "", st.kw, "%s: %s added", st.parent.field(), st.kw)
	}
}

// listPair compares lists of subschemas (allOf, anyOf, items as a list)
// entry by entry; a change of their number is unhandled.
func (c *comparer) listPair(o, n []*Schema, st *step, kw string) {
	if len(o) != len(n) {
		c.add(RuleUnhandled, st, kw, false, strconv.Itoa(len(o)), strconv.Itoa(len(n)),
			"%s: %s changed from %d to %d subschemas", st.field(), kw, len(o), len(n))
		return
	}
	for i := range o {
		c.node(o[i], n[i], st.key(kw+"["+strconv.Itoa(i)+"]"))
	}
}

// mapPair compares maps of subschemas (patternProperties, definitions,
// dependencies): a key gone is field-removed, a new key unhandled.
func (c *comparer) mapPair(o, n map[string]*Schema, st *step, kw string) {
	for _, k := range slices.Sorted(maps.Keys(o)) {
		sub := st.key(kw + "." + quoteKey(k))
		if nv, ok := n[k]; ok {
			c.node(o[k], nv, sub)
		} else {
			c.removed(sub, o[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(n)) {
		if _, ok := o[k]; !ok {
			c.add(RuleUnhandled, st, kw+"."+quoteKey(k), false, "", k, "%s: %s %q added", st.field(), kw, k)
		}
	}
}

// oneOf compares the entries of oneOf as sets, each entry without its
// description, title, example and externalDocs, as OLM v1 does; entries
// are not compared one by one.
func (c *comparer) oneOf(o, n *Schema, st *step) {
	if len(o.OneOf) == 0 && len(n.OneOf) == 0 {
		return
	}
	set := func(l []*Schema) map[uint64]int {
		m := map[uint64]int{}
		for i, s := range l {
			if _, ok := m[s.ownHash]; !ok {
				m[s.ownHash] = i
			}
		}
		return m
	}
	os, ns := set(o.OneOf), set(n.OneOf)
	var removed, added []string
	for h, i := range os {
		if _, ok := ns[h]; !ok {
			removed = append(removed, "oneOf["+strconv.Itoa(i)+"]")
		}
	}
	for h, i := range ns {
		if _, ok := os[h]; !ok {
			added = append(added, "oneOf["+strconv.Itoa(i)+"]")
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	switch {
	case len(o.OneOf) == 0:
		c.add(RuleOneOfChanged, st, "oneOf", false, "", strconv.Itoa(len(n.OneOf)),
			"%s: oneOf added (%d entries) where there was none", st.field(), len(n.OneOf))
	case len(removed) > 0:
		c.add(RuleOneOfChanged, st, "oneOf", false, strings.Join(removed, ", "), "",
			"%s: oneOf entries removed (old %s)", st.field(), strings.Join(removed, ", "))
	case len(added) > 0:
		c.add(RuleOneOfChanged, st, "oneOf", false, "", strings.Join(added, ", "),
			"%s: oneOf entries added (new %s)", st.field(), strings.Join(added, ", "))
	}
}

// typeName is a node's type for messages.
func typeName(s *Schema) string {
	if len(s.types) == 0 {
		if s.intOrStr {
			return "int-or-string"
		}
		return "(no type)"
	}
	return strings.Join(s.types, "|")
}

// keywords compares the keywords of two nodes that are not subschemas.
// handledKeywords are the keywords the rules judge; others are unhandled.
var handledKeywords = map[string]bool{"description": true, "type": true, "required": true, "enum": true, "default": true,
	"pattern": true, "nullable": true, "maximum": true, "minimum": true, "maxLength": true, "minLength": true,
	"maxItems": true, "minItems": true, "maxProperties": true, "minProperties": true}

func (c *comparer) keywords(o, n *Schema, st *step) {
	if maps.Equal(o.kw, n.kw) {
		return
	}
	handled := handledKeywords
	f := st.field()
	// description: safe
	if o.kw["description"] != n.kw["description"] {
		c.add(RuleDescriptionChanged, st, "description", false, "", "", "%s: description changed", f)
	}
	// type
	if o.kw["type"] != n.kw["type"] {
		c.add(RuleTypeChanged, st, "type", false, typeName(o), typeName(n), "%s: type changed from %s to %s", f, typeName(o), typeName(n))
	}
	// required
	var added, dropped []string
	for _, r := range n.required {
		if !slices.Contains(o.required, r) && !slices.Contains(added, r) {
			added = append(added, r)
		}
	}
	for _, r := range o.required {
		if !slices.Contains(n.required, r) && !slices.Contains(dropped, r) {
			dropped = append(dropped, r)
		}
	}
	slices.Sort(added)
	slices.Sort(dropped)
	if len(added) > 0 {
		c.add(RuleRequiredAdded, st, "required", false, "", strings.Join(added, ", "),
			"%s: new required %s %s", f, plural(len(added), "field", "fields"), strings.Join(added, ", "))
	}
	if len(dropped) > 0 {
		c.add(RuleRequiredRemoved, st, "required", false, strings.Join(dropped, ", "), "",
			"%s: %s no longer required", f, strings.Join(dropped, ", "))
	}
	// enum
	if o.kw["enum"] != n.kw["enum"] {
		var gone, more []string
		for _, v := range o.enum {
			if !slices.Contains(n.enum, v) {
				gone = append(gone, v)
			}
		}
		for _, v := range n.enum {
			if !slices.Contains(o.enum, v) {
				more = append(more, v)
			}
		}
		switch {
		case len(o.enum) == 0 && len(n.enum) > 0:
			c.add(RuleEnumAdded, st, "enum", false, "", strings.Join(n.enum, ", "),
				"%s: enum restriction added where there was none: %s", f, strings.Join(n.enum, ", "))
		case len(n.enum) == 0:
			// every value stays valid, but OLM v1 counts them as removed
			c.add(RuleEnumValueRemoved, st, "enum", false, strings.Join(gone, ", "), "",
				"%s: enum restriction removed (every value stays valid, but OLM v1 counts %s as removed values)", f, strings.Join(gone, ", "))
		case len(gone) > 0:
			c.add(RuleEnumValueRemoved, st, "enum", false, strings.Join(gone, ", "), "",
				"%s: enum values removed: %s", f, strings.Join(gone, ", "))
		}
		if len(o.enum) > 0 && len(n.enum) > 0 && len(more) > 0 {
			c.add(RuleEnumValueAdded, st, "enum", false, "", strings.Join(more, ", "), "%s: enum values added: %s", f, strings.Join(more, ", "))
		}
	}
	// default
	od, nd := o.kw["default"], n.kw["default"]
	switch {
	case od == "" && nd != "":
		c.add(RuleDefaultAdded, st, "default", false, "", nd, "%s: default %s added where there was none", f, nd)
	case od != "" && nd == "":
		c.add(RuleDefaultRemoved, st, "default", false, od, "", "%s: default %s removed", f, od)
	case od != nd:
		c.add(RuleDefaultChanged, st, "default", false, od, nd, "%s: default changed from %s to %s", f, od, nd)
	}
	// bounds
	for i, name := range numNames {
		ov, nv := o.num[i], n.num[i]
		isMax := i%2 == 0
		switch {
		case ov == nil && nv == nil:
		case ov == nil:
			c.add(maxRules[i], st, name, false, "", n.kw[name], "%s: %s %s added where there was none", f, name, n.kw[name])
		case nv == nil:
			c.add(RuleConstraintLoosened, st, name, false, o.kw[name], "", "%s: %s %s removed", f, name, o.kw[name])
		case isMax && *nv < *ov, !isMax && *nv > *ov:
			verb := "decreased"
			if !isMax {
				verb = "increased"
			}
			c.add(maxRules[i], st, name, false, o.kw[name], n.kw[name], "%s: %s %s from %s to %s", f, name, verb, o.kw[name], n.kw[name])
		case *nv != *ov:
			c.add(RuleConstraintLoosened, st, name, false, o.kw[name], n.kw[name], "%s: %s changed from %s to %s", f, name, o.kw[name], n.kw[name])
		}
	}
	// pattern
	if op, np := o.kw["pattern"], n.kw["pattern"]; op != np {
		switch {
		case op == "":
			c.add(RulePatternChanged, st, "pattern", false, "", n.pattern, "%s: pattern %s added", f, np)
		case np == "":
			c.add(RulePatternChanged, st, "pattern", false, o.pattern, "", "%s: pattern %s removed", f, op)
		default:
			c.add(RulePatternChanged, st, "pattern", false, o.pattern, n.pattern, "%s: pattern changed from %s to %s", f, op, np)
		}
	}
	// nullable
	if o.nullable != n.nullable {
		c.add(RuleNullableChanged, st, "nullable", false, strconv.FormatBool(o.nullable), strconv.FormatBool(n.nullable),
			"%s: nullable changed from %t to %t", f, o.nullable, n.nullable)
	}
	// the rest: unhandled
	var keys []string
	for k := range o.kw {
		if !handled[k] && o.kw[k] != n.kw[k] {
			keys = append(keys, k)
		}
	}
	for k := range n.kw {
		if _, inOld := o.kw[k]; !handled[k] && !inOld {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) > 0 {
		var olds, news, parts []string
		for _, k := range keys {
			olds = append(olds, k+"="+orUnset(o.kw[k]))
			news = append(news, k+"="+orUnset(n.kw[k]))
			parts = append(parts, fmt.Sprintf("%s %s -> %s", k, orUnset(o.kw[k]), orUnset(n.kw[k])))
		}
		c.add(RuleUnhandled, st, keys[0], false, strings.Join(olds, ", "), strings.Join(news, ", "),
			"%s: %s", f, strings.Join(parts, "; "))
	}
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// servedPairs compares every pair of served versions of the new CRD, as
// OLM v1 does when the CRD has no conversion webhook (objects are then
// served in every version as they are stored), reporting only what the
// same pair of the old CRD did not already have.
func (c *comparer) servedPairs() {
	newPairs := c.pairChanges(c.new)
	if len(newPairs) == 0 {
		return
	}
	known := map[string]int{}
	for _, ch := range c.pairChanges(c.old) {
		known[pairKey(ch)]++
	}
	for _, ch := range newPairs {
		if k := pairKey(ch); known[k] > 0 {
			known[k]--
			continue
		}
		c.out = append(c.out, ch)
	}
}

func pairKey(ch Change) string {
	return strings.Join([]string{ch.Version, ch.Path, ch.Rule, ch.Old, ch.New}, "\x00")
}

// pairChanges compares each pair of served versions of crd, lower to
// higher version (Kubernetes' version order), keeping the unsafe changes.
func (c *comparer) pairChanges(crd *CRD) []Change {
	var served []*Version
	for _, v := range crd.Versions {
		if v.Served {
			served = append(served, v)
		}
	}
	if len(served) < 2 {
		return nil
	}
	sort.SliceStable(served, func(i, j int) bool { return CompareVersionNames(served[i].Name, served[j].Name) < 0 })
	sub := &comparer{ctx: c.ctx, old: crd, new: crd, pair: true}
	for i, a := range served {
		for _, b := range served[i+1:] {
			sub.version, sub.oldV, sub.newV = a.Name+" -> "+b.Name, a, b
			sub.node(a.Schema, b.Schema, &step{})
		}
	}
	if sub.err != nil && c.err == nil {
		c.err = sub.err
	}
	var out []Change
	for _, ch := range sub.out {
		if !ch.Safe && ch.Refused != 0 {
			ch.Message = "served versions " + ch.Version + " differ and the CRD has no conversion webhook: " + ch.Message
			out = append(out, ch)
		}
	}
	return out
}

// hashString hashes s with the process seed.
func hashString(s string) uint64 { return maphash.String(hashSeed, s) }
