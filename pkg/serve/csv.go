package serve

import (
	"encoding/json"
	"fmt"

	"github.com/opmkit/opm/internal/csvtypes"
)

// CSV synthesis.
//
// A bundle whose objects hold no ClusterServiceVersion but which has exactly
// one olm.csv.metadata property is served with a stub CSV built from that
// metadata, as upstream does: its v1alpha1.ClusterServiceVersion type
// marshalled by encoding/json, so keys come in the Go struct order of
// operator-framework/api and <, > and & are escaped. The types below copy
// those field orders and omitempty rules.

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
	InstallStrategy           installStrategy                    `json:"install"`
	Version                   string                             `json:"version"`
	Maturity                  string                             `json:"maturity,omitempty"`
	CustomResourceDefinitions csvtypes.CustomResourceDefinitions `json:"customresourcedefinitions,omitempty"`
	APIServiceDefinitions     csvtypes.APIServiceDefinitions     `json:"apiservicedefinitions,omitempty"`
	WebhookDefinitions        []json.RawMessage                  `json:"webhookdefinitions,omitempty"`
	NativeAPIs                []csvtypes.GroupVersionKind        `json:"nativeAPIs,omitempty"`
	MinKubeVersion            string                             `json:"minKubeVersion,omitempty"`
	DisplayName               string                             `json:"displayName"`
	Description               string                             `json:"description,omitempty"`
	Keywords                  []string                           `json:"keywords,omitempty"`
	Maintainers               []csvtypes.Maintainer              `json:"maintainers,omitempty"`
	Provider                  csvtypes.AppLink                   `json:"provider,omitempty"`
	Links                     []csvtypes.AppLink                 `json:"links,omitempty"`
	Icon                      []csvtypes.Icon                    `json:"icon,omitempty"`
	InstallModes              []csvtypes.InstallMode             `json:"installModes,omitempty"`
	Replaces                  string                             `json:"replaces,omitempty"`
	Labels                    map[string]string                  `json:"labels,omitempty"`
	Annotations               map[string]string                  `json:"annotations,omitempty"`
	Selector                  json.RawMessage                    `json:"selector,omitempty"`
	Cleanup                   cleanupSpec                        `json:"cleanup,omitempty"`
	Skips                     []string                           `json:"skips,omitempty"`
	RelatedImages             []csvtypes.RelatedImage            `json:"relatedImages,omitempty"`
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

// csvInputs is what a stub CSV is made of besides the metadata.
type csvInputs struct {
	Name               string
	Version            string // the bundle's parsed version, as semver prints it
	PackageDescription string
	Icon               *csvtypes.Icon
	RelatedImages      []csvtypes.RelatedImage
}

// synthesizeCSV builds the stub CSV's JSON from an olm.csv.metadata value.
func synthesizeCSV(metadata []byte, in csvInputs) ([]byte, error) {
	var m csvtypes.Metadata
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
		csv.Spec.Icon = []csvtypes.Icon{*in.Icon}
	}
	if csv.Spec.Description == "" {
		csv.Spec.Description = in.PackageDescription
	}
	return json.Marshal(csv)
}
