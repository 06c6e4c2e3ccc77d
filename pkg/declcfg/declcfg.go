// Package declcfg holds file-based catalog (FBC) blobs: their types, a
// loader over directories and any fs.FS, and writers whose bytes match
// upstream opm.
package declcfg

import (
	"encoding/json"
	"fmt"

	"github.com/opmkit/opm/pkg/property"
)

// Schemas of the known blob types.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// Position is where a blob starts: a file (slash-separated, relative to the
// loaded root) and a 1-based line and column. The zero Position means
// "not from a file" (e.g. a rendered bundle).
type Position struct {
	File   string
	Line   int
	Column int
}

// IsValid reports whether p names a file.
func (p Position) IsValid() bool { return p.File != "" }

func (p Position) String() string {
	switch {
	case p.File == "":
		return "-"
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// DeclarativeConfig is a set of FBC blobs, grouped by schema. Within each
// slice, blobs keep the order in which they were loaded.
type DeclarativeConfig struct {
	Packages     []Package
	Channels     []Channel
	Bundles      []Bundle
	Deprecations []Deprecation
	Others       []Meta
}

// Merge appends every blob of src to c (no de-duplication, as upstream).
func (c *DeclarativeConfig) Merge(src *DeclarativeConfig) {
	c.Packages = append(c.Packages, src.Packages...)
	c.Channels = append(c.Channels, src.Channels...)
	c.Bundles = append(c.Bundles, src.Bundles...)
	c.Deprecations = append(c.Deprecations, src.Deprecations...)
	c.Others = append(c.Others, src.Others...)
}

// Package is an olm.package blob. Field order is output order.
type Package struct {
	Schema         string              `json:"schema"`
	Name           string              `json:"name"`
	DefaultChannel string              `json:"defaultChannel"`
	Icon           *Icon               `json:"icon,omitempty"`
	Description    string              `json:"description,omitempty"`
	Properties     []property.Property `json:"properties,omitempty"`

	Pos Position `json:"-"`
}

// Icon is a package icon; Data is written as standard base64.
type Icon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is an olm.channel blob.
type Channel struct {
	Schema     string              `json:"schema"`
	Name       string              `json:"name"`
	Package    string              `json:"package"`
	Entries    []ChannelEntry      `json:"entries"`
	Properties []property.Property `json:"properties,omitempty"`

	Pos Position `json:"-"`
}

// ChannelEntry is one member of a channel and its upgrade edges.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an olm.bundle blob.
//
// CsvJSON and Objects are never serialised. Bundles rendered from bundle
// directories or images have them set; for loaded catalogs call
// [Bundle.LoadObjects] to decode them from the olm.bundle.object properties.
type Bundle struct {
	Schema        string              `json:"schema"`
	Name          string              `json:"name,omitempty"`
	Package       string              `json:"package,omitempty"`
	Image         string              `json:"image"`
	Properties    []property.Property `json:"properties,omitempty"`
	RelatedImages []RelatedImage      `json:"relatedImages,omitempty"`

	CsvJSON string   `json:"-"`
	Objects []string `json:"-"`

	Pos Position `json:"-"`
}

// RelatedImage is one entry of a bundle's relatedImages; Name is always
// written, even when empty.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Deprecation is an olm.deprecations blob.
type Deprecation struct {
	Schema  string             `json:"schema"`
	Package string             `json:"package"`
	Entries []DeprecationEntry `json:"entries"`

	Pos Position `json:"-"`
}

// DeprecationEntry deprecates one package, channel or bundle.
type DeprecationEntry struct {
	Reference PackageScopedReference `json:"reference"`
	Message   string                 `json:"message"`
}

// PackageScopedReference names a package (empty Name), channel or bundle.
type PackageScopedReference struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
}

// Meta is any blob, held in its normalised form: sorted keys, compact JSON,
// no HTML escaping, numbers as float64 (upstream's re-encoding). Blobs with
// unknown schemas are kept as Meta and written back from Blob.
type Meta struct {
	Schema  string
	Package string
	Name    string
	Blob    json.RawMessage

	Pos Position
}

// MarshalJSON returns the normalised blob.
func (m Meta) MarshalJSON() ([]byte, error) { return m.Blob, nil }
