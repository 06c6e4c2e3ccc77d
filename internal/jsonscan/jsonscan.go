// Package jsonscan skips over JSON text without decoding it: the few
// byte-level scans that the loader, the writer and opm serve use to find a
// value's extent in JSON that encoding/json has validated or will validate.
// They check nesting and string boundaries only, not tokens.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
)

// IndexQuoteOrBackslash returns the index of the first '"' or '\\' in b,
// or -1.
func IndexQuoteOrBackslash(b []byte) int {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		return bytes.IndexByte(b, '\\')
	}
	if bs := bytes.IndexByte(b[:q], '\\'); bs >= 0 {
		return bs
	}
	return q
}

// SkipString returns the offset just past the string starting at b[i] (a
// '"'), or -1 when it does not end.
func SkipString(b []byte, i int) int {
	i++
	for i < len(b) {
		k := IndexQuoteOrBackslash(b[i:])
		if k < 0 {
			return -1
		}
		i += k
		if b[i] == '\\' {
			i += 2
			continue
		}
		return i + 1
	}
	return -1
}

// SkipValue returns the offset just past the value starting at b[i], or
// -1 when a string or a nesting does not end. A scalar ends at the next
// ',', '}', ']' or whitespace.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && !isDelim(b[i]) {
		i++
	}
	return i
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// SkipSpace returns the offset of the first byte at or after b[i] that is
// not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Members calls fn with the key and raw value of each member of the JSON
// object data, in order. It scans without decoding, and reports false when
// data is not an object or a string or nesting in it does not end (fn may
// have been called for the members before).
func Members(data []byte, fn func(key string, value []byte)) bool {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := SkipString(data, i)
		if end < 0 {
			return false
		}
		quoted := data[i:end]
		k := string(quoted[1 : len(quoted)-1])
		if strings.IndexByte(k, '\\') >= 0 {
			k = unquote(quoted)
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		v := SkipSpace(data, i+1)
		ve := SkipValue(data, v)
		if ve < 0 {
			return false
		}
		fn(k, data[v:ve])
		i = SkipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
		}
	}
	return true
}

// Member returns the raw value of key in the JSON object data (the last
// one, as decoding keeps), or nil when data is not an object or has no
// such key. It scans without decoding, so that a field of a large object
// (the kind of a manifest, a CRD's name) costs one light scan.
func Member(data []byte, key string) []byte {
	var found []byte
	if !Members(data, func(k string, v []byte) {
		if k == key {
			found = v
		}
	}) {
		return nil
	}
	return found
}

// StringMember returns the string value of key in the object data (""
// when absent or not a string).
func StringMember(data []byte, key string) string {
	v := Member(data, key)
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	return unquote(v)
}

func unquote(q []byte) string {
	var s string
	if json.Unmarshal(bytes.TrimSpace(q), &s) != nil {
		return ""
	}
	return s
}
