package crd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// FieldError is one reason an object does not validate.
type FieldError struct {
	// Field is the field, as .spec.containers[0].name ("." for the object).
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e FieldError) String() string { return e.Field + ": " + e.Message }

// Result is what validating one object found.
type Result struct {
	// Errors are the reasons the API server would refuse the object.
	Errors []FieldError
	// Pruned are the fields the schema does not know, which the API server
	// drops when it stores the object (no error).
	Pruned []string
}

// Valid reports whether the object validates.
func (r *Result) Valid() bool { return len(r.Errors) == 0 }

// maxErrors bounds the errors reported for one object.
const maxErrors = 50

// Validate validates obj, a custom resource (decoded JSON), against the
// schema of the version its apiVersion names, after applying that
// schema's defaults, as the API server validates an object it is asked to
// create. The error is for an object that is not of this CRD (apiVersion
// of another group, a version the CRD does not have, another kind), for
// one nested deeper than MaxDepth, and for a cancelled context.
func (c *CRD) Validate(ctx context.Context, obj map[string]any) (*Result, error) {
	v, err := c.versionOf(obj)
	if err != nil {
		return nil, err
	}
	return v.Check(ctx, v.Default(obj))
}

// versionOf returns the version of c an object is written in.
func (c *CRD) versionOf(obj map[string]any) (*Version, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	if group != c.Group {
		return nil, fmt.Errorf("apiVersion %q is not of group %s (CRD %s)", apiVersion, c.Group, c.Name)
	}
	if kind != c.Kind {
		return nil, fmt.Errorf("kind %q is not %s (CRD %s)", kind, c.Kind, c.Name)
	}
	v := c.Version(version)
	if v == nil {
		return nil, fmt.Errorf("CRD %s has no version %s", c.Name, version)
	}
	return v, nil
}

// Default returns a copy of obj with the version schema's defaults
// applied: a property with a default is set when it is absent (or null
// and not nullable), in objects, list items and additionalProperties
// values, outside in. obj itself is not modified.
func (v *Version) Default(obj any) any {
	return applyDefaults(deepCopy(obj, 0), v.Schema, 0)
}

func applyDefaults(x any, s *Schema, depth int) any {
	if s == nil || depth > MaxDepth {
		return x
	}
	switch x := x.(type) {
	case map[string]any:
		for name, ps := range s.Properties {
			if val, ok := x[name]; ps.hasDflt && (!ok || val == nil && !ps.nullable) {
				x[name] = deepCopy(ps.dflt, 0)
			}
		}
		for name, val := range x {
			if ps, ok := s.Properties[name]; ok {
				x[name] = applyDefaults(val, ps, depth+1)
			} else if s.AdditionalProperties != nil {
				x[name] = applyDefaults(val, s.AdditionalProperties, depth+1)
			}
		}
	case []any:
		if s.Items != nil {
			for i := range x {
				x[i] = applyDefaults(x[i], s.Items, depth+1)
			}
		}
	}
	return x
}

func deepCopy(x any, depth int) any {
	if depth > MaxDepth+1 {
		return x
	}
	switch x := x.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = deepCopy(v, depth+1)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, v := range x {
			l[i] = deepCopy(v, depth+1)
		}
		return l
	}
	return x
}

// Check validates obj against the version's schema as it is (no
// defaults applied), in at most MaxExampleSteps steps (a
// *StepLimitError past them). See [CRD.Validate].
func (v *Version) Check(ctx context.Context, obj any) (*Result, error) {
	res, _, err := v.check(ctx, obj, limits.exampleSteps)
	return res, err
}

// StepLimitError is a validation stopped after its budget of steps: the
// object was not checked in full.
type StepLimitError struct {
	Limit int
}

func (e *StepLimitError) Error() string {
	return fmt.Sprintf("validation stopped after %d steps (the limit)", e.Limit)
}

// check is Check with a budget of limit steps; it also returns the steps
// spent.
func (v *Version) check(ctx context.Context, obj any, limit int) (*Result, int, error) {
	vl := &validator{ctx: ctx, res: &Result{}, limit: limit}
	vl.value(obj, v.Schema, ".", 0, true)
	if vl.err != nil {
		return nil, vl.steps, vl.err
	}
	slices.Sort(vl.res.Pruned)
	return vl.res, vl.steps, nil
}

type validator struct {
	ctx context.Context
	res *Result
	// steps counts the work done (a value against a schema node, more
	// for long canonical values), limit bounds it.
	steps, limit int
	err          error
	// quiet counts nested trial validations (anyOf, oneOf, not), whose
	// errors and pruned fields are not reported.
	quiet int
	fails int
}

// spend counts n steps; it reports false once the budget is spent or the
// context is done (vl.err says which).
func (vl *validator) spend(n int) bool {
	if vl.err != nil {
		return false
	}
	before := vl.steps
	vl.steps += n
	if vl.steps > vl.limit {
		vl.err = &StepLimitError{Limit: vl.limit}
		return false
	}
	if before>>10 != vl.steps>>10 {
		if err := vl.ctx.Err(); err != nil {
			vl.err = err
			return false
		}
	}
	return true
}

func (vl *validator) fail(field, format string, args ...any) {
	vl.fails++
	if vl.quiet > 0 || len(vl.res.Errors) >= maxErrors {
		return
	}
	vl.res.Errors = append(vl.res.Errors, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func child(field, name string) string {
	if field == "." {
		return "." + quoteKey(name)
	}
	return field + "." + quoteKey(name)
}

// value validates x against s at field; pruning says whether fields the
// schema does not know are pruned here (false below
// x-kubernetes-preserve-unknown-fields and in trial validations).
func (vl *validator) value(x any, s *Schema, field string, depth int, pruning bool) {
	if vl.err != nil {
		return
	}
	if depth > MaxDepth {
		if field == "" {
			field = "(in a trial of anyOf, oneOf or not)"
		}
		vl.err = fmt.Errorf("%s: nested deeper than %d levels", field, MaxDepth)
		return
	}
	if !vl.spend(1) {
		return
	}
	if s == nil {
		return
	}
	if x == nil {
		if !s.nullable && (len(s.types) > 0 || s.intOrStr) {
			vl.fail(field, "must be of type %s, not null", typeName(s))
		}
		return
	}
	if !vl.typeOK(x, s, field) {
		return
	}
	if len(s.enum) > 0 {
		c := canonicalValue(x)
		if !vl.spend(len(c) >> 6) {
			return
		}
		if !s.enumIx.get(s.enum).has(c) {
			vl.fail(field, "unsupported value %s: must be one of %s", short(c), listValues(s.enum))
		}
	}
	switch x := x.(type) {
	case string:
		vl.str(x, s, field)
	case json.Number, float64, int64:
		f, _ := number(x)
		vl.num(f, s, field)
	case []any:
		vl.list(x, s, field, depth, pruning)
	case map[string]any:
		vl.object(x, s, field, depth, pruning)
	}
	for i, sub := range s.AllOf {
		_ = i
		vl.value(x, sub, field, depth+1, false)
	}
	if len(s.AnyOf) > 0 && vl.matching(x, s.AnyOf, field, depth) == 0 {
		vl.fail(field, "must validate against at least one schema of anyOf")
	}
	if len(s.OneOf) > 0 {
		if n := vl.matching(x, s.OneOf, field, depth); n != 1 {
			vl.fail(field, "must validate against exactly one schema of oneOf, validates against %d", n)
		}
	}
	if s.Not != nil && vl.matching(x, []*Schema{s.Not}, field, depth) == 1 {
		vl.fail(field, "must not validate against the schema of not")
	}
}

// matching counts the schemas x validates against, quietly.
func (vl *validator) matching(x any, schemas []*Schema, field string, depth int) int {
	n := 0
	for _, sub := range schemas {
		before := vl.fails
		vl.quiet++
		vl.value(x, sub, field, depth+1, false)
		vl.quiet--
		if vl.fails == before {
			n++
		}
		vl.fails = before
	}
	return n
}

// typeOK checks x's JSON type against s's type.
func (vl *validator) typeOK(x any, s *Schema, field string) bool {
	if len(s.types) == 0 {
		if s.intOrStr {
			switch x.(type) {
			case string:
				return true
			case json.Number, float64, int64:
				if isInteger(x) {
					return true
				}
			}
			vl.fail(field, "must be an integer or a string, not %s", jsonKind(x))
			return false
		}
		return true
	}
	got := ""
	switch x.(type) {
	case map[string]any:
		got = "object"
	case []any:
		got = "array"
	case string:
		got = "string"
	case bool:
		got = "boolean"
	case json.Number, float64, int64:
		got = "number"
		if isInteger(x) && !slices.Contains(s.types, "number") {
			got = "integer"
		}
	}
	if slices.Contains(s.types, got) || got == "integer" && slices.Contains(s.types, "number") {
		return true
	}
	if s.intOrStr && (got == "string" || got == "integer") {
		return true
	}
	vl.fail(field, "must be of type %s, not %s (%s)", strings.Join(s.types, " or "), got, short(canonicalValue(x)))
	return false
}

func isInteger(x any) bool {
	switch n := x.(type) {
	case int64:
		return true
	case json.Number:
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

func short(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func (vl *validator) str(x string, s *Schema, field string) {
	n := int64(utf8.RuneCountInString(x))
	if m := s.num[kMaxLength]; m != nil && float64(n) > *m {
		vl.fail(field, "may not be longer than %s characters (has %d)", s.kw["maxLength"], n)
	}
	if m := s.num[kMinLength]; m != nil && float64(n) < *m {
		vl.fail(field, "must be at least %s characters long (has %d)", s.kw["minLength"], n)
	}
	if re := s.patternRE.get(s.pattern); re != nil && !re.MatchString(x) {
		vl.fail(field, "%q does not match the pattern %s", short(x), s.pattern)
	}
	if msg := checkFormat(s.format, x); msg != "" {
		vl.fail(field, "%q is not a valid %s: %s", short(x), s.format, msg)
	}
}

func (vl *validator) num(f float64, s *Schema, field string) {
	if m := s.num[kMaximum]; m != nil && (f > *m || s.exclMax && f == *m) {
		rel := "less than or equal to"
		if s.exclMax {
			rel = "less than"
		}
		vl.fail(field, "must be %s %s (is %s)", rel, s.kw["maximum"], fmtNum(f))
	}
	if m := s.num[kMinimum]; m != nil && (f < *m || s.exclMin && f == *m) {
		rel := "greater than or equal to"
		if s.exclMin {
			rel = "greater than"
		}
		vl.fail(field, "must be %s %s (is %s)", rel, s.kw["minimum"], fmtNum(f))
	}
	if m := s.multOf; m != nil && *m > 0 {
		if q := f / *m; math.Abs(q-math.Round(q)) > 1e-9 {
			vl.fail(field, "must be a multiple of %s (is %s)", s.kw["multipleOf"], fmtNum(f))
		}
	}
	switch s.format {
	case "int32":
		if f < math.MinInt32 || f > math.MaxInt32 {
			vl.fail(field, "%s is not a valid int32", fmtNum(f))
		}
	case "float":
		if math.Abs(f) > math.MaxFloat32 {
			vl.fail(field, "%s is not a valid float", fmtNum(f))
		}
	}
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (vl *validator) list(x []any, s *Schema, field string, depth int, pruning bool) {
	n := float64(len(x))
	if m := s.num[kMaxItems]; m != nil && n > *m {
		vl.fail(field, "must have at most %s items (has %d)", s.kw["maxItems"], len(x))
	}
	if m := s.num[kMinItems]; m != nil && n < *m {
		vl.fail(field, "must have at least %s items (has %d)", s.kw["minItems"], len(x))
	}
	if s.unique {
		seen := map[string]bool{}
		for _, e := range x {
			c := canonicalValue(e)
			if !vl.spend(1 + len(c)>>6) {
				return
			}
			if seen[c] {
				vl.fail(field, "has the duplicate item %s", short(c))
				break
			}
			seen[c] = true
		}
	}
	for i, e := range x {
		at := ""
		if vl.quiet == 0 { // trials report nothing: no path to build
			at = field + "[" + strconv.Itoa(i) + "]"
		}
		switch {
		case s.Items != nil:
			vl.value(e, s.Items, at, depth+1, pruning && !s.preserve)
		case len(s.ItemsList) > 0:
			if i < len(s.ItemsList) {
				vl.value(e, s.ItemsList[i], at, depth+1, false)
			} else if s.AdditionalItems != nil {
				vl.value(e, s.AdditionalItems, at, depth+1, false)
			}
		}
	}
}

func (vl *validator) object(x map[string]any, s *Schema, field string, depth int, pruning bool) {
	n := float64(len(x))
	if m := s.num[kMaxProperties]; m != nil && n > *m {
		vl.fail(field, "must have at most %s properties (has %d)", s.kw["maxProperties"], len(x))
	}
	if m := s.num[kMinProperties]; m != nil && n < *m {
		vl.fail(field, "must have at least %s properties (has %d)", s.kw["minProperties"], len(x))
	}
	for _, r := range s.required {
		if _, ok := x[r]; !ok {
			vl.fail(child(field, r), "required")
		}
	}
	if s.embedded {
		for _, k := range []string{"apiVersion", "kind"} {
			if str, _ := x[k].(string); str == "" {
				vl.fail(child(field, k), "required (an embedded resource)")
			}
		}
	}
	keep := pruning && !s.preserve
	names := maps.Keys(x)
	if vl.quiet == 0 { // what is reported is in name order; trials report nothing
		names = slices.Values(slices.Sorted(names))
	}
	for name := range names {
		val := x[name]
		at := ""
		if vl.quiet == 0 {
			at = child(field, name)
		}
		if ps, ok := s.Properties[name]; ok {
			// the API server handles metadata itself: it prunes nothing there
			vl.value(val, ps, at, depth+1, keep && !(depth == 0 && name == "metadata"))
			continue
		}
		matched := false
		for pat, ps := range s.PatternProperties {
			if re := compilePattern(pat); re != nil && re.MatchString(name) {
				matched = true
				vl.value(val, ps, at, depth+1, false)
			}
		}
		switch {
		case s.AdditionalProperties != nil:
			vl.value(val, s.AdditionalProperties, at, depth+1, keep)
		case matched:
		case s.apBool != nil && !*s.apBool:
			vl.fail(at, "unknown field: additionalProperties is false")
		case depth == 0 && (name == "apiVersion" || name == "kind" || name == "metadata"):
			// the API server keeps these whatever the schema says
		case keep && vl.quiet == 0 && !(s.apBool != nil && *s.apBool):
			vl.res.Pruned = append(vl.res.Pruned, at)
		}
	}
}

// canonicalValue is the canonical JSON of a value, numbers written in
// their shortest form.
func canonicalValue(x any) string {
	switch n := x.(type) {
	case json.Number, float64, int64:
		f, err := number(n)
		if err == nil {
			return fmtNum(f)
		}
	}
	return canonical(x)
}

// enumIndex holds an enum's values as a set, built on first use: values
// by canonical JSON, and numbers by value (1.0 is 1).
type enumIndex struct {
	once sync.Once
	text map[string]bool
	nums map[float64]bool
}

func (e *enumIndex) get(enum []string) *enumIndex {
	e.once.Do(func() {
		e.text = make(map[string]bool, len(enum))
		for _, v := range enum {
			e.text[v] = true
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				if e.nums == nil {
					e.nums = map[float64]bool{}
				}
				e.nums[f] = true
			}
		}
	})
	return e
}

// has reports whether the canonical value c is one of the enum's.
func (e *enumIndex) has(c string) bool {
	if e.text[c] {
		return true
	}
	if e.nums == nil {
		return false
	}
	f, err := strconv.ParseFloat(c, 64)
	return err == nil && e.nums[f]
}

// patternCache compiles a schema's pattern once; a pattern Go cannot
// compile is not applied (the API server refuses such a CRD).
type patternCache struct {
	once sync.Once
	re   *regexp.Regexp
}

func (p *patternCache) get(pattern string) *regexp.Regexp {
	if p == nil {
		return nil
	}
	p.once.Do(func() { p.re = compilePattern(pattern) })
	return p.re
}

func compilePattern(pattern string) *regexp.Regexp {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	return re
}

var (
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	uuid3RE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	uuid4RE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$`)
	uuid5RE    = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$`)
	hostnameRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$`)
	durationRE = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?\s*(ns|us|µs|ms|s|m|h|d|w|(second|minute|hour|day|week)s?)\s*)+$`)
)

// checkFormat checks a string against the formats Kubernetes validates
// ("" when it conforms or the format is one this package does not check).
func checkFormat(format, s string) string {
	switch format {
	case "byte":
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return "not base64"
		}
	case "date":
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return "not a date (YYYY-MM-DD)"
		}
	case "date-time", "datetime":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return "not an RFC 3339 date-time"
		}
	case "duration":
		if _, err := time.ParseDuration(s); err != nil && !durationRE.MatchString(s) {
			return "not a duration"
		}
	case "uuid":
		if !uuidRE.MatchString(s) {
			return "not a UUID"
		}
	case "uuid3":
		if !uuid3RE.MatchString(s) {
			return "not a version 3 UUID"
		}
	case "uuid4":
		if !uuid4RE.MatchString(s) {
			return "not a version 4 UUID"
		}
	case "uuid5":
		if !uuid5RE.MatchString(s) {
			return "not a version 5 UUID"
		}
	case "ipv4":
		if ip := net.ParseIP(s); ip == nil || ip.To4() == nil || strings.Contains(s, ":") {
			return "not an IPv4 address"
		}
	case "ipv6":
		if ip := net.ParseIP(s); ip == nil || !strings.Contains(s, ":") {
			return "not an IPv6 address"
		}
	case "cidr":
		if _, _, err := net.ParseCIDR(s); err != nil {
			return "not a CIDR"
		}
	case "mac":
		if _, err := net.ParseMAC(s); err != nil {
			return "not a MAC address"
		}
	case "hostname":
		if len(s) > 255 || !hostnameRE.MatchString(s) {
			return "not a hostname"
		}
	case "email":
		if _, err := mail.ParseAddress(s); err != nil {
			return "not an email address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return "not an absolute URI"
		}
	}
	return ""
}
