package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/k8stypes"
)

// CSV is a bundle's ClusterServiceVersion, decoded the way upstream's
// registry decodes it: typed metadata, raw spec.
type CSV struct {
	// File is the manifest the CSV came from.
	File string
	// JSON is the CSV object as stored in its olm.bundle.object.
	JSON []byte
	// source is the manifest file, for the lines of error messages.
	source []byte

	Name        string
	Annotations map[string]string
	Labels      map[string]string
	// Spec is the raw spec (nil when the CSV has none).
	Spec json.RawMessage

	specOnce sync.Once
	specMap  map[string]*json.RawMessage
	specErr  error
}

// registryCSV mirrors upstream's registry.ClusterServiceVersion; decoding
// into it with encoding/json fails exactly where upstream's decode fails.
type registryCSV struct {
	Kind       string              `json:"kind,omitempty"`
	APIVersion string              `json:"apiVersion,omitempty"`
	Metadata   k8stypes.ObjectMeta `json:"metadata"`
	Spec       json.RawMessage     `json:"spec"`
	Status     json.RawMessage     `json:"status"`
}

func parseCSV(file string, data []byte) (*CSV, error) {
	var r registryCSV
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fileErr(file, fmt.Errorf("decoding ClusterServiceVersion: %w", err))
	}
	return &CSV{
		File:        file,
		JSON:        data,
		Name:        r.Metadata.Name,
		Annotations: r.Metadata.Annotations,
		Labels:      r.Metadata.Labels,
		Spec:        r.Spec,
	}, nil
}

// specField returns the raw value of spec.<key> (nil when absent or null),
// as upstream's map[string]*json.RawMessage lookups do.
func (c *CSV) specField(key string) (json.RawMessage, error) {
	c.specOnce.Do(func() {
		c.specErr = json.Unmarshal(c.Spec, &c.specMap)
	})
	if c.specErr != nil {
		return nil, c.specErr
	}
	v := c.specMap[key]
	if v == nil {
		return nil, nil
	}
	return *v, nil
}

// Version returns spec.version as written ("" when absent).
func (c *CSV) Version() (string, error) {
	raw, err := c.specField("version")
	if err != nil || raw == nil {
		return "", err
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	return v, nil
}

// Release returns spec.release: a string as written, a number in its JSON
// form (whole numbers as integers).
func (c *CSV) Release() (string, error) {
	raw, err := c.specField("release")
	if err != nil || raw == nil {
		return "", err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	switch t := v.(type) {
	case string:
		return t, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return strconv.FormatInt(i, 10), nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return "", err
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("json: cannot unmarshal %s into Go value of type string", jsonKind(v))
}

// Replaces returns spec.replaces.
func (c *CSV) Replaces() (string, error) {
	raw, err := c.specField("replaces")
	if err != nil || raw == nil {
		return "", err
	}
	var v string
	err = json.Unmarshal(raw, &v)
	return v, err
}

// Skips returns spec.skips.
func (c *CSV) Skips() ([]string, error) {
	raw, err := c.specField("skips")
	if err != nil || raw == nil {
		return nil, err
	}
	var v []string
	err = json.Unmarshal(raw, &v)
	return v, err
}

// errAt wraps err with the CSV's file and the line of the value at path.
func (c *CSV) errAt(err error, path ...any) error {
	return &FileError{File: c.File, Line: nodeLine(c.source, path...), Err: err}
}

// SkipRange returns the olm.skipRange annotation.
func (c *CSV) SkipRange() string { return c.Annotations[csvAnnotationSkipRange] }

// definitionKey is upstream's registry.DefinitionKey.
type definitionKey struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type definitions struct {
	Owned    []*definitionKey `json:"owned"`
	Required []*definitionKey `json:"required"`
}

func (c *CSV) definitions(key string) (owned, required []definitionKey, err error) {
	raw, err := c.specField(key)
	if err != nil || raw == nil {
		return nil, nil, err
	}
	var d definitions
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, nil, err
	}
	for _, k := range d.Owned {
		if k != nil {
			owned = append(owned, *k)
		}
	}
	for _, k := range d.Required {
		if k != nil {
			required = append(required, *k)
		}
	}
	return owned, required, nil
}

// crdDefinitions returns spec.customresourcedefinitions.{owned,required}.
func (c *CSV) crdDefinitions() (owned, required []definitionKey, err error) {
	return c.definitions("customresourcedefinitions")
}

// apiServiceDefinitions returns spec.apiservicedefinitions.{owned,required}.
func (c *CSV) apiServiceDefinitions() (owned, required []definitionKey, err error) {
	return c.definitions("apiservicedefinitions")
}

// relatedImage is one entry of spec.relatedImages.
type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

func (c *CSV) relatedImages() ([]relatedImage, error) {
	raw, err := c.specField("relatedImages")
	if err != nil || raw == nil {
		return nil, err
	}
	var v []relatedImage
	err = json.Unmarshal(raw, &v)
	return v, err
}

// operatorImages returns the container and init container images of the
// deployment install strategy, in first-seen order, duplicates removed.
func (c *CSV) operatorImages() ([]string, error) {
	type container struct {
		Image string `json:"image"`
	}
	type podSpec struct {
		InitContainers []container `json:"initContainers"`
		Containers     []container `json:"containers"`
	}
	var spec struct {
		Install struct {
			Name string `json:"strategy"`
			Spec struct {
				Deployments []struct {
					Name string
					Spec struct {
						Template struct {
							Spec podSpec `json:"spec"`
						} `json:"template"`
					}
				}
			} `json:"spec,omitempty"`
		}
	}
	// Upstream decodes the whole spec into this shape; only "install"
	// (matched case-insensitively, as encoding/json does) matters, so decode
	// just that field unless several keys match.
	if _, err := c.specField("install"); err != nil {
		return nil, err
	}
	var matches []json.RawMessage
	for k, v := range c.specMap {
		if v != nil && strings.EqualFold(k, "install") {
			matches = append(matches, *v)
		}
	}
	switch len(matches) {
	case 0:
	case 1:
		if err := json.Unmarshal(matches[0], &spec.Install); err != nil {
			return nil, err
		}
	default:
		if err := json.Unmarshal(c.Spec, &spec); err != nil {
			return nil, err
		}
	}
	if spec.Install.Name != "deployment" {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range spec.Install.Spec.Deployments {
		for _, cs := range [][]container{d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.InitContainers} {
			for _, ct := range cs {
				if !seen[ct.Image] {
					seen[ct.Image] = true
					out = append(out, ct.Image)
				}
			}
		}
	}
	return out, nil
}
