package manifest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/csvtypes"
)

// CSV is the typed view of a ClusterServiceVersion, decoded from the
// manifest's JSON with encoding/json into types shaped as upstream's
// (operator-framework/api v1alpha1): the same JSON names, so the same
// fields are set, absent (nil) or empty. Parts that no check reads in
// detail (a deployment's pod template beyond its containers, a webhook's
// rules) keep their raw JSON. Elements are located with
// CSV.Manifest.Locate and the JSON path of the field ("spec.installModes[2]").
type CSV struct {
	*Manifest

	TypeMeta TypeMeta
	// Metadata is the object's metadata; MetadataSet reports whether the
	// manifest has a non-empty one.
	Metadata    ObjectMeta
	MetadataSet bool
	Spec        CSVSpec
	// SpecSet reports whether spec has any field set (upstream's
	// "required field missing" for Spec).
	SpecSet bool
}

// TypeMeta is an object's apiVersion and kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// ObjectMeta is the part of an object's metadata the checks read.
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// Types shared with olm.csv.metadata (internal/csvtypes), where the shapes
// are the same.
type (
	CRDDescription        = csvtypes.CRDDescription
	APIServiceDescription = csvtypes.APIServiceDescription
	APIResourceReference  = csvtypes.APIResourceReference
	InstallMode           = csvtypes.InstallMode
	AppLink               = csvtypes.AppLink
	Maintainer            = csvtypes.Maintainer
	Icon                  = csvtypes.Icon
	RelatedImage          = csvtypes.RelatedImage
	GroupVersionKind      = csvtypes.GroupVersionKind

	CustomResourceDefinitions = csvtypes.CustomResourceDefinitions
	APIServiceDefinitions     = csvtypes.APIServiceDefinitions
)

// Install mode types.
const (
	InstallModeOwnNamespace    = "OwnNamespace"
	InstallModeSingleNamespace = "SingleNamespace"
	InstallModeMultiNamespace  = "MultiNamespace"
	InstallModeAllNamespaces   = "AllNamespaces"
)

// CSVSpec is a CSV's spec. Version is kept as written (VersionParsed holds
// it parsed as upstream parses it).
type CSVSpec struct {
	InstallStrategy           NamedInstallStrategy      `json:"install"`
	Version                   *string                   `json:"version,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	CustomResourceDefinitions CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	APIServiceDefinitions     APIServiceDefinitions     `json:"apiservicedefinitions,omitempty"`
	WebhookDefinitions        []WebhookDescription      `json:"webhookdefinitions,omitempty"`
	NativeAPIs                []GroupVersionKind        `json:"nativeAPIs,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	DisplayName               string                    `json:"displayName"`
	Description               string                    `json:"description,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Maintainers               []Maintainer              `json:"maintainers,omitempty"`
	Provider                  AppLink                   `json:"provider,omitempty"`
	Links                     []AppLink                 `json:"links,omitempty"`
	Icon                      []Icon                    `json:"icon,omitempty"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Annotations               map[string]string         `json:"annotations,omitempty"`
	Selector                  json.RawMessage           `json:"selector,omitempty"`
	Cleanup                   struct {
		Enabled bool `json:"enabled"`
	} `json:"cleanup,omitempty"`
	Skips         []string        `json:"skips,omitempty"`
	RelatedImages []RelatedImage  `json:"relatedImages,omitempty"`
	Release       json.RawMessage `json:"release,omitempty"`

	// VersionParsed is Version parsed leniently (blang's ParseTolerant),
	// as upstream's OperatorVersion; zero when absent.
	VersionParsed semver.Version `json:"-"`
}

// NamedInstallStrategy is spec.install.
type NamedInstallStrategy struct {
	StrategyName string                    `json:"strategy"`
	StrategySpec StrategyDetailsDeployment `json:"spec,omitempty"`
}

// StrategyDetailsDeployment is spec.install.spec.
type StrategyDetailsDeployment struct {
	DeploymentSpecs    []StrategyDeploymentSpec        `json:"deployments"`
	Permissions        []StrategyDeploymentPermissions `json:"permissions,omitempty"`
	ClusterPermissions []StrategyDeploymentPermissions `json:"clusterPermissions,omitempty"`
}

// IsZero reports whether nothing of the strategy is set (nil lists, as
// upstream's reflection sees them).
func (s NamedInstallStrategy) IsZero() bool {
	d := s.StrategySpec
	return s.StrategyName == "" && d.DeploymentSpecs == nil && d.Permissions == nil && d.ClusterPermissions == nil
}

// StrategyDeploymentSpec is one deployment of the install strategy.
type StrategyDeploymentSpec struct {
	Name  string            `json:"name"`
	Spec  DeploymentSpec    `json:"spec"`
	Label map[string]string `json:"label,omitempty"`
}

// DeploymentSpec is the part of a deployment's spec the checks read; Raw
// is all of it.
type DeploymentSpec struct {
	Replicas *int32          `json:"replicas,omitempty"`
	Selector json.RawMessage `json:"selector,omitempty"`
	Template PodTemplateSpec `json:"template"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw spec beside the typed parts.
func (d *DeploymentSpec) UnmarshalJSON(data []byte) error {
	type plain DeploymentSpec
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*d = DeploymentSpec(p)
	d.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// PodTemplateSpec is a deployment's pod template.
type PodTemplateSpec struct {
	Metadata ObjectMeta `json:"metadata,omitempty"`
	Spec     PodSpec    `json:"spec,omitempty"`
}

// PodSpec is the part of a pod spec the checks read.
type PodSpec struct {
	ServiceAccountName string          `json:"serviceAccountName,omitempty"`
	InitContainers     []Container     `json:"initContainers,omitempty"`
	Containers         []Container     `json:"containers"`
	Affinity           *Affinity       `json:"affinity,omitempty"`
	NodeSelector       json.RawMessage `json:"nodeSelector,omitempty"`
}

// Container is the part of a container the checks read.
type Container struct {
	Name      string               `json:"name"`
	Image     string               `json:"image,omitempty"`
	Resources ResourceRequirements `json:"resources,omitempty"`
}

// ResourceRequirements are a container's resources, quantities as written.
type ResourceRequirements struct {
	Limits   map[string]json.RawMessage `json:"limits,omitempty"`
	Requests map[string]json.RawMessage `json:"requests,omitempty"`
}

// Affinity is the node affinity part of a pod's affinity.
type Affinity struct {
	NodeAffinity *struct {
		Required *struct {
			NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
		} `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	} `json:"nodeAffinity,omitempty"`
}

// NodeSelectorTerm is one term of a required node affinity.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// NodeSelectorRequirement is one expression of a node selector term.
type NodeSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// StrategyDeploymentPermissions are the (cluster) permissions of one
// service account.
type StrategyDeploymentPermissions struct {
	ServiceAccountName string       `json:"serviceAccountName"`
	Rules              []PolicyRule `json:"rules"`
}

// PolicyRule is one RBAC rule.
type PolicyRule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// WebhookDescription is one webhook definition. The admission parts of
// Kubernetes' types (rules, object selector) keep their raw JSON.
type WebhookDescription struct {
	GenerateName            string          `json:"generateName"`
	Type                    string          `json:"type"`
	DeploymentName          string          `json:"deploymentName,omitempty"`
	ContainerPort           int32           `json:"containerPort,omitempty"`
	TargetPort              json.RawMessage `json:"targetPort,omitempty"`
	Rules                   json.RawMessage `json:"rules,omitempty"`
	FailurePolicy           *string         `json:"failurePolicy,omitempty"`
	MatchPolicy             *string         `json:"matchPolicy,omitempty"`
	ObjectSelector          json.RawMessage `json:"objectSelector,omitempty"`
	SideEffects             *string         `json:"sideEffects"`
	TimeoutSeconds          *int32          `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string        `json:"admissionReviewVersions"`
	ReinvocationPolicy      *string         `json:"reinvocationPolicy,omitempty"`
	WebhookPath             *string         `json:"webhookPath,omitempty"`
	ConversionCRDs          []string        `json:"conversionCRDs,omitempty"`
}

// Webhook types.
const (
	WebhookValidating = "ValidatingAdmissionWebhook"
	WebhookMutating   = "MutatingAdmissionWebhook"
	WebhookConversion = "ConversionWebhook"
)

// csvDoc is the decoding shape of a whole CSV.
type csvDoc struct {
	TypeMeta
	Metadata json.RawMessage `json:"metadata"`
	Spec     json.RawMessage `json:"spec"`
}

// newCSV decodes the typed view of m.
func newCSV(m *Manifest) (*CSV, error) {
	js, err := m.EncodedJSON()
	if err != nil {
		return nil, fmt.Errorf("unable to parse CSV %s: %w", m.File, err)
	}
	var doc csvDoc
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("unable to parse CSV %s: %w", m.File, err)
	}
	c := &CSV{Manifest: m, TypeMeta: doc.TypeMeta}
	if len(doc.Metadata) > 0 && string(doc.Metadata) != "null" {
		if err := json.Unmarshal(doc.Metadata, &c.Metadata); err != nil {
			return nil, fmt.Errorf("unable to parse CSV %s: %w", m.File, err)
		}
		c.MetadataSet = nonEmptyObject(doc.Metadata)
	}
	if len(doc.Spec) > 0 && string(doc.Spec) != "null" {
		if err := json.Unmarshal(doc.Spec, &c.Spec); err != nil {
			return nil, fmt.Errorf("unable to parse CSV %s: %w", m.File, err)
		}
		if v := c.Spec.Version; v != nil {
			parsed, err := semver.ParseTolerant(*v)
			if err != nil {
				return nil, fmt.Errorf("unable to parse CSV %s: spec.version %q: %w", m.File, *v, err)
			}
			c.Spec.VersionParsed = parsed
		}
		c.SpecSet = nonEmptyObject(doc.Spec)
	}
	return c, nil
}

// nonEmptyObject reports whether raw, a JSON object, has a member whose
// value is not null, false, 0, "" or an empty object: what decoding into
// a struct would leave as its zero value is close enough for the
// "required field missing" check, which only asks whether anything is set.
func nonEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return true
	}
	for _, v := range m {
		switch strings.TrimSpace(string(v)) {
		case "null", "false", "0", `""`, "{}":
			continue
		}
		return true
	}
	return false
}

// OwnedCRDKeys returns the group, version and kind of the CSV's owned
// CRDs as upstream derives them (the group is the name after its first
// dot).
func (c *CSV) OwnedCRDKeys() []GVK {
	var out []GVK
	for _, o := range c.Spec.CustomResourceDefinitions.Owned {
		group := o.Name
		if _, g, ok := strings.Cut(o.Name, "."); ok {
			group = g
		}
		out = append(out, GVK{Group: group, Version: o.Version, Kind: o.Kind})
	}
	return out
}

// GVK is a group, version and kind.
type GVK struct {
	Group, Version, Kind string
}

// String is apimachinery's GroupVersionKind.String: "group/version,
// Kind=kind" ("/v1, Kind=Pod" for the core group).
func (k GVK) String() string {
	return k.Group + "/" + k.Version + ", Kind=" + k.Kind
}

// GVKOf returns the group, version and kind of an apiVersion and kind as
// apimachinery parses them: an apiVersion with more than one slash has
// neither group nor version.
func GVKOf(apiVersion, kind string) GVK {
	if strings.Count(apiVersion, "/") > 1 {
		return GVK{Kind: kind}
	}
	g, v := SplitAPIVersion(apiVersion)
	return GVK{Group: g, Version: v, Kind: kind}
}
