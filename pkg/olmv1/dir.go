package olmv1

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/docpath"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/internal/yamlorjson"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/property"
)

// Bundle directories.
//
// OLM v1 reads a bundle image's filesystem itself (operator-controller's
// bundle source), not as opm render does: every file under manifests/ is
// a stream of YAML (or JSON) documents, all of them read (empty and null
// ones skipped, v1 Lists expanded), whatever the file's name; a directory
// inside manifests/ fails the read, as does a document without apiVersion
// or kind; metadata/annotations.yaml gives the package name. Its resolver
// reads the bundle's properties from the catalog, where opm render put
// them, so dependencies are read as opm render derives them (pkg/bundle).

// Source is where an element of a bundle directory was read.
type Source struct {
	// File is the slash path from the bundle root.
	File string
	// Line and Column are where the element starts (1-based; 0 unknown).
	Line, Column int
	// doc is the YAML document of an object, to locate paths in, and
	// docLine its first line in File.
	doc     []byte
	docLine int
}

// PropertySource is where a property of a bundle directory was declared:
// a line of a metadata file, or an element of the CSV (CSVPath).
type PropertySource struct {
	File    string
	Line    int
	CSVPath string
}

// Unreadable is a manifest document OLM v1 cannot read.
type Unreadable struct {
	Source
	Err error
}

// LoadDir reads the bundle directory dir as OLM v1 reads a bundle image.
// Every name is resolved inside dir and every file is bounded in size
// (see safefs). The error is for what keeps the directory from being read
// at all; what OLM v1 would refuse is left to Check.
func LoadDir(ctx context.Context, dir string) (*Bundle, error) {
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	return LoadFS(ctx, fsys)
}

// LoadFS reads the bundle at the root of fsys as LoadDir does.
func LoadFS(ctx context.Context, fsys fs.FS) (*Bundle, error) {
	sfs, ok := fsys.(*safefs.FS)
	if !ok {
		sfs = safefs.New(ctx, fsys)
	}
	b := &Bundle{Dir: &Dir{PackageAt: Source{File: annotationsFile}}}
	if err := b.readAnnotations(sfs); err != nil {
		if safefs.IsRefusal(err) || ctx.Err() != nil {
			return nil, err
		}
		b.Dir.Unreadable = append(b.Dir.Unreadable, Unreadable{Source{File: annotationsFile}, err})
	}
	if err := b.readManifests(ctx, sfs); err != nil {
		return nil, err
	}
	b.readProperties(ctx, sfs)
	return b, nil
}

func (b *Bundle) readAnnotations(fsys *safefs.FS) error {
	const file = annotationsFile
	data, err := fsys.ReadFile(file)
	if err != nil {
		return err
	}
	var a struct {
		Annotations struct {
			Package string `json:"operators.operatorframework.io.bundle.package.v1"`
		} `json:"annotations"`
	}
	js, err := yamlorjson.ToJSON(data)
	if err == nil {
		err = json.Unmarshal(js, &a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	b.Dir.Package = a.Annotations.Package
	b.Dir.PackageAt = Source{File: file}
	line, col, found := docpath.LocateYAML(data, docpath.Parse(`annotations."`+bundle.AnnotationPackage+`"`))
	if found == 2 {
		b.Dir.PackageAt.Line, b.Dir.PackageAt.Column = line, docpath.ByteColumn(data, line, col)
	}
	return nil
}

// readManifests reads every document of every file under manifests/, in
// the order of fs.WalkDir (names sorted), as OLM v1's bundle source does.
func (b *Bundle) readManifests(ctx context.Context, fsys *safefs.FS) error {
	const dir = "manifests"
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir {
				b.Dir.Subdirectories = append(b.Dir.Subdirectories, p)
				return fs.SkipDir
			}
			return nil
		}
		data, err := fsys.ReadFile(p)
		if err != nil {
			return err
		}
		b.addStream(p, data)
		return ctx.Err()
	})
	if err != nil && (safefs.IsRefusal(err) || ctx.Err() != nil) {
		return err
	}
	if err != nil {
		b.Dir.Unreadable = append(b.Dir.Unreadable, Unreadable{Source{File: dir}, err})
	}
	return nil
}

// addStream adds the objects of one manifest file: a JSON stream when it
// starts with '{', YAML documents otherwise (apimachinery's
// YAMLOrJSONDecoder). A document that does not decode, or lacks apiVersion
// or kind, is an unreadable manifest.
func (b *Bundle) addStream(file string, data []byte) {
	bad := func(line int, err error) {
		b.Dir.Unreadable = append(b.Dir.Unreadable, Unreadable{Source{File: file, Line: line, Column: 1}, err})
	}
	if yamlorjson.HasJSONPrefix(data) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var raw json.RawMessage
			start := int(dec.InputOffset())
			if err := dec.Decode(&raw); err != nil {
				if !errors.Is(err, io.EOF) {
					bad(lineOf(data, start), err)
				}
				return
			}
			b.addObject(file, lineOf(data, start), raw, raw, bad)
		}
	}
	split := yamlorjson.Splitter{}
	for off := 0; off < len(data); {
		doc, n, _, err := split.Split(data[off:], true)
		if err != nil {
			bad(lineOf(data, off), err)
			return
		}
		if doc.Data != nil {
			line := lineOf(data, off+doc.Start)
			js, err := yaml.YAMLToJSON(doc.Data)
			if err != nil {
				bad(line, err)
			} else {
				b.addObject(file, line, js, doc.Data, bad)
			}
		}
		if n == 0 {
			break
		}
		off += n
	}
}

// addObject adds one decoded document (expanding a List).
func (b *Bundle) addObject(file string, line int, js, doc []byte, bad func(int, error)) {
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		return
	}
	var h struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &h); err != nil {
		bad(line, err)
		return
	}
	switch {
	case h.Kind == "":
		bad(line, errors.New("Object 'Kind' is missing"))
		return
	case h.APIVersion == "":
		bad(line, errors.New("Object 'apiVersion' is missing"))
		return
	}
	if h.Items != nil && strings.HasSuffix(h.Kind, "List") {
		for _, it := range h.Items {
			b.addObject(file, line, it, doc, bad)
		}
		return
	}
	b.Objects = append(b.Objects, Object{JSON: js, Source: &Source{File: file, Line: line, Column: 1, doc: doc, docLine: line}})
}

func lineOf(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// readProperties sets the bundle's name and the properties opm render
// derives, each with the metadata file line or CSV element it comes from.
// When opm render cannot render the directory, the properties stay unknown
// (Dir.PropertiesErr) and dependencies are not checked.
func (b *Bundle) readProperties(ctx context.Context, fsys *safefs.FS) {
	pb, err := bundle.ParseFS(ctx, fsys)
	if err == nil {
		var dc *declcfgBundle
		dc, err = renderProperties(pb)
		if err == nil {
			b.Name = dc.name
			b.Properties = dc.props
			b.Dir.PropertySources = dc.sources
			return
		}
	}
	b.Dir.PropertiesErr = err
	for _, o := range b.Objects {
		var h objectHead
		if json.Unmarshal(o.JSON, &h) == nil && h.Kind == manifest.KindCSV {
			b.Name = h.Metadata.Name
		}
	}
}

type declcfgBundle struct {
	name    string
	props   []property.Property
	sources []PropertySource
}

// renderProperties returns the properties opm render gives pb (without
// its olm.bundle.object ones), and where each dependency comes from.
func renderProperties(pb *bundle.Bundle) (*declcfgBundle, error) {
	dc, err := pb.Declcfg("")
	if err != nil {
		return nil, err
	}
	out := &declcfgBundle{name: dc.Name}
	for _, p := range dc.Properties {
		if p.Type == property.TypeBundleObject {
			continue
		}
		out.props = append(out.props, p)
		out.sources = append(out.sources, dependencySource(pb, p))
	}
	return out, nil
}

// dependencySource finds where the dependency p of a rendered bundle was
// declared: a line of metadata/dependencies.yaml or properties.yaml, or a
// required CRD or APIService of the CSV, or its olm.properties annotation.
func dependencySource(pb *bundle.Bundle, p property.Property) PropertySource {
	switch p.Type {
	case property.TypePackageRequired, property.TypeGVKRequired, property.TypeConstraint:
	default:
		return PropertySource{}
	}
	var want map[string]any
	_ = json.Unmarshal(p.Value, &want)
	match := func(sp bundle.SourcedProperty, typ string) bool {
		if sp.Type != typ {
			return false
		}
		var got map[string]any
		if json.Unmarshal(sp.Value, &got) != nil {
			return false
		}
		switch p.Type {
		case property.TypePackageRequired:
			return got["packageName"] == want["packageName"]
		case property.TypeGVKRequired:
			return got["group"] == want["group"] && got["version"] == want["version"] && got["kind"] == want["kind"]
		}
		return bytes.Equal(compactBytes(sp.Value), compactBytes(p.Value))
	}
	depType := map[string]string{property.TypePackageRequired: property.TypePackage, property.TypeGVKRequired: property.TypeGVK, property.TypeConstraint: property.TypeConstraint}[p.Type]
	for _, d := range pb.Dependencies {
		if match(d, depType) {
			return PropertySource{File: d.File, Line: d.Line}
		}
	}
	for _, d := range pb.Properties {
		if d.File != "" && d.Line > 0 && match(d, p.Type) {
			return PropertySource{File: d.File, Line: d.Line}
		}
	}
	if pb.CSV == nil {
		return PropertySource{}
	}
	if p.Type == property.TypeGVKRequired {
		var spec struct {
			CRDs struct {
				Required []struct{ Name, Version, Kind string } `json:"required"`
			} `json:"customresourcedefinitions"`
			APIServices struct {
				Required []struct{ Group, Version, Kind string } `json:"required"`
			} `json:"apiservicedefinitions"`
		}
		_ = json.Unmarshal(pb.CSV.Spec, &spec)
		for i, r := range spec.CRDs.Required {
			_, group, _ := strings.Cut(r.Name, ".")
			if group == want["group"] && r.Version == want["version"] && r.Kind == want["kind"] {
				return PropertySource{CSVPath: "spec.customresourcedefinitions.required[" + strconv.Itoa(i) + "]"}
			}
		}
		for i, r := range spec.APIServices.Required {
			if r.Group == want["group"] && r.Version == want["version"] && r.Kind == want["kind"] {
				return PropertySource{CSVPath: "spec.apiservicedefinitions.required[" + strconv.Itoa(i) + "]"}
			}
		}
	}
	return PropertySource{CSVPath: `metadata.annotations."olm.properties"`}
}

func compactBytes(v []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return v
	}
	return buf.Bytes()
}

// Position returns where in a bundle directory an issue is: the file, and
// the line and column of the element (0 when unknown). ok is false for a
// bundle not read from a directory, or an issue about the bundle as a
// whole.
func (b *Bundle) Position(is Issue) (s Source, ok bool) {
	switch {
	case is.At != nil:
		return *is.At, true
	case is.Object >= 0 && is.Object < len(b.Objects) && b.Objects[is.Object].Source != nil:
		src := *b.Objects[is.Object].Source
		if is.Path != "" {
			line, col, found := docpath.LocateYAML(src.doc, docpath.Parse(is.Path))
			if found > 0 && line > 0 {
				src.Line, src.Column = src.docLine+line-1, docpath.ByteColumn(src.doc, line, col)
			}
		}
		return src, true
	case is.Property >= 0 && b.Dir != nil && is.Property < len(b.Dir.PropertySources):
		ps := b.Dir.PropertySources[is.Property]
		return Source{File: ps.File, Line: ps.Line, Column: min(ps.Line, 1)}, ps.File != ""
	}
	return Source{}, false
}
