// Package csvtypes holds the ClusterServiceVersion types opm encodes and
// decodes with encoding/json: the parts of operator-framework/api's
// v1alpha1 types that reach olm.csv.metadata (pkg/migrations builds it from
// a CSV) and the stub CSV opm serve builds back from it (pkg/serve). Field
// names, JSON tags, omitempty rules and field order follow upstream's types,
// since the order of the fields is the order of the keys in the output.
package csvtypes

import "encoding/json"

// Metadata is the value of an olm.csv.metadata property (upstream's
// property.CSVMetadata). The two definition fields have no omitempty, as
// upstream's have not, so an empty one is written as {}.
type Metadata struct {
	Annotations               map[string]string         `json:"annotations,omitempty"`
	APIServiceDefinitions     APIServiceDefinitions     `json:"apiServiceDefinitions"`
	CustomResourceDefinitions CustomResourceDefinitions `json:"crdDescriptions"`
	Description               string                    `json:"description,omitempty"`
	DisplayName               string                    `json:"displayName,omitempty"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Links                     []AppLink                 `json:"links,omitempty"`
	Maintainers               []Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	NativeAPIs                []GroupVersionKind        `json:"nativeAPIs,omitempty"`
	Provider                  AppLink                   `json:"provider,omitempty"`
}

// CustomResourceDefinitions lists the CRDs a CSV owns and requires.
type CustomResourceDefinitions struct {
	Owned    []CRDDescription `json:"owned,omitempty"`
	Required []CRDDescription `json:"required,omitempty"`
}

// APIServiceDefinitions lists the API services a CSV owns and requires.
type APIServiceDefinitions struct {
	Owned    []APIServiceDescription `json:"owned,omitempty"`
	Required []APIServiceDescription `json:"required,omitempty"`
}

// CRDDescription describes one CRD of a CSV.
type CRDDescription struct {
	Name              string                 `json:"name"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []APIResourceReference `json:"resources,omitempty"`
	StatusDescriptors []ValueDescriptor      `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []ValueDescriptor      `json:"specDescriptors,omitempty"`
	ActionDescriptor  []ActionDescriptor     `json:"actionDescriptors,omitempty"`
}

// APIServiceDescription describes one API service of a CSV.
type APIServiceDescription struct {
	Name              string                 `json:"name"`
	Group             string                 `json:"group"`
	Version           string                 `json:"version"`
	Kind              string                 `json:"kind"`
	DeploymentName    string                 `json:"deploymentName,omitempty"`
	ContainerPort     int32                  `json:"containerPort,omitempty"`
	DisplayName       string                 `json:"displayName,omitempty"`
	Description       string                 `json:"description,omitempty"`
	Resources         []APIResourceReference `json:"resources,omitempty"`
	StatusDescriptors []ValueDescriptor      `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []ValueDescriptor      `json:"specDescriptors,omitempty"`
	ActionDescriptor  []ActionDescriptor     `json:"actionDescriptors,omitempty"`
}

// APIResourceReference names a resource an API uses.
type APIResourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// ValueDescriptor is a spec or status descriptor (upstream's SpecDescriptor
// and StatusDescriptor have the same shape).
type ValueDescriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// ActionDescriptor is an action descriptor: upstream's type has no value,
// so a value written in a CSV is dropped.
type ActionDescriptor struct {
	Path         string   `json:"path"`
	DisplayName  string   `json:"displayName,omitempty"`
	Description  string   `json:"description,omitempty"`
	XDescriptors []string `json:"x-descriptors,omitempty"`
}

// InstallMode is one install mode of a CSV.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

// AppLink is a named link (also the provider).
type AppLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Maintainer is one maintainer of a CSV.
type Maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// GroupVersionKind names a native API.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Icon is one icon of a CSV.
type Icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// RelatedImage is one related image of a CSV.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}
