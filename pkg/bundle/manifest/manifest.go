// Package manifest loads an operator bundle for checking: every file of
// its manifests/ and metadata/ directories read once (from a directory, an
// extracted image or, for a bundle of a catalog, its olm.bundle.object
// properties), each manifest decoded, and typed views of what the checks
// read: the ClusterServiceVersion (install modes, the install strategy's
// deployments and permissions, webhook definitions, owned and required
// CRDs and API services, annotations), the CustomResourceDefinitions and
// the metadata files. Nothing is refused while loading (pkg/bundle's
// ParseFS refuses what `opm render` refuses): what the bundle validators
// (pkg/bundlevalidate) and the OLM v1 checks report is theirs to say, each
// at the file, line and column of the element concerned ([Manifest.Locate]).
//
// Files are read with pkg/bundle's reader (safefs: regular files only,
// within the size limit of the context, links resolved inside the root)
// and decoded as upstream decodes them (the first document of each file).
package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/docpath"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Kinds of the objects the typed views cover.
const (
	KindCSV = "ClusterServiceVersion"
	KindCRD = "CustomResourceDefinition"
)

// Bundle is a bundle loaded for checking.
type Bundle struct {
	// Source is what the bundle was loaded from: the directory or the
	// image reference as given, or, for a bundle of a catalog, the bundle's
	// name.
	Source string
	// Catalog is the olm.bundle blob a catalog bundle was loaded from
	// (nil for a directory or an image).
	Catalog *declcfg.Bundle

	// HasManifestsDir and HasMetadataDir report the two directories of
	// the bundle format (both false for a catalog bundle).
	HasManifestsDir, HasMetadataDir bool
	// Manifests are the files of manifests/ (regular files whose name does
	// not start with a dot, in name order) or the olm.bundle.object
	// properties of a catalog bundle, in property order.
	Manifests []*Manifest
	// Skipped are the entries of manifests/ that are not read: directories
	// and names starting with a dot.
	Skipped []bundle.SkippedEntry
	// Metadata are the regular files of metadata/, in name order.
	Metadata []*MetadataFile

	// Annotations is the annotations file: the first metadata file whose
	// first document holds an "annotations" map of strings; nil when none
	// does.
	Annotations *Annotations
	// Dependencies and Properties are the first metadata files holding a
	// non-empty "dependencies" or "properties" list; nil when none does.
	Dependencies, Properties *ItemsFile

	// CSV is the typed view of the first ClusterServiceVersion among the
	// manifests; nil when there is none or when it does not decode
	// (CSVErr).
	CSV *CSV
	// CSVErr is why the first ClusterServiceVersion's typed view could
	// not be decoded.
	CSVErr error
	// CSVCount is the number of ClusterServiceVersion manifests.
	CSVCount int
	// CRDs are the typed views of the CustomResourceDefinitions of
	// apiextensions.k8s.io/v1 and v1beta1, in manifest order; a CRD that
	// does not decode has its error in CRD.Err.
	CRDs []*CRD

	sizeOnce sync.Once
	size     Size
	extra    []extraFile
}

// Manifest is one manifest of a bundle: a file of manifests/ (its first
// document) or an olm.bundle.object of a catalog bundle. Its JSON is not
// computed when the bundle is loaded (see EncodedJSON).
type Manifest struct {
	bundle.ManifestFile
	// APIVersion, Kind, Name and Namespace identify the object (empty when
	// it does not decode).
	APIVersion, Kind, Name, Namespace string
	// Property is the index of the olm.bundle.object property among the
	// catalog bundle's properties; -1 for a file.
	Property int

	once sync.Once
	root *yaml.Node

	jsonOnce sync.Once
	jsonErr  error
}

// EncodedJSON returns the object's JSON encoding (json.Marshal: sorted
// keys, compact), computed once.
func (m *Manifest) EncodedJSON() ([]byte, error) {
	m.jsonOnce.Do(func() {
		if m.JSON == nil && m.Object != nil {
			m.JSON, m.jsonErr = json.Marshal(m.Object)
		}
	})
	return m.JSON, m.jsonErr
}

// Group returns the group of the object's apiVersion ("" for the core
// group).
func (m *Manifest) Group() string {
	g, _ := SplitAPIVersion(m.APIVersion)
	return g
}

// Version returns the version of the object's apiVersion.
func (m *Manifest) Version() string {
	_, v := SplitAPIVersion(m.APIVersion)
	return v
}

// SplitAPIVersion splits an apiVersion into group and version ("v1" is the
// core group's).
func SplitAPIVersion(apiVersion string) (group, version string) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return g, v
	}
	return "", apiVersion
}

// MetadataFile is one file of metadata/.
type MetadataFile struct {
	// File is the slash path relative to the bundle root
	// ("metadata/annotations.yaml").
	File string
	Data []byte
	// Err is why the file could not be read.
	Err error

	once sync.Once
	root *yaml.Node
}

// Annotations is the bundle's annotations file.
type Annotations struct {
	*MetadataFile
	// Values are its annotations.
	Values map[string]string
}

// Keys of the annotations file (operator-registry's bundle labels).
const (
	AnnotationMediaType      = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	AnnotationPackage        = bundle.AnnotationPackage
	AnnotationChannels       = bundle.AnnotationChannels
	AnnotationDefaultChannel = bundle.AnnotationDefaultChannel
)

// Channels returns the channels of the annotations file, split at commas
// as upstream splits them (empty names kept).
func (a *Annotations) Channels() []string {
	if a == nil {
		return nil
	}
	return strings.Split(a.Values[AnnotationChannels], ",")
}

// ItemsFile is a metadata file holding a list of typed items:
// dependencies.yaml or properties.yaml.
type ItemsFile struct {
	*MetadataFile
	// Items are the list's entries, with the line each starts on.
	Items []Item
}

// Item is one entry of a dependencies or properties file.
type Item struct {
	property.Property
	// Line is the line the entry starts on (0 when unknown).
	Line int
}

// LoadDir loads the bundle in directory dir; every name is resolved inside
// dir. A directory that holds neither manifests/ nor metadata/ loads as a
// bundle without either (the checks report it); the error is for what
// keeps the directory from being read at all, a refused file (safefs) and
// a cancelled ctx.
func LoadDir(ctx context.Context, dir string) (*Bundle, error) {
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	return LoadFS(ctx, fsys, dir)
}

// LoadFS loads the bundle at the root of fsys (an extracted image, a
// directory); source names it in messages.
func LoadFS(ctx context.Context, fsys fs.FS, source string) (*Bundle, error) {
	sfs, ok := fsys.(*safefs.FS)
	if !ok {
		sfs = safefs.New(ctx, fsys)
	}
	b := &Bundle{Source: source}
	b.HasManifestsDir = isDir(sfs, "manifests")
	b.HasMetadataDir = isDir(sfs, "metadata")
	if b.HasManifestsDir {
		m, err := bundle.ReadManifestObjects(ctx, sfs)
		if err != nil {
			return nil, err
		}
		b.Skipped = m.Skipped
		for _, f := range m.Files {
			b.Manifests = append(b.Manifests, newManifest(f, -1))
		}
		if err := b.measureSkipped(ctx, sfs); err != nil {
			return nil, err
		}
	}
	if b.HasMetadataDir {
		if err := b.readMetadata(ctx, sfs); err != nil {
			return nil, err
		}
	}
	b.buildViews()
	return b, nil
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}

// FromDeclcfg loads a bundle of a catalog from its olm.bundle.object
// properties. A property that does not decode is a Manifest with Err set.
// The error is for a bundle without any olm.bundle.object.
func FromDeclcfg(b *declcfg.Bundle) (*Bundle, error) {
	out := &Bundle{Source: b.Name, Catalog: b}
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		f := bundle.ManifestFile{File: fmt.Sprintf("properties[%d]", i)}
		var v property.BundleObject
		if err := json.Unmarshal(p.Value, &v); err != nil {
			f.Err = fmt.Errorf("parse olm.bundle.object property: %w", err)
		} else {
			f.Data = v.Data
			f.Object, f.JSON, f.Err = bundle.DecodeObject(v.Data)
		}
		out.Manifests = append(out.Manifests, newManifest(f, i))
	}
	if len(out.Manifests) == 0 {
		return nil, fmt.Errorf("bundle %s has no olm.bundle.object properties", b.Name)
	}
	out.buildViews()
	return out, nil
}

func newManifest(f bundle.ManifestFile, prop int) *Manifest {
	m := &Manifest{ManifestFile: f, Property: prop}
	if f.Object != nil {
		m.APIVersion, _ = f.Object["apiVersion"].(string)
		m.Kind, _ = f.Object["kind"].(string)
		if md, ok := f.Object["metadata"].(map[string]any); ok {
			m.Name, _ = md["name"].(string)
			m.Namespace, _ = md["namespace"].(string)
		}
	}
	return m
}

// readMetadata reads every regular file of metadata/ and finds the
// annotations, dependencies and properties files among them, as upstream
// finds them (the first file of each kind, in name order).
func (b *Bundle) readMetadata(ctx context.Context, fsys *safefs.FS) error {
	entries, err := fs.ReadDir(fsys, "metadata")
	if err != nil {
		return fmt.Errorf("error opening metadata directory: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := path.Join("metadata", e.Name())
		data, err := fsys.ReadFile(name)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if safefs.IsRefusal(err) {
				return &bundle.FileError{File: name, Err: safefs.Refusal(err, name)}
			}
		}
		mf := &MetadataFile{File: name, Data: data, Err: err}
		b.Metadata = append(b.Metadata, mf)
		if err != nil {
			continue
		}
		if b.Annotations == nil {
			var v struct {
				Annotations map[string]string `json:"annotations"`
			}
			if bundle.DecodeFirst(data, &v) == nil && v.Annotations != nil {
				b.Annotations = &Annotations{MetadataFile: mf, Values: v.Annotations}
				continue
			}
		}
		if b.Dependencies == nil {
			var v struct {
				Dependencies []property.Property `json:"dependencies"`
			}
			if bundle.DecodeFirst(data, &v) == nil && len(v.Dependencies) > 0 {
				b.Dependencies = itemsFile(mf, "dependencies", v.Dependencies)
			}
		}
		if b.Properties == nil {
			var v struct {
				Properties []property.Property `json:"properties"`
			}
			if bundle.DecodeFirst(data, &v) == nil && len(v.Properties) > 0 {
				b.Properties = itemsFile(mf, "properties", v.Properties)
			}
		}
	}
	return nil
}

func itemsFile(mf *MetadataFile, key string, props []property.Property) *ItemsFile {
	f := &ItemsFile{MetadataFile: mf}
	root := mf.node()
	for i, p := range props {
		line := 0
		if root != nil {
			if n, found := docpath.Walk(root, []docpath.Elem{{Key: key, Index: -1}, {Index: i}}); n != nil && found == 2 {
				line = n.Line
			}
		}
		f.Items = append(f.Items, Item{Property: p, Line: line})
	}
	return f
}

// buildViews decodes the typed views of the CSV and the CRDs.
func (b *Bundle) buildViews() {
	for _, m := range b.Manifests {
		if m.Object == nil {
			continue
		}
		switch m.Kind {
		case KindCSV:
			b.CSVCount++
			if b.CSVCount > 1 {
				continue
			}
			csv, err := newCSV(m)
			if err != nil {
				b.CSVErr = err
				continue
			}
			b.CSV = csv
		case KindCRD:
			if m.APIVersion == CRDv1 || m.APIVersion == CRDv1beta1 {
				b.CRDs = append(b.CRDs, newCRD(m))
			}
		}
	}
}

// Name returns the CSV's name ("" without a CSV).
func (b *Bundle) Name() string {
	if b.CSV != nil {
		return b.CSV.Name
	}
	for _, m := range b.Manifests {
		if m.Kind == KindCSV {
			return m.Name
		}
	}
	return ""
}

// Package returns the bundle's package: the annotations file's, or the
// olm.package property's for a catalog bundle.
func (b *Bundle) Package() string {
	if b.Annotations != nil {
		return b.Annotations.Values[AnnotationPackage]
	}
	if b.Catalog != nil {
		return b.Catalog.Package
	}
	return ""
}

// ErrNoManifests is returned by callers that need manifests and find none.
var ErrNoManifests = errors.New("bundle has no manifests")
