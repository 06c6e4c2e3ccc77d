package validate

import (
	"bytes"
	"encoding/json"
	"sort"
)

// shapeOf returns the shape of a compact JSON value: the same keys,
// nesting, booleans and nulls, with every string replaced by "" (except
// the values of "schema" keys, which schemas match literally), every
// integer by 0 and every other number by 0.5, and every array reduced to the sorted set of its elements' shapes.
//
// opm's built-in schemas constrain types, keys and "schema" values only,
// and their lists are [...T], so a value satisfies them exactly when its
// shape does: the checker evaluates each distinct shape once and only goes
// back to the real value to word the errors of a failing one. User schemas
// may constrain string contents and are never checked by shape.
//
// ok is false when data is not the compact JSON the checker produces;
// callers then check the value itself.
func shapeOf(data []byte) (shape []byte, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	s := shaper{in: data, out: make([]byte, 0, 64)}
	if !s.value(false) {
		return nil, false
	}
	if s.i != len(s.in) {
		return nil, false
	}
	return s.out, true
}

type shaper struct {
	in  []byte
	i   int
	out []byte
}

func (s *shaper) value(keep bool) bool {
	if s.i >= len(s.in) {
		return false
	}
	switch c := s.in[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		start := s.i
		if !s.skipString() {
			return false
		}
		if keep {
			s.out = append(s.out, s.in[start:s.i]...)
		} else {
			s.out = append(s.out, '"', '"')
		}
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		for s.i < len(s.in) && bytes.IndexByte([]byte("+-0123456789.eE"), s.in[s.i]) >= 0 {
			s.i++
		}
		// Keep CUE's int/float distinction.
		if bytes.ContainsAny(s.in[start:s.i], ".eE") {
			s.out = append(s.out, "0.5"...)
		} else {
			s.out = append(s.out, '0')
		}
		return true
	case bytes.HasPrefix(s.in[s.i:], []byte("true")):
		s.i += 4
		s.out = append(s.out, "true"...)
		return true
	case bytes.HasPrefix(s.in[s.i:], []byte("false")):
		s.i += 5
		s.out = append(s.out, "false"...)
		return true
	case bytes.HasPrefix(s.in[s.i:], []byte("null")):
		s.i += 4
		s.out = append(s.out, "null"...)
		return true
	}
	return false
}

func (s *shaper) skipString() bool {
	s.i++ // opening quote
	for s.i < len(s.in) {
		switch s.in[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return true
		default:
			s.i++
		}
	}
	return false
}

func (s *shaper) object() bool {
	s.i++
	s.out = append(s.out, '{')
	if s.i < len(s.in) && s.in[s.i] == '}' {
		s.i++
		s.out = append(s.out, '}')
		return true
	}
	for {
		if s.i >= len(s.in) || s.in[s.i] != '"' {
			return false
		}
		start := s.i
		if !s.skipString() {
			return false
		}
		key := s.in[start:s.i]
		s.out = append(s.out, key...)
		if s.i >= len(s.in) || s.in[s.i] != ':' {
			return false
		}
		s.i++
		s.out = append(s.out, ':')
		if !s.value(string(key) == `"schema"`) {
			return false
		}
		if s.i >= len(s.in) {
			return false
		}
		switch s.in[s.i] {
		case ',':
			s.i++
			s.out = append(s.out, ',')
		case '}':
			s.i++
			s.out = append(s.out, '}')
			return true
		default:
			return false
		}
	}
}

func (s *shaper) array() bool {
	s.i++
	start := len(s.out)
	if s.i < len(s.in) && s.in[s.i] == ']' {
		s.i++
		s.out = append(s.out, '[', ']')
		return true
	}
	// The distinct element shapes, sorted: schemas' lists are [...T], so
	// one element of a shape stands for all, wherever it is.
	var elems []string
	seen := map[string]bool{}
	for {
		elemStart := len(s.out)
		if !s.value(false) {
			return false
		}
		if e := string(s.out[elemStart:]); !seen[e] {
			seen[e] = true
			elems = append(elems, e)
		}
		s.out = s.out[:elemStart]
		if s.i >= len(s.in) {
			return false
		}
		switch s.in[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			sort.Strings(elems)
			s.out = append(s.out[:start], '[')
			for i, e := range elems {
				if i > 0 {
					s.out = append(s.out, ',')
				}
				s.out = append(s.out, e...)
			}
			s.out = append(s.out, ']')
			return true
		default:
			return false
		}
	}
}
