package catalogedit

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

	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/yamlorjson"
)

// Values.
//
// A blob is edited as a generic value whose objects keep their keys in
// document order, so that a re-emitted blob lists its keys as the author
// did and keeps fields the typed declcfg structs do not know. A value is
// one of: nil, bool, Number, string, []any, *Object.

// Number is a JSON number, kept as its text.
type Number string

// Object is a JSON object with its keys in order.
type Object struct {
	Keys []string
	Vals []any
}

// index returns the position of key: an exact match first, then a
// case-insensitive one (encoding/json, which the loader uses for the typed
// blobs, matches field names that way).
func (o *Object) index(key string) int {
	for i, k := range o.Keys {
		if k == key {
			return i
		}
	}
	for i, k := range o.Keys {
		if strings.EqualFold(k, key) {
			return i
		}
	}
	return -1
}

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	if i := o.index(key); i >= 0 {
		return o.Vals[i], true
	}
	return nil, false
}

// Set replaces the value of key, or appends key when it is absent.
func (o *Object) Set(key string, v any) {
	if i := o.index(key); i >= 0 {
		o.Vals[i] = v
		return
	}
	o.Keys = append(o.Keys, key)
	o.Vals = append(o.Vals, v)
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if i := o.index(key); i >= 0 {
		o.Keys = append(o.Keys[:i:i], o.Keys[i+1:]...)
		o.Vals = append(o.Vals[:i:i], o.Vals[i+1:]...)
	}
}

// String returns the string value of key, or "".
func (o *Object) String(key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

// clone deep-copies a value.
func clone(v any) any {
	switch t := v.(type) {
	case *Object:
		c := &Object{Keys: append([]string(nil), t.Keys...), Vals: make([]any, len(t.Vals))}
		for i, x := range t.Vals {
			c.Vals[i] = clone(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = clone(x)
		}
		return c
	}
	return v
}

// valueOf converts a Go value (typically a declcfg struct) to a Value
// through its JSON encoding, so keys come in struct order.
func valueOf(x any) (any, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	n, _, err := parseJSON(buf.Bytes(), skipJSONSpace(buf.Bytes(), 0))
	if err != nil {
		return nil, err
	}
	return n.value(buf.Bytes()), nil
}

// valueFromYAML decodes one YAML document (or sequence item text) the way
// the loader reads YAML (yaml.v2), keeping key order.
func valueFromYAML(text []byte) (any, error) {
	// Decoding into a MapSlice makes yaml.v2 decode nested mappings as
	// MapSlices too, which keeps their order.
	if !startsWithDash(text) {
		var m yaml2.MapSlice
		if err := yaml2.Unmarshal(text, &m); err != nil {
			return nil, err
		}
		return fromYAML2(m)
	}
	var s []yaml2.MapSlice
	if err := yaml2.Unmarshal(text, &s); err != nil {
		return nil, err
	}
	out := make([]any, len(s))
	for i, x := range s {
		v, err := fromYAML2(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// startsWithDash reports whether the first content line of a YAML text is
// a sequence item.
func startsWithDash(text []byte) bool {
	for _, line := range bytes.Split(text, []byte("\n")) {
		t := bytes.TrimLeft(line, " \t")
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		return t[0] == '-' && (len(t) == 1 || t[1] == ' ' || t[1] == '\t' || t[1] == '\r')
	}
	return false
}

func fromYAML2(v any) (any, error) {
	switch t := v.(type) {
	case nil, bool, string:
		return t, nil
	case int:
		return Number(strconv.Itoa(t)), nil
	case int64:
		return Number(strconv.FormatInt(t, 10)), nil
	case uint64:
		return Number(strconv.FormatUint(t, 10)), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("unsupported number %v", t)
		}
		return Number(strconv.FormatFloat(t, 'g', -1, 64)), nil
	case yaml2.MapSlice:
		o := &Object{}
		for _, it := range t {
			k, ok := yamlorjson.KeyString(it.Key)
			if !ok {
				return nil, fmt.Errorf("unsupported key %v", it.Key)
			}
			x, err := fromYAML2(it.Value)
			if err != nil {
				return nil, err
			}
			o.Keys = append(o.Keys, k)
			o.Vals = append(o.Vals, x)
		}
		return o, nil
	case map[any]any:
		// yaml.v2 decodes nested mappings into maps unless asked for
		// MapSlice; order them for determinism.
		keys := make([]string, 0, len(t))
		vals := map[string]any{}
		for k, x := range t {
			ks, ok := yamlorjson.KeyString(k)
			if !ok {
				return nil, fmt.Errorf("unsupported key %v", k)
			}
			keys = append(keys, ks)
			vals[ks] = x
		}
		sort.Strings(keys)
		o := &Object{}
		for _, k := range keys {
			x, err := fromYAML2(vals[k])
			if err != nil {
				return nil, err
			}
			o.Keys = append(o.Keys, k)
			o.Vals = append(o.Vals, x)
		}
		return o, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			c, err := fromYAML2(x)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported YAML value of type %T", v)
}

// canonical returns the JSON text of v with sorted keys, for comparisons.
func canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v, jsonStyle{compact: true, kvSep: ":", itemSep: ","}, ""); err != nil {
		return nil, err
	}
	return canonicalJSON(buf.Bytes())
}

// canonicalJSON re-encodes JSON text with sorted keys and numbers
// normalised by value, so that texts that decode alike compare equal.
func canonicalJSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the value")
	}
	v = normNumbers(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func normNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return f
		}
		return string(t)
	case map[string]any:
		for k, x := range t {
			t[k] = normNumbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = normNumbers(x)
		}
	}
	return v
}

// sameValue reports whether text (in format f) decodes, the way the loader
// decodes it, to the same value as want.
func sameValue(text []byte, f Format, want any) bool {
	var j []byte
	switch f {
	case FormatJSON:
		j = text
	default:
		var err error
		j, err = yaml.YAMLToJSON(text)
		if err != nil {
			return false
		}
	}
	got, err := canonicalJSON(j)
	if err != nil {
		return false
	}
	exp, err := canonical(want)
	if err != nil {
		return false
	}
	return bytes.Equal(got, exp)
}
