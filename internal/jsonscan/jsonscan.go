// Package jsonscan skips over JSON text without decoding it: the few
// byte-level scans that the loader, the writer and opm serve use to find a
// value's extent in JSON that encoding/json has validated or will validate.
// They check nesting and string boundaries only, not tokens.
package jsonscan

import "bytes"

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
