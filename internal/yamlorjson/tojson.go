package yamlorjson

import (
	"bytes"
	"unicode"

	"sigs.k8s.io/yaml"
)

// HasJSONPrefix reports whether data starts, after white space (Unicode's,
// as apimachinery trims it), with '{': apimachinery's test for "already
// JSON", with no sniff limit.
func HasJSONPrefix(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeftFunc(data, unicode.IsSpace), []byte("{"))
}

// ToJSON is apimachinery's yaml.ToJSON, which upstream applies to every
// olm.bundle.object it loads: data that looks like JSON (HasJSONPrefix) is
// returned as it is, unchecked; anything else is one YAML document
// converted to compact JSON with sorted keys and HTML escaping
// (sigs.k8s.io/yaml's YAMLToJSON, whose errors are returned unwrapped).
func ToJSON(data []byte) ([]byte, error) {
	if HasJSONPrefix(data) {
		return data, nil
	}
	return yaml.YAMLToJSON(data)
}
