package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/yamlorjson"
)

// The decoders below apply the Kubernetes YAMLOrJSON rules that upstream
// uses on every bundle file (internal/yamlorjson, with a 30-byte sniffing
// buffer): a file whose first non-space byte, within the first 30 bytes,
// is '{' is read as one JSON value (falling back to YAML when that fails);
// anything else is YAML, of which only the first document ("---"
// separated, a leading separator kept as upstream's reader keeps it) is
// used.

// errNoDocument is returned when a file holds no document at all.
var errNoDocument = errors.New("no document")

// bundleSplitter splits bundle files as upstream's reader does.
var bundleSplitter = yamlorjson.Splitter{KeepLeadingSeparator: true}

// looksLikeJSON reports whether the decoder would take the JSON path.
func looksLikeJSON(data []byte) bool {
	return yamlorjson.IsJSON(data, yamlorjson.BundleSniffLen)
}

// firstJSONValue returns the bytes of the first JSON value of data.
func firstJSONValue(data []byte) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// firstYAMLDocument returns the first document of a YAML stream.
func firstYAMLDocument(data []byte) ([]byte, error) {
	doc, _, _, err := bundleSplitter.Split(data, true)
	if err != nil {
		return nil, err
	}
	if doc.Data == nil {
		return nil, errNoDocument
	}
	return doc.Data, nil
}

// decodeTyped decodes the first document of data into v, a pointer to a
// typed struct, exactly as upstream's decodeFileFromFS does.
func decodeTyped(data []byte, v any) error {
	if looksLikeJSON(data) {
		err := json.NewDecoder(bytes.NewReader(data)).Decode(v)
		if err == nil || err == io.EOF {
			return err
		}
		// The k8s decoder rewinds and retries as YAML.
	}
	doc, err := firstYAMLDocument(data)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(doc, v)
}

// decodeObject decodes the first document of data into an unstructured
// Kubernetes object and returns it with its JSON encoding (json.Marshal of
// the object: sorted keys, compact, HTML escaped). The result is nil (and
// the error nil) when the document is empty or null. Numbers follow
// apimachinery's rules: integers that fit become int64, everything else
// float64.
func decodeObject(data []byte) (map[string]any, []byte, error) {
	return decodeObjectJSON(data, true)
}

// decodeObjectJSON is decodeObject; without wantJSON, the JSON of a YAML
// document is not computed (nil).
func decodeObjectJSON(data []byte, wantJSON bool) (map[string]any, []byte, error) {
	if !looksLikeJSON(data) {
		doc, err := firstYAMLDocument(data)
		if err != nil {
			return nil, nil, err
		}
		m, js, err := decodeYAMLObject(doc, wantJSON)
		if err != errSlowPath {
			return m, js, err
		}
	}
	return decodeObjectSlow(data)
}

// decodeObjectSlow is decodeObject the long way, as upstream runs it:
// YAMLToJSON, then a JSON decode with apimachinery's number rules.
func decodeObjectSlow(data []byte) (map[string]any, []byte, error) {
	var (
		raw []byte
		// canonical: raw is already json.Marshal output (YAMLToJSON), so
		// it is the object's encoding unless a number changes form.
		canonical bool
	)
	if looksLikeJSON(data) {
		v, err := firstJSONValue(data)
		if err == nil {
			raw = v
		}
	}
	if raw == nil {
		doc, err := firstYAMLDocument(data)
		if err != nil {
			return nil, nil, err
		}
		raw, err = yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("error converting YAML to JSON: %w", err)
		}
		// json.Marshal escapes bytes that are not UTF-8 (a !!binary value)
		// as \ufffd; decoded, they are U+FFFD, which re-encodes as itself.
		canonical = !bytes.Contains(raw, []byte(`\ufffd`))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, err
	}
	if v == nil {
		return nil, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("json: cannot unmarshal %s into Go value of type map[string]interface {}", jsonKind(v))
	}
	changed, err := convertNumbers(m)
	if err != nil {
		return nil, nil, err
	}
	if kind, _ := m["kind"].(string); kind == "" {
		return nil, nil, fmt.Errorf("Object 'Kind' is missing in '%s'", raw)
	}
	if canonical && !changed {
		return m, raw, nil
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return m, out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		return "number"
	}
	return "value"
}

// convertNumbers replaces every json.Number in v with an int64 when it is a
// whole number that fits, or a float64 otherwise. It reports whether an
// integer literal re-encodes differently (out of int64 range, or "-0").
func convertNumbers(v any) (changed bool, err error) {
	conv := func(n json.Number) (any, error) {
		c, err := convertNumber(n)
		if err != nil {
			return nil, err
		}
		if i, ok := c.(int64); ok {
			if strconv.FormatInt(i, 10) != string(n) {
				changed = true
			}
		} else if !strings.ContainsAny(string(n), ".eE") {
			changed = true
		}
		return c, nil
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if n, ok := e.(json.Number); ok {
					c, err := conv(n)
					if err != nil {
						return err
					}
					t[k] = c
					continue
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range t {
				if n, ok := e.(json.Number); ok {
					c, err := conv(n)
					if err != nil {
						return err
					}
					t[i] = c
					continue
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = walk(v)
	return changed, err
}

func convertNumber(n json.Number) (any, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, fmt.Errorf("json: cannot unmarshal number %s into Go value of type float64", n)
	}
	return f, nil
}

// errSlowPath reports a YAML value decodeYAMLObject does not convert
// itself.
var errSlowPath = errors.New("use the slow path")

// decodeYAMLObject converts a YAML document straight to the object
// YAMLToJSON followed by apimachinery's JSON decode would give (yaml.v2
// values, keys stringified as sigs.k8s.io/yaml does, integers as int64,
// floats that encode as integers as int64), skipping the JSON round trip.
// It returns errSlowPath for values it does not know.
func decodeYAMLObject(doc []byte, wantJSON bool) (map[string]any, []byte, error) {
	v, ok := fastYAML(doc)
	if !ok {
		var y any
		if err := yamlv2.Unmarshal(doc, &y); err != nil {
			return nil, nil, fmt.Errorf("error converting YAML to JSON: %w", err)
		}
		var err error
		if v, err = convertYAML(y, 0); err != nil {
			return nil, nil, err
		}
	}
	if v == nil {
		return nil, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errSlowPath // the slow path words the error
	}
	if kind, _ := m["kind"].(string); kind == "" {
		return nil, nil, errSlowPath
	}
	if !wantJSON {
		return m, nil, nil
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, nil, errSlowPath
	}
	return m, js, nil
}

// maxDepth is how deeply values may nest: beyond it (YAML mixes flow and
// block nesting, each limited to 10000 by the parser) the slow path lets
// encoding/json refuse the document as upstream's decode does.
const maxDepth = 10000

func convertYAML(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errSlowPath
	}
	switch t := v.(type) {
	case string:
		// A !!binary value can hold bytes that are not UTF-8; the JSON round
		// trip turns each into U+FFFD, so let the slow path do it.
		if !utf8.ValidString(t) {
			return nil, errSlowPath
		}
		return t, nil
	case nil, bool:
		return t, nil
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case uint64:
		if t <= math.MaxInt64 {
			return int64(t), nil
		}
		return float64(t), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, errSlowPath
		}
		js, err := json.Marshal(t)
		if err != nil {
			return nil, errSlowPath
		}
		if i, err := strconv.ParseInt(string(js), 10, 64); err == nil {
			return i, nil
		}
		return t, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := convertYAML(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[any]any:
		keys := make([]any, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		out := make(map[string]any, len(t))
		fill := func() error {
			for _, k := range keys {
				key, ok := yamlorjson.KeyString(k)
				if !ok || !utf8.ValidString(key) {
					return errSlowPath
				}
				c, err := convertYAML(t[k], depth+1)
				if err != nil {
					return err
				}
				out[key] = c
			}
			return nil
		}
		if err := fill(); err != nil {
			return nil, err
		}
		if len(out) == len(t) {
			return out, nil
		}
		// Keys that stringify alike (1 and "1"): upstream keeps one of them
		// at random; keep the last in a fixed order instead.
		sort.Slice(keys, func(i, j int) bool {
			a, b := fmt.Sprintf("%T", keys[i]), fmt.Sprintf("%T", keys[j])
			if a != b {
				return a < b
			}
			return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j])
		})
		clear(out)
		if err := fill(); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, errSlowPath
}

// DecodeAnnotations decodes an annotations file (metadata/annotations.yaml)
// as a bundle's metadata files are decoded, keeping every annotation.
func DecodeAnnotations(data []byte) (map[string]string, error) {
	var v struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := decodeTyped(data, &v); err != nil {
		return nil, err
	}
	return v.Annotations, nil
}
