package serve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// CSV synthesis.
//
// A bundle whose objects hold no ClusterServiceVersion but which has exactly
// one olm.csv.metadata property is served with a stub CSV built from that
// metadata, as upstream does: its v1alpha1.ClusterServiceVersion type
// marshalled by encoding/json, so keys come in the Go struct order of
// operator-framework/api and <, > and & are escaped. The types below copy
// those field orders and omitempty rules.

// csvMetadata is the value of an olm.csv.metadata property (upstream's
// property.CSVMetadata). encoding/json matches its keys case-insensitively,
// as upstream's decoding does.
type csvMetadata struct {
	Annotations               map[string]string         `json:"annotations,omitempty"`
	APIServiceDefinitions     apiServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions customResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                    `json:"description,omitempty"`
	DisplayName               string                    `json:"displayName,omitempty"`
	InstallModes              []installMode             `json:"installModes,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Links                     []appLink                 `json:"links,omitempty"`
	Maintainers               []maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	NativeAPIs                []groupVersionKind        `json:"nativeAPIs,omitempty"`
	Provider                  appLink                   `json:"provider,omitempty"`
}

type stubCSV struct {
	Kind       string     `json:"kind,omitempty"`
	APIVersion string     `json:"apiVersion,omitempty"`
	Metadata   stubMeta   `json:"metadata"`
	Spec       stubSpec   `json:"spec"`
	Status     stubStatus `json:"status"`
}

// stubMeta holds the ObjectMeta fields a stub can have set.
type stubMeta struct {
	Name        string            `json:"name,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type stubSpec struct {
	InstallStrategy           installStrategy           `json:"install"`
	Version                   string                    `json:"version"`
	Maturity                  string                    `json:"maturity,omitempty"`
	CustomResourceDefinitions customResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	APIServiceDefinitions     apiServiceDefinitions     `json:"apiservicedefinitions,omitempty"`
	WebhookDefinitions        []json.RawMessage         `json:"webhookdefinitions,omitempty"`
	NativeAPIs                []groupVersionKind        `json:"nativeAPIs,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	DisplayName               string                    `json:"displayName"`
	Description               string                    `json:"description,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Maintainers               []maintainer              `json:"maintainers,omitempty"`
	Provider                  appLink                   `json:"provider,omitempty"`
	Links                     []appLink                 `json:"links,omitempty"`
	Icon                      []csvIcon                 `json:"icon,omitempty"`
	InstallModes              []installMode             `json:"installModes,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Annotations               map[string]string         `json:"annotations,omitempty"`
	Selector                  json.RawMessage           `json:"selector,omitempty"`
	Cleanup                   cleanupSpec               `json:"cleanup,omitempty"`
	Skips                     []string                  `json:"skips,omitempty"`
	RelatedImages             []csvRelatedImage         `json:"relatedImages,omitempty"`
}

type installStrategy struct {
	StrategyName string          `json:"strategy"`
	StrategySpec strategyDetails `json:"spec,omitempty"`
}

type strategyDetails struct {
	DeploymentSpecs    []json.RawMessage `json:"deployments"`
	Permissions        []json.RawMessage `json:"permissions,omitempty"`
	ClusterPermissions []json.RawMessage `json:"clusterPermissions,omitempty"`
}

type cleanupSpec struct {
	Enabled bool `json:"enabled"`
}

type stubStatus struct {
	Cleanup struct {
		PendingDeletion []json.RawMessage `json:"pendingDeletion,omitempty"`
	} `json:"cleanup,omitempty"`
}

type csvIcon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type csvRelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type customResourceDefinitions struct {
	Owned    []crdDescription `json:"owned,omitempty"`
	Required []crdDescription `json:"required,omitempty"`
}

type apiServiceDefinitions struct {
	Owned    []apiServiceDescription `json:"owned,omitempty"`
	Required []apiServiceDescription `json:"required,omitempty"`
}

type crdDescription struct {
	Name              string                 `json:"name"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []apiResourceReference `json:"resources,omitempty"`
	StatusDescriptors []valueDescriptor      `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []valueDescriptor      `json:"specDescriptors,omitempty"`
	ActionDescriptor  []actionDescriptor     `json:"actionDescriptors,omitempty"`
}

type apiServiceDescription struct {
	Name              string                 `json:"name"`
	Group             string                 `json:"group"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DeploymentName    string                 `json:"deploymentName,omitempty"`
	ContainerPort     int32                  `json:"containerPort,omitempty"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []apiResourceReference `json:"resources,omitempty"`
	StatusDescriptors []valueDescriptor      `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []valueDescriptor      `json:"specDescriptors,omitempty"`
	ActionDescriptor  []actionDescriptor     `json:"actionDescriptors,omitempty"`
}

type apiResourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// valueDescriptor is a spec or status descriptor.
type valueDescriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

type actionDescriptor struct {
	Path         string   `json:"path"`
	DisplayName  string   `json:"displayName,omitempty"`
	Description  string   `json:"description,omitempty"`
	XDescriptors []string `json:"x-descriptors,omitempty"`
}

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type appLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

type maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// csvInputs is what a stub CSV is made of besides the metadata.
type csvInputs struct {
	Name               string
	Version            string // the bundle's parsed version, as semver prints it
	PackageDescription string
	Icon               *csvIcon
	RelatedImages      []csvRelatedImage
}

// synthesizeCSV builds the stub CSV's JSON from an olm.csv.metadata value.
func synthesizeCSV(metadata []byte, in csvInputs) ([]byte, error) {
	var m csvMetadata
	if err := json.Unmarshal(metadata, &m); err != nil {
		return nil, fmt.Errorf("parse %s property: %w", "olm.csv.metadata", err)
	}
	csv := stubCSV{
		Kind:       "ClusterServiceVersion",
		APIVersion: "operators.coreos.com/v1alpha1",
		Metadata:   stubMeta{Name: in.Name, Labels: m.Labels, Annotations: m.Annotations},
		Spec: stubSpec{
			InstallStrategy:           installStrategy{StrategyName: "deployment"},
			Version:                   in.Version,
			Maturity:                  m.Maturity,
			CustomResourceDefinitions: m.CustomResourceDefinitions,
			APIServiceDefinitions:     m.APIServiceDefinitions,
			NativeAPIs:                m.NativeAPIs,
			MinKubeVersion:            m.MinKubeVersion,
			DisplayName:               m.DisplayName,
			Description:               m.Description,
			Keywords:                  m.Keywords,
			Maintainers:               m.Maintainers,
			Provider:                  m.Provider,
			Links:                     m.Links,
			InstallModes:              m.InstallModes,
			RelatedImages:             in.RelatedImages,
		},
	}
	if in.Icon != nil {
		csv.Spec.Icon = []csvIcon{*in.Icon}
	}
	if csv.Spec.Description == "" {
		csv.Spec.Description = in.PackageDescription
	}
	return json.Marshal(csv)
}

// packageIcon converts a package icon for the stub CSV.
func packageIcon(data []byte, mediaType string) *csvIcon {
	return &csvIcon{Data: base64.StdEncoding.EncodeToString(data), MediaType: mediaType}
}
