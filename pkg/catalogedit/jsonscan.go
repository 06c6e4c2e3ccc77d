package catalogedit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A small JSON parser that records where every value starts and ends, so
// that an edit can replace one value's bytes and leave the rest of a file
// alone. It accepts what encoding/json accepts (the loader's grammar).

// maxDepth bounds nesting, as hostile input may nest without end.
const maxDepth = 512

// jnode is one JSON value and its byte range [start, end).
type jnode struct {
	kind       byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	start, end int
	keys       []*jnode // object keys (string nodes)
	elems      []*jnode // object values or array elements
}

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseJSON parses the value starting at data[off] (no leading space) and
// returns it and the offset just past it.
func parseJSON(data []byte, off int) (*jnode, int, error) {
	p := jparser{data: data}
	n, err := p.value(off, 0)
	if err != nil {
		return nil, 0, err
	}
	return n, n.end, nil
}

type jparser struct{ data []byte }

func (p *jparser) fail(off int, format string, args ...any) error {
	return &jsonError{off: off, msg: fmt.Sprintf(format, args...)}
}

func (p *jparser) value(i, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, p.fail(i, "exceeded max depth")
	}
	if i >= len(p.data) {
		return nil, p.fail(i, "unexpected end of JSON input")
	}
	switch c := p.data[i]; {
	case c == '{':
		return p.object(i, depth)
	case c == '[':
		return p.array(i, depth)
	case c == '"':
		end, err := p.str(i)
		if err != nil {
			return nil, err
		}
		return &jnode{kind: '"', start: i, end: end}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		end, err := p.number(i)
		if err != nil {
			return nil, err
		}
		return &jnode{kind: '0', start: i, end: end}, nil
	case c == 't':
		return p.literal(i, "true", 't')
	case c == 'f':
		return p.literal(i, "false", 'f')
	case c == 'n':
		return p.literal(i, "null", 'n')
	default:
		return nil, p.fail(i, "invalid character %q looking for beginning of value", c)
	}
}

func (p *jparser) literal(i int, lit string, kind byte) (*jnode, error) {
	if len(p.data)-i < len(lit) || string(p.data[i:i+len(lit)]) != lit {
		return nil, p.fail(i, "invalid literal")
	}
	return &jnode{kind: kind, start: i, end: i + len(lit)}, nil
}

func (p *jparser) object(start, depth int) (*jnode, error) {
	n := &jnode{kind: '{', start: start}
	i := skipJSONSpace(p.data, start+1)
	if i < len(p.data) && p.data[i] == '}' {
		n.end = i + 1
		return n, nil
	}
	for {
		if i >= len(p.data) || p.data[i] != '"' {
			return nil, p.fail(i, "expected object key")
		}
		kend, err := p.str(i)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, &jnode{kind: '"', start: i, end: kend})
		i = skipJSONSpace(p.data, kend)
		if i >= len(p.data) || p.data[i] != ':' {
			return nil, p.fail(i, "expected ':' after object key")
		}
		i = skipJSONSpace(p.data, i+1)
		v, err := p.value(i, depth+1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		i = skipJSONSpace(p.data, v.end)
		if i >= len(p.data) {
			return nil, p.fail(i, "unexpected end of JSON input")
		}
		switch p.data[i] {
		case ',':
			i = skipJSONSpace(p.data, i+1)
		case '}':
			n.end = i + 1
			return n, nil
		default:
			return nil, p.fail(i, "expected ',' or '}' after object value")
		}
	}
}

func (p *jparser) array(start, depth int) (*jnode, error) {
	n := &jnode{kind: '[', start: start}
	i := skipJSONSpace(p.data, start+1)
	if i < len(p.data) && p.data[i] == ']' {
		n.end = i + 1
		return n, nil
	}
	for {
		v, err := p.value(i, depth+1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		i = skipJSONSpace(p.data, v.end)
		if i >= len(p.data) {
			return nil, p.fail(i, "unexpected end of JSON input")
		}
		switch p.data[i] {
		case ',':
			i = skipJSONSpace(p.data, i+1)
		case ']':
			n.end = i + 1
			return n, nil
		default:
			return nil, p.fail(i, "expected ',' or ']' after array element")
		}
	}
}

// str scans the string starting at the quote at i and returns the offset
// past its closing quote.
func (p *jparser) str(i int) (int, error) {
	j := i + 1
	for j < len(p.data) {
		c := p.data[j]
		switch {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			if j+1 >= len(p.data) {
				return 0, p.fail(j, "unexpected end of JSON input")
			}
			switch p.data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(p.data) {
					return 0, p.fail(j, "unexpected end of JSON input")
				}
				for _, h := range p.data[j+2 : j+6] {
					if !isHex(h) {
						return 0, p.fail(j, "invalid character in \\u escape")
					}
				}
				j += 6
			default:
				return 0, p.fail(j, "invalid escape")
			}
		case c < 0x20:
			return 0, p.fail(j, "invalid character in string literal")
		default:
			j++
		}
	}
	return 0, p.fail(j, "unexpected end of JSON input")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *jparser) number(i int) (int, error) {
	j := i
	if p.data[j] == '-' {
		j++
	}
	switch {
	case j < len(p.data) && p.data[j] == '0':
		j++
	case j < len(p.data) && p.data[j] >= '1' && p.data[j] <= '9':
		for j < len(p.data) && isDigit(p.data[j]) {
			j++
		}
	default:
		return 0, p.fail(j, "invalid number")
	}
	if j < len(p.data) && p.data[j] == '.' {
		j++
		if j >= len(p.data) || !isDigit(p.data[j]) {
			return 0, p.fail(j, "invalid number")
		}
		for j < len(p.data) && isDigit(p.data[j]) {
			j++
		}
	}
	if j < len(p.data) && (p.data[j] == 'e' || p.data[j] == 'E') {
		j++
		if j < len(p.data) && (p.data[j] == '+' || p.data[j] == '-') {
			j++
		}
		if j >= len(p.data) || !isDigit(p.data[j]) {
			return 0, p.fail(j, "invalid number")
		}
		for j < len(p.data) && isDigit(p.data[j]) {
			j++
		}
	}
	return j, nil
}

// skipJSON checks the value starting at data[off] as parseJSON does, but
// builds no nodes, and returns the offset just past it (a stream's blobs
// only need their extents).
func skipJSON(data []byte, off int) (int, error) {
	p := jparser{data: data}
	return p.skip(off, 0)
}

func (p *jparser) skip(i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, p.fail(i, "exceeded max depth")
	}
	if i >= len(p.data) {
		return 0, p.fail(i, "unexpected end of JSON input")
	}
	switch c := p.data[i]; {
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipJSONSpace(p.data, i+1)
		if i < len(p.data) && p.data[i] == closer {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(p.data) || p.data[i] != '"' {
					return 0, p.fail(i, "expected object key")
				}
				end, err := p.str(i)
				if err != nil {
					return 0, err
				}
				i = skipJSONSpace(p.data, end)
				if i >= len(p.data) || p.data[i] != ':' {
					return 0, p.fail(i, "expected ':' after object key")
				}
				i = skipJSONSpace(p.data, i+1)
			}
			end, err := p.skip(i, depth+1)
			if err != nil {
				return 0, err
			}
			i = skipJSONSpace(p.data, end)
			if i >= len(p.data) {
				return 0, p.fail(i, "unexpected end of JSON input")
			}
			switch p.data[i] {
			case ',':
				i = skipJSONSpace(p.data, i+1)
			case closer:
				return i + 1, nil
			default:
				return 0, p.fail(i, "expected ',' or %q", closer)
			}
		}
	case c == '"':
		return p.str(i)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(i)
	default:
		n, err := p.value(i, depth)
		if err != nil {
			return 0, err
		}
		return n.end, nil
	}
}

// text returns the node's bytes.
func (n *jnode) text(data []byte) []byte { return data[n.start:n.end] }

// str decodes a string node.
func (n *jnode) str(data []byte) (string, error) {
	var s string
	if err := json.Unmarshal(n.text(data), &s); err != nil {
		return "", err
	}
	return s, nil
}

// field returns the index of key in an object node: an exact match first,
// then a case-insensitive one.
func (n *jnode) field(data []byte, key string) int {
	if n.kind != '{' {
		return -1
	}
	fold := -1
	for i, k := range n.keys {
		s, err := k.str(data)
		if err != nil {
			continue
		}
		if s == key {
			return i
		}
		if fold < 0 && strings.EqualFold(s, key) {
			fold = i
		}
	}
	return fold
}

// value converts the node to a Value.
func (n *jnode) value(data []byte) any {
	switch n.kind {
	case '{':
		o := &Object{Keys: make([]string, len(n.keys)), Vals: make([]any, len(n.elems))}
		for i := range n.keys {
			o.Keys[i], _ = n.keys[i].str(data)
			o.Vals[i] = n.elems[i].value(data)
		}
		return o
	case '[':
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = e.value(data)
		}
		return out
	case '"':
		s, _ := n.str(data)
		return s
	case '0':
		return Number(n.text(data))
	case 't':
		return true
	case 'f':
		return false
	}
	return nil
}
