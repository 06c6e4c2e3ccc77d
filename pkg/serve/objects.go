package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/opmkit/opm/internal/jsonscan"
	"github.com/opmkit/opm/internal/yamlorjson"
)

// Bundle objects.
//
// An olm.bundle.object property holds one manifest as base64 in {"data":…}.
// Upstream serves each one as it was written when it is JSON (the decoded
// text starts, after whitespace, with '{'), and otherwise converts the YAML
// to compact JSON with sorted keys and HTML escaping (sigs.k8s.io/yaml's
// YAMLToJSON). The ClusterServiceVersion among them, if any, is the
// bundle's csvJson.

var (
	bundleObjectPrefix = []byte(`{"data":"`)
	bundleObjectSuffix = []byte(`"}`)
)

// appendBundleObject appends the manifest an olm.bundle.object value holds
// to dst as one entry of the data file's object list (a 4-byte
// little-endian length, then the JSON text upstream serves). ok is false,
// and dst unchanged, when json.Unmarshal into {Data []byte} would fail
// (the model conversion then reports it with upstream's wording); err is
// set when the manifest is YAML that cannot be converted.
func appendBundleObject(dst, value []byte) (out []byte, ok bool, err error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var raw []byte
	if bytes.HasPrefix(value, bundleObjectPrefix) && bytes.HasSuffix(value, bundleObjectSuffix) && len(value) >= len(bundleObjectPrefix)+len(bundleObjectSuffix) {
		data := value[len(bundleObjectPrefix) : len(value)-len(bundleObjectSuffix)]
		// The compact form holds no escapes base64 could contain; anything
		// unusual goes through encoding/json.
		if bytes.IndexByte(data, '\\') < 0 && bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
			dst = slices.Grow(dst, base64.StdEncoding.DecodedLen(len(data)))
			n, derr := base64.StdEncoding.Decode(dst[len(dst):cap(dst)], data)
			if derr == nil {
				raw = dst[len(dst) : len(dst)+n]
			}
		}
	}
	if raw == nil {
		var v struct {
			Data []byte `json:"data"`
		}
		if json.Unmarshal(value, &v) != nil {
			return dst[:start], false, nil
		}
		dst = append(dst, v.Data...)
		raw = dst[len(dst)-len(v.Data):]
		dst = dst[:len(dst)-len(v.Data)]
	}
	if !yamlorjson.HasJSONPrefix(raw) {
		j, err := yamlorjson.ToJSON(raw)
		if err != nil {
			return dst[:start], true, fmt.Errorf("error converting YAML to JSON: %w", err)
		}
		dst = append(dst, j...)
	} else {
		dst = dst[:len(dst)+len(raw)]
	}
	n := len(dst) - start - 4
	if n > math.MaxUint32 {
		return dst[:start], true, errors.New("bundle object too large")
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	return dst, true, nil
}

// firstCSV returns the index of the first ClusterServiceVersion among the
// manifests (JSON text), or -1. As upstream, a manifest counts when it
// parses and its top-level kind is exactly ClusterServiceVersion.
func firstCSV(objs []string) int {
	for i, o := range objs {
		// A read-only view of the string: nothing writes through it.
		if isCSV(unsafe.Slice(unsafe.StringData(o), len(o))) {
			return i
		}
	}
	return -1
}

// isCSV reports whether the manifest (JSON text) is a ClusterServiceVersion.
func isCSV(obj []byte) bool {
	kind, ok := topLevelString(obj, "kind")
	return ok && kind == "ClusterServiceVersion" && json.Valid(obj)
}

// topLevelString finds the string value of key among the members of the
// JSON object obj without decoding the rest. ok is false when obj is not an
// object, has no such member, or the value is not a string. The last
// occurrence of a repeated key wins, as in encoding/json.
func topLevelString(obj []byte, key string) (string, bool) {
	i := jsonscan.SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return "", false
	}
	i++
	found, val := false, ""
	for {
		i = jsonscan.SkipSpace(obj, i)
		if i >= len(obj) {
			return "", false
		}
		if obj[i] == '}' {
			return val, found
		}
		if obj[i] == ',' {
			i++
			continue
		}
		if obj[i] != '"' {
			return "", false
		}
		end := jsonscan.SkipString(obj, i)
		if end < 0 {
			return "", false
		}
		var k string
		if err := json.Unmarshal(obj[i:end], &k); err != nil {
			return "", false
		}
		i = jsonscan.SkipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return "", false
		}
		i = jsonscan.SkipSpace(obj, i+1)
		vend := jsonscan.SkipValue(obj, i)
		if vend < 0 {
			return "", false
		}
		if k == key {
			var s string
			if err := json.Unmarshal(obj[i:vend], &s); err != nil {
				found, val = false, ""
			} else {
				found, val = true, s
			}
		}
		i = vend
	}
}

var errCorruptObjects = errors.New("corrupt bundle object data")

// parseObjects decodes a list of entries written by appendBundleObject.
// The strings share b's memory: b must not change afterwards.
func parseObjects(b []byte) ([]string, error) {
	var out []string
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errCorruptObjects
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, errCorruptObjects
		}
		out = append(out, unsafe.String(unsafe.SliceData(b), n))
		b = b[n:]
	}
	return out, nil
}
