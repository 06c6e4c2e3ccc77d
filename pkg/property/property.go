// Package property holds the typed forms of the properties carried by
// olm.package and olm.bundle blobs, and the rules for parsing and building
// them exactly as upstream opm does.
package property

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/opmkit/opm/internal/jsonscan"
)

// Well-known property types.
const (
	TypePackage         = "olm.package"
	TypePackageRequired = "olm.package.required"
	TypeGVK             = "olm.gvk"
	TypeGVKRequired     = "olm.gvk.required"
	TypeBundleObject    = "olm.bundle.object"
	TypeCSVMetadata     = "olm.csv.metadata"
	TypeChannel         = "olm.channel"
	TypeConstraint      = "olm.constraint"
	TypeMaxOpenShift    = "olm.maxOpenShiftVersion"
	TypeDeprecated      = "olm.deprecated"
	TypeLabel           = "olm.label"
)

// Property is one {type, value} pair. Value is raw JSON and is written back
// exactly as held (re-indented, never re-escaped).
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

func (p Property) String() string {
	return fmt.Sprintf("type: %q, value: %q", p.Type, p.Value)
}

// Package is the value of an olm.package property.
type Package struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitempty"`
}

// PackageRequired is the value of an olm.package.required property.
type PackageRequired struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// GVK is the value of an olm.gvk property.
type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// GVKRequired is the value of an olm.gvk.required property.
type GVKRequired struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// BundleObject is the value of an olm.bundle.object property: one manifest,
// held as the bytes of its JSON encoding (base64 on the wire).
type BundleObject struct {
	Data []byte `json:"data"`
}

// BundleObjectData decodes the value of an olm.bundle.object property,
// {"data": "<base64>"}: straight from its bytes when the string has no
// escapes (the form every writer uses), else through encoding/json. ok is
// false when the value is not such an object.
func BundleObjectData(value []byte) (data []byte, ok bool) {
	v := jsonscan.Member(value, "data")
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		var o BundleObject
		if json.Unmarshal(value, &o) != nil {
			return nil, false
		}
		return o.Data, true
	}
	s := v[1 : len(v)-1]
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(out, s)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

// Channel is the value of the internal olm.channel property.
type Channel struct {
	ChannelName string `json:"channelName"`
}

// Properties groups parsed properties by type. Unknown types land in Others.
type Properties struct {
	Packages         []Package
	PackagesRequired []PackageRequired
	GVKs             []GVK
	GVKsRequired     []GVKRequired
	BundleObjects    []BundleObject
	CSVMetadatas     []json.RawMessage
	Channels         []Channel
	Others           []Property
}

// ParseError names the property that failed to parse.
type ParseError struct {
	Index int
	Type  string
	Err   error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse property[%d] of type %q: %v", e.Index, e.Type, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Parse decodes every property into its typed form, as upstream's
// property.Parse does: known types must decode into their struct, unknown
// types must hold valid JSON.
func Parse(in []Property) (*Properties, error) {
	var out Properties
	for i, p := range in {
		var err error
		switch p.Type {
		case TypePackage:
			var v Package
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.Packages = append(out.Packages, v)
			}
		case TypePackageRequired:
			var v PackageRequired
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.PackagesRequired = append(out.PackagesRequired, v)
			}
		case TypeGVK:
			var v GVK
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.GVKs = append(out.GVKs, v)
			}
		case TypeGVKRequired:
			var v GVKRequired
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.GVKsRequired = append(out.GVKsRequired, v)
			}
		case TypeBundleObject:
			var v BundleObject
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.BundleObjects = append(out.BundleObjects, v)
			}
		case TypeCSVMetadata:
			var v map[string]any
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.CSVMetadatas = append(out.CSVMetadatas, p.Value)
			}
		case TypeChannel:
			var v Channel
			if err = strictUnmarshal(p.Value, &v); err == nil {
				out.Channels = append(out.Channels, v)
			}
		default:
			var v json.RawMessage
			if err = json.Unmarshal(p.Value, &v); err == nil {
				out.Others = append(out.Others, p)
			}
		}
		if err != nil {
			return nil, &ParseError{Index: i, Type: p.Type, Err: err}
		}
	}
	return &out, nil
}

// strictUnmarshal mirrors encoding/json's Unmarshal (upstream uses it); it
// exists as one seam should stricter decoding ever be needed.
func strictUnmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// Build marshals v (one of the typed values above) into a Property the way
// upstream builds properties: compact JSON without HTML escaping, struct
// field order.
func Build(v any) (Property, error) {
	var typ string
	switch v.(type) {
	case Package, *Package:
		typ = TypePackage
	case PackageRequired, *PackageRequired:
		typ = TypePackageRequired
	case GVK, *GVK:
		typ = TypeGVK
	case GVKRequired, *GVKRequired:
		typ = TypeGVKRequired
	case BundleObject, *BundleObject:
		typ = TypeBundleObject
	case Channel, *Channel:
		typ = TypeChannel
	default:
		return Property{}, fmt.Errorf("build property: unsupported type %T", v)
	}
	raw, err := MarshalNoEscape(v)
	if err != nil {
		return Property{}, fmt.Errorf("build property %q: %w", typ, err)
	}
	return Property{Type: typ, Value: raw}, nil
}

// MustBuild is Build for values known to marshal.
func MustBuild(v any) Property {
	p, err := Build(v)
	if err != nil {
		panic(err)
	}
	return p
}

// MarshalNoEscape is json.Marshal without HTML escaping and without the
// trailing newline json.Encoder adds.
func MarshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
