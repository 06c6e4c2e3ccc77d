package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits bound what one CRD may cost. Schemas come from catalogs and images
// anyone can publish: a schema nested deeper or holding more nodes than
// this is refused with an error naming the CRD.
const (
	// MaxDepth bounds the nesting of subschemas (properties, items, allOf
	// and the others) and of the values validated against them.
	MaxDepth = 128
	// MaxNodes bounds the subschemas of one CRD, all versions together.
	MaxNodes = 1 << 20
)

// Schema is one node of an openAPIV3Schema: the keywords Kubernetes knows
// (JSONSchemaProps), with every value that is not a subschema kept as
// canonical JSON, and the subschemas as nodes. Keywords Kubernetes does
// not know are dropped, as the API server drops them. A keyword whose
// value means "not set" to Kubernetes (false, "", an empty list or map,
// null) is absent here, so that writing it or leaving it out compares
// equal.
type Schema struct {
	// kw holds the keywords that are not subschemas, as canonical JSON
	// (keys sorted, compact). additionalProperties, items and
	// dependencies entries that are booleans or string lists are here too.
	kw map[string]string

	Properties map[string]*Schema
	// propKeys are the names of Properties, sorted (nodes are compared
	// many times: served pairs, bundle pairs).
	propKeys             []string
	Items                *Schema   // items: a schema
	ItemsList            []*Schema // items: a list of schemas
	AdditionalProperties *Schema   // additionalProperties: a schema
	AdditionalItems      *Schema
	AllOf, AnyOf, OneOf  []*Schema
	Not                  *Schema
	PatternProperties    map[string]*Schema
	Definitions          map[string]*Schema
	Dependencies         map[string]*Schema

	// hash identifies the node and everything below it (equal hashes:
	// equal subtrees, but for a 2^-64 chance), and ownHash the node
	// without description, title, example and externalDocs, as OLM v1
	// compares oneOf entries.
	hash, ownHash uint64

	// parsed keyword values the validator and the comparison use
	types     []string // "type" (a string, or a list)
	enum      []string // canonical JSON of each value
	required  []string
	dflt      any // default, decoded (nil: none)
	hasDflt   bool
	nullable  bool
	preserve  bool // x-kubernetes-preserve-unknown-fields: true
	intOrStr  bool // x-kubernetes-int-or-string: true
	embedded  bool // x-kubernetes-embedded-resource: true
	apBool    *bool
	num       [numKeys]*float64 // maximum, minimum, ... (see numKeys)
	exclMax   bool
	exclMin   bool
	multOf    *float64
	unique    bool
	pattern   string
	format    string
	patternRE *patternCache
	enumIx    *enumIndex // the enum as a set, for the validator
}

// Numeric keywords, in the order of Schema.num.
const (
	kMaximum = iota
	kMinimum
	kMaxLength
	kMinLength
	kMaxItems
	kMinItems
	kMaxProperties
	kMinProperties
	numKeys
)

var numNames = [numKeys]string{"maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"}

// scalarKeywords are the keywords of JSONSchemaProps whose values are not
// subschemas, with the kind of "unset" value Kubernetes' Go types cannot
// tell from absence ('b': false, 's': "", 'l': empty list, 'm': empty map,
// 'p': only null, as for pointers).
var scalarKeywords = map[string]byte{
	"id": 's', "$schema": 's', "$ref": 's', "description": 's', "type": 's', "format": 's', "title": 's',
	"default": 'p', "maximum": 'p', "exclusiveMaximum": 'b', "minimum": 'p', "exclusiveMinimum": 'b',
	"maxLength": 'p', "minLength": 'p', "pattern": 's', "maxItems": 'p', "minItems": 'p', "uniqueItems": 'b',
	"multipleOf": 'p', "enum": 'l', "maxProperties": 'p', "minProperties": 'p', "required": 'l',
	"externalDocs": 'p', "example": 'p', "nullable": 'b',
	"x-kubernetes-preserve-unknown-fields": 'p', "x-kubernetes-embedded-resource": 'b',
	"x-kubernetes-int-or-string": 'b', "x-kubernetes-list-map-keys": 'l', "x-kubernetes-list-type": 'p',
	"x-kubernetes-map-type": 'p', "x-kubernetes-validations": 'l',
}

// schemaBuilder builds the nodes of one CRD, counting them.
type schemaBuilder struct {
	ctx context.Context
	// cache, when set, interns the nodes: identical subschemas (across
	// the versions of a CRD, the CRDs of a bundle and the bundles of a
	// package) are one node.
	cache *Cache
	nodes int
	crd   string
}

// hashSeed is the seed of every node hash of the process: hashes are
// compared between CRDs, never stored.
var hashSeed = maphash.MakeSeed()

// buildPath is the path of a node being built, rendered only for errors.
type buildPath struct {
	parent *buildPath
	step   string
}

func (p *buildPath) String() string {
	if p.parent == nil {
		return p.step
	}
	return p.parent.String() + "." + p.step
}

func (b *schemaBuilder) build(v any, path *buildPath, depth int) (*Schema, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("CRD %s: %s: schema nested deeper than %d levels", b.crd, path, MaxDepth)
	}
	b.nodes++
	if b.nodes > MaxNodes {
		return nil, fmt.Errorf("CRD %s: more than %d subschemas", b.crd, MaxNodes)
	}
	if b.nodes&1023 == 0 {
		if err := b.ctx.Err(); err != nil {
			return nil, err
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			m = map[string]any{}
		} else {
			return nil, fmt.Errorf("CRD %s: %s: a schema must be an object, not %s", b.crd, path, jsonKind(v))
		}
	}
	s := &Schema{kw: map[string]string{}}
	sub := func(key string, v any) (*Schema, error) {
		return b.build(v, &buildPath{path, key}, depth+1)
	}
	subMap := func(key string, v any) (map[string]*Schema, error) {
		mm, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				return nil, nil
			}
			return nil, fmt.Errorf("CRD %s: %s.%s: must be an object, not %s", b.crd, path, key, jsonKind(v))
		}
		if len(mm) == 0 {
			return nil, nil
		}
		out := make(map[string]*Schema, len(mm))
		for k, x := range mm {
			c, err := b.build(x, &buildPath{&buildPath{path, key}, quoteKey(k)}, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	}
	subList := func(key string, v any) ([]*Schema, error) {
		l, ok := v.([]any)
		if !ok {
			if v == nil {
				return nil, nil
			}
			return nil, fmt.Errorf("CRD %s: %s.%s: must be a list, not %s", b.crd, path, key, jsonKind(v))
		}
		out := make([]*Schema, 0, len(l))
		for i, x := range l {
			c, err := b.build(x, &buildPath{path, key + "[" + strconv.Itoa(i) + "]"}, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	var err error
	for k, x := range m {
		switch k {
		case "properties":
			s.Properties, err = subMap(k, x)
			s.propKeys = slices.Sorted(maps.Keys(s.Properties))
		case "patternProperties":
			s.PatternProperties, err = subMap(k, x)
		case "definitions":
			s.Definitions, err = subMap(k, x)
		case "allOf":
			s.AllOf, err = subList(k, x)
		case "anyOf":
			s.AnyOf, err = subList(k, x)
		case "oneOf":
			s.OneOf, err = subList(k, x)
		case "not":
			if x != nil {
				s.Not, err = sub(k, x)
			}
		case "items":
			switch x := x.(type) {
			case []any:
				s.ItemsList, err = subList(k, x)
				s.kw["items"] = `"list"`
			case nil:
			default:
				s.Items, err = sub(k, x)
			}
		case "additionalProperties", "additionalItems":
			switch x := x.(type) {
			case bool:
				s.kw[k] = strconv.FormatBool(x)
				if k == "additionalProperties" {
					s.apBool = &x
				}
			case nil:
			default:
				var c *Schema
				c, err = sub(k, x)
				if k == "additionalProperties" {
					s.AdditionalProperties = c
				} else {
					s.AdditionalItems = c
				}
			}
		case "dependencies":
			mm, ok := x.(map[string]any)
			if !ok {
				if x != nil {
					err = fmt.Errorf("CRD %s: %s.dependencies: must be an object, not %s", b.crd, path, jsonKind(x))
				}
				break
			}
			lists := map[string]any{}
			for dk, dv := range mm {
				if l, ok := dv.([]any); ok {
					lists[dk] = l
					continue
				}
				if s.Dependencies == nil {
					s.Dependencies = map[string]*Schema{}
				}
				if s.Dependencies[dk], err = b.build(dv, &buildPath{path, "dependencies." + quoteKey(dk)}, depth+1); err != nil {
					break
				}
			}
			if len(lists) > 0 {
				s.kw["dependencies"] = canonical(lists)
			}
		default:
			unset, known := scalarKeywords[k]
			if !known || isUnset(x, unset) {
				continue
			}
			s.kw[k] = canonical(x)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := s.parseKeywords(m); err != nil {
		return nil, fmt.Errorf("CRD %s: %s: %w", b.crd, path, err)
	}
	s.hash, s.ownHash = s.computeHash()
	return b.cache.intern(s), nil
}

// isUnset reports whether x is a value Kubernetes cannot tell from an
// absent keyword.
func isUnset(x any, kind byte) bool {
	if x == nil {
		return true
	}
	switch kind {
	case 'b':
		b, ok := x.(bool)
		return ok && !b
	case 's':
		s, ok := x.(string)
		return ok && s == ""
	case 'l':
		l, ok := x.([]any)
		return ok && len(l) == 0
	case 'm':
		m, ok := x.(map[string]any)
		return ok && len(m) == 0
	}
	return false
}

// parseKeywords reads the keyword values the validator and the
// comparison use. Values of the wrong JSON type are errors, as they are
// for the API server.
func (s *Schema) parseKeywords(m map[string]any) error {
	switch t := m["type"].(type) {
	case string:
		if t != "" {
			s.types = []string{t}
		}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				s.types = append(s.types, str)
			}
		}
	case nil:
	default:
		return fmt.Errorf("type must be a string, not %s", jsonKind(t))
	}
	if l, ok := m["enum"].([]any); ok {
		for _, x := range l {
			s.enum = append(s.enum, canonical(x))
		}
		s.enumIx = &enumIndex{}
	}
	switch r := m["required"].(type) {
	case []any:
		for _, x := range r {
			str, ok := x.(string)
			if !ok {
				return fmt.Errorf("required must list strings, not %s", jsonKind(x))
			}
			s.required = append(s.required, str)
		}
	case nil:
	default:
		return fmt.Errorf("required must be a list, not %s", jsonKind(r))
	}
	if d, ok := m["default"]; ok && d != nil {
		s.dflt, s.hasDflt = d, true
	}
	s.nullable = m["nullable"] == true
	s.preserve = m["x-kubernetes-preserve-unknown-fields"] == true
	s.intOrStr = m["x-kubernetes-int-or-string"] == true
	s.embedded = m["x-kubernetes-embedded-resource"] == true
	s.exclMax = m["exclusiveMaximum"] == true
	s.exclMin = m["exclusiveMinimum"] == true
	s.unique = m["uniqueItems"] == true
	for i, name := range numNames {
		x, ok := m[name]
		if !ok || x == nil {
			continue
		}
		f, err := number(x)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.num[i] = &f
	}
	if x, ok := m["multipleOf"]; ok && x != nil {
		f, err := number(x)
		if err != nil {
			return fmt.Errorf("multipleOf: %w", err)
		}
		s.multOf = &f
	}
	if p, ok := m["pattern"].(string); ok {
		s.pattern = p
		s.patternRE = &patternCache{}
	}
	if f, ok := m["format"].(string); ok {
		s.format = f
	}
	return nil
}

// number reads a JSON number.
func number(x any) (float64, error) {
	switch n := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, fmt.Errorf("invalid number %s", n)
		}
		return f, nil
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	}
	return 0, fmt.Errorf("must be a number, not %s", jsonKind(x))
}

// skippedForOwnHash are the keywords OLM v1 ignores when it compares the
// entries of a oneOf.
var skippedForOwnHash = map[string]bool{"description": true, "title": true, "example": true, "externalDocs": true}

// computeHash hashes the node's keywords and its subschemas' hashes.
func (s *Schema) computeHash() (full, own uint64) {
	var h, o maphash.Hash
	h.SetSeed(hashSeed)
	o.SetSeed(hashSeed)
	keys := make([]string, 0, len(s.kw))
	for k := range s.kw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, w := range []*maphash.Hash{&h, &o} {
			if w == &o && skippedForOwnHash[k] {
				continue
			}
			w.WriteString(k)
			w.WriteByte(0)
			w.WriteString(s.kw[k])
			w.WriteByte(0)
		}
	}
	child := func(tag string, c *Schema) {
		if c == nil {
			return
		}
		for _, w := range []*maphash.Hash{&h, &o} {
			w.WriteString(tag)
			w.WriteByte(1)
			writeUint64(w, c.hash)
		}
	}
	childMap := func(tag string, m map[string]*Schema) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			child(tag+"\x02"+k, m[k])
		}
	}
	childList := func(tag string, l []*Schema) {
		for i, c := range l {
			child(tag+"\x03"+strconv.Itoa(i), c)
		}
	}
	childMap("properties", s.Properties)
	child("items", s.Items)
	childList("items", s.ItemsList)
	child("additionalProperties", s.AdditionalProperties)
	child("additionalItems", s.AdditionalItems)
	childList("allOf", s.AllOf)
	childList("anyOf", s.AnyOf)
	childList("oneOf", s.OneOf)
	child("not", s.Not)
	childMap("patternProperties", s.PatternProperties)
	childMap("definitions", s.Definitions)
	childMap("dependencies", s.Dependencies)
	return h.Sum64(), o.Sum64()
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

// canonical is the canonical JSON of a decoded value: keys sorted,
// compact, numbers as written.
func canonical(x any) string {
	switch v := x.(type) {
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return string(v)
	case string:
		if plainString(v) {
			return `"` + v + `"`
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return fmt.Sprintf("%v", x)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// quoteKey writes a property name as a path step: bare when it is an
// identifier, quoted otherwise.
func quoteKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return k
	}
	return strconv.Quote(k)
}

// plainString reports whether s is written in JSON as it is, quoted.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return false
		}
	}
	return true
}
