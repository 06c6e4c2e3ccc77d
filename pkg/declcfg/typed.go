package declcfg

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/opmkit/opm/internal/jsonscan"
	"github.com/opmkit/opm/pkg/property"
)

// Typed decoding of olm.bundle blobs without encoding/json.
//
// Bundles are most of a catalog's bytes. Their blobs have just been
// normalised by the fast path, so they are valid compact JSON with sorted,
// unique keys, and the top-level members are known. decodeBundleFast fills
// the struct straight from those bytes, aliasing property values into the
// blob instead of copying them. Anything unusual (a key that only matches a
// field case-insensitively, a value of an unexpected type) makes it report
// false, and encoding/json decodes the blob as upstream does, wording any
// error.

func decodeBundleFast(blob []byte, top []member, b *Bundle) bool {
	for _, m := range top {
		v := blob[m.valStart:m.valEnd]
		var ok bool
		switch m.key {
		case "schema":
			ok = decodeString(v, &b.Schema)
		case "name":
			ok = decodeString(v, &b.Name)
		case "package":
			ok = decodeString(v, &b.Package)
		case "image":
			ok = decodeString(v, &b.Image)
		case "properties":
			b.Properties, ok = decodeProperties(v)
		case "relatedImages":
			b.RelatedImages, ok = decodeRelatedImages(v)
		default:
			ok = !foldsToAny(m.key, "schema", "name", "package", "image", "properties", "relatedimages")
		}
		if !ok {
			return false
		}
	}
	return true
}

// foldsToAny reports whether key might match one of the (lowercase) names
// under encoding/json's case-insensitive field matching.
func foldsToAny(key string, names ...string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return true // leave Unicode folding to encoding/json
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

func decodeString(v []byte, dst *string) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		*dst = string(inner)
		return true
	}
	return json.Unmarshal(v, dst) == nil
}

func decodeProperties(v []byte) ([]property.Property, bool) {
	if string(v) == "null" {
		return nil, true
	}
	var props []property.Property
	ok := iterArray(v, func(elem []byte) bool {
		var p property.Property
		ok := iterObject(elem, func(key string, val []byte) bool {
			switch key {
			case "type":
				return decodeString(val, &p.Type)
			case "value":
				p.Value = json.RawMessage(val[:len(val):len(val)])
				return true
			}
			return !foldsToAny(key, "type", "value")
		})
		props = append(props, p)
		return ok
	})
	if ok && props == nil {
		props = []property.Property{}
	}
	return props, ok
}

func decodeRelatedImages(v []byte) ([]RelatedImage, bool) {
	if string(v) == "null" {
		return nil, true
	}
	var ris []RelatedImage
	ok := iterArray(v, func(elem []byte) bool {
		var ri RelatedImage
		ok := iterObject(elem, func(key string, val []byte) bool {
			switch key {
			case "name":
				return decodeString(val, &ri.Name)
			case "image":
				return decodeString(val, &ri.Image)
			}
			return !foldsToAny(key, "name", "image")
		})
		ris = append(ris, ri)
		return ok
	})
	if ok && ris == nil {
		ris = []RelatedImage{}
	}
	return ris, ok
}

// iterArray calls fn with each element of the compact JSON array v. It
// reports false if v is not an array or fn returns false.
func iterArray(v []byte, fn func([]byte) bool) bool {
	if len(v) < 2 || v[0] != '[' {
		return false
	}
	i := 1
	for i < len(v)-1 {
		end := jsonscan.SkipValue(v, i)
		if end < 0 || !fn(v[i:end]) {
			return false
		}
		i = end
		if v[i] == ',' {
			i++
		}
	}
	return true
}

// iterObject calls fn with each key and value of the compact JSON object v,
// requiring keys without escapes. It reports false if v is not such an
// object or fn returns false.
func iterObject(v []byte, fn func(string, []byte) bool) bool {
	if len(v) < 2 || v[0] != '{' {
		return false
	}
	i := 1
	for i < len(v)-1 {
		if v[i] != '"' {
			return false
		}
		kEnd := jsonscan.SkipValue(v, i)
		if kEnd < 0 || v[kEnd] != ':' {
			return false
		}
		key := v[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		vEnd := jsonscan.SkipValue(v, kEnd+1)
		if vEnd < 0 || !fn(string(key), v[kEnd+1:vEnd]) {
			return false
		}
		i = vEnd
		if v[i] == ',' {
			i++
		}
	}
	return true
}
