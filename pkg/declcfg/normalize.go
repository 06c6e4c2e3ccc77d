package declcfg

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Blob normalisation.
//
// Upstream decodes every blob into map[string]any and re-encodes it with
// encoding/json (sorted keys, compact, no HTML escaping, numbers through
// float64). Doing that literally costs several allocations per value and
// dominates load time on large catalogs, so normalizeFast does the same
// transformation in one pass over the bytes. Whenever the input is anything
// but plain valid JSON it declines, and normalizeSlow, which is upstream's
// algorithm verbatim, produces the result or the exact upstream error.

// errDecline means the fast path cannot handle the input; use the slow path.
var errDecline = errors.New("decline")

// normalized is one blob after normalisation.
type normalized struct {
	blob    []byte // compact, sorted keys, no trailing newline
	schema  string
	pkg     string
	name    string
	hasKeys bool // schema/package/name were extracted
	// top lists the top-level members of blob when the fast path produced
	// it (nil otherwise); typed decoding uses it.
	top []member
}

// normalizeValue normalises the JSON object in raw (which holds exactly one
// value, possibly surrounded by whitespace).
func normalizeValue(raw []byte) (normalized, error) {
	if n, err := normalizeFast(raw); err == nil {
		return n, nil
	}
	return normalizeSlow(raw)
}

// normalizeSlow is upstream's Meta.UnmarshalJSON.
func normalizeSlow(raw []byte) (normalized, error) {
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return normalized{}, errors.New(resolveUnmarshalErr(raw, err))
	}
	var n normalized
	if err := extractMetaKeys(m, &n); err != nil {
		return normalized{}, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return normalized{}, err
	}
	n.blob = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return n, nil
}

// extractMetaKeys finds schema, package and name case-insensitively and
// rejects keys that collide after case folding, with upstream's messages.
func extractMetaKeys(m map[string]any, n *normalized) error {
	keySets := map[string][]string{}
	for k := range m {
		fk := strings.ToLower(k)
		keySets[fk] = append(keySets[fk], k)
	}
	for _, key := range []string{"schema", "package", "name"} {
		ks := keySets[key]
		if len(ks) > 1 {
			slices.Sort(ks)
			return fmt.Errorf("duplicate keys for key %q: %v", key, ks)
		}
		if len(ks) == 0 {
			continue
		}
		v := m[ks[0]]
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected value for key %q to be a string, got %s", key, describeJSON(v))
		}
		switch key {
		case "schema":
			n.schema = s
		case "package":
			n.pkg = s
		case "name":
			n.name = s
		}
	}
	n.hasKeys = true
	return nil
}

// describeJSON names the JSON type of a decoded value, with the value when
// it is short: "null", "number 5", "bool true", "object", "array".
// (Upstream formats it with %t, which prints "%!t(float64=5): 5".)
func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case float64:
		return "number " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "bool " + strconv.FormatBool(v)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// resolveUnmarshalErr formats JSON type and syntax errors the way upstream
// does, pointing at the offending offset.
func resolveUnmarshalErr(data []byte, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return formatUnmarshalErrorString(data, te.Error(), te.Offset)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return formatUnmarshalErrorString(data, se.Error(), se.Offset)
	}
	return err.Error()
}

func formatUnmarshalErrorString(data []byte, errmsg string, offset int64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s at offset %d (indicated by <==)\n ", errmsg, offset)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", "    "); err == nil {
		p := pretty.String()
		var pOffset, origOffset int64
		for origOffset = 0; origOffset < offset && pOffset < int64(len(p)); {
			if p[pOffset] != '\n' && p[pOffset] != ' ' {
				origOffset++
			}
			pOffset++
		}
		sb.WriteString(p[:pOffset])
		sb.WriteString(" <== ")
		sb.WriteString(p[pOffset:])
	} else {
		if offset > int64(len(data)) {
			offset = int64(len(data))
		}
		sb.Write(data[:offset])
		sb.WriteString(" <== ")
		sb.Write(data[offset:])
	}
	return sb.String()
}

// normalizeFast is the single-pass normaliser. It returns errDecline for
// anything it does not handle with certainty.
func normalizeFast(raw []byte) (normalized, error) {
	p := fastParser{src: raw}
	p.skipSpace()
	if p.i >= len(p.src) || p.src[p.i] != '{' {
		return normalized{}, errDecline
	}
	out := make([]byte, 0, len(raw))
	out, top, err := p.object(out, true)
	if err != nil {
		return normalized{}, err
	}
	p.skipSpace()
	if p.i != len(p.src) {
		return normalized{}, errDecline
	}
	n, ok := metaFromMembers(out, top)
	if !ok {
		return normalized{}, errDecline
	}
	return n, nil
}

// metaFromMembers extracts schema, package and name from the top-level
// members of a normalised object. It reports false when only the slow path
// can word the outcome (case-folded duplicates, non-string values).
func metaFromMembers(out []byte, top []member) (normalized, bool) {
	n := normalized{blob: out, top: top}
	seen := [3]int{}
	for _, m := range top {
		var idx int
		switch strings.ToLower(m.key) {
		case "schema":
			idx = 0
		case "package":
			idx = 1
		case "name":
			idx = 2
		default:
			continue
		}
		seen[idx]++
		if seen[idx] > 1 {
			return normalized{}, false
		}
		v := out[m.valStart:m.valEnd]
		if len(v) == 0 || v[0] != '"' {
			return normalized{}, false
		}
		s, ok := unquoteSimple(v)
		if !ok {
			if err := json.Unmarshal(v, &s); err != nil {
				return normalized{}, false
			}
		}
		switch idx {
		case 0:
			n.schema = s
		case 1:
			n.pkg = s
		default:
			n.name = s
		}
	}
	n.hasKeys = true
	return n, true
}

// unquoteSimple unquotes a normalised JSON string that has no escapes.
func unquoteSimple(v []byte) (string, bool) {
	if len(v) < 2 || bytes.IndexByte(v[1:len(v)-1], '\\') >= 0 {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

type fastParser struct {
	src   []byte
	i     int
	depth int
	// short is set when the input ended inside the value: a stream
	// decoder with more input to come retries with more.
	short bool
}

// atEnd reports whether the input is exhausted at p.i, noting that the
// value was cut short.
func (p *fastParser) atEnd(i int) bool {
	if i >= len(p.src) {
		p.short = true
		return true
	}
	return false
}

// member is one key/value of an object being normalised; offsets index the
// output buffer.
type member struct {
	key      string
	start    int // start of the encoded key
	valStart int
	valEnd   int
}

func (p *fastParser) skipSpace() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) value(out []byte) ([]byte, error) {
	p.skipSpace()
	if p.atEnd(p.i) {
		return out, errDecline
	}
	switch c := p.src[p.i]; {
	case c == '{':
		out, _, err := p.object(out, false)
		return out, err
	case c == '[':
		return p.array(out)
	case c == '"':
		return p.str(out)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	case c == 't':
		return p.literal(out, "true")
	case c == 'f':
		return p.literal(out, "false")
	case c == 'n':
		return p.literal(out, "null")
	}
	return out, errDecline
}

func (p *fastParser) literal(out []byte, lit string) ([]byte, error) {
	if !bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
		if bytes.HasPrefix([]byte(lit), p.src[p.i:]) {
			p.short = true
		}
		return out, errDecline
	}
	p.i += len(lit)
	return append(out, lit...), nil
}

// object normalises an object. When keep is true the top-level members are
// returned (for schema/package/name extraction).
func (p *fastParser) object(out []byte, keep bool) ([]byte, []member, error) {
	p.i++ // '{'
	if p.depth++; p.depth > maxDepth {
		// encoding/json refuses it, with its own words.
		return out, nil, errDecline
	}
	defer func() { p.depth-- }()
	objStart := len(out)
	out = append(out, '{')
	var members []member
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return append(out, '}'), nil, nil
	}
	for {
		p.skipSpace()
		if p.atEnd(p.i) || p.src[p.i] != '"' {
			return out, nil, errDecline
		}
		if len(members) > 0 {
			out = append(out, ',')
		}
		keyStart := len(out)
		keyRawStart := p.i
		var err error
		out, err = p.str(out)
		if err != nil {
			return out, nil, err
		}
		key, ok := unquoteSimple(out[keyStart:])
		if !ok {
			var s string
			if err := json.Unmarshal(p.src[keyRawStart:p.i], &s); err != nil {
				return out, nil, errDecline
			}
			key = s
		}
		p.skipSpace()
		if p.atEnd(p.i) || p.src[p.i] != ':' {
			return out, nil, errDecline
		}
		p.i++
		out = append(out, ':')
		valStart := len(out)
		out, err = p.value(out)
		if err != nil {
			return out, nil, err
		}
		members = append(members, member{key: key, start: keyStart, valStart: valStart, valEnd: len(out)})
		p.skipSpace()
		if p.atEnd(p.i) {
			return out, nil, errDecline
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] == '}' {
			p.i++
			break
		}
		return out, nil, errDecline
	}
	out = append(out, '}')

	sorted := true
	for k := 1; k < len(members); k++ {
		if members[k-1].key >= members[k].key {
			sorted = false
			break
		}
	}
	if sorted {
		return out, members, nil
	}
	// Reorder: sort by key, last duplicate wins (map semantics).
	region := slices.Clone(out[objStart:])
	base := objStart
	idx := make([]int, len(members))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(members[a].key, members[b].key) })
	out = out[:objStart]
	out = append(out, '{')
	var kept []member
	for k := 0; k < len(idx); k++ {
		m := members[idx[k]]
		if k+1 < len(idx) && members[idx[k+1]].key == m.key {
			continue // a later duplicate wins
		}
		if len(kept) > 0 {
			out = append(out, ',')
		}
		ks := len(out)
		out = append(out, region[m.start-base:m.valEnd-base]...)
		shift := ks - m.start
		kept = append(kept, member{key: m.key, start: ks, valStart: m.valStart + shift, valEnd: m.valEnd + shift})
	}
	out = append(out, '}')
	return out, kept, nil
}

func (p *fastParser) array(out []byte) ([]byte, error) {
	p.i++ // '['
	if p.depth++; p.depth > maxDepth {
		return out, errDecline
	}
	defer func() { p.depth-- }()
	out = append(out, '[')
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return append(out, ']'), nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			out = append(out, ',')
		}
		var err error
		out, err = p.value(out)
		if err != nil {
			return out, err
		}
		p.skipSpace()
		if p.atEnd(p.i) {
			return out, errDecline
		}
		if p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.src[p.i] == ']' {
			p.i++
			return append(out, ']'), nil
		}
		return out, errDecline
	}
}

// str copies a string token. Plain printable ASCII without escapes is
// copied as is; anything else is decoded and re-encoded the encoding/json
// way (no HTML escaping).
func (p *fastParser) str(out []byte) ([]byte, error) {
	start := p.i
	j := p.i + 1
	if q := bytes.IndexByte(p.src[j:], '"'); q >= 0 && plainASCII(p.src[j:j+q]) {
		out = append(out, p.src[start:j+q+1]...)
		p.i = j + q + 1
		return out, nil
	}
	for j < len(p.src) {
		c := p.src[j]
		if c == '"' {
			out = append(out, p.src[start:j+1]...)
			p.i = j + 1
			return out, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		j++
	}
	// Slow: find the end of the token, then let encoding/json unquote it.
	end := j
	for end < len(p.src) {
		c := p.src[end]
		if c == '\\' {
			end += 2
			continue
		}
		if c == '"' {
			break
		}
		end++
	}
	if p.atEnd(end) {
		return out, errDecline
	}
	var s string
	if err := json.Unmarshal(p.src[start:end+1], &s); err != nil {
		return out, errDecline
	}
	p.i = end + 1
	return appendString(out, s), nil
}

func (p *fastParser) number(out []byte) ([]byte, error) {
	start := p.i
	j := p.i
	if p.src[j] == '-' {
		j++
	}
	if p.atEnd(j) {
		return out, errDecline
	}
	intStart := j
	if p.src[j] == '0' {
		j++
	} else if p.src[j] >= '1' && p.src[j] <= '9' {
		for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			j++
		}
	} else {
		return out, errDecline
	}
	simple := true
	if j < len(p.src) && p.src[j] == '.' {
		simple = false
		j++
		d := j
		for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			j++
		}
		if j == d {
			p.atEnd(j)
			return out, errDecline
		}
	}
	if j < len(p.src) && (p.src[j] == 'e' || p.src[j] == 'E') {
		simple = false
		j++
		if j < len(p.src) && (p.src[j] == '+' || p.src[j] == '-') {
			j++
		}
		d := j
		for j < len(p.src) && p.src[j] >= '0' && p.src[j] <= '9' {
			j++
		}
		if j == d {
			p.atEnd(j)
			return out, errDecline
		}
	}
	if p.atEnd(j) {
		// The number may go on past the input.
		return out, errDecline
	}
	p.i = j
	tok := p.src[start:j]
	if simple && j-intStart <= 15 {
		return append(out, tok...), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(f, 0) {
		return out, errDecline
	}
	return appendFloat(out, f), nil
}

// plainASCII reports whether b holds only bytes in 0x20..0x7F other than
// '\\' (and so needs no decoding), eight bytes at a time.
func plainASCII(b []byte) bool {
	const (
		lo   = 0x0101010101010101
		hi   = 0x8080808080808080
		bs   = 0x5c5c5c5c5c5c5c5c // '\\'
		ctrl = 0x2020202020202020 // bytes below 0x20
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		x := w ^ bs
		if (w|((w-ctrl)&^w)|((x-lo)&^x))&hi != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// appendFloat formats f as encoding/json does for float64.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
