// Package bundle parses operator bundles (a manifests/ directory holding a
// ClusterServiceVersion, CRDs and other objects, and a metadata/ directory
// holding annotations.yaml and optionally dependencies.yaml and
// properties.yaml) and builds the olm.bundle blob upstream opm renders from
// them, byte for byte.
package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/property"
)

// Annotation keys read from metadata/annotations.yaml.
const (
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// CSV annotation keys with a meaning for rendering.
const (
	csvAnnotationProperties = "olm.properties"
	csvAnnotationSkipRange  = "olm.skipRange"
)

const kindCSV = "ClusterServiceVersion"
const kindCRD = "CustomResourceDefinition"

// Bundle is a parsed operator bundle.
type Bundle struct {
	// Name is the CSV's metadata.name.
	Name string
	// Package, Channels and DefaultChannel come from the annotations file.
	Package        string
	Channels       []string
	DefaultChannel string

	// Objects are the manifests, one per file (its first document), in
	// file-name order. Only the first CSV is kept.
	Objects []Object
	// CSV is the first ClusterServiceVersion among Objects.
	CSV *CSV

	// Properties are those of the properties file followed by the derived
	// ones (olm.package, the CSV's olm.properties annotation, olm.gvk of
	// provided APIs), exact duplicates removed. Dependencies are the entries
	// of the dependencies file.
	Properties   []SourcedProperty
	Dependencies []SourcedProperty

	// AnnotationsFile, DependenciesFile and PropertiesFile name the metadata
	// files that were used (slash paths relative to the bundle root; empty
	// when absent).
	AnnotationsFile, DependenciesFile, PropertiesFile string

	// Warnings are what upstream only logs: manifests that could not be
	// decoded, extra CSVs, an unparsable olm.properties annotation.
	Warnings []string

	provided []apiKey
}

// SourcedProperty is a property with the file (and, for metadata files,
// the line) it came from.
type SourcedProperty struct {
	property.Property
	File string
	Line int
}

// Object is one manifest.
type Object struct {
	// File is the manifest's path relative to the bundle root
	// ("manifests/x.yaml").
	File string
	// JSON is json.Marshal of the unstructured object: sorted keys, compact,
	// HTML escaped, as upstream stores it in olm.bundle.object.
	JSON []byte
	// APIVersion and Kind identify the object.
	APIVersion, Kind string

	obj map[string]any
}

// FileError names the bundle file (and line, when known) an error is about.
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return e.File + ": " + e.Err.Error()
}

// Unwrap returns the upstream-worded error.
func (e *FileError) Unwrap() error { return e.Err }

func fileErr(file string, err error) error {
	if err == nil {
		return nil
	}
	return &FileError{File: file, Err: err}
}

// ParseDir parses the bundle in directory dir. Every name is resolved
// inside dir: a symbolic link that leads outside it is an error naming the
// file.
func ParseDir(ctx context.Context, dir string) (*Bundle, error) {
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	return ParseFS(ctx, fsys)
}

// ParseFS parses the bundle at the root of fsys, which must hold manifests/
// and metadata/, with upstream's rules (behaviour doc §3.1).
//
// Only regular files are read (a FIFO, device or socket is an error naming
// it), none larger than the file size limit of ctx (see
// declcfg.WithMaxFileSize), and parsing stops when ctx is done. Such
// errors, and a link leading out of a directory opened by ParseDir, are
// fatal where upstream would skip a file it cannot read.
func ParseFS(ctx context.Context, fsys fs.FS) (*Bundle, error) {
	if fsys == nil {
		return nil, errors.New("filesystem is nil")
	}
	sfs, ok := fsys.(*safefs.FS)
	if !ok {
		sfs = safefs.New(ctx, fsys)
	}
	b := &Bundle{}
	if err := b.addManifests(ctx, sfs); err != nil {
		return nil, err
	}
	if err := b.addMetadata(ctx, sfs); err != nil {
		return nil, err
	}
	if err := b.deriveProperties(); err != nil {
		return nil, err
	}
	return b, nil
}

// unsafeRead reports whether a read error is one of safefs's refusals
// (a link out of the root, a special file, a file over the limit) or a
// cancellation: those end the parse, where upstream skips files it cannot
// read.
func unsafeRead(ctx context.Context, err error) bool {
	return safefs.IsRefusal(err) || ctx.Err() != nil
}

// readErr is the error of an unsafe read of file.
func readErr(ctx context.Context, file string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fileErr(file, safefs.Refusal(err, file))
}

func (b *Bundle) addManifests(ctx context.Context, fsys *safefs.FS) error {
	m, err := ReadManifests(ctx, fsys)
	if err != nil {
		return err
	}
	results := m.Files
	for _, r := range results {
		if r.Err != nil {
			b.Warnings = append(b.Warnings, fmt.Sprintf("%s: failed to decode manifest: %v", r.File, r.Err))
			continue
		}
		if r.Object == nil {
			b.Warnings = append(b.Warnings, fmt.Sprintf("%s: the first document is empty; the file is ignored (only the first document of a manifest is read)", r.File))
			continue
		}
		kind, _ := r.Object["kind"].(string)
		apiVersion, _ := r.Object["apiVersion"].(string)
		if kind == kindCSV && b.CSV != nil {
			b.Warnings = append(b.Warnings, fmt.Sprintf("%s: ignoring a second ClusterServiceVersion (%s already read)", r.File, b.CSV.File))
			continue
		}
		data := r.JSON
		o := Object{File: r.File, JSON: data, APIVersion: apiVersion, Kind: kind, obj: r.Object}
		if kind == kindCSV {
			csv, err := parseCSV(r.File, data)
			if err != nil {
				return err
			}
			csv.source = r.Data
			b.CSV = csv
			b.Name = csv.Name
		}
		b.Objects = append(b.Objects, o)
	}
	if len(b.Objects) == 0 {
		return b.withSkipped(errors.New("manifests: no bundle objects found"))
	}
	if b.CSV == nil {
		return b.withSkipped(errors.New("manifests: no csv in bundle"))
	}
	provided, err := b.providedAPIs()
	if err != nil {
		return err
	}
	b.provided = provided
	owned, _, err := b.CSV.crdDefinitions()
	if err != nil {
		return fileErr(b.CSV.File, err)
	}
	set := map[apiKey]bool{}
	for _, k := range provided {
		set[k] = true
	}
	for i, d := range owned {
		at := []any{"spec", "customresourcedefinitions", "owned", i}
		group, plural, ok := splitCRDName(d.Name)
		if !ok {
			return b.CSV.errAt(fmt.Errorf("error checking provided apis in bundle %s: couldn't parse plural.group from crd name: %s", b.Name, d.Name), at...)
		}
		k := apiKey{Group: group, Version: d.Version, Kind: d.Kind, Plural: plural}
		if !set[k] {
			return b.CSV.errAt(fmt.Errorf("error checking provided apis in bundle %s: couldn't find %s in bundle. found: %s", b.Name, k, formatAPISet(provided)), at...)
		}
	}
	return nil
}

// withSkipped adds to err the manifests that could not be decoded (which
// upstream only logs): they are often why the bundle has no CSV.
func (b *Bundle) withSkipped(err error) error {
	var skipped []string
	for _, w := range b.Warnings {
		if strings.Contains(w, ": failed to decode manifest: ") {
			skipped = append(skipped, w)
		}
	}
	if len(skipped) == 0 {
		return err
	}
	return fmt.Errorf("%w (skipped %s)", err, strings.Join(skipped, "; "))
}

// splitCRDName splits "plural.group" at the first dot.
func splitCRDName(name string) (group, plural string, ok bool) {
	plural, group, ok = strings.Cut(name, ".")
	return group, plural, ok
}

// apiKey identifies an API as upstream's registry.APIKey.
type apiKey struct {
	Group, Version, Kind, Plural string
}

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s/%s (%s)", k.Group, k.Version, k.Kind, k.Plural)
}

func formatAPISet(keys []apiKey) string {
	sorted := append([]apiKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Plural < b.Plural
	})
	var sb strings.Builder
	sb.WriteString("map[")
	for i, k := range sorted {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(k.String())
		sb.WriteString(":{}")
	}
	sb.WriteString("]")
	return sb.String()
}

// crd is the part of a v1 or v1beta1 CustomResourceDefinition that defines
// provided APIs. Decoding it with encoding/json reports type errors the way
// upstream's typed decode does.
type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Version  string `json:"version"`
		Versions []struct {
			Name string `json:"name"`
		} `json:"versions"`
	} `json:"spec"`
}

// providedAPIs lists the APIs of the shipped CRDs (every version, served or
// not, plus v1beta1 spec.version) and the CSV's owned API services, in a
// deterministic order, without duplicates.
func (b *Bundle) providedAPIs() ([]apiKey, error) {
	seen := map[apiKey]bool{}
	var out []apiKey
	add := func(k apiKey) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, o := range b.Objects {
		if o.Kind != kindCRD {
			continue
		}
		var c crd
		switch o.APIVersion {
		case "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1":
		default:
			return nil, fileErr(o.File, fmt.Errorf("unsupported CRD version %s", o.APIVersion))
		}
		if err := json.Unmarshal(o.JSON, &c); err != nil {
			return nil, fileErr(o.File, fmt.Errorf("decoding %s: %w", kindCRD, err))
		}
		if o.APIVersion == "apiextensions.k8s.io/v1beta1" && c.Spec.Version != "" {
			add(apiKey{Group: c.Spec.Group, Version: c.Spec.Version, Kind: c.Spec.Names.Kind, Plural: c.Spec.Names.Plural})
		}
		for _, v := range c.Spec.Versions {
			add(apiKey{Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind, Plural: c.Spec.Names.Plural})
		}
	}
	owned, _, err := b.CSV.apiServiceDefinitions()
	if err != nil {
		return nil, fileErr(b.CSV.File, err)
	}
	for _, d := range owned {
		add(apiKey{Group: d.Group, Version: d.Version, Kind: d.Kind, Plural: d.Name})
	}
	return out, nil
}

// requiredAPIs lists the CSV's required CRDs and API services.
func (b *Bundle) requiredAPIs() ([]apiKey, error) {
	_, required, err := b.CSV.crdDefinitions()
	if err != nil {
		return nil, err
	}
	var out []apiKey
	for _, d := range required {
		group, plural, ok := splitCRDName(d.Name)
		if !ok {
			return nil, fmt.Errorf("couldn't parse plural.group from crd name: %s", d.Name)
		}
		out = append(out, apiKey{Group: group, Version: d.Version, Kind: d.Kind, Plural: plural})
	}
	_, requiredAPIs, err := b.CSV.apiServiceDefinitions()
	if err != nil {
		return nil, err
	}
	for _, d := range requiredAPIs {
		out = append(out, apiKey{Group: d.Group, Version: d.Version, Kind: d.Kind, Plural: d.Name})
	}
	return out, nil
}

// Metadata file shapes, as upstream's registry types.
type annotationsFile struct {
	Annotations struct {
		PackageName        string `json:"operators.operatorframework.io.bundle.package.v1"`
		Channels           string `json:"operators.operatorframework.io.bundle.channels.v1"`
		DefaultChannelName string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
	} `json:"annotations"`
}

type dependenciesFile struct {
	Dependencies []property.Property `json:"dependencies"`
}

type propertiesFile struct {
	Properties []property.Property `json:"properties"`
}

func (b *Bundle) addMetadata(ctx context.Context, fsys *safefs.FS) error {
	entries, err := fs.ReadDir(fsys, "metadata")
	if err != nil {
		return fmt.Errorf("error opening metadata directory: %w", err)
	}
	var (
		af                  *annotationsFile
		df                  *dependenciesFile
		pf                  *propertiesFile
		depLines, propLines []int
	)
	for _, e := range entries {
		name := path.Join("metadata", e.Name())
		data, err := fsys.ReadFile(name)
		if err != nil {
			if unsafeRead(ctx, err) {
				return readErr(ctx, name, err)
			}
			continue // upstream skips what it cannot read or decode
		}
		if af == nil {
			var v annotationsFile
			if decodeTyped(data, &v) == nil && v != (annotationsFile{}) {
				af = &v
				b.AnnotationsFile = name
			}
		}
		if df == nil {
			var v dependenciesFile
			if decodeTyped(data, &v) == nil && len(v.Dependencies) > 0 {
				df = &v
				b.DependenciesFile = name
				depLines = itemLines(data, "dependencies")
			}
		}
		if pf == nil {
			var v propertiesFile
			if decodeTyped(data, &v) == nil && len(v.Properties) > 0 {
				pf = &v
				b.PropertiesFile = name
				propLines = itemLines(data, "properties")
			}
		}
		if af != nil && df != nil && pf != nil {
			break
		}
	}
	if af == nil {
		return errors.New("metadata: Could not find annotations file")
	}
	b.Package = af.Annotations.PackageName
	b.DefaultChannel = af.Annotations.DefaultChannelName
	for _, c := range strings.Split(af.Annotations.Channels, ",") {
		if c = strings.TrimSpace(c); c != "" {
			b.Channels = append(b.Channels, c)
		}
	}
	if df != nil {
		for i, p := range df.Dependencies {
			// No nullValue here: upstream parses an olm.gvk or olm.package
			// dependency written without a value as empty JSON, which fails
			// ("unexpected end of JSON input"); other types pass through and
			// render as null (see properties).
			b.Dependencies = append(b.Dependencies, SourcedProperty{Property: p, File: b.DependenciesFile, Line: lineAt(depLines, i)})
		}
	}
	if pf != nil {
		for i, p := range pf.Properties {
			b.Properties = append(b.Properties, SourcedProperty{Property: nullValue(p), File: b.PropertiesFile, Line: lineAt(propLines, i)})
		}
	}
	return nil
}

// deriveProperties appends the olm.package built from the annotations and
// the CSV, the CSV's olm.properties annotation, and an olm.gvk per provided
// API; then drops exact duplicates (upstream's propertySet).
func (b *Bundle) deriveProperties() error {
	var derived []SourcedProperty
	if raw, ok := b.CSV.Annotations[csvAnnotationProperties]; ok {
		var props []property.Property
		if err := json.Unmarshal([]byte(raw), &props); err != nil {
			// Upstream only logs this, and keeps what a type error let
			// encoding/json decode.
			b.Warnings = append(b.Warnings, fmt.Sprintf("%s: failed to unmarshal csv annotation properties: %v", b.CSV.File, err))
		}
		for _, p := range props {
			derived = append(derived, SourcedProperty{Property: nullValue(p), File: b.CSV.File})
		}
	}
	if b.Package != "" {
		version, err := b.CSV.Version()
		if err != nil {
			return b.CSV.errAt(fmt.Errorf("failed to derive properties: %w", err), "spec", "version")
		}
		release, err := b.CSV.Release()
		if err != nil {
			return b.CSV.errAt(fmt.Errorf("failed to derive properties: %w", err), "spec", "release")
		}
		value, err := json.Marshal(property.Package{PackageName: b.Package, Version: version, Release: release})
		if err != nil {
			return fmt.Errorf("failed to derive properties: failed to marshal package property: %w", err)
		}
		derived = append([]SourcedProperty{{Property: property.Property{Type: property.TypePackage, Value: value}, File: b.AnnotationsFile}}, derived...)
	}
	for _, k := range b.provided {
		value, err := json.Marshal(property.GVK{Group: k.Group, Kind: k.Kind, Version: k.Version})
		if err != nil {
			return fmt.Errorf("failed to derive properties: failed to marshal gvk property: %w", err)
		}
		derived = append(derived, SourcedProperty{Property: property.Property{Type: property.TypeGVK, Value: value}, File: b.CSV.File})
	}
	b.Properties = propertySet(append(propertySet(b.Properties), propertySet(derived)...))
	return nil
}

// nullValue gives a property written without a value the value null, as
// upstream renders it ("value": null); an olm.gvk or olm.package property
// without a value is then the zero value of its type. Dependencies keep
// their missing value until properties() has parsed the typed ones.
func nullValue(p property.Property) property.Property {
	if len(p.Value) == 0 {
		p.Value = json.RawMessage("null")
	}
	return p
}

// propertySet drops properties whose type and raw value repeat an earlier
// one.
func propertySet(in []SourcedProperty) []SourcedProperty {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, p := range in {
		k := p.Type + "\x00" + string(p.Value)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}
