package sqlite

import (
	"encoding/json"
	"errors"

	"github.com/opmkit/opm/internal/k8stypes"
)

// csvSpec is a ClusterServiceVersion as the migrations read one from the
// csv column: typed metadata (so a malformed one fails, as upstream's typed
// decoding does) and the spec kept raw, each part of it decoded when asked.
type csvSpec struct {
	Metadata k8stypes.ObjectMeta `json:"metadata"`
	Spec     json.RawMessage     `json:"spec"`
}

func parseCSV(s string) (*csvSpec, error) {
	var c csvSpec
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *csvSpec) annotation(key string) string { return c.Metadata.Annotations[key] }

// field decodes one field of the spec into v; ok is false when the field
// is absent or null. A spec that is not an object is an error.
func (c *csvSpec) field(name string, v any) (bool, error) {
	var m map[string]*json.RawMessage
	if err := json.Unmarshal(c.Spec, &m); err != nil {
		return false, err
	}
	raw := m[name]
	if raw == nil {
		return false, nil
	}
	return true, json.Unmarshal(*raw, v)
}

// version is spec.version ("" when absent).
func (c *csvSpec) version() (string, error) {
	var v string
	_, err := c.field("version", &v)
	return v, err
}

// definitionKey is one entry of spec.customresourcedefinitions or
// spec.apiservicedefinitions, as far as the migrations read it.
type definitionKey struct {
	Name    string `json:"name"`
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type definitions struct {
	Owned    []definitionKey `json:"owned"`
	Required []definitionKey `json:"required"`
}

func (c *csvSpec) requiredCRDs() ([]definitionKey, error) {
	var d definitions
	_, err := c.field("customresourcedefinitions", &d)
	return d.Required, err
}

func (c *csvSpec) requiredAPIServices() ([]definitionKey, error) {
	var d definitions
	_, err := c.field("apiservicedefinitions", &d)
	return d.Required, err
}

// images are the images of the CSV's deployments (containers and init
// containers, when its install strategy is "deployment") and of its
// relatedImages, each once, in that order.
func (c *csvSpec) images() ([]string, error) {
	type container struct {
		Image string `json:"image"`
	}
	var spec struct {
		Install struct {
			Strategy string `json:"strategy"`
			Spec     struct {
				Deployments []struct {
					Spec struct {
						Template struct {
							Spec struct {
								Containers     []container `json:"containers"`
								InitContainers []container `json:"initContainers"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"spec"`
				} `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
	}
	if err := json.Unmarshal(c.Spec, &spec); err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	add := func(img string) {
		if !seen[img] {
			seen[img] = true
			out = append(out, img)
		}
	}
	if spec.Install.Strategy == "deployment" {
		for _, d := range spec.Install.Spec.Deployments {
			for _, ctr := range d.Spec.Template.Spec.Containers {
				add(ctr.Image)
			}
			for _, ctr := range d.Spec.Template.Spec.InitContainers {
				add(ctr.Image)
			}
		}
	}
	var related []struct {
		Image string `json:"image"`
	}
	if _, err := c.field("relatedImages", &related); err != nil {
		return nil, err
	}
	if len(related) > 0 && spec.Install.Strategy != "deployment" {
		// upstream writes into a nil map here and crashes
		return nil, errors.New("relatedImages in a CSV whose install strategy is not deployment")
	}
	for _, r := range related {
		add(r.Image)
	}
	return out, nil
}
