package declcfg

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode"

	"github.com/opmkit/opm/internal/yamlorjson"
	"github.com/opmkit/opm/pkg/property"
)

// Bundle objects.
//
// An olm.bundle.object property holds one manifest, base64 in {"data":…}.
// Upstream's loader reads every one of them as it loads a catalog (render,
// migrate, validate and serve alike): the value must decode as
// property.BundleObject, and the manifest is kept as written when it looks
// like JSON, or converted from YAML (apimachinery's yaml.ToJSON). Either
// failure fails the load with "read bundle objects: …".
//
// Our loader keeps bundles lazy (a catalog's bundle objects are most of its
// bytes): checkBundleObjects gives upstream's verdicts while loading
// without keeping the decoded bytes (see checkBundleObject for the one
// check it leaves to later), and Bundle.LoadObjects decodes them when a
// command needs them.

// LoadObjects decodes the olm.bundle.object properties into Objects (the
// JSON text of each manifest, YAML converted as upstream's loader converts
// it) and sets CsvJSON to the first object whose kind is
// ClusterServiceVersion. It does nothing when Objects is already set.
func (b *Bundle) LoadObjects() error {
	if b.Objects != nil {
		return nil
	}
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		var v property.BundleObject
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return b.objectParseError(i, err)
		}
		js, err := yamlorjson.ToJSON(v.Data)
		if err != nil {
			return b.objectConvertError(i, err)
		}
		b.Objects = append(b.Objects, string(js))
	}
	if b.CsvJSON == "" {
		b.CsvJSON = extractCSV(b.Objects)
	}
	return nil
}

func (b *Bundle) objectParseError(i int, err error) error {
	return fmt.Errorf("read bundle objects: package %q, bundle %q: parse property at index %d as bundle object: %v", b.Package, b.Name, i, err)
}

func (b *Bundle) objectConvertError(i int, err error) error {
	return fmt.Errorf("read bundle objects: package %q, bundle %q: convert bundle object property at index %d to JSON: %v", b.Package, b.Name, i, err)
}

func extractCSV(objs []string) string {
	for _, obj := range objs {
		var o struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(obj), &o); err != nil {
			continue
		}
		if o.Kind == "ClusterServiceVersion" {
			return obj
		}
	}
	return ""
}

// checkBundleObjects reports the error upstream's loader would for b's
// olm.bundle.object properties, or nil.
func checkBundleObjects(b *Bundle) error {
	for i, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		yamlData, err := checkBundleObject(p.Value)
		if err != nil {
			return b.objectParseError(i, err)
		}
		if yamlData != nil {
			if _, err := yamlorjson.ToJSON(yamlData); err != nil {
				return b.objectConvertError(i, err)
			}
		}
	}
	return nil
}

var (
	bundleObjectPrefix = []byte(`{"data":"`)
	bundleObjectSuffix = []byte(`"}`)
)

// checkBundleObject reports the error json.Unmarshal would for decoding
// value into a property.BundleObject and, when the manifest does not look
// like JSON (so upstream converts it from YAML), returns its bytes.
//
// Only the start of the common compact form {"data":"<base64>"} is
// decoded when the manifest there starts with '{': checking all of every
// manifest's base64 would cost a quarter of the load, and the commands
// that decode them (validate and serve through the model, migrations
// through LoadObjects) report invalid base64 further on.
func checkBundleObject(value []byte) (yamlData []byte, err error) {
	if bytes.HasPrefix(value, bundleObjectPrefix) && bytes.HasSuffix(value, bundleObjectSuffix) && len(value) >= len(bundleObjectPrefix)+len(bundleObjectSuffix) {
		data := value[len(bundleObjectPrefix) : len(value)-len(bundleObjectSuffix)]
		if startsJSON(data) {
			return nil, nil
		}
	}
	var v property.BundleObject
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, err
	}
	if yamlorjson.HasJSONPrefix(v.Data) {
		return nil, nil
	}
	if v.Data == nil {
		v.Data = []byte{}
	}
	return v.Data, nil
}

// startsJSON reports whether the first bytes of base64 s decode, and the
// first non-space byte among them is '{'. False sends the caller to the
// slow path, which decides exactly.
func startsJSON(s []byte) bool {
	const head = 64 // base64 characters: a multiple of 4
	if len(s) > head {
		s = s[:head]
	}
	var buf [head / 4 * 3]byte
	// base64 decoding skips newlines, which JSON would have had to escape
	// (and the slow path then words the error).
	if bytes.IndexByte(s, '\n') >= 0 || bytes.IndexByte(s, '\r') >= 0 {
		return false
	}
	n, err := base64.StdEncoding.Decode(buf[:], s)
	if err != nil {
		return false
	}
	rest := bytes.TrimLeftFunc(buf[:n], unicode.IsSpace)
	return len(rest) > 0 && rest[0] == '{'
}
