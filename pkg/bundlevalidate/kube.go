package bundlevalidate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/k8sname"
)

// fieldError is apimachinery's field.Error: a field, its kind of error,
// the bad value and a detail.
type fieldError struct {
	Type   string // "Required value", "Invalid value", ...
	Field  string
	Value  any // the bad value, as the validators hold it
	Detail string
	// omitValue: the body names no value (Required, Forbidden, ...).
	omitValue bool
	// valueText overrides how Value prints in the body.
	valueText *string
}

const (
	errRequired     = "Required value"
	errInvalid      = "Invalid value"
	errNotSupported = "Unsupported value"
	errForbidden    = "Forbidden"
	errDuplicate    = "Duplicate value"
	errTooLong      = "Too long"
	errTooMany      = "Too many"
)

func required(f, detail string) fieldError {
	return fieldError{Type: errRequired, Field: f, Value: "", Detail: detail, omitValue: true}
}

func forbidden(f, detail string) fieldError {
	return fieldError{Type: errForbidden, Field: f, Value: "", Detail: detail, omitValue: true}
}

func invalid(f string, v any, detail string) fieldError {
	return fieldError{Type: errInvalid, Field: f, Value: v, Detail: detail}
}

func notSupported(f string, v any, valid []string) fieldError {
	q := make([]string, len(valid))
	for i, s := range valid {
		q[i] = strconv.Quote(s)
	}
	return fieldError{Type: errNotSupported, Field: f, Value: v, Detail: "supported values: " + strings.Join(q, ", ")}
}

// Error is "field: body", as field.Error.Error.
func (e fieldError) Error() string { return e.Field + ": " + e.body() }

func (e fieldError) body() string {
	s := e.Type
	if !e.omitValue {
		switch {
		case e.valueText != nil:
			s += ": " + *e.valueText
		default:
			s += ": " + bodyValue(e.Value)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// bodyValue prints a bad value as field.Error does: pointers followed,
// numbers and booleans with %v, strings quoted.
func bodyValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case *bool:
		if t == nil {
			return "null"
		}
		return strconv.FormatBool(*t)
	case *string:
		if t == nil {
			return "null"
		}
		return strconv.Quote(*t)
	case string:
		return strconv.Quote(t)
	case bool:
		return strconv.FormatBool(t)
	case int, int32, int64:
		return fmt.Sprint(t)
	case []string:
		return goSyntaxStrings(t)
	case []iVersion:
		return versionsGoSyntax(t)
	}
	return fmt.Sprintf("%#v", v)
}

// goSyntaxStrings is %#v of a []string.
func goSyntaxStrings(l []string) string {
	if l == nil {
		return "[]string(nil)"
	}
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

// aggregate is apimachinery's error aggregate text: one error as itself,
// several as "[a, b]" without repeats.
func aggregate(errs []fieldError) string {
	seen := map[string]bool{}
	var msgs []string
	for _, e := range errs {
		m := e.Error()
		if seen[m] {
			continue
		}
		seen[m] = true
		msgs = append(msgs, m)
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// validateObjectMeta is apimachinery's ValidateObjectMetaAccessor for an
// object that may not have a namespace, with a name function that accepts
// every name (as operator-sdk and operator-registry call it). md is the
// metadata map as written.
func validateObjectMeta(md map[string]any) []fieldError {
	return validateObjectMetaWith(md, nil)
}

// validateObjectMetaWith is validateObjectMeta with a name function (nil
// accepts every name): it returns what is wrong with a name, or with the
// prefix of a generateName.
func validateObjectMetaWith(md map[string]any, nameFn func(name string, prefix bool) []string) []fieldError {
	var errs []fieldError
	if gn, _ := md["generateName"].(string); gn != "" && nameFn != nil {
		for _, msg := range nameFn(gn, true) {
			errs = append(errs, invalid("metadata.generateName", gn, msg))
		}
	}
	name, _ := md["name"].(string)
	if name == "" {
		errs = append(errs, required("metadata.name", "name or generateName is required"))
	} else if nameFn != nil {
		for _, msg := range nameFn(name, false) {
			errs = append(errs, invalid("metadata.name", name, msg))
		}
	}
	if ns, _ := md["namespace"].(string); ns != "" {
		errs = append(errs, forbidden("metadata.namespace", "not allowed on this type"))
	}
	if g, ok := md["generation"].(int64); ok && g < 0 {
		errs = append(errs, invalid("metadata.generation", g, "must be greater than or equal to 0"))
	}
	for _, k := range sortedKeys(md["labels"]) {
		for _, msg := range k8sname.IsQualifiedName(k) {
			errs = append(errs, invalid("metadata.labels", k, msg))
		}
		v, _ := md["labels"].(map[string]any)[k].(string)
		for _, msg := range k8sname.IsValidLabelValue(v) {
			errs = append(errs, invalid("metadata.labels", v, msg))
		}
	}
	total := 0
	for _, k := range sortedKeys(md["annotations"]) {
		for _, msg := range k8sname.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, invalid("metadata.annotations", k, msg))
		}
		v, _ := md["annotations"].(map[string]any)[k].(string)
		total += len(k) + len(v)
	}
	if total > 256*(1<<10) {
		errs = append(errs, fieldError{Type: errTooLong, Field: "metadata.annotations", Value: "<value omitted>", Detail: fmt.Sprintf("may not be more than %d bytes", 256*(1<<10)), omitValue: true})
	}
	if fins, ok := md["finalizers"].([]any); ok {
		for _, f := range fins {
			s, _ := f.(string)
			for _, msg := range k8sname.IsQualifiedName(s) {
				errs = append(errs, invalid("metadata.finalizers", s, msg))
			}
		}
	}
	return errs
}

func sortedKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
