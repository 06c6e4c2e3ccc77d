package manifest

import (
	"fmt"
	"strconv"
)

// apiVersions of CustomResourceDefinitions.
const (
	CRDv1      = "apiextensions.k8s.io/v1"
	CRDv1beta1 = "apiextensions.k8s.io/v1beta1"
)

// CRD is the typed view of a CustomResourceDefinition (v1 or v1beta1), as
// written: read from the decoded object without its schemas, which stay
// in the object (Schema). Elements are located with CRD.Manifest.Locate
// and their JSON path ("spec.versions[1].storage").
type CRD struct {
	*Manifest
	// V1beta1 reports an apiextensions.k8s.io/v1beta1 CRD.
	V1beta1 bool
	// Err is set when a field the view reads has the wrong type, where
	// upstream's typed decode fails (the rest of the view is then
	// incomplete).
	Err error

	Metadata ObjectMeta
	// MetadataRaw is the metadata map as written (nil when absent).
	MetadataRaw map[string]any

	Group string
	Names CRDNames
	Scope string
	// Version is spec.version (v1beta1).
	Version  string
	Versions []CRDVersion
	// Validation is spec.validation.openAPIV3Schema (v1beta1; nil when
	// absent); ValidationSet reports a spec.validation object.
	Validation    map[string]any
	ValidationSet bool
	// Subresources, AdditionalPrinterColumns and SelectableFields at the
	// top level of spec (v1beta1).
	Subresources             *Subresources
	AdditionalPrinterColumns []PrinterColumn
	SelectableFields         []string
	Conversion               *Conversion
	// PreserveUnknownFields is spec.preserveUnknownFields (nil when
	// absent).
	PreserveUnknownFields *bool
}

// CRDNames are a CRD's spec.names.
type CRDNames struct {
	Plural, Singular, Kind, ListKind string
	ShortNames, Categories           []string
}

// CRDVersion is one entry of spec.versions.
type CRDVersion struct {
	Name               string
	Served, Storage    bool
	Deprecated         bool
	DeprecationWarning *string
	// Schema is schema.openAPIV3Schema (nil when absent); SchemaSet
	// reports a schema object.
	Schema                   map[string]any
	SchemaSet                bool
	Subresources             *Subresources
	AdditionalPrinterColumns []PrinterColumn
	// SelectableFields are the JSON paths of selectableFields.
	SelectableFields []string
}

// Subresources are a version's (or v1beta1's top-level) subresources.
type Subresources struct {
	// Status reports a status subresource.
	Status bool
	Scale  *Scale
}

// Scale is the scale subresource.
type Scale struct {
	SpecReplicasPath, StatusReplicasPath string
	LabelSelectorPath                    *string
}

// PrinterColumn is an additional printer column.
type PrinterColumn struct {
	Name, Type, Format, Description, JSONPath string
	Priority                                  int64
}

// Conversion is spec.conversion; Webhook fields are v1's
// spec.conversion.webhook or v1beta1's top-level ones.
type Conversion struct {
	Strategy string
	// ClientConfig is the webhook client config (nil when absent).
	ClientConfig *WebhookClientConfig
	// ReviewVersions are the conversionReviewVersions; nil when absent.
	ReviewVersions []string
	// WebhookSet reports v1's spec.conversion.webhook.
	WebhookSet bool
}

// WebhookClientConfig is a conversion webhook's client config.
type WebhookClientConfig struct {
	URL      *string
	Service  *ServiceReference
	CABundle string
}

// ServiceReference is a webhook service.
type ServiceReference struct {
	Namespace, Name string
	Path            *string
	Port            *int64
}

// newCRD reads the view of m, a v1 or v1beta1 CRD.
func newCRD(m *Manifest) *CRD {
	c := &CRD{Manifest: m, V1beta1: m.APIVersion == CRDv1beta1}
	r := &reader{}
	obj := m.Object
	c.MetadataRaw = r.obj(obj, "metadata")
	c.Metadata = r.meta(c.MetadataRaw, "metadata")
	spec := r.obj(obj, "spec")
	c.Group = r.str(spec, "spec", "group")
	names := r.obj(spec, "spec.names")
	c.Names = CRDNames{
		Plural:     r.str(names, "spec.names", "plural"),
		Singular:   r.str(names, "spec.names", "singular"),
		Kind:       r.str(names, "spec.names", "kind"),
		ListKind:   r.str(names, "spec.names", "listKind"),
		ShortNames: r.strs(names, "spec.names", "shortNames"),
		Categories: r.strs(names, "spec.names", "categories"),
	}
	c.Scope = r.str(spec, "spec", "scope")
	c.PreserveUnknownFields = r.boolPtr(spec, "spec", "preserveUnknownFields")
	if c.V1beta1 {
		c.Version = r.str(spec, "spec", "version")
		if v, ok := spec["validation"]; ok && v != nil {
			vm := r.asObj(v, "spec.validation")
			c.ValidationSet = vm != nil
			c.Validation = r.obj(vm, "spec.validation.openAPIV3Schema")
		}
		c.Subresources = r.subresources(spec, "spec")
		c.AdditionalPrinterColumns = r.columns(spec, "spec", "JSONPath")
		c.SelectableFields = r.selectable(spec, "spec")
	}
	for i, v := range r.list(spec, "spec", "versions") {
		at := "spec.versions[" + strconv.Itoa(i) + "]"
		vm := r.asObj(v, at)
		ver := CRDVersion{
			Name:               r.str(vm, at, "name"),
			Served:             r.bool(vm, at, "served"),
			Storage:            r.bool(vm, at, "storage"),
			Deprecated:         r.bool(vm, at, "deprecated"),
			DeprecationWarning: r.strPtr(vm, at, "deprecationWarning"),
			Subresources:       r.subresources(vm, at),
		}
		if s, ok := vm["schema"]; ok && s != nil {
			sm := r.asObj(s, at+".schema")
			ver.SchemaSet = sm != nil
			ver.Schema = r.obj(sm, at+".schema.openAPIV3Schema")
		}
		col := "jsonPath"
		if c.V1beta1 {
			col = "JSONPath"
		}
		ver.AdditionalPrinterColumns = r.columns(vm, at, col)
		ver.SelectableFields = r.selectable(vm, at)
		c.Versions = append(c.Versions, ver)
	}
	if cv, ok := spec["conversion"]; ok && cv != nil {
		cm := r.asObj(cv, "spec.conversion")
		conv := &Conversion{Strategy: r.str(cm, "spec.conversion", "strategy")}
		if c.V1beta1 {
			conv.ClientConfig = r.clientConfig(cm, "spec.conversion", "webhookClientConfig")
			conv.ReviewVersions = r.strs(cm, "spec.conversion", "conversionReviewVersions")
		} else if wh, ok := cm["webhook"]; ok && wh != nil {
			wm := r.asObj(wh, "spec.conversion.webhook")
			conv.WebhookSet = true
			conv.ClientConfig = r.clientConfig(wm, "spec.conversion.webhook", "clientConfig")
			conv.ReviewVersions = r.strs(wm, "spec.conversion.webhook", "conversionReviewVersions")
		}
		c.Conversion = conv
	}
	if r.err != nil {
		c.Err = fmt.Errorf("unable to parse CRD %s: %w", m.File, r.err)
	}
	return c
}

// StorageVersion returns the name of the first version marked storage
// ("" when none is).
func (c *CRD) StorageVersion() string {
	for _, v := range c.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// reader reads typed fields from a decoded object, recording the first
// field of the wrong type.
type reader struct{ err error }

func (r *reader) fail(path, want string, got any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: expected %s, got %s", path, want, jsonType(got))
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func (r *reader) asObj(v any, path string) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(path, "an object", v)
	}
	return m
}

func (r *reader) obj(m map[string]any, path string) map[string]any {
	key := path
	if i := lastDot(path); i >= 0 {
		key = path[i+1:]
	}
	return r.asObj(m[key], path)
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

func (r *reader) str(m map[string]any, at, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(join(at, key), "a string", v)
	}
	return s
}

func (r *reader) strPtr(m map[string]any, at, key string) *string {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		r.fail(join(at, key), "a string", v)
		return nil
	}
	return &s
}

func (r *reader) bool(m map[string]any, at, key string) bool {
	p := r.boolPtr(m, at, key)
	return p != nil && *p
}

func (r *reader) boolPtr(m map[string]any, at, key string) *bool {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(join(at, key), "a boolean", v)
		return nil
	}
	return &b
}

func (r *reader) int(m map[string]any, at, key string) *int64 {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	switch n := v.(type) {
	case int64:
		return &n
	case float64:
		if n == float64(int64(n)) {
			i := int64(n)
			return &i
		}
	}
	r.fail(join(at, key), "an integer", v)
	return nil
}

func (r *reader) list(m map[string]any, at, key string) []any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		r.fail(join(at, key), "a list", v)
	}
	return l
}

func (r *reader) strs(m map[string]any, at, key string) []string {
	l := r.list(m, at, key)
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok && e != nil {
			r.fail(join(at, key)+"["+strconv.Itoa(i)+"]", "a string", e)
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) meta(m map[string]any, at string) ObjectMeta {
	md := ObjectMeta{
		Name:         r.str(m, at, "name"),
		GenerateName: r.str(m, at, "generateName"),
		Namespace:    r.str(m, at, "namespace"),
		Labels:       r.strMap(m, at, "labels"),
		Annotations:  r.strMap(m, at, "annotations"),
	}
	return md
}

func (r *reader) strMap(m map[string]any, at, key string) map[string]string {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	mm := r.asObj(v, join(at, key))
	out := make(map[string]string, len(mm))
	for k, e := range mm {
		s, ok := e.(string)
		if !ok && e != nil {
			r.fail(join(at, key)+"."+k, "a string", e)
		}
		out[k] = s
	}
	return out
}

func (r *reader) subresources(m map[string]any, at string) *Subresources {
	v, ok := m["subresources"]
	if !ok || v == nil {
		return nil
	}
	at = join(at, "subresources")
	sm := r.asObj(v, at)
	s := &Subresources{}
	if st, ok := sm["status"]; ok && st != nil {
		r.asObj(st, at+".status")
		s.Status = true
	}
	if sc, ok := sm["scale"]; ok && sc != nil {
		scm := r.asObj(sc, at+".scale")
		s.Scale = &Scale{
			SpecReplicasPath:   r.str(scm, at+".scale", "specReplicasPath"),
			StatusReplicasPath: r.str(scm, at+".scale", "statusReplicasPath"),
			LabelSelectorPath:  r.strPtr(scm, at+".scale", "labelSelectorPath"),
		}
	}
	return s
}

func (r *reader) columns(m map[string]any, at, pathKey string) []PrinterColumn {
	var out []PrinterColumn
	for i, e := range r.list(m, at, "additionalPrinterColumns") {
		p := at + ".additionalPrinterColumns[" + strconv.Itoa(i) + "]"
		cm := r.asObj(e, p)
		c := PrinterColumn{
			Name:        r.str(cm, p, "name"),
			Type:        r.str(cm, p, "type"),
			Format:      r.str(cm, p, "format"),
			Description: r.str(cm, p, "description"),
			JSONPath:    r.str(cm, p, pathKey),
		}
		if n := r.int(cm, p, "priority"); n != nil {
			c.Priority = *n
		}
		out = append(out, c)
	}
	return out
}

func (r *reader) selectable(m map[string]any, at string) []string {
	var out []string
	for i, e := range r.list(m, at, "selectableFields") {
		p := at + ".selectableFields[" + strconv.Itoa(i) + "]"
		out = append(out, r.str(r.asObj(e, p), p, "jsonPath"))
	}
	return out
}

func (r *reader) clientConfig(m map[string]any, at, key string) *WebhookClientConfig {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	at = join(at, key)
	cm := r.asObj(v, at)
	cc := &WebhookClientConfig{URL: r.strPtr(cm, at, "url"), CABundle: r.str(cm, at, "caBundle")}
	if s, ok := cm["service"]; ok && s != nil {
		sm := r.asObj(s, at+".service")
		cc.Service = &ServiceReference{
			Namespace: r.str(sm, at+".service", "namespace"),
			Name:      r.str(sm, at+".service", "name"),
			Path:      r.strPtr(sm, at+".service", "path"),
			Port:      r.int(sm, at+".service", "port"),
		}
	}
	return cc
}
