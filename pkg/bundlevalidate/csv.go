package bundlevalidate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/k8sname"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The CSV validator (operator-framework/api's ClusterServiceVersionValidator).

const minKubeVersionWarning = "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. " +
	"Otherwise, it would mean that your operator project can be distributed and installed in any cluster version " +
	"available, which is not necessarily the case for all projects."

// invalidCSV reports upstream's ErrInvalidCSV/WarnInvalidCSV: the detail
// prefixed with the CSV's name, an empty value.
func (c *checker) invalidCSV(sev Severity, code, detail, message string, where at) {
	up := apiError(levelOf(sev), "", str(""), fmt.Sprintf("(%s) %s", c.b.CSV.Name, detail))
	c.add(Finding{Severity: sev, Code: code, Upstream: up, Message: message}, where)
}

func (c *checker) checkCSV() {
	csv := c.b.CSV
	c.begin("csv")
	m := csv.Manifest
	if err := csvNameError(csv.Name); err != "" {
		c.invalidCSV(SeverityError, "csv-name-invalid", "metadata.name "+err, "metadata.name "+err, atManifest(m, "metadata.name"))
	}
	if r := csv.Spec.Replaces; r != "" {
		if err := csvNameError(r); err != "" {
			c.invalidCSV(SeverityError, "csv-replaces-invalid", "spec.replaces "+err, "spec.replaces "+err, atManifest(m, "spec.replaces"))
		}
	}
	c.checkExamples()
	c.checkInstallModes()
	c.checkMinKubeVersion("csv")
	c.checkRequiredFields()
	c.checkAnnotationNames()
	if v := manifest.GVKOf(csv.TypeMeta.APIVersion, csv.TypeMeta.Kind); v.Version == "" {
		c.invalidCSV(SeverityError, "csv-apiversion-missing", "'apiVersion' is missing", "apiVersion is missing", atManifest(m, ""))
	}
}

// csvNameError is upstream's parseCSVNameFormat: a CSV name must be a DNS
// subdomain and a label value.
func csvNameError(name string) string {
	errs := append(k8sname.IsDNS1123Subdomain(name), k8sname.IsValidLabelValue(name)...)
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("%q is invalid: %s", name, strings.Join(errs, ","))
}

// checkExamples compares alm-examples (or olm.examples) with the provided
// APIs.
func (c *checker) checkExamples() {
	csv := c.b.CSV
	m := csv.Manifest
	ann := csv.Metadata.Annotations
	if len(ann) == 0 {
		c.invalidCSV(SeverityWarning, "csv-annotations-missing", "annotations not found", "the CSV has no annotations (no alm-examples)", atManifest(m, "metadata"))
		return
	}
	alm, almOK := ann["alm-examples"]
	olm, olmOK := ann["olm.examples"]
	key := "alm-examples"
	var text string
	switch {
	case !almOK && !olmOK:
		c.invalidCSV(SeverityWarning, "csv-examples-missing", "example annotations not found", "the CSV has no alm-examples annotation", atManifest(m, "metadata.annotations"))
		return
	case almOK:
		if olmOK {
			c.invalidCSV(SeverityWarning, "csv-examples-both", "both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`",
				"both alm-examples and olm.examples are present; only alm-examples is checked", atManifest(m, "metadata.annotations."+quoteKey("olm.examples")))
		}
		text = alm
	default:
		key = "olm.examples"
		text = olm
	}
	where := atManifest(m, "metadata.annotations."+quoteKey(key))
	if err := exampleJSONError(text); err != nil {
		c.add(Finding{Severity: SeverityError, Code: "csv-examples-invalid",
			Upstream: apiError(levelError, "", str(err.Error()), "invalid example"),
			Message:  key + " is not valid JSON: " + firstLineOf(err.Error())}, where)
		return
	}
	examples, err := decodeExamples(text)
	if err != nil {
		c.add(Finding{Severity: SeverityError, Code: "csv-examples-decode",
			Upstream: apiError(levelError, "", str(err.Error()), "error decoding example CustomResource"),
			Message:  "decoding " + key + ": " + err.Error()}, where)
		return
	}
	parsed := map[manifest.GVK]int{}
	for i, e := range examples {
		k := manifest.GVKOf(e.apiVersion, e.kind)
		if _, ok := parsed[k]; !ok {
			parsed[k] = i
		}
	}
	provided := map[manifest.GVK]string{}
	for i, o := range csv.Spec.CustomResourceDefinitions.Owned {
		_, group, ok := strings.Cut(o.Name, ".")
		path := "spec.customresourcedefinitions.owned[" + strconv.Itoa(i) + "]"
		if !ok {
			d := "couldn't parse plural.group from crd name: " + o.Name
			c.add(Finding{Severity: SeverityError, Code: "csv-owned-crd-name", Upstream: apiError(levelError, "", nil, d), Message: d}, atManifest(m, path+".name"))
			continue
		}
		k := manifest.GVK{Group: group, Version: o.Version, Kind: o.Kind}
		if _, ok := provided[k]; !ok {
			provided[k] = path
		}
	}
	for i, o := range csv.Spec.APIServiceDefinitions.Owned {
		k := manifest.GVK{Group: o.Group, Version: o.Version, Kind: o.Kind}
		if _, ok := provided[k]; !ok {
			provided[k] = "spec.apiservicedefinitions.owned[" + strconv.Itoa(i) + "]"
		}
	}
	for _, k := range sortedGVKs(parsed) {
		if _, ok := provided[k]; !ok {
			c.add(Finding{Severity: SeverityError, Code: "csv-example-not-provided",
				Upstream: apiError(levelError, "", str(k.String()), "example must have a provided API"),
				Message:  fmt.Sprintf("%s example %d is of %s, which the CSV does not own", key, parsed[k], k)}, where)
		}
	}
	for _, k := range sortedGVKs(provided) {
		if _, ok := parsed[k]; !ok {
			c.add(Finding{Severity: SeverityWarning, Code: "csv-example-missing",
				Upstream: apiError(levelWarn, "", str(k.String()), "provided API should have an example annotation"),
				Message:  fmt.Sprintf("owned API %s has no example in %s", k, key)}, atManifest(m, provided[k]))
		}
	}
}

func sortedGVKs[V any](m map[manifest.GVK]V) []manifest.GVK {
	out := make([]manifest.GVK, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// exampleJSONError is upstream's validateJSON: the examples must be JSON,
// and a syntax error quotes the text up to it.
func exampleJSONError(text string) error {
	if text == "" {
		return nil
	}
	var raw json.RawMessage
	err := json.Unmarshal([]byte(text), &raw)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid character at %v\n %s<--(see the invalid character)", se.Offset, text[:min(int(se.Offset), len(text))])
	}
	return err
}

type example struct{ apiVersion, kind string }

// decodeExamples decodes the examples as a list of objects, each with a
// kind, as upstream decodes them into unstructured objects.
func decodeExamples(text string) ([]example, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var list []map[string]any
	if err := bundle.DecodeFirst([]byte(text), &list); err != nil {
		return nil, err
	}
	out := make([]example, 0, len(list))
	for _, o := range list {
		kind, _ := o["kind"].(string)
		if kind == "" {
			js, _ := json.Marshal(o)
			return nil, errors.New("Object 'Kind' is missing in '" + string(js) + "'") // upstream's words
		}
		av, _ := o["apiVersion"].(string)
		out = append(out, example{apiVersion: av, kind: kind})
	}
	return out, nil
}

func (c *checker) checkInstallModes() {
	csv := c.b.CSV
	m := csv.Manifest
	modes := csv.Spec.InstallModes
	if len(modes) == 0 {
		c.invalidCSV(SeverityError, "csv-install-modes-missing", "install modes not found", "spec.installModes is missing or empty", atManifest(m, "spec.installModes"))
		return
	}
	anySupported := false
	for _, im := range modes {
		if im.Supported {
			anySupported = true
		}
	}
	for i, w := range csv.Spec.WebhookDefinitions {
		if len(w.ConversionCRDs) == 0 {
			continue
		}
		onlyAll := true
		for _, im := range modes {
			if im.Type == manifest.InstallModeAllNamespaces && !im.Supported {
				onlyAll = false
			}
			if im.Type != manifest.InstallModeAllNamespaces && im.Supported {
				onlyAll = false
			}
		}
		if !onlyAll {
			c.invalidCSV(SeverityError, "csv-install-modes-conversion", "only AllNamespaces InstallModeType is supported when conversionCRDs is present",
				fmt.Sprintf("webhook definition %d converts CRDs, so AllNamespaces must be the only supported install mode", i), atManifest(m, "spec.installModes"))
		}
	}
	if !anySupported {
		c.invalidCSV(SeverityError, "csv-install-modes-unsupported", "none of InstallModeTypes are supported", "no install mode is supported", atManifest(m, "spec.installModes"))
	}
}

// checkMinKubeVersion is the minKubeVersion check, run by the CSV
// validator and again by the OperatorHub ones (validator names the rule
// codes' prefix).
func (c *checker) checkMinKubeVersion(validator string) {
	csv := c.b.CSV
	m := csv.Manifest
	v := csv.Spec.MinKubeVersion
	if strings.TrimSpace(v) == "" {
		c.invalidCSV(SeverityWarning, validator+"-min-kube-version-missing", minKubeVersionWarning,
			"spec.minKubeVersion is not set: the operator can be installed on any Kubernetes version", atManifest(m, "spec.minKubeVersion"))
		return
	}
	if _, err := semver.Parse(v); err != nil {
		d := "csv.Spec.MinKubeVersion has an invalid value: " + v
		c.invalidCSV(SeverityError, validator+"-min-kube-version-invalid", d, fmt.Sprintf("spec.minKubeVersion %q is not a semantic version: %v", v, err), atManifest(m, "spec.minKubeVersion"))
	}
}

// checkRequiredFields reports the fields of upstream's CSV type that have
// no omitempty and are not set (its checkEmptyFields).
func (c *checker) checkRequiredFields() {
	csv := c.b.CSV
	m := csv.Manifest
	missing := func(field, kind, path string) {
		c.add(Finding{Severity: SeverityError, Code: "csv-required-field",
			Upstream: apiError(levelError, field, str(kind), "required field missing"),
			Message:  "required field " + path + " is missing"}, atManifest(m, path))
	}
	if !csv.MetadataSet {
		missing("ObjectMeta", "struct", "metadata")
	}
	if !csv.SpecSet {
		missing("Spec", "struct", "spec")
		return
	}
	is := csv.Spec.InstallStrategy
	if is.IsZero() {
		missing("Spec.InstallStrategy", "struct", "spec.install")
	} else {
		if is.StrategyName == "" {
			missing("Spec.InstallStrategy.StrategyName", "field", "spec.install.strategy")
		}
		sd := is.StrategySpec
		if (sd.Permissions != nil || sd.ClusterPermissions != nil) && sd.DeploymentSpecs == nil {
			missing("Spec.InstallStrategy.StrategySpec.DeploymentSpecs", "field", "spec.install.spec.deployments")
		}
	}
	if csv.Spec.DisplayName == "" {
		missing("Spec.DisplayName", "field", "spec.displayName")
	}
}

// caseSensitiveAnnotations are OLM's annotation keys whose case matters.
var caseSensitiveAnnotations = map[string]string{
	"olm.operatorgroup":     "olm.operatorGroup",
	"olm.operatornamespace": "olm.operatorNamespace",
	"olm.targetnamespaces":  "olm.targetNamespaces",
	"olm.providedapis":      "olm.providedAPIs",
	"olm.skiprange":         "olm.skipRange",
}

func (c *checker) checkAnnotationNames() {
	csv := c.b.CSV
	m := csv.Manifest
	keys := make([]string, 0, len(csv.Metadata.Annotations))
	for k := range csv.Metadata.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where := atManifest(m, "metadata.annotations."+quoteKey(k))
		if want, ok := caseSensitiveAnnotations[strings.ToLower(k)]; ok && k != want {
			d := fmt.Sprintf("provided annotation %s uses wrong case and should be %s instead", k, want)
			c.add(Finding{Severity: SeverityError, Code: "csv-annotation-case", Upstream: apiError(levelError, "", str(csv.Name), d), Message: d}, where)
		}
		if k == "olm.properties" {
			d := "found olm.properties annotation, please define these properties in metadata/properties.yaml instead"
			c.add(Finding{Severity: SeverityWarning, Code: "csv-olm-properties", Upstream: apiError(levelWarn, "", str(""), d), Message: "the olm.properties annotation is deprecated: define these properties in metadata/properties.yaml instead"}, where)
		}
	}
}
