package bundlevalidate

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/opmkit/opm/internal/k8sname"
	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The CRD validator: each CustomResourceDefinition checked as the API
// server checks one it is asked to create (apiextensions-apiserver's
// ValidateCustomResourceDefinition, after the defaults of its version and
// the conversion to the internal form), leaving out what operator-framework/api
// leaves out: errors about the schemas (openAPIV3Schema) and the status.

// iVersion is a version of the internal form.
type iVersion struct {
	Name               string
	Served, Storage    bool
	Deprecated         bool
	DeprecationWarning *string
	Schema             map[string]any
	SchemaSet          bool
	Subresources       *manifest.Subresources
	Columns            []manifest.PrinterColumn
	ColumnsSet         bool
	Selectable         []string
	SelectableSet      bool
	index              int // in the file's spec.versions
}

// iCRD is a CRD in the internal form.
type iCRD struct {
	crd           *manifest.CRD
	Group         string
	Version       string
	Scope         string
	Names         manifest.CRDNames
	Validation    map[string]any
	ValidationSet bool
	Subresources  *manifest.Subresources
	Versions      []iVersion
	VersionsSet   bool
	Columns       []manifest.PrinterColumn
	Selectable    []string
	SelectableSet bool
	Conversion    *manifest.Conversion
	Preserve      *bool
	// moved reports per-version parts moved to the top level (v1): their
	// errors are at versions[0] in the file.
	movedSubresources, movedSchema, movedColumns, movedSelectable bool
}

// internalCRD applies the defaults of the CRD's version and converts it
// to the internal form, as the API server does before validating.
func internalCRD(c *manifest.CRD) *iCRD {
	in := &iCRD{crd: c, Group: c.Group, Version: c.Version, Scope: c.Scope, Names: c.Names,
		Subresources: c.Subresources, Columns: c.AdditionalPrinterColumns, Selectable: c.SelectableFields,
		SelectableSet: c.SelectableFields != nil, Validation: c.Validation, ValidationSet: c.ValidationSet,
		Preserve: c.PreserveUnknownFields, VersionsSet: c.Versions != nil}
	for i, v := range c.Versions {
		in.Versions = append(in.Versions, iVersion{Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated,
			DeprecationWarning: v.DeprecationWarning, Schema: v.Schema, SchemaSet: v.SchemaSet, Subresources: v.Subresources,
			Columns: v.AdditionalPrinterColumns, ColumnsSet: v.AdditionalPrinterColumns != nil,
			Selectable: v.SelectableFields, SelectableSet: v.SelectableFields != nil, index: i})
	}
	if in.Names.Singular == "" {
		in.Names.Singular = strings.ToLower(in.Names.Kind)
	}
	if in.Names.ListKind == "" && in.Names.Kind != "" {
		in.Names.ListKind = in.Names.Kind + "List"
	}
	conv := manifest.Conversion{Strategy: "None"}
	if c.Conversion != nil {
		conv = *c.Conversion
	}
	if conv.ClientConfig != nil && conv.ClientConfig.Service != nil && conv.ClientConfig.Service.Port == nil {
		svc := *conv.ClientConfig.Service
		port := int64(443)
		svc.Port = &port
		cc := *conv.ClientConfig
		cc.Service = &svc
		conv.ClientConfig = &cc
	}
	in.Conversion = &conv
	if c.V1beta1 {
		if in.Scope == "" {
			in.Scope = "Namespaced"
		}
		if len(in.Versions) == 0 && in.Version != "" {
			in.Versions = []iVersion{{Name: in.Version, Served: true, Storage: true, index: -1}}
			in.VersionsSet = true
		}
		if in.Version == "" && len(in.Versions) > 0 {
			in.Version = in.Versions[0].Name
		}
		if conv.Strategy == "Webhook" && len(conv.ReviewVersions) == 0 {
			conv.ReviewVersions = []string{"v1beta1"}
		}
		if in.Preserve == nil {
			t := true
			in.Preserve = &t
		}
		return in
	}
	// v1: preserveUnknownFields is a bool; per-version parts identical in
	// every version move to the top level.
	p := c.PreserveUnknownFields != nil && *c.PreserveUnknownFields
	in.Preserve = &p
	if len(in.Versions) == 0 {
		return in
	}
	in.Version = in.Versions[0].Name
	first := in.Versions[0]
	sameSub, sameSchema, sameCols, sameSel := true, true, true, true
	for _, v := range in.Versions {
		sameSub = sameSub && reflect.DeepEqual(v.Subresources, first.Subresources)
		sameSchema = sameSchema && v.SchemaSet == first.SchemaSet && semanticEqual(v.Schema, first.Schema)
		sameCols = sameCols && slices.Equal(v.Columns, first.Columns)
		sameSel = sameSel && slices.Equal(v.Selectable, first.Selectable)
	}
	if sameSub {
		in.Subresources, in.movedSubresources = first.Subresources, first.Subresources != nil
	}
	if sameSchema {
		in.Validation, in.ValidationSet, in.movedSchema = first.Schema, first.SchemaSet, first.SchemaSet
	}
	if sameCols {
		in.Columns, in.movedColumns = first.Columns, first.Columns != nil
	}
	if sameSel {
		in.Selectable, in.SelectableSet, in.movedSelectable = first.Selectable, first.SelectableSet, first.SelectableSet
	}
	for i := range in.Versions {
		v := &in.Versions[i]
		if sameSub {
			v.Subresources = nil
		}
		if sameSchema {
			v.Schema, v.SchemaSet = nil, false
		}
		if sameCols {
			v.Columns, v.ColumnsSet = nil, false
		}
		if sameSel {
			v.Selectable, v.SelectableSet = nil, false
		}
	}
	return in
}

// semanticEqual compares decoded JSON values, empty and absent lists and
// maps alike (apimachinery's semantic equality).
func semanticEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return b == nil && len(x) == 0
		}
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !semanticEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return b == nil && len(x) == 0
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !semanticEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		switch y := b.(type) {
		case map[string]any:
			return len(y) == 0
		case []any:
			return len(y) == 0
		}
		return b == nil
	}
	return a == b
}

// crdIssue is a field error found in a CRD and the element of the file it
// is about.
type crdIssue struct {
	fieldError
	// apiValue is how operator-framework/api prints the bad value (%v).
	apiValue string
	path     string
}

type crdValidator struct {
	in     *iCRD
	issues []crdIssue
}

func (v *crdValidator) add(e fieldError, path string) {
	if path == "" {
		path = e.Field
	}
	v.issues = append(v.issues, crdIssue{fieldError: e, apiValue: apiValueOf(e.Value), path: path})
}

// apiValueOf prints a bad value as %v prints it.
func apiValueOf(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case *bool, *string:
		return fakePointer
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case []string:
		return "[" + strings.Join(t, " ") + "]"
	case []iVersion:
		return versionsValue(t)
	}
	return fmt.Sprint(v)
}

// fakePointer stands for the address of a pointer upstream prints (a
// different one on every run).
const fakePointer = "0xc000000000"

func (c *checker) checkCRDs() {
	var v1beta1, v1 []*manifest.CRD
	for _, crd := range c.b.CRDs {
		if crd.Err != nil {
			continue
		}
		if crd.V1beta1 {
			v1beta1 = append(v1beta1, crd)
		} else {
			v1 = append(v1, crd)
		}
	}
	for _, crd := range append(v1beta1, v1...) {
		c.begin("crd")
		in := internalCRD(crd)
		v := &crdValidator{in: in}
		v.validate()
		for _, is := range v.issues {
			if strings.Contains(is.Field, "openAPIV3Schema") || strings.Contains(is.Field, "status") {
				continue
			}
			c.add(Finding{Severity: SeverityError, Code: "crd-invalid",
				Upstream: apiError(levelError, is.Field, str(is.apiValue), is.Error()),
				Message:  fmt.Sprintf("CRD %s: %s", crd.Name, is.humanText())}, atManifest(crd.Manifest, v.filePath(is.path)))
		}
	}
}

// humanText is the error without Go's dumps of structures.
func (is crdIssue) humanText() string {
	switch is.Value.(type) {
	case []iVersion:
		return is.Field + ": " + is.Detail
	}
	return is.Error()
}

// filePath maps a path of the internal form to the element of the file.
func (v *crdValidator) filePath(p string) string {
	c := v.in.crd
	if !c.V1beta1 {
		p = strings.Replace(p, "spec.conversion.webhookClientConfig", "spec.conversion.webhook.clientConfig", 1)
		p = strings.Replace(p, "spec.conversion.conversionReviewVersions", "spec.conversion.webhook.conversionReviewVersions", 1)
		p = strings.Replace(p, ".JSONPath", ".jsonPath", 1)
		for _, moved := range []struct {
			top string
			ok  bool
		}{{"spec.subresources", v.in.movedSubresources}, {"spec.validation", v.in.movedSchema},
			{"spec.additionalPrinterColumns", v.in.movedColumns}, {"spec.selectableFields", v.in.movedSelectable}} {
			if moved.ok && strings.HasPrefix(p, moved.top) {
				rest := strings.TrimPrefix(p, "spec.")
				if moved.top == "spec.validation" {
					rest = "schema" + strings.TrimPrefix(p, "spec.validation")
				}
				p = "spec.versions[0]." + rest
			}
		}
	}
	// spec.versions[i] of the internal form is the file's i-th version,
	// except a v1beta1 version built from spec.version.
	if strings.HasPrefix(p, "spec.versions[") && len(v.in.Versions) > 0 && v.in.Versions[0].index < 0 {
		return "spec.version"
	}
	return p
}

func (v *crdValidator) validate() {
	in := v.in
	c := in.crd
	// metadata
	nameFn := func(name string, prefix bool) []string {
		n := name
		if prefix {
			n = maskTrailingDash(n)
		}
		errs := k8sname.IsDNS1123Subdomain(n)
		if name != in.Names.Plural+"."+in.Group {
			errs = append(errs, `must be spec.names.plural+"."+spec.group`)
		}
		return errs
	}
	for _, e := range validateObjectMetaWith(c.MetadataRaw, nameFn) {
		v.add(e, "")
	}
	v.validateSpec()
	// API approval of protected groups.
	if protectedGroup(in.Group) {
		ann := c.Metadata.Annotations["api-approved.kubernetes.io"]
		const key = "metadata.annotations[api-approved.kubernetes.io]"
		switch state, reason := approvalState(ann); state {
		case approvalMissing:
			v.add(required(key, reason), "metadata.annotations")
		case approvalInvalid:
			v.add(invalid(key, ann, reason), "metadata.annotations")
		}
	}
	if in.Preserve != nil && *in.Preserve {
		v.add(invalid("spec.preserveUnknownFields", in.Preserve, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"), "")
	}
}

func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

func protectedGroup(g string) bool {
	return g == "k8s.io" || strings.HasSuffix(g, ".k8s.io") || g == "kubernetes.io" || strings.HasSuffix(g, ".kubernetes.io")
}

const (
	approvalInvalid = iota
	approvalOK
	approvalMissing
)

func approvalState(a string) (int, string) {
	const ann = "api-approved.kubernetes.io"
	u, err := url.ParseRequestURI(a)
	switch {
	case a == "":
		return approvalMissing, fmt.Sprintf("protected groups must have approval annotation %q, see https://github.com/kubernetes/enhancements/pull/1111", ann)
	case strings.HasPrefix(a, "unapproved"):
		return approvalOK, ""
	case err == nil && u != nil && u.Host != "" && u.Scheme != "":
		return approvalOK, ""
	}
	return approvalInvalid, fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111", ann)
}

var (
	printerColumnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	printerColumnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

func (v *crdValidator) validateSpec() {
	in := v.in
	const sp = "spec"
	switch {
	case in.Group == "":
		v.add(required("spec.group", ""), "")
	case len(k8sname.IsDNS1123Subdomain(in.Group)) > 0:
		v.add(invalid("spec.group", in.Group, strings.Join(k8sname.IsDNS1123Subdomain(in.Group), ",")), "")
	case len(strings.Split(in.Group, ".")) < 2:
		v.add(invalid("spec.group", in.Group, "should be a domain with at least one dot"), "")
	}
	v.enum("spec.scope", in.Scope, []string{"Cluster", "Namespaced"})

	if in.Preserve == nil || *in.Preserve {
		if specHasDefaults(in) {
			v.add(invalid("spec.preserveUnknownFields", true, "must be false in order to use defaults in the schema"), "")
		}
	}
	storage := 0
	seen := map[string]bool{}
	unique := true
	perVersionSchema, perVersionSub, perVersionCols := false, false, false
	for i, ver := range in.Versions {
		at := sp + ".versions[" + strconv.Itoa(i) + "]"
		if ver.Storage {
			storage++
		}
		if seen[ver.Name] {
			unique = false
		}
		seen[ver.Name] = true
		if errs := k8sname.IsDNS1035Label(ver.Name); len(errs) > 0 {
			v.add(invalid(at+".name", ver.Name, strings.Join(errs, ",")), "")
		}
		for _, msg := range deprecationWarningErrors(ver.Deprecated, ver.DeprecationWarning) {
			v.add(invalid(at+".deprecationWarning", ver.DeprecationWarning, msg), "")
		}
		v.subresources(ver.Subresources, at+".subresources")
		for j := range ver.Columns {
			v.column(ver.Columns[j], at+".additionalPrinterColumns["+strconv.Itoa(j)+"]")
		}
		if len(ver.Selectable) > 0 {
			if !ver.SchemaSet || ver.Schema == nil {
				v.add(invalid(at+".selectableFields", "", "selectableFields may only be set when version.schema.openAPIV3Schema is not included"), "")
			} else {
				v.selectable(ver.Selectable, ver.Schema, at+".selectableFields")
			}
		}
		perVersionSchema = perVersionSchema || ver.SchemaSet
		perVersionSub = perVersionSub || ver.Subresources != nil
		perVersionCols = perVersionCols || len(ver.Columns) > 0
	}
	if in.ValidationSet && perVersionSchema {
		v.add(forbidden("spec.validation", "top-level and per-version schemas are mutually exclusive"), "")
	}
	if in.Subresources != nil && perVersionSub {
		v.add(forbidden("spec.subresources", "top-level and per-version subresources are mutually exclusive"), "")
	}
	if len(in.Columns) > 0 && perVersionCols {
		v.add(forbidden("spec.additionalPrinterColumns", "top-level and per-version additionalPrinterColumns are mutually exclusive"), "")
	}
	if identical(in.Versions, func(x iVersion) bool { return x.SchemaSet }, func(a, b iVersion) bool { return semanticEqual(a.Schema, b.Schema) }) {
		v.add(invalid("spec.versions", in.Versions, "per-version schemas may not all be set to identical values (top-level validation should be used instead)"), "")
	}
	if identical(in.Versions, func(x iVersion) bool { return x.Subresources != nil }, func(a, b iVersion) bool { return reflect.DeepEqual(a.Subresources, b.Subresources) }) {
		v.add(invalid("spec.versions", in.Versions, "per-version subresources may not all be set to identical values (top-level subresources should be used instead)"), "")
	}
	if identical(in.Versions, func(x iVersion) bool { return len(x.Columns) > 0 }, func(a, b iVersion) bool { return slices.Equal(a.Columns, b.Columns) }) {
		v.add(invalid("spec.versions", in.Versions, "per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)"), "")
	}
	if !unique {
		v.add(invalid("spec.versions", in.Versions, "must contain unique version names"), "")
	}
	if storage != 1 {
		v.add(invalid("spec.versions", in.Versions, "must have exactly one version marked as storage version"), "")
	}
	if in.Version != "" {
		if errs := k8sname.IsDNS1035Label(in.Version); len(errs) > 0 {
			v.add(invalid("spec.version", in.Version, strings.Join(errs, ",")), "")
		}
		if len(in.Versions) >= 1 && in.Versions[0].Name != in.Version {
			v.add(invalid("spec.version", in.Version, "must match the first version in spec.versions"), "")
		}
	}
	n := in.Names
	for _, r := range []struct{ f, v string }{{"plural", n.Plural}, {"singular", n.Singular}, {"kind", n.Kind}, {"listKind", n.ListKind}} {
		if r.v == "" {
			v.add(required("spec.names."+r.f, ""), "")
		}
	}
	v.names(n, "spec.names")
	v.subresources(in.Subresources, "spec.subresources")
	for j := range in.Columns {
		v.column(in.Columns[j], "spec.additionalPrinterColumns["+strconv.Itoa(j)+"]")
	}
	if len(in.Selectable) > 0 {
		if !in.ValidationSet {
			v.add(invalid("spec.selectableFields", "", "selectableFields may only be set when validations.schema is included"), "")
		} else {
			v.selectable(in.Selectable, in.Validation, "spec.selectableFields")
		}
	}
	conv := in.Conversion
	if conv != nil && conv.Strategy != "None" && (in.Preserve == nil || *in.Preserve) {
		v.add(invalid("spec.conversion.strategy", conv.Strategy, "must be None if spec.preserveUnknownFields is true"), "")
	}
	v.conversion(conv)
}

// identical reports whether every version has the part set, all equal.
func identical(vs []iVersion, set func(iVersion) bool, eq func(a, b iVersion) bool) bool {
	if len(vs) == 0 {
		return false
	}
	for _, x := range vs {
		if !set(x) || !eq(x, vs[0]) {
			return false
		}
	}
	return true
}

func (v *crdValidator) enum(f, value string, accepted []string) {
	if value == "" {
		v.add(required(f, ""), "")
		return
	}
	for _, a := range accepted {
		if a == value {
			return
		}
	}
	v.add(notSupported(f, value, accepted), "")
}

func deprecationWarningErrors(deprecated bool, w *string) []string {
	if !deprecated && w != nil {
		return []string{"can only be set for deprecated versions"}
	}
	if w == nil {
		return nil
	}
	var errs []string
	if len(*w) > 256 {
		errs = append(errs, "must be <= 256 characters long")
	}
	if len(*w) == 0 {
		errs = append(errs, "must not be an empty string")
	}
	for i, r := range *w {
		if !unicode.IsPrint(r) {
			errs = append(errs, fmt.Sprintf("must only contain printable UTF-8 characters; non-printable character found at index %d", i))
			break
		}
		if unicode.IsControl(r) {
			errs = append(errs, fmt.Sprintf("must only contain printable UTF-8 characters; control character found at index %d", i))
			break
		}
	}
	return errs
}

func (v *crdValidator) subresources(s *manifest.Subresources, at string) {
	if s == nil || s.Scale == nil {
		return
	}
	sc := s.Scale
	if sc.SpecReplicasPath == "" {
		v.add(required(at+".scale.specReplicasPath", ""), "")
	} else if errs := simpleJSONPath(sc.SpecReplicasPath, at+".scale.specReplicasPath"); len(errs) > 0 {
		for _, e := range errs {
			v.add(e, "")
		}
	} else if !strings.HasPrefix(sc.SpecReplicasPath, ".spec.") {
		v.add(invalid(at+".scale.specReplicasPath", sc.SpecReplicasPath, "should be a json path under .spec"), "")
	}
	if sc.StatusReplicasPath == "" {
		v.add(required(at+".scale.statusReplicasPath", ""), "")
	} else if errs := simpleJSONPath(sc.StatusReplicasPath, at+".scale.statusReplicasPath"); len(errs) > 0 {
		for _, e := range errs {
			v.add(e, "")
		}
	} else if !strings.HasPrefix(sc.StatusReplicasPath, ".status.") {
		v.add(invalid(at+".scale.statusReplicasPath", sc.StatusReplicasPath, "should be a json path under .status"), "")
	}
	if p := sc.LabelSelectorPath; p != nil && *p != "" {
		if errs := simpleJSONPath(*p, at+".scale.labelSelectorPath"); len(errs) > 0 {
			for _, e := range errs {
				v.add(e, "")
			}
		} else if !strings.HasPrefix(*p, ".spec.") && !strings.HasPrefix(*p, ".status.") {
			v.add(invalid(at+".scale.labelSelectorPath", p, "should be a json path under either .spec or .status"), "")
		}
	}
}

func simpleJSONPath(s, f string) []fieldError {
	switch {
	case s == "":
		return []fieldError{invalid(f, s, "must not be empty")}
	case s[0] != '.':
		return []fieldError{invalid(f, s, "must be a simple json path starting with .")}
	}
	return nil
}

func (v *crdValidator) column(col manifest.PrinterColumn, at string) {
	if col.Name == "" {
		v.add(required(at+".name", ""), "")
	}
	types := strings.Join(printerColumnTypes, ",")
	if col.Type == "" {
		v.add(required(at+".type", "must be one of "+types), "")
	} else if !contains(printerColumnTypes, col.Type) {
		v.add(invalid(at+".type", col.Type, "must be one of "+types), "")
	}
	if col.Format != "" && !contains(printerColumnFormats, col.Format) {
		v.add(invalid(at+".format", col.Format, "must be one of "+strings.Join(printerColumnFormats, ",")), "")
	}
	if col.JSONPath == "" {
		v.add(required(at+".JSONPath", ""), "")
	} else {
		for _, e := range simpleJSONPath(col.JSONPath, at+".JSONPath") {
			v.add(e, "")
		}
	}
}

// selectable checks selectable fields against the schema: each a path of
// properties (no array steps) to a string, boolean or integer, outside
// metadata, without repeats, at most 8.
func (v *crdValidator) selectable(fields []string, schema map[string]any, at string) {
	seen := map[string]bool{}
	for i, p := range fields {
		f := at + "[" + strconv.Itoa(i) + "].jsonPath"
		if p == "" {
			v.add(required(f, ""), "")
			continue
		}
		node, err := schemaAt(schema, p)
		if err != "" {
			v.add(invalid(f, p, "is an invalid path: "+err), "")
			continue
		}
		if strings.HasPrefix(p, ".metadata") {
			v.add(invalid(f, p, "must not point to fields in metadata"), "")
		}
		if t, _ := node["type"].(string); t != "string" && t != "boolean" && t != "integer" {
			v.add(invalid(f, p, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."), "")
		}
		if seen[p] {
			v.add(fieldError{Type: errDuplicate, Field: f, Value: p}, "")
		}
		seen[p] = true
	}
	if len(seen) > 8 {
		v.add(fieldError{Type: errTooMany, Field: at, Value: int64(len(seen)), Detail: "must have at most 8 items"}, "")
	}
}

// schemaAt walks a ".a.b" path through a schema's properties.
func schemaAt(schema map[string]any, p string) (map[string]any, string) {
	if !strings.HasPrefix(p, ".") {
		return nil, "must start with '.'"
	}
	node := schema
	for _, step := range strings.Split(p[1:], ".") {
		if step == "" || strings.ContainsAny(step, "[]") {
			return nil, "invalid path syntax"
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[step].(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("does not refer to a valid field: %s", p)
		}
		node = next
	}
	return node, ""
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (v *crdValidator) names(n manifest.CRDNames, at string) {
	if errs := k8sname.IsDNS1035Label(n.Plural); n.Plural != "" && len(errs) > 0 {
		v.add(invalid(at+".plural", n.Plural, strings.Join(errs, ",")), "")
	}
	if errs := k8sname.IsDNS1035Label(n.Singular); n.Singular != "" && len(errs) > 0 {
		v.add(invalid(at+".singular", n.Singular, strings.Join(errs, ",")), "")
	}
	if errs := k8sname.IsDNS1035Label(strings.ToLower(n.Kind)); n.Kind != "" && len(errs) > 0 {
		v.add(invalid(at+".kind", n.Kind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")), "")
	}
	if errs := k8sname.IsDNS1035Label(strings.ToLower(n.ListKind)); n.ListKind != "" && len(errs) > 0 {
		v.add(invalid(at+".listKind", n.ListKind, "may have mixed case, but should otherwise match: "+strings.Join(errs, ",")), "")
	}
	for i, s := range n.ShortNames {
		if errs := k8sname.IsDNS1035Label(s); len(errs) > 0 {
			v.add(invalid(at+".shortNames["+strconv.Itoa(i)+"]", s, strings.Join(errs, ",")), "")
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		v.add(invalid(at+".listKind", n.ListKind, "kind and listKind may not be the same"), "")
	}
	for i, s := range n.Categories {
		if errs := k8sname.IsDNS1035Label(s); len(errs) > 0 {
			v.add(invalid(at+".categories["+strconv.Itoa(i)+"]", s, strings.Join(errs, ",")), "")
		}
	}
}

func (v *crdValidator) conversion(conv *manifest.Conversion) {
	if conv == nil {
		return
	}
	const at = "spec.conversion"
	v.enum(at+".strategy", conv.Strategy, []string{"None", "Webhook"})
	if conv.Strategy != "Webhook" {
		if conv.ClientConfig != nil {
			v.add(forbidden(at+".webhookClientConfig", "should not be set when strategy is not set to Webhook"), "")
		}
		if len(conv.ReviewVersions) > 0 {
			v.add(forbidden(at+".conversionReviewVersions", "should not be set when strategy is not set to Webhook"), "")
		}
		return
	}
	cc := conv.ClientConfig
	switch {
	case cc == nil:
		v.add(required(at+".webhookClientConfig", "required when strategy is set to Webhook"), "")
	case (cc.URL == nil) == (cc.Service == nil):
		v.add(required(at+".webhookClientConfig", "exactly one of url or service is required"), "")
	case cc.URL != nil:
		v.webhookURL(at+".webhookClientConfig.url", *cc.URL)
	default:
		v.webhookService(at+".webhookClientConfig.service", cc.Service)
	}
	f := at + ".conversionReviewVersions"
	if len(conv.ReviewVersions) == 0 {
		v.add(required(f, ""), "")
		return
	}
	seen := map[string]bool{}
	accepted := false
	for i, rv := range conv.ReviewVersions {
		fi := f + "[" + strconv.Itoa(i) + "]"
		if seen[rv] {
			v.add(invalid(fi, rv, "duplicate version"), "")
			continue
		}
		seen[rv] = true
		for _, e := range k8sname.IsDNS1035Label(rv) {
			v.add(invalid(fi, rv, e), "")
		}
		if rv == "v1" || rv == "v1beta1" {
			accepted = true
		}
	}
	if !accepted {
		v.add(invalid(f, conv.ReviewVersions, "must include at least one of v1, v1beta1"), "")
	}
}

func (v *crdValidator) webhookURL(f, s string) {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(s)
	if err != nil {
		v.add(required(f, "url must be a valid URL: "+err.Error()+form), "")
		return
	}
	if u.Scheme != "https" {
		v.add(invalid(f, u.Scheme, "'https' is the only allowed URL scheme"+form), "")
	}
	if u.Host == "" {
		v.add(invalid(f, u.Host, "host must be specified"+form), "")
	}
	if u.User != nil {
		v.add(invalid(f, u.User.String(), "user information is not permitted in the URL"), "")
	}
	if u.Fragment != "" {
		v.add(invalid(f, u.Fragment, "fragments are not permitted in the URL"), "")
	}
	if u.RawQuery != "" {
		v.add(invalid(f, u.RawQuery, "query parameters are not permitted in the URL"), "")
	}
}

func (v *crdValidator) webhookService(f string, s *manifest.ServiceReference) {
	if s.Name == "" {
		v.add(required(f+".name", ""), "")
	}
	if s.Namespace == "" {
		v.add(required(f+".namespace", ""), "")
	}
	if s.Port != nil && (*s.Port < 1 || *s.Port > 65535) {
		v.add(invalid(f+".port", *s.Port, "port is not valid: must be between 1 and 65535, inclusive"), "")
	}
	if s.Path == nil {
		return
	}
	p := *s.Path
	if p == "/" || p == "" {
		return
	}
	if p == "//" {
		v.add(invalid(f+".path", p, "segment[0] may not be empty"), "")
		return
	}
	if !strings.HasPrefix(p, "/") {
		v.add(invalid(f+".path", p, "must start with a '/'"), "")
	}
	check := p[1:]
	check = strings.TrimSuffix(check, "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			v.add(invalid(f+".path", p, fmt.Sprintf("segment[%d] may not be empty", i)), "")
			continue
		}
		for _, e := range k8sname.IsDNS1123Subdomain(step) {
			v.add(invalid(f+".path", p, fmt.Sprintf("segment[%d]: %v", i, e)), "")
		}
	}
}

// specHasDefaults reports whether a schema of the CRD sets a default.
func specHasDefaults(in *iCRD) bool {
	if in.ValidationSet && hasDefault(in.Validation, 0) {
		return true
	}
	for _, ver := range in.Versions {
		if ver.SchemaSet && hasDefault(ver.Schema, 0) {
			return true
		}
	}
	return false
}

// hasDefault walks a schema (its subschemas: items, allOf, anyOf, oneOf,
// not, properties, additionalProperties, patternProperties,
// additionalItems, definitions, dependencies) for a default.
func hasDefault(s map[string]any, depth int) bool {
	if s == nil || depth > 1000 {
		return false
	}
	if _, ok := s["default"]; ok {
		return true
	}
	sub := func(v any) bool {
		m, ok := v.(map[string]any)
		return ok && hasDefault(m, depth+1)
	}
	list := func(v any) bool {
		l, _ := v.([]any)
		for _, e := range l {
			if sub(e) {
				return true
			}
		}
		return false
	}
	values := func(v any) bool {
		m, _ := v.(map[string]any)
		for _, e := range m {
			if sub(e) {
				return true
			}
		}
		return false
	}
	switch items := s["items"].(type) {
	case map[string]any:
		if hasDefault(items, depth+1) {
			return true
		}
	case []any:
		if list(items) {
			return true
		}
	}
	return list(s["allOf"]) || list(s["anyOf"]) || list(s["oneOf"]) || sub(s["not"]) ||
		values(s["properties"]) || sub(s["additionalProperties"]) || values(s["patternProperties"]) ||
		sub(s["additionalItems"]) || values(s["definitions"]) || values(s["dependencies"])
}

// versionsValue is %v of the internal versions.
func versionsValue(vs []iVersion) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, x := range vs {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "{%s %t %t %t %s %s %s %s %s}", x.Name, x.Served, x.Storage, x.Deprecated,
			ptrV(x.DeprecationWarning != nil), ptrV(x.SchemaSet), ptrV(x.Subresources != nil), columnsV(x.Columns), selectableV(x.Selectable))
	}
	sb.WriteByte(']')
	return sb.String()
}

func ptrV(set bool) string {
	if set {
		return fakePointer
	}
	return "<nil>"
}

func columnsV(cs []manifest.PrinterColumn) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("{%s %s %s %s %d %s}", c.Name, c.Type, c.Format, c.Description, c.Priority, c.JSONPath)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func selectableV(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = "{" + s + "}"
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// versionsGoSyntax is %#v of the internal versions.
func versionsGoSyntax(vs []iVersion) string {
	const t = "apiextensions.CustomResourceDefinitionVersion"
	if vs == nil {
		return "[]" + t + "(nil)"
	}
	ptr := func(typ string, set bool) string {
		if set {
			return "(" + typ + ")(" + fakePointer + ")"
		}
		return "(" + typ + ")(nil)"
	}
	var sb strings.Builder
	sb.WriteString("[]" + t + "{")
	for i, x := range vs {
		if i > 0 {
			sb.WriteString(", ")
		}
		cols := "[]apiextensions.CustomResourceColumnDefinition(nil)"
		if x.Columns != nil {
			parts := make([]string, len(x.Columns))
			for j, c := range x.Columns {
				parts[j] = fmt.Sprintf("apiextensions.CustomResourceColumnDefinition{Name:%q, Type:%q, Format:%q, Description:%q, Priority:%d, JSONPath:%q}",
					c.Name, c.Type, c.Format, c.Description, c.Priority, c.JSONPath)
			}
			cols = "[]apiextensions.CustomResourceColumnDefinition{" + strings.Join(parts, ", ") + "}"
		}
		sel := "[]apiextensions.SelectableField(nil)"
		if x.Selectable != nil {
			parts := make([]string, len(x.Selectable))
			for j, s := range x.Selectable {
				parts[j] = fmt.Sprintf("apiextensions.SelectableField{JSONPath:%q}", s)
			}
			sel = "[]apiextensions.SelectableField{" + strings.Join(parts, ", ") + "}"
		}
		fmt.Fprintf(&sb, "%s{Name:%q, Served:%t, Storage:%t, Deprecated:%t, DeprecationWarning:%s, Schema:%s, Subresources:%s, AdditionalPrinterColumns:%s, SelectableFields:%s}",
			t, x.Name, x.Served, x.Storage, x.Deprecated, ptr("*string", x.DeprecationWarning != nil),
			ptr("*apiextensions.CustomResourceValidation", x.SchemaSet), ptr("*apiextensions.CustomResourceSubresources", x.Subresources != nil), cols, sel)
	}
	sb.WriteString("}")
	return sb.String()
}
