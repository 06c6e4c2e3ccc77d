package bundle

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Declcfg builds the olm.bundle blob upstream renders for b, with image as
// its image ("" for a bundle directory). Properties are sorted by type and
// raw value as upstream leaves them (callers that mimic `opm render` then
// move olm.bundle.object to the end and sort relatedImages by image).
func (b *Bundle) Declcfg(image string) (*declcfg.Bundle, error) {
	props, err := b.properties()
	if err != nil {
		return nil, err
	}
	related, err := b.relatedImages(image)
	if err != nil {
		return nil, err
	}
	objects := make([]string, len(b.Objects))
	for i, o := range b.Objects {
		objects[i] = string(o.JSON)
	}
	return &declcfg.Bundle{
		Schema:        declcfg.SchemaBundle,
		Name:          b.Name,
		Package:       b.Package,
		Image:         image,
		Properties:    props,
		RelatedImages: related,
		CsvJSON:       string(b.CSV.JSON),
		Objects:       objects,
	}, nil
}

// PackageProperty returns the olm.package value the rendered bundle carries:
// the last olm.package among the properties, or one built from the
// annotations and the CSV.
func (b *Bundle) PackageProperty() (property.Package, error) {
	var pkg *property.Package
	for i, p := range b.Properties {
		if p.Type != property.TypePackage {
			continue
		}
		var v property.Package
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return property.Package{}, b.propErr(p, &property.ParseError{Index: i, Type: p.Type, Err: err})
		}
		pkg = &v
	}
	if pkg != nil {
		return *pkg, nil
	}
	version, err := b.CSV.Version()
	if err != nil {
		return property.Package{}, fileErr(b.CSV.File, fmt.Errorf("get version: %w", err))
	}
	release, err := b.CSV.Release()
	if err != nil {
		return property.Package{}, fileErr(b.CSV.File, fmt.Errorf("get release: %w", err))
	}
	return property.Package{PackageName: b.Package, Version: version, Release: release}, nil
}

func (b *Bundle) propErr(p SourcedProperty, err error) error {
	err = fmt.Errorf("get properties for bundle %q: %w", b.Name, err)
	if p.File != "" {
		err = &FileError{File: p.File, Line: p.Line, Err: err}
	}
	return err
}

// properties assembles the property list as upstream's
// ObjectsAndPropertiesFromBundle (behaviour doc §3.2).
func (b *Bundle) properties() ([]property.Property, error) {
	type gvk struct{ group, kind, version string }
	providedSet := map[gvk]bool{}
	var provided []gvk
	addProvided := func(k gvk) {
		if !providedSet[k] {
			providedSet[k] = true
			provided = append(provided, k)
		}
	}
	requiredSet := map[gvk]bool{}
	var required []gvk
	addRequired := func(k gvk) {
		if !requiredSet[k] {
			requiredSet[k] = true
			required = append(required, k)
		}
	}
	var other []property.Property

	for i, p := range b.Properties {
		switch p.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, b.propErr(p, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			addProvided(gvk{v.Group, v.Kind, v.Version})
		case property.TypePackage:
			// Checked by PackageProperty below (the last one wins).
		default:
			var v json.RawMessage
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, b.propErr(p, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			other = append(other, property.Property{Type: p.Type, Value: v})
		}
	}
	for i, p := range b.Dependencies {
		switch p.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, b.propErr(p, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			addRequired(gvk{v.Group, v.Kind, v.Version})
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, b.propErr(p, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			other = append(other, property.MustBuild(property.PackageRequired{PackageName: v.PackageName, VersionRange: v.Version}))
		default:
			other = append(other, nullValue(p.Property))
		}
	}
	pkg, err := b.PackageProperty()
	if err != nil {
		return nil, err
	}
	if _, err := b.CSV.Version(); err != nil {
		return nil, b.propErr(SourcedProperty{File: b.CSV.File}, fmt.Errorf("get version: %w", err))
	}
	for _, k := range b.provided {
		addProvided(gvk{k.Group, k.Kind, k.Version})
	}
	requiredAPIs, err := b.requiredAPIs()
	if err != nil {
		return nil, b.propErr(SourcedProperty{File: b.CSV.File}, fmt.Errorf("get required apis: %w", err))
	}
	for _, k := range requiredAPIs {
		addRequired(gvk{k.Group, k.Kind, k.Version})
	}

	props := make([]property.Property, 0, len(b.Objects)+1+len(provided)+len(required)+len(other))
	for _, o := range b.Objects {
		props = append(props, bundleObjectProperty(o.JSON))
	}
	props = append(props, property.MustBuild(pkg))
	for _, k := range provided {
		props = append(props, property.MustBuild(property.GVK{Group: k.group, Kind: k.kind, Version: k.version}))
	}
	for _, k := range required {
		props = append(props, property.MustBuild(property.GVKRequired{Group: k.group, Kind: k.kind, Version: k.version}))
	}
	props = append(props, other...)
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].Type != props[j].Type {
			return props[i].Type < props[j].Type
		}
		return string(props[i].Value) < string(props[j].Value)
	})
	return props, nil
}

// bundleObjectProperty is property.MustBuild(property.BundleObject{data})
// without the encoder's intermediate copies (objects reach megabytes).
func bundleObjectProperty(data []byte) property.Property {
	buf := make([]byte, 0, len(`{"data":""}`)+base64.StdEncoding.EncodedLen(len(data)))
	buf = append(buf, `{"data":"`...)
	buf = base64.StdEncoding.AppendEncode(buf, data)
	buf = append(buf, `"}`...)
	return property.Property{Type: property.TypeBundleObject, Value: buf}
}

// relatedImages builds relatedImages as upstream's getRelatedImages (§3.4),
// before render sorts them.
func (b *Bundle) relatedImages(image string) ([]declcfg.RelatedImage, error) {
	csvImages, err := b.CSV.relatedImages()
	if err != nil {
		return nil, b.CSV.errAt(err, "spec", "relatedImages")
	}
	var out []declcfg.RelatedImage
	seen := map[string]bool{}
	for _, ri := range csvImages {
		out = append(out, declcfg.RelatedImage{Name: ri.Name, Image: ri.Image})
		seen[ri.Image] = true
	}
	if image != "" && !seen[image] {
		out = append(out, declcfg.RelatedImage{Image: image})
	}
	opImages, err := b.CSV.operatorImages()
	if err != nil {
		return nil, b.CSV.errAt(err, "spec", "install")
	}
	for _, img := range opImages {
		if !seen[img] {
			out = append(out, declcfg.RelatedImage{Image: img})
			seen[img] = true
		}
	}
	return out, nil
}
