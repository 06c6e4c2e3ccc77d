package bundlevalidate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/resolve"
	"github.com/opmkit/opm/pkg/versionrange"
)

// The bundle format validator: operator-registry's ValidateBundleFormat,
// which operator-sdk runs first and reports as one error listing every
// problem ("error validating format in DIR: Bundle validation errors:
// a,b,c").

// Media types of bundles.
const (
	mediaRegistryV1 = "registry+v1"
	mediaPlain      = "plain"
	mediaHelm       = "helm"
)

// mediaType is the media type operator-registry derives from manifests/
// (GetMediaType): helm for a chart, registry+v1 when a file is a CSV,
// plain otherwise; "" with ok false when the directory has no file.
func mediaType(b *manifest.Bundle) (string, bool) {
	files := len(b.Manifests)
	for _, s := range b.Skipped {
		if !s.Dir {
			files++
		}
	}
	if files == 0 {
		return "", false
	}
	for _, m := range b.Manifests {
		if m.File == "manifests/Chart.yaml" && len(m.Data) > 0 {
			return mediaHelm, true
		}
	}
	for _, m := range b.Manifests {
		if m.Kind == manifest.KindCSV {
			return mediaRegistryV1, true
		}
	}
	return mediaPlain, true
}

// checkFormat runs the bundle format validator.
func (c *checker) checkFormat() {
	b := c.b
	c.begin("format")
	if !b.HasManifestsDir {
		c.formatErr("format-manifests-dir", "Unable to locate manifests directory", "the bundle has no manifests/ directory", at{})
	}
	if !b.HasMetadataDir {
		c.formatErr("format-metadata-dir", "Unable to locate metadata directory", "the bundle has no metadata/ directory", at{})
	}
	if !b.HasManifestsDir || !b.HasMetadataDir {
		return
	}
	media, ok := mediaType(b)
	if !ok {
		msg := fmt.Sprintf("The directory %s contains no yaml files", c.joinDir("manifests"))
		c.formatErr("format-no-manifests", msg, "manifests/ holds no file", at{})
	}
	a := b.Annotations
	if a == nil {
		c.formatErr("format-annotations-missing", "Could not find annotations file", "no file of metadata/ holds an annotations map (metadata/annotations.yaml)", at{})
	} else {
		c.checkAnnotations(a, media)
	}
	if b.Dependencies != nil {
		c.checkDependencies(b.Dependencies)
	}
}

// joinDir names a directory of the bundle as operator-sdk names it.
func (c *checker) joinDir(name string) string {
	if c.dir == "" || c.dir == "." {
		return name
	}
	return strings.TrimSuffix(c.dir, "/") + "/" + name
}

func (c *checker) formatErr(code, upstream, message string, where at) {
	c.add(Finding{Severity: SeverityError, Code: code, Upstream: upstream, Message: message, format: true}, where)
}

// annotationChecks are the annotations operator-registry checks, in the
// order this validator reports them (upstream walks a map).
var annotationChecks = []string{
	manifest.AnnotationMediaType,
	manifest.AnnotationManifests,
	manifest.AnnotationMetadata,
	manifest.AnnotationPackage,
	manifest.AnnotationChannels,
	manifest.AnnotationDefaultChannel,
}

func (c *checker) checkAnnotations(a *manifest.Annotations, media string) {
	for _, label := range annotationChecks {
		val, ok := a.Values[label]
		where := atMetadata(a.MetadataFile, "annotations")
		if ok {
			where = atMetadata(a.MetadataFile, "annotations."+quoteKey(label))
		}
		if !ok && label != manifest.AnnotationDefaultChannel {
			c.formatErr("format-annotation-missing", fmt.Sprintf("Missing annotation %q", label),
				fmt.Sprintf("missing annotation %s", label), where)
		}
		switch label {
		case manifest.AnnotationMediaType:
			if val != media {
				c.formatErr("format-annotation-value", fmt.Sprintf("Expecting annotation %q to have value %q instead of %q", label, media, val),
					fmt.Sprintf("annotation %s is %q; the manifests make it %q", label, val, media), where)
			}
		case manifest.AnnotationChannels:
			if val == "" {
				c.formatErr("format-annotation-value", fmt.Sprintf("Expecting annotation %q to have non-empty value", label),
					fmt.Sprintf("annotation %s must not be empty", label), where)
			}
		case manifest.AnnotationDefaultChannel:
			if ok && val == "" {
				c.formatErr("format-annotation-value", fmt.Sprintf("Expecting annotation %q to have non-empty value", label),
					fmt.Sprintf("annotation %s must not be empty", label), where)
			}
		}
	}
}

// quoteKey writes a key for a docpath path.
func quoteKey(k string) string {
	if strings.ContainsAny(k, ".[]\"") {
		return strconv.Quote(k)
	}
	return k
}

// Dependency types.
const (
	depGVK        = "olm.gvk"
	depPackage    = "olm.package"
	depLabel      = "olm.label"
	depConstraint = "olm.constraint"
)

// checkDependencies validates each entry of the dependencies file as
// operator-registry does.
func (c *checker) checkDependencies(f *manifest.ItemsFile) {
	for i, d := range f.Items {
		where := atMetadata(f.MetadataFile, "dependencies["+strconv.Itoa(i)+"]")
		var errs []string
		switch d.Type {
		case depGVK:
			var v struct{ Group, Kind, Version string }
			if json.Unmarshal(d.Value, &v) != nil {
				errs = append(errs, "couldn't parse dependency of type "+d.Type)
				break
			}
			if v.Group == "" {
				errs = append(errs, "API Group is empty")
			}
			if v.Version == "" {
				errs = append(errs, "API Version is empty")
			}
			if v.Kind == "" {
				errs = append(errs, "API Kind is empty")
			}
		case depPackage:
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if json.Unmarshal(d.Value, &v) != nil {
				errs = append(errs, "couldn't parse dependency of type "+d.Type)
				break
			}
			if v.PackageName == "" {
				errs = append(errs, "Package name is empty")
			}
			if v.Version == "" {
				errs = append(errs, "Package version is empty")
			} else if _, err := versionrange.ParseSkipRange(v.Version); err != nil {
				errs = append(errs, "Invalid semver format version")
			}
		case depLabel:
			var v struct {
				Label string `json:"label"`
			}
			if json.Unmarshal(d.Value, &v) != nil {
				errs = append(errs, "couldn't parse dependency of type "+d.Type)
				break
			}
			if v.Label == "" {
				errs = append(errs, "Label information is missing")
			}
		case depConstraint:
			var v struct {
				Cel *struct {
					Rule string `json:"rule"`
				} `json:"cel"`
			}
			if json.Unmarshal(d.Value, &v) != nil {
				errs = append(errs, "couldn't parse dependency of type "+d.Type)
				break
			}
			switch {
			case v.Cel == nil:
				errs = append(errs, "The CEL field is missing")
			case v.Cel.Rule == "":
				errs = append(errs, "The CEL expression is missing")
			default:
				if err := compileCel(v.Cel.Rule); err != nil {
					errs = append(errs, "Invalid CEL expression: "+err.Error())
				}
			}
		default:
			errs = append(errs, "couldn't parse dependency of type "+d.Type)
		}
		for _, e := range errs {
			c.formatErr("format-dependency", e, fmt.Sprintf("dependency %d (%s): %s", i, d.Type, e), where)
		}
	}
}

// compileCel compiles a constraint's rule in OLM's environment; it must
// be boolean.
func compileCel(rule string) error {
	env, err := resolve.CelEnv()
	if err != nil {
		return err
	}
	ast, iss := env.Compile(rule)
	if iss != nil && iss.Err() != nil {
		return iss.Err()
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return fmt.Errorf("cel expressions must have type Bool")
	}
	return nil
}
