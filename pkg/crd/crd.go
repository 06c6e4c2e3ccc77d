// Package crd reads CustomResourceDefinitions, compares two of them as OLM
// does before it upgrades a CRD, and validates custom resources against a
// CRD's schema.
//
//   - [Parse] reads an apiextensions.k8s.io/v1 CRD, or a v1beta1 one
//     converted to v1 as the API server converts it.
//   - [Compare] reports every change from an old CRD to a new one, each
//     with its rule, its version and field path, the old and the new value,
//     and which OLM refuses it: OLM v1's "CRD Upgrade Safety" preflight
//     (operator-controller, built on kubernetes-sigs/crdify) or OLM
//     classic's CRD update rules (existing custom resources must stay valid,
//     stored versions must stay, and per the OLM documentation for CRDs
//     several CSVs own, served versions must stay). Changes both accept are
//     reported too, marked safe.
//   - [CRD.Validate] validates an object (a custom resource) against the
//     schema of its version, after applying the schema's defaults, as the
//     API server validates it: types, formats, enums, bounds, patterns,
//     required fields, nullability, allOf/anyOf/oneOf/not. It is this
//     repository's one validator of objects against openAPIV3Schema.
//   - [Bundle] gathers the CRDs and example custom resources (the CSV's
//     alm-examples) of one bundle, from olm.bundle.object properties or from
//     manifests; [CompareBundles] checks an upgrade from one bundle to
//     another, examples included.
//
// The semantics, and where they differ from OLM's, are in docs/crd.md.
package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Scope values.
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// CRD is a CustomResourceDefinition, as apiextensions.k8s.io/v1 has it.
type CRD struct {
	// Name is metadata.name (plural.group).
	Name  string
	Group string
	Kind  string
	// Plural is spec.names.plural.
	Plural string
	Scope  string
	// Versions are spec.versions, in order.
	Versions []*Version
	// Conversion is spec.conversion.strategy ("None" when unset).
	Conversion string
	// StoredVersions is status.storedVersions, when the manifest has it.
	StoredVersions []string
	// V1beta1 is set when the CRD was written as apiextensions.k8s.io/v1beta1.
	V1beta1 bool

	// Source locates the CRD's text, when it was read from a file (see
	// [Source]); nil otherwise.
	Source *Source

	// hash identifies the CRD's content (all versions, scope, conversion).
	hash uint64
	// byName indexes Versions (spec.versions is unbounded but for the
	// node limit: a lookup must not be a scan).
	byName map[string]*Version
}

// Version is one entry of spec.versions.
type Version struct {
	Name    string
	Served  bool
	Storage bool
	// Schema is the version's openAPIV3Schema (an empty schema when it has
	// none).
	Schema *Schema
	// Index is the entry's index in spec.versions as written (-1 for the
	// version of a v1beta1 CRD that lists none).
	Index int
	// SchemaPath is where the schema is written in the manifest:
	// spec.versions[i].schema.openAPIV3Schema, or for a v1beta1 CRD with
	// one schema for all versions spec.validation.openAPIV3Schema.
	SchemaPath string
}

// Version returns the version called name, or nil.
func (c *CRD) Version(name string) *Version {
	return c.byName[name]
}

// StorageVersion returns the name of the version marked storage ("" when
// none is).
func (c *CRD) StorageVersion() string {
	for _, v := range c.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// Stored returns the versions a cluster may hold objects of: the storage
// version and status.storedVersions.
func (c *CRD) Stored() []string {
	out := slices.Clone(c.StoredVersions)
	if s := c.StorageVersion(); s != "" && !slices.Contains(out, s) {
		out = append(out, s)
	}
	return out
}

// Same reports whether the two CRDs have the same content.
func (c *CRD) Same(o *CRD) bool { return c.hash == o.hash }

// The kinds and API versions Parse reads.
const (
	KindCRD         = "CustomResourceDefinition"
	APIVersionV1    = "apiextensions.k8s.io/v1"
	APIVersionBeta1 = "apiextensions.k8s.io/v1beta1"
)

// IsCRD reports whether a decoded object's apiVersion and kind make it a
// CRD this package reads.
func IsCRD(apiVersion, kind string) bool {
	return kind == KindCRD && (apiVersion == APIVersionV1 || apiVersion == APIVersionBeta1)
}

// Parse reads a CRD from the JSON of one object. A v1beta1 CRD is
// converted to v1: spec.version becomes the only version when spec.versions
// is empty, spec.validation the schema of every version that has none,
// and served and storage default as the API server defaults them.
func Parse(data []byte) (*CRD, error) {
	return parse(context.Background(), data, nil)
}

// parse is Parse, sharing identical subschemas through cache (may be
// nil), and stopping when ctx is done.
func parse(ctx context.Context, data []byte, cache *Cache) (*CRD, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("decoding CustomResourceDefinition: %w", err)
	}
	if obj == nil {
		return nil, errors.New("decoding CustomResourceDefinition: not an object")
	}
	return fromObject(ctx, obj, cache)
}

// FromObject reads a CRD from a decoded object (numbers as json.Number,
// float64 or int64). See [Parse].
func FromObject(obj map[string]any) (*CRD, error) {
	return fromObject(context.Background(), obj, nil)
}

func fromObject(ctx context.Context, obj map[string]any, cache *Cache) (*CRD, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if kind != KindCRD {
		return nil, fmt.Errorf("not a CustomResourceDefinition (kind %q)", kind)
	}
	if apiVersion != APIVersionV1 && apiVersion != APIVersionBeta1 {
		return nil, fmt.Errorf("CustomResourceDefinition: unsupported apiVersion %q (want %s or %s)", apiVersion, APIVersionV1, APIVersionBeta1)
	}
	meta, _ := obj["metadata"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	c := &CRD{V1beta1: apiVersion == APIVersionBeta1}
	c.Name, _ = meta["name"].(string)
	if c.Name == "" {
		return nil, errors.New("CustomResourceDefinition without metadata.name")
	}
	if spec == nil {
		return nil, fmt.Errorf("CRD %s: no spec", c.Name)
	}
	c.Group, _ = spec["group"].(string)
	c.Scope, _ = spec["scope"].(string)
	if c.Scope == "" && c.V1beta1 {
		c.Scope = ScopeNamespaced // the v1beta1 default
	}
	if names, ok := spec["names"].(map[string]any); ok {
		c.Kind, _ = names["kind"].(string)
		c.Plural, _ = names["plural"].(string)
	}
	c.Conversion = "None"
	if conv, ok := spec["conversion"].(map[string]any); ok {
		if s, _ := conv["strategy"].(string); s != "" {
			c.Conversion = s
		}
	}
	if st, ok := obj["status"].(map[string]any); ok {
		if l, ok := st["storedVersions"].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok && s != "" {
					c.StoredVersions = append(c.StoredVersions, s)
				}
			}
		}
	}
	b := &schemaBuilder{ctx: ctx, crd: c.Name, cache: cache}
	var shared any // v1beta1 spec.validation.openAPIV3Schema
	if c.V1beta1 {
		if val, ok := spec["validation"].(map[string]any); ok {
			shared = val["openAPIV3Schema"]
		}
	}
	list, _ := spec["versions"].([]any)
	for i, x := range list {
		vm, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("CRD %s: spec.versions[%d] is not an object", c.Name, i)
		}
		v := &Version{Index: i}
		v.Name, _ = vm["name"].(string)
		if v.Name == "" {
			return nil, fmt.Errorf("CRD %s: spec.versions[%d] has no name", c.Name, i)
		}
		if c.byName[v.Name] != nil {
			return nil, fmt.Errorf("CRD %s: version %q listed twice", c.Name, v.Name)
		}
		v.Served, _ = vm["served"].(bool)
		v.Storage, _ = vm["storage"].(bool)
		if c.V1beta1 {
			// v1beta1 defaults served to true.
			if _, set := vm["served"]; !set {
				v.Served = true
			}
		}
		var raw any
		v.SchemaPath = fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i)
		if sch, ok := vm["schema"].(map[string]any); ok {
			raw = sch["openAPIV3Schema"]
		}
		if raw == nil && shared != nil {
			raw, v.SchemaPath = shared, "spec.validation.openAPIV3Schema"
		}
		s, err := b.build(raw, &buildPath{step: "spec.versions[" + v.Name + "].schema.openAPIV3Schema"}, 0)
		if err != nil {
			return nil, err
		}
		v.Schema = s
		c.Versions = append(c.Versions, v)
		if c.byName == nil {
			c.byName = map[string]*Version{}
		}
		c.byName[v.Name] = v
	}
	if len(c.Versions) == 0 && c.V1beta1 {
		name, _ := spec["version"].(string)
		if name == "" {
			return nil, fmt.Errorf("CRD %s: neither spec.version nor spec.versions", c.Name)
		}
		s, err := b.build(shared, &buildPath{step: "spec.versions[" + name + "].schema.openAPIV3Schema"}, 0)
		if err != nil {
			return nil, err
		}
		c.Versions = []*Version{{Name: name, Served: true, Storage: true, Schema: s, Index: -1, SchemaPath: "spec.validation.openAPIV3Schema"}}
		c.byName = map[string]*Version{name: c.Versions[0]}
	}
	if len(c.Versions) == 0 {
		return nil, fmt.Errorf("CRD %s: no versions", c.Name)
	}
	if len(c.Versions) == 1 && !c.Versions[0].Storage {
		// a single version is the storage version (the API server refuses
		// a v1 CRD that marks none)
		c.Versions[0].Storage = true
	}
	c.hash = c.contentHash()
	return c, nil
}

func (c *CRD) contentHash() uint64 {
	var parts []string
	parts = append(parts, c.Name, c.Group, c.Kind, c.Plural, c.Scope, c.Conversion, strings.Join(c.StoredVersions, ","))
	for _, v := range c.Versions {
		parts = append(parts, fmt.Sprintf("%s/%t/%t/%d", v.Name, v.Served, v.Storage, v.Schema.hash))
	}
	return hashString(strings.Join(parts, "\x00"))
}
