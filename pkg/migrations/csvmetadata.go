package migrations

import (
	"encoding/json"
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/csvtypes"
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
	meta := csvtypes.Metadata{
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
	InstallStrategy           json.RawMessage                    `json:"install"`
	Version                   operatorVersion                    `json:"version,omitempty"`
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
	Cleanup                   struct {
		Enabled bool `json:"enabled"`
	} `json:"cleanup,omitempty"`
	Skips         []string                `json:"skips,omitempty"`
	RelatedImages []csvtypes.RelatedImage `json:"relatedImages,omitempty"`
}
