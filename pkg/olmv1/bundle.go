package olmv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/csvtypes"
	"github.com/opmkit/opm/internal/k8sname"
	"github.com/opmkit/opm/internal/yamlorjson"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Bundle is one registry+v1 bundle, as OLM v1 reads it: the catalog's
// properties of the bundle (the resolver reads them) and its manifests
// (the applier renders them).
type Bundle struct {
	// Name is the bundle's name (the catalog's, or the CSV's for a bundle
	// directory).
	Name string
	// Properties are the bundle's properties: the catalog's, or those opm
	// render derives from a bundle directory.
	Properties []property.Property
	// Objects are the bundle's manifests in the order OLM v1 reads them
	// (file name order). Nil when they are not known: then only
	// Properties (dependencies and olm.csv.metadata) are checked.
	Objects []Object
	// Dir is set for a bundle directory: what OLM v1 reads of its layout.
	Dir *Dir

	// unreadable are the catalog's olm.bundle.object properties that do
	// not decode (FromDeclcfg).
	unreadable []unreadableProperty
}

// Object is one manifest of a bundle, as JSON.
type Object struct {
	JSON []byte
	// Source is where a bundle directory's object was read.
	Source *Source
}

// Dir is what OLM v1 reads of a bundle directory (or image) besides its
// manifests (see LoadDir).
type Dir struct {
	// Package is the package metadata/annotations.yaml names, and
	// PackageAt where (the file, or the key's line when it is there).
	Package   string
	PackageAt Source
	// Subdirectories are the directories inside manifests/, as slash
	// paths from the bundle root ("manifests/crds").
	Subdirectories []string
	// Unreadable are the files and documents OLM v1 cannot read.
	Unreadable []Unreadable
	// PropertySources are where each of Bundle.Properties was declared;
	// PropertiesErr is why opm render cannot render the directory, when
	// it cannot (then the properties are unknown).
	PropertySources []PropertySource
	PropertiesErr   error
}

// Issue is one reason for a bundle's verdict. It is about an element of
// an object (Object >= 0: Path inside it), of a property (Property >= 0:
// Path inside its value), or of the bundle as a whole (both -1).
type Issue struct {
	Code    string
	Message string
	Object  int
	// Property is the index of the property in Bundle.Properties.
	Property int
	Path     string
	// Upstream is the message OLM v1 reports for the refusal (in the
	// ClusterExtension's conditions), when it has one of its own.
	Upstream string
	// Help says what to do about it.
	Help string
	// At is where the issue is in a bundle directory, when neither an
	// object nor a property places it.
	At *Source
}

// Level is the level of the issue's rule.
func (is Issue) Level() Level {
	r, _ := RuleByCode(is.Code)
	return r.Level
}

// HelpText is the help a finding about the issue carries: OLM v1's own
// message, quoted, then what to do, joined by "; ".
func (is Issue) HelpText() string {
	var help []string
	if is.Upstream != "" {
		help = append(help, fmt.Sprintf("OLM v1 says: %q", is.Upstream))
	}
	if is.Help != "" {
		help = append(help, is.Help)
	}
	return strings.Join(help, "; ")
}

// WatchNamespace is what a ClusterExtension's watchNamespace config may or
// must be, for the install modes a bundle supports.
type WatchNamespace int

const (
	// WatchNone: the bundle supports AllNamespaces only; its config has no
	// watchNamespace (setting one is an error).
	WatchNone WatchNamespace = iota
	// WatchOptional: AllNamespaces and OwnNamespace or SingleNamespace:
	// without one the operator watches every namespace.
	WatchOptional
	// WatchOwn: OwnNamespace only: required, the install namespace.
	WatchOwn
	// WatchSingle: SingleNamespace only: required, another namespace than
	// the install namespace.
	WatchSingle
	// WatchAny: OwnNamespace and SingleNamespace: required, any namespace.
	WatchAny
	// WatchUnsupported: none of AllNamespaces, OwnNamespace and
	// SingleNamespace: not installable.
	WatchUnsupported
)

// Describe says what the watchNamespace config must be.
func (w WatchNamespace) Describe() string {
	switch w {
	case WatchNone:
		return "no watchNamespace (the bundle supports AllNamespaces only)"
	case WatchOptional:
		return "optional: without one the operator watches all namespaces"
	case WatchOwn:
		return "required: the install namespace (OwnNamespace)"
	case WatchSingle:
		return "required: a namespace other than the install namespace (SingleNamespace)"
	case WatchAny:
		return "required: the install namespace (OwnNamespace) or another one (SingleNamespace)"
	}
	return "none can make it installable: it supports none of AllNamespaces, OwnNamespace and SingleNamespace"
}

// Verdict is what OLM v1 does with a bundle.
type Verdict struct {
	// Installable is true when no rule refuses the bundle (conditions may
	// apply: see Issues).
	Installable bool
	// ManifestsRead is false when the manifests were not known, so that
	// only the properties were checked.
	ManifestsRead bool
	// InstallModes are the supported install modes, sorted; Modes says
	// whether they were known.
	InstallModes []string
	Modes        bool
	// Watch is what the watchNamespace config must be.
	Watch WatchNamespace
	// Webhooks is the number of webhook definitions.
	Webhooks int
	// Issues are every reason, in rule order, then by position.
	Issues []Issue
}

// Codes returns the codes of the verdict's issues of a level, each once,
// in rule order.
func (v *Verdict) Codes(l Level) []string {
	var out []string
	for _, is := range v.Issues {
		if is.Level() == l && !slices.Contains(out, is.Code) {
			out = append(out, is.Code)
		}
	}
	return out
}

// Check returns OLM v1's verdict on b, with the feature gates g.
//
// OLM v1 reports the first reason it meets (the resolver's dependency
// check, then the applier's, then every render validator at once); Check
// reports every reason, each where it is.
func Check(b *Bundle, g Gates) *Verdict {
	v := &Verdict{ManifestsRead: b.Objects != nil || b.Dir != nil}
	c := &checker{b: b, g: g, v: v}
	c.dependencies()
	switch {
	case v.ManifestsRead:
		c.manifests()
	default:
		c.metadataOnly()
	}
	v.Installable = true
	for _, is := range v.Issues {
		if is.Level() == Refused {
			v.Installable = false
		}
	}
	sort.SliceStable(v.Issues, func(i, j int) bool { return ruleOrder[v.Issues[i].Code] < ruleOrder[v.Issues[j].Code] })
	return v
}

// ruleOrder is each rule's index in Rules.
var ruleOrder = func() map[string]int {
	m := map[string]int{}
	for i, r := range Rules {
		m[r.Code] = i
	}
	return m
}()

type checker struct {
	b *Bundle
	g Gates
	v *Verdict
}

func (c *checker) add(is Issue) { c.v.Issues = append(c.v.Issues, is) }

func (c *checker) objectIssue(code string, obj int, path, msg string) *Issue {
	c.add(Issue{Code: code, Object: obj, Property: -1, Path: path, Message: msg})
	return &c.v.Issues[len(c.v.Issues)-1]
}

// dependencies is the resolver's refusal of dependency properties.
func (c *checker) dependencies() {
	if d := c.b.Dir; d != nil && d.PropertiesErr != nil {
		c.add(Issue{Code: CodeDependenciesNotChecked, Object: -1, Property: -1,
			Message: fmt.Sprintf("opm render cannot render the bundle, so its dependencies were not checked: %v", d.PropertiesErr),
			Help:    "a catalog can only hold the bundle once opm render renders it"})
	}
	for i, p := range c.b.Properties {
		switch p.Type {
		case property.TypePackageRequired, property.TypeGVKRequired, property.TypeConstraint:
		default:
			continue
		}
		obj, path := -1, ""
		if d := c.b.Dir; d != nil && i < len(d.PropertySources) && d.PropertySources[i].CSVPath != "" {
			obj, path = lastCSV(c.b.Objects), d.PropertySources[i].CSVPath
		}
		c.add(Issue{Code: CodeDependency, Object: obj, Property: i, Path: path,
			Message:  fmt.Sprintf("bundle %q declares a dependency (%s %s): OLM v1 does not resolve dependencies", c.b.Name, p.Type, compactJSON(p.Value)),
			Upstream: fmt.Sprintf("bundle %q has a dependency declared via property %q which is currently not supported", c.b.Name, p.Type),
			Help:     "drop the dependency for OLM v1 (install what it needs separately), or ship the OLM v1 bundle without it",
		})
	}
}

// metadataOnly checks what an olm.csv.metadata property tells: install
// modes and owned APIServices.
func (c *checker) metadataOnly() {
	at := -1
	var meta csvtypes.Metadata
	for i, p := range c.b.Properties {
		if p.Type == property.TypeCSVMetadata && json.Unmarshal(p.Value, &meta) == nil {
			at = i
			break
		}
	}
	if at < 0 {
		c.add(Issue{Code: CodeManifestsNotRead, Object: -1, Property: -1,
			Message: fmt.Sprintf("bundle %q: the catalog holds neither its manifests (olm.bundle.object) nor olm.csv.metadata: only its dependencies were checked", c.b.Name),
			Help:    "--pull-bundles reads the manifests from the bundle image"})
		return
	}
	c.add(Issue{Code: CodeManifestsNotRead, Object: -1, Property: at,
		Message: fmt.Sprintf("bundle %q: the catalog holds olm.csv.metadata but not its manifests: install modes and APIServices were checked, webhooks, deployments, CRDs and permissions were not", c.b.Name),
		Help:    "--pull-bundles reads the manifests from the bundle image"})
	prop := func(code, path, msg string) *Issue {
		c.add(Issue{Code: code, Object: -1, Property: at, Path: path, Message: msg})
		return &c.v.Issues[len(c.v.Issues)-1]
	}
	c.apiServices(meta.APIServiceDefinitions.Owned, "apiServiceDefinitions.owned", prop)
	c.installModes(meta.InstallModes, "installModes", prop)
}

func (c *checker) apiServices(owned []csvtypes.APIServiceDescription, path string, at func(code, path, msg string) *Issue) {
	if len(owned) == 0 {
		return
	}
	names := make([]string, len(owned))
	for i, a := range owned {
		names[i] = a.Version + "." + a.Group
		if a.Name != "" {
			names[i] = a.Name
		}
	}
	is := at(CodeAPIServiceOwned, path, fmt.Sprintf("the CSV owns %s %s: OLM v1 does not install bundles that own APIServices",
		plural(len(owned), "APIService", "APIServices"), strings.Join(quoted(names), ", ")))
	is.Upstream = "unsupported bundle: apiServiceDefintions are not supported"
	is.Help = "serve the API from a CRD, or ship this operator for OLM classic only"
}

// installModes applies the applier's install mode checks and the config
// schema's watchNamespace rules.
func (c *checker) installModes(modes []csvtypes.InstallMode, path string, at func(code, path, msg string) *Issue) {
	set := map[string]bool{}
	for _, m := range modes {
		if m.Supported {
			set[m.Type] = true
		}
	}
	c.v.Modes = true
	c.v.InstallModes = slices.Sorted(maps.Keys(set))
	all, own, single := set[AllNamespaces], set[OwnNamespace], set[SingleNamespace]
	switch {
	case all && (own || single):
		c.v.Watch = WatchOptional
	case all:
		c.v.Watch = WatchNone
	case own && single:
		c.v.Watch = WatchAny
	case own:
		c.v.Watch = WatchOwn
	case single:
		c.v.Watch = WatchSingle
	default:
		c.v.Watch = WatchUnsupported
	}
	supported := "supports " + describeModes(c.v.InstallModes)
	notAll := supported + " but not AllNamespaces"
	if len(c.v.InstallModes) == 0 {
		notAll = supported
	}
	if !all && !c.g.SingleOwnNamespace {
		is := at(CodeAllNamespacesUnsupported, path, fmt.Sprintf("the CSV %s: OLM v1 installs only AllNamespaces bundles unless the %s feature gate is on", notAll, GateSingleOwnNamespace))
		is.Upstream = "unsupported bundle: bundle does not support AllNamespaces install mode"
		if c.v.Watch != WatchUnsupported {
			is.Help = fmt.Sprintf("support AllNamespaces; or, on a cluster with %s on (the experimental CRDs), a ClusterExtension with watchNamespace installs it: %s", GateSingleOwnNamespace, c.v.Watch.Describe())
		} else {
			is.Help = "support AllNamespaces"
		}
	}
	if c.v.Watch == WatchUnsupported {
		is := at(CodeInstallModesUnsupported, path, fmt.Sprintf("the CSV %s: OLM v1 installs bundles that support AllNamespaces, OwnNamespace or SingleNamespace", supported))
		is.Upstream = "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes"
		is.Help = "support AllNamespaces"
		return
	}
	if !all && c.g.SingleOwnNamespace {
		is := at(CodeWatchNamespace, path, fmt.Sprintf("the CSV %s: OLM v1 installs it only with a watchNamespace config: %s", notAll, c.v.Watch.Describe()))
		is.Help = "opm generate clusterextension writes a ClusterExtension with a valid watchNamespace; supporting AllNamespaces needs none"
	}
}

// describeModes lists install modes in a sentence: "A", "A and B", "A, B
// and C".
func describeModes(modes []string) string {
	switch len(modes) {
	case 0:
		return "no install mode"
	case 1:
		return modes[0]
	}
	return strings.Join(modes[:len(modes)-1], ", ") + " and " + modes[len(modes)-1]
}

// manifests checks the manifests: the applier's checks, every render
// validator, the CRD generator's refusal and the migration warnings.
func (c *checker) manifests() {
	if d := c.b.Dir; d != nil {
		for _, u := range d.Unreadable {
			code := CodeManifestInvalid
			if !strings.HasPrefix(u.File, "manifests/") {
				code = CodeBundleUnreadable
			}
			at := u.Source
			c.add(Issue{Code: code, Object: -1, Property: -1, At: &at,
				Message: fmt.Sprintf("%s: OLM v1 cannot read it: %v", u.File, u.Err),
				Help:    "every file under manifests/ must hold Kubernetes objects (YAML or JSON), each with apiVersion and kind"})
		}
		for _, s := range d.Subdirectories {
			c.add(Issue{Code: CodeManifestsSubdirectory, Object: -1, Property: -1, At: &Source{File: s},
				Message:  fmt.Sprintf("%s is a directory: OLM v1 reads no directory inside manifests/", s),
				Upstream: fmt.Sprintf("subdirectories are not allowed within the %q directory of the bundle image filesystem: found %q", "manifests", s),
				Help:     "move its manifests up into manifests/"})
		}
		if d.Package == "" && !slices.ContainsFunc(d.Unreadable, func(u Unreadable) bool { return u.File == annotationsFile }) {
			at := d.PackageAt
			c.add(Issue{Code: CodePackageNameEmpty, Object: -1, Property: -1, At: &at,
				Message: annotationsFile + " names no package (" + bundle.AnnotationPackage + ")", Upstream: "package name is empty"})
		}
	}
	for _, u := range c.b.unreadable {
		c.add(Issue{Code: CodeManifestInvalid, Object: -1, Property: u.at,
			Message: fmt.Sprintf("bundle %q: an olm.bundle.object property does not decode: %v", c.b.Name, u.err)})
	}
	m, issues := readManifests(c.b.Objects)
	c.v.Issues = append(c.v.Issues, issues...)
	if m.csv == nil {
		// An unreadable manifest may be the CSV: then it is not missing.
		if len(c.b.unreadable) == 0 && (len(issues) == 0 || !hasCSVIssue(c.b.Objects, issues)) {
			c.add(Issue{Code: CodeNoCSV, Object: -1, Property: -1,
				Message:  fmt.Sprintf("the bundle has no ClusterServiceVersion among its %s", plural(len(c.b.Objects), "manifest", "manifests")),
				Upstream: `no ClusterServiceVersion found in "manifests"`})
		}
		return
	}
	csv, at := m.csv, m.csvAt
	obj := func(code, path, msg string) *Issue { return c.objectIssue(code, at, path, msg) }

	// The applier's checks (provider.go), in its order.
	c.apiServices(csv.Spec.APIServiceDefinitions.Owned, "spec.apiservicedefinitions.owned", obj)
	c.v.Webhooks = len(csv.Spec.WebhookDefinitions)
	if n := c.v.Webhooks; n > 0 {
		kinds := webhookKinds(csv.Spec.WebhookDefinitions)
		if p := c.g.CertProvider(); p != "" {
			is := obj(CodeWebhooksCertProvider, "spec.webhookdefinitions", fmt.Sprintf("the CSV has %s (%s): OLM v1 installs them with certificates from %s, which the cluster must run", plural(n, "webhook", "webhooks"), kinds, p))
			is.Help = "install " + p + " in the cluster before the ClusterExtension"
		} else {
			is := obj(CodeWebhooksUnsupported, "spec.webhookdefinitions", fmt.Sprintf("the CSV has %s (%s) and no certificate provider is enabled (%s and %s off)", plural(n, "webhook", "webhooks"), kinds, GateCertManager, GateServiceCA))
			is.Upstream = "unsupported bundle: webhookDefinitions are not supported"
			is.Help = "enable " + GateCertManager + " (the default) and run cert-manager"
		}
	}
	c.installModes(csv.Spec.InstallModes, "spec.installModes", obj)

	// The render validators (registryv1.go's BundleValidator), in order.
	c.deployments(csv, at)
	c.crds(csv, m)
	c.webhooks(csv, m)
	c.others(m)
	c.migration(csv, at)
}

const annotationsFile = "metadata/annotations.yaml"

// lastCSV is the index of the object OLM v1 takes as the CSV: the last
// ClusterServiceVersion (-1 when there is none).
func lastCSV(objs []Object) int {
	at := -1
	for i, o := range objs {
		var h objectHead
		if json.Unmarshal(o.JSON, &h) == nil && h.Kind == manifest.KindCSV {
			at = i
		}
	}
	return at
}

// hasCSVIssue reports whether one of issues is about an object whose
// kind is ClusterServiceVersion (a CSV that does not decode).
func hasCSVIssue(objs []Object, issues []Issue) bool {
	for _, is := range issues {
		var h objectHead
		if is.Object >= 0 && json.Unmarshal(objs[is.Object].JSON, &h) == nil && h.Kind == manifest.KindCSV {
			return true
		}
	}
	return false
}

func (c *checker) deployments(csv *csvDoc, at int) {
	seen := map[string]bool{}
	reported := map[string]bool{}
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		path := fmt.Sprintf("spec.install.spec.deployments[%d].name", i)
		if seen[d.Name] && !reported[d.Name] {
			reported[d.Name] = true
			is := c.objectIssue(CodeDeploymentDuplicate, at, path, fmt.Sprintf("deployment %q is listed twice in the CSV's install strategy", d.Name))
			is.Upstream = fmt.Sprintf("cluster service version contains duplicate strategy deployment spec '%s'", d.Name)
		}
		seen[d.Name] = true
		if errs := k8sname.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			slices.Sort(errs)
			is := c.objectIssue(CodeDeploymentNameInvalid, at, path, fmt.Sprintf("deployment name %q is not a DNS-1123 subdomain: %s", d.Name, strings.Join(errs, ", ")))
			is.Upstream = fmt.Sprintf("invalid cluster service version strategy deployment name '%s': %s", d.Name, strings.Join(errs, ", "))
		}
	}
}

func (c *checker) crds(csv *csvDoc, m *manifests) {
	have := map[string]bool{}
	reported := map[string]bool{}
	for _, crd := range m.crds {
		if have[crd.name] && !reported[crd.name] {
			reported[crd.name] = true
			is := c.objectIssue(CodeCRDDuplicate, crd.at, "metadata.name", fmt.Sprintf("CRD %q is in the bundle twice", crd.name))
			is.Upstream = fmt.Sprintf("bundle contains duplicate custom resource definition '%s'", crd.name)
		}
		have[crd.name] = true
	}
	reported = map[string]bool{}
	for i, o := range csv.Spec.CustomResourceDefinitions.Owned {
		if have[o.Name] || reported[o.Name] {
			continue
		}
		reported[o.Name] = true
		is := c.objectIssue(CodeOwnedCRDMissing, m.csvAt, fmt.Sprintf("spec.customresourcedefinitions.owned[%d].name", i), fmt.Sprintf("the CSV owns CRD %q, which is not in the bundle", o.Name))
		is.Upstream = fmt.Sprintf("cluster service definition references owned custom resource definition '%s' not found in bundle", o.Name)
	}
}

// forbiddenRuleGroups and forbiddenAdmissionResources are what admission
// webhook rules may not target (CheckWebhookRules).
var (
	forbiddenRuleGroups         = []string{"olm.operatorframework.io", "*"}
	forbiddenAdmissionResources = []string{"*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations", "validatingwebhookconfiguration", "validatingwebhookconfigurations"}
)

func (c *checker) webhooks(csv *csvDoc, m *manifests) {
	whs := csv.Spec.WebhookDefinitions
	at := m.csvAt
	path := func(i int) string { return fmt.Sprintf("spec.webhookdefinitions[%d]", i) }
	modes := c.v.InstallModes
	deployments := map[string]bool{}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[d.Name] = true
	}
	owned := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[o.Name] = true
	}
	crdAt := map[string]int{}
	for _, crd := range m.crds {
		if _, ok := crdAt[crd.name]; !ok {
			crdAt[crd.name] = crd.at
		}
	}
	seen := map[string]bool{}
	dupReported := map[string]bool{}
	convertedBy := map[string][]string{}
	sharedAt := map[string]string{} // the second conversionCRDs item naming a CRD
	var shared []string
	preserveReported := map[string]bool{}
	for i, wh := range whs {
		if wh.Type == manifest.WebhookConversion && !(len(modes) == 1 && modes[0] == AllNamespaces) {
			is := c.objectIssue(CodeConversionInstallModes, at, path(i)+".type", fmt.Sprintf("conversion webhook %q: the CSV supports %s: OLM v1 installs conversion webhooks only for bundles that support AllNamespaces alone", wh.GenerateName, describeModes(modes)))
			is.Upstream = fmt.Sprintf("bundle contains conversion webhook %q and supports install modes %v - conversion webhooks are only supported for bundles that only support AllNamespaces install mode", wh.GenerateName, modes)
		}
		if !deployments[wh.DeploymentName] {
			is := c.objectIssue(CodeWebhookDeploymentMissing, at, path(i)+".deploymentName", fmt.Sprintf("webhook %q names deployment %q, which the CSV's install strategy does not have", wh.GenerateName, wh.DeploymentName))
			is.Upstream = fmt.Sprintf("webhook of type '%s' with name '%s' references non-existent deployment '%s'", wh.Type, wh.GenerateName, wh.DeploymentName)
		}
		key := wh.Type + "\x00" + wh.GenerateName
		if seen[key] && !dupReported[key] {
			dupReported[key] = true
			is := c.objectIssue(CodeWebhookDuplicate, at, path(i)+".generateName", fmt.Sprintf("two %s webhooks are named %q", wh.Type, wh.GenerateName))
			is.Upstream = fmt.Sprintf("duplicate webhook '%s' of type '%s'", wh.GenerateName, wh.Type)
		}
		seen[key] = true
		if errs := k8sname.IsDNS1123Subdomain(wh.GenerateName); len(errs) > 0 {
			slices.Sort(errs)
			is := c.objectIssue(CodeWebhookNameInvalid, at, path(i)+".generateName", fmt.Sprintf("webhook name %q is not a DNS-1123 subdomain: %s", wh.GenerateName, strings.Join(errs, ", ")))
			is.Upstream = fmt.Sprintf("webhook of type '%s' has invalid name '%s': %s", wh.Type, wh.GenerateName, strings.Join(errs, ","))
		}
		if wh.Type == manifest.WebhookConversion {
			for j, crd := range wh.ConversionCRDs {
				p := fmt.Sprintf("%s.conversionCRDs[%d]", path(i), j)
				convertedBy[crd] = append(convertedBy[crd], wh.GenerateName)
				if len(convertedBy[crd]) == 2 {
					sharedAt[crd] = p
					shared = append(shared, crd)
				}
				if !owned[crd] {
					is := c.objectIssue(CodeConversionCRDNotOwned, at, p, fmt.Sprintf("conversion webhook %q converts CRD %q, which the CSV does not own", wh.GenerateName, crd))
					is.Upstream = fmt.Sprintf("conversion webhook '%s' references custom resource definition '%s' not owned bundle", wh.GenerateName, crd)
				}
				if k, ok := crdAt[crd]; ok && m.preserve[k] && !preserveReported[crd] {
					preserveReported[crd] = true
					is := c.objectIssue(CodeConversionPreserve, k, "spec.preserveUnknownFields", fmt.Sprintf("CRD %q has preserveUnknownFields: true, and conversion webhook %q converts it: the API server would not call the webhook", crd, wh.GenerateName))
					is.Upstream = fmt.Sprintf("custom resource definition '%s' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion", crd)
				}
			}
			continue
		}
		for j, r := range csv.rules[i] {
			for k, g := range r.APIGroups {
				p := fmt.Sprintf("%s.rules[%d].apiGroups[%d]", path(i), j, k)
				if slices.Contains(forbiddenRuleGroups, g) {
					is := c.objectIssue(CodeWebhookRuleForbidden, at, p, fmt.Sprintf("webhook %q has a rule for API group %q: OLM v1 refuses admission webhooks on every API group and on its own", wh.GenerateName, g))
					is.Upstream = fmt.Sprintf("webhook %q contains forbidden rule: admission webhook rules cannot reference API group %q", wh.GenerateName, g)
				}
				if g != "admissionregistration.k8s.io" {
					continue
				}
				for l, res := range r.Resources {
					if slices.Contains(forbiddenAdmissionResources, strings.ToLower(res)) {
						is := c.objectIssue(CodeWebhookRuleForbidden, at, fmt.Sprintf("%s.rules[%d].resources[%d]", path(i), j, l), fmt.Sprintf("webhook %q has a rule for %s of %s: OLM v1 refuses admission webhooks on webhook configurations", wh.GenerateName, res, g))
						is.Upstream = fmt.Sprintf("webhook %q contains forbidden rule: admission webhook rules cannot reference resource %q for API group %q", wh.GenerateName, res, g)
					}
				}
			}
		}
	}
	for _, crd := range shared {
		names := slices.Clone(convertedBy[crd])
		slices.Sort(names)
		is := c.objectIssue(CodeConversionCRDShared, at, sharedAt[crd], fmt.Sprintf("CRD %q is converted by more than one conversion webhook (%s)", crd, strings.Join(quoted(names), ", ")))
		is.Upstream = fmt.Sprintf("conversion webhooks [%s] reference same custom resource definition '%s'", strings.Join(names, ","), crd)
	}
}

// supportedKinds are the kinds a registry+v1 bundle may hold besides its
// CSV and CRDs (operator-registry v1.73.0's pkg/lib/bundle, which OLM v1
// uses).
var supportedKinds = map[string]bool{
	"ClusterRole": true, "ClusterRoleBinding": true, "Service": true, "ServiceAccount": true,
	"Role": true, "RoleBinding": true, "PrometheusRule": true, "ServiceMonitor": true,
	"Secret": true, "ConfigMap": true, "PodDisruptionBudget": true, "PriorityClass": true,
	"VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true, "NetworkPolicy": true,
	"PodMonitor": true,
}

func (c *checker) others(m *manifests) {
	for _, o := range m.others {
		if supportedKinds[o.kind] {
			continue
		}
		is := c.objectIssue(CodeObjectUnsupported, o.at, "kind", fmt.Sprintf("%s %q: a registry+v1 bundle may not hold objects of this kind", o.kind, o.name))
		is.Upstream = fmt.Sprintf("unsupported resource %q with kind %q", o.name, o.kind)
		is.Help = "supported kinds: " + strings.Join(slices.Sorted(maps.Keys(supportedKinds)), ", ")
	}
}

// classicResources are the OLM classic resources whose use the migration
// library flags (not operatorconditions, which OLM classic grants every
// operator).
var classicResources = []string{"subscriptions", "installplans", "clusterserviceversions", "catalogsources", "*"}

// migration raises the migration warnings: permissions on
// OperatorConditions, and on OLM classic's APIs without any on OLM v1's.
func (c *checker) migration(csv *csvDoc, at int) {
	type ruleAt struct {
		r    manifest.PolicyRule
		path string
	}
	var rules []ruleAt
	for _, f := range []struct {
		key   string
		perms []manifest.StrategyDeploymentPermissions
	}{{"permissions", csv.Spec.InstallStrategy.StrategySpec.Permissions}, {"clusterPermissions", csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions}} {
		for i, p := range f.perms {
			for j, r := range p.Rules {
				rules = append(rules, ruleAt{r, fmt.Sprintf("spec.install.spec.%s[%d].rules[%d]", f.key, i, j)})
			}
		}
	}
	condition, classic := -1, -1
	v1 := false
	for k, r := range rules {
		for _, g := range r.r.APIGroups {
			switch g {
			case "olm.operatorframework.io":
				v1 = true
			case "operators.coreos.com":
				for _, res := range r.r.Resources {
					base, _, _ := strings.Cut(res, "/")
					if base == "operatorconditions" && condition < 0 {
						condition = k
					}
					if slices.Contains(classicResources, base) && classic < 0 {
						classic = k
					}
				}
			}
		}
	}
	if condition >= 0 {
		is := c.objectIssue(CodeOperatorCondition, at, rules[condition].path, "the CSV asks for permissions on OperatorConditions (operators.coreos.com): OLM v1 has no OperatorCondition API, so an operator that reads or writes its condition fails under OLM v1")
		is.Help = "make the operator work without its OperatorCondition (operator-lib's conditions) when OLM v1 installs it"
	}
	if classic >= 0 && !v1 {
		is := c.objectIssue(CodeClassicAPI, at, rules[classic].path, "the CSV asks for permissions on OLM classic's APIs (subscriptions, installplans, clusterserviceversions or catalogsources) and none on OLM v1's (olm.operatorframework.io): under OLM v1 those objects do not exist")
		is.Help = "also use OLM v1's ClusterExtensions and ClusterCatalogs, and ask for permissions on them"
	}
}

func webhookKinds(whs []manifest.WebhookDescription) string {
	n := map[string]int{}
	for _, wh := range whs {
		n[wh.Type]++
	}
	var parts []string
	for _, t := range []struct{ typ, name string }{{manifest.WebhookValidating, "validating"}, {manifest.WebhookMutating, "mutating"}, {manifest.WebhookConversion, "conversion"}} {
		if n[t.typ] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[t.typ], t.name))
			delete(n, t.typ)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d of type %q", n[t], t))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// compactJSON is v on one line.
func compactJSON(v json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}

// FromDeclcfg returns the catalog bundle b as OLM v1 reads it: its
// properties, and its manifests from its olm.bundle.object properties
// (Objects nil when it has none). at gives, for each object, the index of
// the property that holds it. A property that does not decode is not an
// object; Check reports it (olmv1-manifest-invalid, at the property).
func FromDeclcfg(b *declcfg.Bundle) (out *Bundle, at []int) {
	out = &Bundle{Name: b.Name, Properties: b.Properties}
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		data, ok := property.BundleObjectData(p.Value)
		if !ok {
			out.unreadable = append(out.unreadable, unreadableProperty{i, errors.New(`not {"data": "<base64>"}`)})
			continue
		}
		js, err := yamlorjson.ToJSON(data)
		if err != nil {
			out.unreadable = append(out.unreadable, unreadableProperty{i, err})
			continue
		}
		out.Objects = append(out.Objects, Object{JSON: js})
		at = append(at, i)
	}
	if out.Objects == nil && out.unreadable != nil {
		out.Objects = []Object{} // manifests there are, none readable
	}
	return out, at
}

// unreadableProperty is an olm.bundle.object property that does not
// decode.
type unreadableProperty struct {
	at  int
	err error
}

// Describe names object i of b: its kind and name.
func (b *Bundle) Describe(i int) string {
	if i < 0 || i >= len(b.Objects) {
		return "manifest"
	}
	var h objectHead
	if err := json.Unmarshal(b.Objects[i].JSON, &h); err != nil || h.Kind == "" {
		return fmt.Sprintf("manifest %d", i)
	}
	return fmt.Sprintf("%s %q", h.Kind, h.Metadata.Name)
}
