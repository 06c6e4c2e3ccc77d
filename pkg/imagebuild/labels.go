package imagebuild

import (
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// BundleLabels returns the annotations of a bundle's annotations file
// (data, read from file) as image labels, as upstream's bundle Dockerfiles
// carry them: one label per entry of its top-level annotations mapping.
// Values are taken as written (a YAML true or 1 gives the label "true" or
// "1"; null gives ""); a value that is not a scalar is an error naming the
// file and line. The file may be YAML or JSON; only its first document is
// read.
func BundleLabels(data []byte, file string) (map[string]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a mapping with an annotations key", file)
	}
	top := doc.Content[0]
	var ann *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "annotations" {
			ann = top.Content[i+1]
		}
	}
	if ann == nil {
		return nil, fmt.Errorf("%s: no annotations key", file)
	}
	if ann.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: annotations is not a mapping", file, ann.Line)
	}
	labels := map[string]string{}
	for i := 0; i+1 < len(ann.Content); i += 2 {
		k, v := ann.Content[i], ann.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, fmt.Errorf("%s:%d: an annotation key must be a non-empty string", file, k.Line)
		}
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d: annotation %q: the value must be a string", file, v.Line, k.Value)
		}
		val := v.Value
		if v.Tag == "!!null" {
			val = ""
		}
		if err := checkLabel(k.Value, val); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, k.Line, err)
		}
		labels[k.Value] = val
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("%s:%d: no annotations", file, ann.Line)
	}
	return labels, nil
}

// checkLabel refuses label keys and values an image config cannot carry
// faithfully: a NUL byte, or a line break in the key.
func checkLabel(k, v string) error {
	switch {
	case strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0):
		return fmt.Errorf("label %q: %w", k, errors.New("a NUL byte"))
	case strings.ContainsAny(k, "\r\n"):
		return fmt.Errorf("label %q: a line break in a key", k)
	}
	return nil
}
