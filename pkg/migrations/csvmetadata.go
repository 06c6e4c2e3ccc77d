package migrations

import (
	"encoding/json"
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/k8stypes"
	"github.com/opmkit/opm/pkg/property"
)

// CSVMetadata builds the olm.csv.metadata property from a CSV's JSON the way
// upstream does: the JSON is decoded into the typed v1alpha1
// ClusterServiceVersion (so type errors and an unparsable spec.version fail
// here as there) and the metadata fields are re-encoded compactly, without
// HTML escaping, in the struct's field order.
func CSVMetadata(csvJSON []byte) (property.Property, error) {
	var csv typedCSV
	if err := json.Unmarshal(csvJSON, &csv); err != nil {
		return property.Property{}, fmt.Errorf("decoding ClusterServiceVersion: %w", err)
	}
	meta := csvMetadata{
		Annotations:               csv.Metadata.Annotations,
		APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
		Description:               csv.Spec.Description,
		DisplayName:               csv.Spec.DisplayName,
		InstallModes:              csv.Spec.InstallModes,
		Keywords:                  csv.Spec.Keywords,
		Labels:                    csv.Metadata.Labels,
		Links:                     csv.Spec.Links,
		Maintainers:               csv.Spec.Maintainers,
		Maturity:                  csv.Spec.Maturity,
		MinKubeVersion:            csv.Spec.MinKubeVersion,
		NativeAPIs:                csv.Spec.NativeAPIs,
		Provider:                  csv.Spec.Provider,
	}
	raw, err := property.MarshalNoEscape(meta)
	if err != nil {
		return property.Property{}, fmt.Errorf("build property %q: %w", property.TypeCSVMetadata, err)
	}
	return property.Property{Type: property.TypeCSVMetadata, Value: raw}, nil
}

// csvMetadata is upstream's property.CSVMetadata; field order is output
// order.
type csvMetadata struct {
	Annotations               map[string]string         `json:"annotations,omitempty"`
	APIServiceDefinitions     apiServiceDefinitions     `json:"apiServiceDefinitions"`
	CustomResourceDefinitions customResourceDefinitions `json:"crdDescriptions"`
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

// The v1alpha1 types below mirror operator-framework/api field for field
// (names, JSON tags and order).

type typedCSV struct {
	Kind       string              `json:"kind,omitempty"`
	APIVersion string              `json:"apiVersion,omitempty"`
	Metadata   k8stypes.ObjectMeta `json:"metadata,omitempty"`
	Spec       csvSpec             `json:"spec,omitempty"`
	Status     json.RawMessage     `json:"status,omitempty"`
}

// operatorVersion decodes like version.OperatorVersion (semver, tolerant).
type operatorVersion struct{ semver.Version }

func (v *operatorVersion) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	ver, err := semver.ParseTolerant(s)
	if err != nil {
		return err
	}
	v.Version = ver
	return nil
}

type csvSpec struct {
	InstallStrategy           json.RawMessage           `json:"install"`
	Version                   operatorVersion           `json:"version,omitempty"`
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
	Icon                      []icon                    `json:"icon,omitempty"`
	InstallModes              []installMode             `json:"installModes,omitempty"`
	Replaces                  string                    `json:"replaces,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Annotations               map[string]string         `json:"annotations,omitempty"`
	Selector                  json.RawMessage           `json:"selector,omitempty"`
	Cleanup                   struct {
		Enabled bool `json:"enabled"`
	} `json:"cleanup,omitempty"`
	Skips         []string `json:"skips,omitempty"`
	RelatedImages []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"relatedImages,omitempty"`
}

type icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
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
	StatusDescriptors []descriptor           `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []descriptor           `json:"specDescriptors,omitempty"`
	ActionDescriptor  []descriptor           `json:"actionDescriptors,omitempty"`
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
	StatusDescriptors []descriptor           `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []descriptor           `json:"specDescriptors,omitempty"`
	ActionDescriptor  []descriptor           `json:"actionDescriptors,omitempty"`
}

type apiResourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// descriptor is a spec, status or action descriptor (same shape).
type descriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
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
