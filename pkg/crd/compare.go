package crd

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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
// safe ones, sorted by version, path and rule. The work is bounded (see
// [MaxServedVersions], [MaxCompareSteps], [MaxChanges]): a comparison
// stopped at a limit ends with a limit-reached change saying what was not
// checked. The error is only for a cancelled context.
func Compare(ctx context.Context, old, new *CRD) ([]Change, error) {
	r, err := compare(ctx, old, new)
	if err != nil {
		return nil, err
	}
	return r.changes, nil
}

// compared is what compare found: the changes, and how many safe changes
// past MaxChanges were dropped.
type compared struct {
	changes []Change
	omitted int
	steps   int
}

func compare(ctx context.Context, old, new *CRD) (compared, error) {
	cmp := &comparer{ctx: ctx, old: old, new: new, b: &budget{}}
	cmp.emit = cmp.keep
	cmp.crdWide()
	for i, ov := range old.Versions {
		if !cmp.poll(i) {
			break
		}
		nv := new.Version(ov.Name)
		if nv == nil {
			continue
		}
		cmp.version, cmp.oldV, cmp.newV = ov.Name, ov, nv
		cmp.node(ov.Schema, nv.Schema, &step{})
	}
	if new.Conversion != "Webhook" && cmp.err == nil {
		cmp.servedPairs()
	}
	if cmp.err != nil && cmp.err != errLimit {
		return compared{}, cmp.err
	}
	if cmp.b.limit != nil {
		cmp.out = append(cmp.out, *cmp.b.limit)
	}
	sortChanges(cmp.out)
	return compared{changes: cmp.out, omitted: cmp.b.omitted, steps: cmp.b.steps}, nil
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
	pair bool
	// emit takes each change found (keep, or a filter of served pairs).
	emit func(Change)
	out  []Change
	// b is the budget of the whole comparison, shared with the comparers
	// of served pairs.
	b   *budget
	err error
}

// budget is what one comparison of two CRDs may spend, and has spent.
type budget struct {
	// steps counts the pairs of schema nodes compared.
	steps int
	// safe and unsafe count the changes kept; omitted the safe changes
	// dropped past MaxChanges.
	safe, unsafe, omitted int
	// limit is the limit-reached change, once a limit stopped the
	// comparison.
	limit *Change
}

// errLimit stops a comparison at a limit (budget.limit says which).
var errLimit = errors.New("limit reached")

// stop ends the comparison at a limit: the change says what was not
// checked, at where (an element of the new CRD's manifest).
func (c *comparer) stop(where, format string, args ...any) {
	if c.err != nil {
		return
	}
	c.err = errLimit
	c.b.limit = &Change{Rule: RuleLimitReached, CRD: c.new.Name, Path: where, at: where, source: c.new.Source,
		Message: fmt.Sprintf(format, args...)}
}

// keep records a change of the comparison, within MaxChanges: safe
// changes past it are counted and dropped, an unsafe one stops the
// comparison.
func (c *comparer) keep(ch Change) {
	if ch.Safe {
		if c.b.safe >= limits.changes {
			c.b.omitted++
			return
		}
		c.b.safe++
	} else {
		if c.b.unsafe >= limits.changes {
			c.stop("", "more than %d unsafe changes: the rest of the CRD was not compared", limits.changes)
			return
		}
		c.b.unsafe++
	}
	c.out = append(c.out, ch)
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
	info := ruleIndex[rule]
	switch {
	case c.pair && (info.Safe || info.Refused&RefusedByV1 == 0):
		return // served pairs keep what OLM v1 refuses only
	case !c.pair && info.Safe && c.b.safe >= limits.changes:
		c.b.omitted++ // not kept (see keep): not built either
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = shorten(s)
		}
	}
	ch := Change{Rule: rule, CRD: c.new.Name, Version: c.version, Old: old, New: new,
		Message: fmt.Sprintf(format, args...), Refused: info.Refused, Safe: info.Safe}
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
	c.emit(ch)
}

// crdWide compares scope and versions.
func (c *comparer) crdWide() {
	old, new := c.old, c.new
	if old.Scope != new.Scope {
		c.add(RuleScopeChanged, nil, "spec.scope", false, old.Scope, new.Scope,
			"scope changed from %s to %s", orNone(old.Scope), orNone(new.Scope))
	}
	stored := old.Stored()
	isStored := make(map[string]bool, len(stored))
	for _, s := range stored {
		isStored[s] = true
	}
	for i, ov := range old.Versions {
		if !c.poll(i) {
			return
		}
		nv := new.Version(ov.Name)
		switch {
		case nv == nil && isStored[ov.Name]:
			c.add(RuleStoredVersionRemoved, nil, versionAt(old, ov), true, ov.Name, "",
				"stored version %s removed: objects stored in it can no longer be read", ov.Name)
		case isStored[ov.Name]:
		case nv == nil && ov.Served:
			c.add(RuleServedVersionRemoved, nil, versionAt(old, ov), true, ov.Name, "",
				"served version %s removed: clients of %s break", ov.Name, ov.Name)
		case nv != nil && ov.Served && !nv.Served:
			c.add(RuleServedVersionRemoved, nil, versionAt(new, nv)+".served", false, "true", "false",
				"version %s is no longer served: clients of %s break", ov.Name, ov.Name)
		}
	}
	for i, s := range stored {
		if !c.poll(i) {
			return
		}
		if old.Version(s) == nil && new.Version(s) == nil {
			c.add(RuleStoredVersionRemoved, nil, "status.storedVersions", true, s, "",
				"stored version %s (status.storedVersions) is not a version of the new CRD", s)
		}
	}
	for i, nv := range new.Versions {
		if !c.poll(i) {
			return
		}
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

// tick counts work, stops at MaxCompareSteps and checks for cancellation
// now and then.
func (c *comparer) tick() bool {
	if c.err != nil {
		return false
	}
	c.b.steps++
	if c.b.limit != nil {
		c.err = errLimit // a limit met by another walk of the comparison
		return false
	}
	if c.b.steps > limits.compareSteps {
		c.stop("", "the comparison stopped after %d pairs of schema nodes (the limit): the rest of the CRD was not compared", limits.compareSteps)
		return false
	}
	if c.b.steps&1023 == 0 {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			return false
		}
	}
	return true
}

// poll checks for cancellation every 1024th iteration i of a loop; it
// reports whether the comparison goes on.
func (c *comparer) poll(i int) bool {
	if c.err != nil {
		return false
	}
	if i&1023 == 1023 {
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
	for i, k := range o.propKeys {
		if !c.poll(i) {
			return
		}
		np, ok := n.Properties[k]
		if !ok {
			c.removed(st.child(k), o.Properties[k])
			continue
		}
		c.node(o.Properties[k], np, st.child(k))
	}
	var required map[string]bool
	for i, k := range n.propKeys {
		if !c.poll(i) {
			return
		}
		if _, ok := o.Properties[k]; ok {
			continue
		}
		if required == nil {
			required = make(map[string]bool, len(n.required))
			for _, r := range n.required {
				required[r] = true
			}
		}
		if !required[k] {
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
// a change OLM v1 cannot judge (unclassified) unless addedIsUnhandled is
// false (items: OLM v1 does not compare a missing items with a new one).
func (c *comparer) childPair(o, n *Schema, st *step, addedIsUnhandled bool) {
	switch {
	case o != nil && n != nil:
		c.node(o, n, st)
	case o != nil:
		c.removed(st, o)
	case n != nil && addedIsUnhandled:
		c.add(RuleUnclassified, st.parent, st.kw, false, "", st.kw, "%s: %s added", st.parent.field(), st.kw)
	}
}

// listPair compares lists of subschemas (allOf, anyOf, items as a list)
// entry by entry; a change of their number is unclassified.
func (c *comparer) listPair(o, n []*Schema, st *step, kw string) {
	if len(o) != len(n) {
		c.add(RuleUnclassified, st, kw, false, strconv.Itoa(len(o)), strconv.Itoa(len(n)),
			"%s: %s changed from %d to %d subschemas", st.field(), kw, len(o), len(n))
		return
	}
	for i := range o {
		c.node(o[i], n[i], st.key(kw+"["+strconv.Itoa(i)+"]"))
	}
}

// mapPair compares maps of subschemas (patternProperties, definitions,
// dependencies): a key gone is field-removed, a new key unclassified.
func (c *comparer) mapPair(o, n map[string]*Schema, st *step, kw string) {
	if len(o)+len(n) == 0 {
		return
	}
	c.b.steps += len(o) + len(n) // the sorts
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
			c.add(RuleUnclassified, st, kw+"."+quoteKey(k), false, "", k, "%s: %s %q added", st.field(), kw, k)
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
// handledKeywords are the keywords the rules judge; others are unclassified.
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
	added, dropped := c.setDiff(o.required, n.required)
	if c.err != nil {
		return
	}
	slices.Sort(added)
	slices.Sort(dropped)
	if len(added) > 0 {
		c.add(RuleRequiredAdded, st, "required", false, "", strings.Join(added, ", "),
			"%s: new required %s %s", f, plural(len(added), "field", "fields"), listValues(added))
	}
	if len(dropped) > 0 {
		c.add(RuleRequiredRemoved, st, "required", false, strings.Join(dropped, ", "), "",
			"%s: %s no longer required", f, listValues(dropped))
	}
	// enum
	if o.kw["enum"] != n.kw["enum"] {
		more, gone := c.setDiff(o.enum, n.enum)
		if c.err != nil {
			return
		}
		switch {
		case len(o.enum) == 0 && len(n.enum) > 0:
			c.add(RuleEnumAdded, st, "enum", false, "", strings.Join(n.enum, ", "),
				"%s: enum restriction added where there was none: %s", f, listValues(n.enum))
		case len(n.enum) == 0:
			// every value stays valid, but OLM v1 counts them as removed
			c.add(RuleEnumValueRemoved, st, "enum", false, strings.Join(gone, ", "), "",
				"%s: enum restriction removed (every value stays valid, but OLM v1 counts %s as removed values)", f, listValues(gone))
		case len(gone) > 0:
			c.add(RuleEnumValueRemoved, st, "enum", false, strings.Join(gone, ", "), "",
				"%s: enum values removed: %s", f, listValues(gone))
		}
		if len(o.enum) > 0 && len(n.enum) > 0 && len(more) > 0 {
			c.add(RuleEnumValueAdded, st, "enum", false, "", strings.Join(more, ", "), "%s: enum values added: %s", f, listValues(more))
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
	// the rest: unclassified
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
		c.add(RuleUnclassified, st, keys[0], false, strings.Join(olds, ", "), strings.Join(news, ", "),
			"%s: %s", f, strings.Join(parts, "; "))
	}
}

// setDiff returns the values of n that are not in o (added) and those of
// o that are not in n (dropped), each once, in their lists' order. It takes time in
// proportion to the lists (enums of 100,000 values are found in the
// wild of hostile catalogs) and checks for cancellation as it goes.
func (c *comparer) setDiff(o, n []string) (added, dropped []string) {
	in := func(l []string) map[string]bool {
		m := make(map[string]bool, len(l))
		for i, v := range l {
			if !c.poll(i) {
				return nil
			}
			m[v] = true
		}
		return m
	}
	diff := func(l []string, other map[string]bool) []string {
		var out []string
		seen := map[string]bool{}
		for i, v := range l {
			if !c.poll(i) {
				return nil
			}
			if !other[v] && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out
	}
	om, nm := in(o), in(n)
	if c.err != nil {
		return nil, nil
	}
	return diff(n, om), diff(o, nm)
}

// maxListed bounds the values a message lists; the change's Old and New
// have them all.
const maxListed = 20

// listValues lists values for a message: the first maxListed, and how
// many more there are.
func listValues(vs []string) string {
	if len(vs) <= maxListed {
		return strings.Join(vs, ", ")
	}
	return strings.Join(vs[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(vs)-maxListed)
}

// maxShown bounds a value (or a path) written in a message: longer ones
// are cut (the change's Old and New have them whole).
const maxShown = 300

// shorten cuts s to about maxShown bytes, on a character boundary, and
// says how long it was.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes in all)", len(s))
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
// same pair of the old CRD did not already have. A CRD with more than
// MaxServedVersions served versions is not compared that way: a
// limit-reached change says so.
func (c *comparer) servedPairs() {
	served := servedVersions(c.new)
	if len(served) < 2 {
		return
	}
	if len(served) > limits.servedVersions {
		c.stop("spec.versions", "too many served versions (%d, the limit is %d): their %d pairs, which OLM v1 compares, were not compared",
			len(served), limits.servedVersions, len(served)*(len(served)-1)/2)
		return
	}
	for i, a := range served {
		for _, b := range served[i+1:] {
			c.servedPair(a, b)
			if c.err != nil {
				return
			}
		}
	}
}

// servedVersions returns crd's served versions, lower to higher version
// (Kubernetes' version order).
func servedVersions(crd *CRD) []*Version {
	var served []*Version
	for _, v := range crd.Versions {
		if v.Served {
			served = append(served, v)
		}
	}
	sort.SliceStable(served, func(i, j int) bool { return CompareVersionNames(served[i].Name, served[j].Name) < 0 })
	return served
}

// servedPair compares the served versions a and b (a lower) of the new
// CRD and keeps the unsafe changes the old CRD's same pair did not have.
func (c *comparer) servedPair(a, b *Version) {
	oa, ob := c.old.Version(a.Name), c.old.Version(b.Name)
	inOld := oa != nil && ob != nil && oa.Served && ob.Served
	if inOld && oa.Schema.hash == a.Schema.hash && ob.Schema.hash == b.Schema.hash {
		return // the same schemas: the same differences as before
	}
	var found []Change
	c.pairWalk(c.new, a, b, func(ch Change) { // unsafe changes only (see add)
		if len(found) >= limits.changes {
			c.stop("spec.versions", "served versions %s differ in more than %d ways: the rest of the pairs of served versions were not compared", ch.Version, limits.changes)
			return
		}
		found = append(found, ch)
	})
	if c.err != nil || len(found) == 0 {
		return
	}
	known := map[string]int{}
	if inOld {
		for _, ch := range found {
			known[pairKey(ch)] = 0
		}
		c.pairWalk(c.old, oa, ob, func(ch Change) {
			if n, ok := known[pairKey(ch)]; ok {
				known[pairKey(ch)] = n + 1
			}
		})
		if c.err != nil {
			return
		}
	}
	for _, ch := range found {
		if k := pairKey(ch); known[k] > 0 {
			known[k]--
			continue
		}
		ch.Message = "served versions " + ch.Version + " differ and the CRD has no conversion webhook: " + ch.Message
		c.keep(ch)
		if c.err != nil {
			return
		}
	}
}

// pairWalk compares the versions a and b of crd with the comparison's
// budget, handing each change to emit.
func (c *comparer) pairWalk(crd *CRD, a, b *Version, emit func(Change)) {
	sub := &comparer{ctx: c.ctx, old: crd, new: crd, pair: true, b: c.b, emit: emit,
		version: a.Name + " -> " + b.Name, oldV: a, newV: b}
	sub.node(a.Schema, b.Schema, &step{})
	if sub.err != nil && c.err == nil {
		c.err = sub.err
	}
}

func pairKey(ch Change) string {
	return strings.Join([]string{ch.Version, ch.Path, ch.Rule, ch.Old, ch.New}, "\x00")
}

// hashString hashes s with the process seed.
func hashString(s string) uint64 { return maphash.String(hashSeed, s) }
