package declcfg

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// YAML fast path.
//
// Upstream converts each YAML document with sigs.k8s.io/yaml: yaml.v2
// decodes it into interface{} (YAML 1.1 resolution), the result is
// converted to JSON-able values and marshalled, and Meta.UnmarshalJSON
// normalises that JSON (decodeYAMLSlow does all of this). Catalogs are
// almost always block YAML as `opm render -o yaml` writes it, so
// decodeYAMLFast converts that subset in one pass straight to the
// normalised JSON, and declines anything else: flow collections other
// than {} and [], anchors, aliases, tags, directives, complex and
// non-string keys, merge keys, tabs outside scalar content, special
// floats, nesting deeper than yamlFastMaxDepth, and every input yaml.v2
// would refuse. What it accepts it converts exactly as the slow path does
// (the same line folding, chomping, escapes and resolution); FuzzYAMLFast
// checks this against the slow path.
//
// Comments on the scanner's behaviour refer to yaml.v2's scannerc.go,
// which the accepted subset follows rule by rule.

// yamlFastMaxDepth bounds the nesting the fast path handles (catalogs nest
// about ten deep); deeper documents take the slow path, which applies
// upstream's limits.
const yamlFastMaxDepth = 200

type yamlFast struct {
	src []byte
	out []byte
	// i is the start of the current content line, col its indentation
	// (-1 at the end of the document).
	i, col int
	depth  int
	// budget bounds the bytes copied while sorting keys: each unsorted
	// mapping copies its members once more, so deep nesting of unsorted
	// mappings would make the fast path quadratic.
	budget int
	buf    []byte   // scratch for scalars that need decoding
	ws     []byte   // scratch for quoted scalars' whitespace
	stack  []member // members of the mappings being converted
}

var yamlFastPool = sync.Pool{New: func() any { return new(yamlFast) }}

// decodeYAMLFast converts doc, one YAML document as the splitter yields it
// (lines ending in "\n"), when it is in the subset; ok is false otherwise.
func decodeYAMLFast(doc []byte) (n normalized, ok bool) {
	if len(doc) == 0 || doc[len(doc)-1] != '\n' || !yamlCharsOK(doc) {
		return normalized{}, false
	}
	p := yamlFastPool.Get().(*yamlFast)
	bp := scratchPool.Get().(*[]byte)
	*p = yamlFast{src: doc, out: (*bp)[:0], budget: 64*len(doc) + 1<<20, buf: p.buf[:0], ws: p.ws[:0], stack: p.stack[:0]}
	var top []member
	ok = p.document(&top)
	out := p.out
	if ok {
		n, ok = metaFromMembers(out, top)
	}
	if ok {
		if cap(out) > maxPooledScratch && len(out) >= cap(out)-cap(out)/4 {
			n.blob, out = out[:len(out):len(out)], nil
		} else {
			n.blob = bytes.Clone(out)
		}
	}
	if out != nil && cap(out) <= maxPooledScratch {
		*bp = out[:0]
	}
	scratchPool.Put(bp)
	if cap(p.buf) > 1<<20 {
		p.buf = nil
	}
	*p = yamlFast{buf: p.buf[:0], ws: p.ws[:0], stack: p.stack[:0]}
	yamlFastPool.Put(p)
	if !ok {
		return normalized{}, false
	}
	return n, true
}

// yamlCharsOK reports whether doc holds only characters yaml.v2's reader
// accepts and that are no line break but "\n": ASCII tab, newline and
// printable characters, and valid UTF-8 for U+00A0-U+D7FF,
// U+E000-U+FFFD and U+10000 up, without U+2028, U+2029 (line breaks to
// yaml.v2) and U+FEFF (a byte order mark).
func yamlCharsOK(doc []byte) bool {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for i < len(doc) {
		if i+8 <= len(doc) {
			w := binary.LittleEndian.Uint64(doc[i:])
			del := w ^ 0x7f7f7f7f7f7f7f7f
			// No byte >= 0x80, < 0x20 or == 0x7f: eight printable bytes.
			if (w|((w-0x2020202020202020)&^w)|((del-lo)&^del))&hi == 0 {
				i += 8
				continue
			}
			if w&hi == 0 {
				// ASCII, with a newline or tab (or worse).
				for _, c := range doc[i : i+8] {
					if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
						return false
					}
				}
				i += 8
				continue
			}
		}
		c := doc[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r >= 0xA0 && r <= 0xD7FF:
			if r == 0x2028 || r == 0x2029 {
				return false
			}
		case r >= 0xE000 && r <= 0xFFFD:
			if r == 0xFEFF {
				return false
			}
		case r >= 0x10000 && r <= utf8.MaxRune:
		default:
			return false
		}
		i += size
	}
	return true
}

// at returns the byte at i, or 0 past the end.
func (p *yamlFast) at(i int) byte {
	if i < len(p.src) {
		return p.src[i]
	}
	return 0
}

// blankz reports whether the byte at i ends a token: a space, tab,
// newline or the end of the document (yaml.v2's is_blankz).
func (p *yamlFast) blankz(i int) bool {
	c := p.at(i)
	return c == ' ' || c == '\t' || c == '\n' || c == 0
}

// document converts the document: a block mapping, nothing else.
func (p *yamlFast) document(top *[]member) bool {
	if !p.nextContent(0) || p.col < 0 || p.isEntry(p.i+p.col) {
		return false
	}
	kept, ok := p.mapping(p.i+p.col, p.col, true)
	if !ok || p.col >= 0 {
		return false
	}
	*top = kept
	return true
}

// nextContent moves to the first line at or after i that holds a token,
// skipping empty and comment lines, and sets p.i and p.col (-1 at the end
// of the document). It declines tabs in indentation and, at column 0,
// document markers and directives.
func (p *yamlFast) nextContent(i int) bool {
	src := p.src
	for i < len(src) {
		j := i
		for src[j] == ' ' {
			j++
		}
		switch src[j] {
		case '\n':
			i = j + 1
			continue
		case '#':
			i = j + bytes.IndexByte(src[j:], '\n') + 1
			continue
		case '\t':
			return false
		}
		if j == i && (src[j] == '%' || ((bytes.HasPrefix(src[j:], []byte("---")) || bytes.HasPrefix(src[j:], []byte("..."))) && p.blankz(j+3))) {
			return false
		}
		p.i, p.col = i, j-i
		return true
	}
	p.i, p.col = len(src), -1
	return true
}

// lineRest checks that only spaces and a comment follow a token ending at
// i, and returns the start of the next line.
func (p *yamlFast) lineRest(i int) (int, bool) {
	src := p.src
	j := i
	for src[j] == ' ' {
		j++
	}
	switch src[j] {
	case '\n':
		return j + 1, true
	case '#':
		if j == i {
			return 0, false
		}
		return j + bytes.IndexByte(src[j:], '\n') + 1, true
	}
	return 0, false
}

// isEntry reports whether a block sequence entry ("- " or "-" at the end
// of the line) starts at i.
func (p *yamlFast) isEntry(i int) bool {
	return p.src[i] == '-' && (p.at(i+1) == ' ' || p.at(i+1) == '\n')
}

// mapping converts the block mapping whose first key starts at pos (on
// line p.i) at column n. On return p.i and p.col are at the first line
// after it. With keep, it returns the members (sorted, deduplicated).
func (p *yamlFast) mapping(pos, n int, keep bool) ([]member, bool) {
	if p.depth++; p.depth > yamlFastMaxDepth {
		return nil, false
	}
	objStart := len(p.out)
	p.out = append(p.out, '{')
	base := len(p.stack)
	for {
		if len(p.stack) > base {
			p.out = append(p.out, ',')
		}
		ks := len(p.out)
		key, after, ok := p.key(pos)
		if !ok {
			return nil, false
		}
		p.out = append(p.out, ':')
		vs := len(p.out)
		if !p.value(after, n, false) {
			return nil, false
		}
		p.stack = append(p.stack, member{key: key, start: ks, valStart: vs, valEnd: len(p.out)})
		if p.col == n {
			pos = p.i + n
			continue
		}
		if p.col > n {
			return nil, false
		}
		break
	}
	p.out = append(p.out, '}')
	kept, ok := p.finishObject(objStart, p.stack[base:], keep)
	p.stack = p.stack[:base]
	p.depth--
	return kept, ok
}

// finishObject sorts the members of the object at objStart by key, the
// last of equal keys winning (Go map semantics, then encoding/json's
// sorted keys). With keep it returns the members in their final places.
func (p *yamlFast) finishObject(objStart int, members []member, keep bool) ([]member, bool) {
	sorted := true
	for k := 1; k < len(members); k++ {
		if members[k-1].key >= members[k].key {
			sorted = false
			break
		}
	}
	if sorted {
		if keep {
			return slices.Clone(members), true
		}
		return nil, true
	}
	region := p.out[objStart:]
	if p.budget -= len(region); p.budget < 0 {
		return nil, false
	}
	region = slices.Clone(region)
	idx := make([]int, len(members))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(members[a].key, members[b].key) })
	out := append(p.out[:objStart], '{')
	var kept []member
	first := true
	for k := 0; k < len(idx); k++ {
		m := members[idx[k]]
		if k+1 < len(idx) && members[idx[k+1]].key == m.key {
			continue // a later duplicate wins
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		ks := len(out)
		out = append(out, region[m.start-objStart:m.valEnd-objStart]...)
		if keep {
			shift := ks - m.start
			kept = append(kept, member{key: m.key, start: ks, valStart: m.valStart + shift, valEnd: m.valEnd + shift})
		}
	}
	p.out = append(out, '}')
	return kept, true
}

// sequence converts the block sequence whose entries are at column m,
// the first on line p.i.
func (p *yamlFast) sequence(m int) bool {
	if p.depth++; p.depth > yamlFastMaxDepth {
		return false
	}
	p.out = append(p.out, '[')
	for first := true; ; first = false {
		if !first {
			p.out = append(p.out, ',')
		}
		if !p.value(p.i+m+1, m, true) {
			return false
		}
		if p.col == m && p.isEntry(p.i+m) {
			continue
		}
		if p.col > m {
			return false
		}
		break
	}
	p.out = append(p.out, ']')
	p.depth--
	return true
}

// key converts the mapping key at pos, which must be followed on its line
// by ':' and a space or the end of the line. It returns the key and the
// position after the ':'.
func (p *yamlFast) key(pos int) (string, int, bool) {
	src := p.src
	var val []byte
	var end int
	switch c := src[pos]; c {
	case '"', '\'':
		v, e, multi, ok := p.quoted(pos)
		if !ok || multi {
			return "", 0, false
		}
		val, end = v, e
		for src[end] == ' ' {
			end++
		}
		if src[end] != ':' || (src[end+1] != ' ' && src[end+1] != '\n') {
			return "", 0, false
		}
	default:
		if !p.plainStart(pos) {
			return "", 0, false
		}
		e, stop, kind, ok := p.plainLine(pos)
		if !ok || kind != stopColon {
			return "", 0, false
		}
		val, end = src[pos:e], stop
		if plainKind(val) != kindString {
			return "", 0, false
		}
	}
	// yaml.v2 forgets a possible simple key 1024 characters on.
	if end-pos > 1000 {
		return "", 0, false
	}
	p.out = appendYAMLString(p.out, val)
	return string(val), end + 1, true
}

// plainStart reports whether a plain scalar may start at pos (yaml.v2's
// fetch_next_token, in the block context).
func (p *yamlFast) plainStart(pos int) bool {
	switch p.src[pos] {
	case ' ', '\t', '\n', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-', '?', ':':
		return !p.blankz(pos + 1)
	}
	return true
}

// Where a plain scalar's line ends.
const (
	stopEOL     = iota // at the line break
	stopComment        // at " #"
	stopColon          // at ": " or ":\n"
)

// plainLine scans one line of a plain scalar from pos. end is just past
// its last non-space character, stop where the scan stopped (the '\n',
// '#' or ':').
func (p *yamlFast) plainLine(pos int) (end, stop, kind int, ok bool) {
	src := p.src
	i := pos
	end = pos
	for {
		for {
			c := src[i]
			if c == ' ' || c == '\n' {
				break
			}
			if c == '\t' {
				return 0, 0, 0, false
			}
			if c == ':' {
				switch src[i+1] {
				case ' ', '\n':
					return end, i, stopColon, true
				case '\t':
					return 0, 0, 0, false
				}
			}
			i++
			end = i
		}
		if src[i] == '\n' {
			return end, i, stopEOL, true
		}
		for src[i] == ' ' {
			i++
		}
		switch src[i] {
		case '\t':
			return 0, 0, 0, false
		case '#':
			return end, i, stopComment, true
		case '\n':
			return end, i, stopEOL, true
		}
	}
}

// plain converts the plain scalar at pos, in a collection at column n,
// whose first line ends as plainLine found (end, stop, kind; not at a
// colon). Continuation lines are those indented more than n; they are
// folded as yaml.v2 folds them. It returns the value and the start of
// the line after the scalar.
func (p *yamlFast) plain(pos, n, end, stop, kind int) ([]byte, int, bool) {
	src := p.src
	val := src[pos:end]
	if kind == stopComment {
		return val, stop + bytes.IndexByte(src[stop:], '\n') + 1, true
	}
	i := stop + 1 // the line after
	folded := false
	for {
		breaks := 0
		var j int
		for {
			j = i
			for j < len(src) && src[j] == ' ' {
				j++
			}
			if j < len(src) && src[j] == '\t' {
				return nil, 0, false
			}
			if j < len(src) && src[j] == '\n' {
				breaks++
				i = j + 1
				continue
			}
			break
		}
		if j >= len(src) || j-i <= n || src[j] == '#' {
			// Not a continuation. (A comment ends the scalar.)
			return val, i, true
		}
		e, s, k, ok := p.plainLine(j)
		if !ok || k == stopColon {
			return nil, 0, false
		}
		if !folded {
			p.buf = append(p.buf[:0], val...)
			folded = true
		}
		if breaks == 0 {
			p.buf = append(p.buf, ' ')
		} else {
			for range breaks {
				p.buf = append(p.buf, '\n')
			}
		}
		p.buf = append(p.buf, src[j:e]...)
		val = p.buf
		if k == stopComment {
			return val, s + bytes.IndexByte(src[s:], '\n') + 1, true
		}
		i = s + 1
	}
}

// value converts the node after a mapping key's ':' or a sequence entry's
// '-' at pos, in a collection at column n (a sequence when seq is set).
// On return p.i and p.col are at the next content line.
func (p *yamlFast) value(pos, n int, seq bool) bool {
	src := p.src
	for src[pos] == ' ' {
		pos++
	}
	switch c := src[pos]; c {
	case '\n', '#':
		// The node, if any, is on the following lines.
		if !p.nextContent(pos + bytes.IndexByte(src[pos:], '\n') + 1) {
			return false
		}
		switch {
		case p.col > n:
			k := p.i + p.col
			if p.isEntry(k) {
				return p.sequence(p.col)
			}
			_, ok := p.mapping(k, p.col, false)
			return ok
		case p.col == n && !seq && p.isEntry(p.i+n):
			// A sequence indented as its key.
			return p.sequence(n)
		}
		p.out = append(p.out, "null"...)
		return true
	case '|', '>':
		return p.blockScalar(pos, n)
	case '"', '\'':
		v, end, multi, ok := p.quoted(pos)
		if !ok {
			return false
		}
		k := end
		for src[k] == ' ' {
			k++
		}
		if src[k] == ':' && p.blankz(k+1) {
			// A key: a mapping in a sequence entry ("- 'a': b").
			if !seq || multi {
				return false
			}
			_, ok := p.mapping(pos, pos-p.i, false)
			return ok
		}
		next, ok := p.lineRest(end)
		if !ok {
			return false
		}
		p.out = appendYAMLString(p.out, v)
		return p.nextContent(next)
	case '{', '[':
		if src[pos+1] != c+2 { // '}' or ']'
			return false
		}
		next, ok := p.lineRest(pos + 2)
		if !ok {
			return false
		}
		p.out = append(p.out, c, c+2)
		return p.nextContent(next)
	}
	if !p.plainStart(pos) {
		return false
	}
	end, stop, kind, ok := p.plainLine(pos)
	if !ok {
		return false
	}
	if kind == stopColon {
		// A key: a mapping in a sequence entry ("- a: b").
		if !seq {
			return false
		}
		_, ok := p.mapping(pos, pos-p.i, false)
		return ok
	}
	val, next, ok := p.plain(pos, n, end, stop, kind)
	if !ok {
		return false
	}
	if p.out, ok = appendPlainScalar(p.out, val); !ok {
		return false
	}
	return p.nextContent(next)
}

// blockScalar converts the literal or folded scalar whose indicator is at
// pos, in a collection at column n (yaml.v2's scan_block_scalar).
func (p *yamlFast) blockScalar(pos, n int) bool {
	src := p.src
	literal := src[pos] == '|'
	i := pos + 1
	chomp, inc := 0, 0
	isChomp := func(c byte) bool { return c == '+' || c == '-' }
	setChomp := func(c byte) {
		if c == '+' {
			chomp = 1
		} else {
			chomp = -1
		}
	}
	switch c := src[i]; {
	case isChomp(c):
		setChomp(c)
		i++
		if d := src[i]; d >= '0' && d <= '9' {
			if d == '0' {
				return false
			}
			inc = int(d - '0')
			i++
		}
	case c >= '0' && c <= '9':
		if c == '0' {
			return false
		}
		inc = int(c - '0')
		i++
		if isChomp(src[i]) {
			setChomp(src[i])
			i++
		}
	}
	next, ok := p.lineRest(i)
	if !ok {
		return false
	}
	i = next
	indent := 0
	if inc > 0 {
		indent = n + inc
	}
	// breaks eats the indentation and the empty lines from the line
	// start i; it returns where the scan stopped, its column, and the
	// number of line breaks eaten (scan_block_scalar_breaks).
	breaks := func(i int) (j, col, nb int, ok bool) {
		maxIndent := 0
		for {
			j, col = i, 0
			for (indent == 0 || col < indent) && j < len(src) && src[j] == ' ' {
				j++
				col++
			}
			maxIndent = max(maxIndent, col)
			if j < len(src) && src[j] == '\t' && (indent == 0 || col < indent) {
				return 0, 0, 0, false
			}
			if j >= len(src) || src[j] != '\n' {
				break
			}
			nb++
			i = j + 1
		}
		if indent == 0 {
			indent = max(maxIndent, n+1, 1)
		}
		return j, col, nb, true
	}
	j, col, trailing, ok := breaks(i)
	if !ok {
		return false
	}
	s := p.buf[:0]
	leadingBreak, leadingBlank := false, false
	for col == indent && j < len(src) {
		c := src[j]
		trailingBlank := c == ' ' || c == '\t'
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailing == 0 {
				s = append(s, ' ')
			}
		} else if leadingBreak {
			s = append(s, '\n')
		}
		for range trailing {
			s = append(s, '\n')
		}
		leadingBlank = trailingBlank
		e := j + bytes.IndexByte(src[j:], '\n')
		s = append(s, src[j:e]...)
		leadingBreak = true
		if j, col, trailing, ok = breaks(e + 1); !ok {
			return false
		}
	}
	if chomp != -1 && leadingBreak {
		s = append(s, '\n')
	}
	if chomp == 1 {
		for range trailing {
			s = append(s, '\n')
		}
	}
	p.buf = s
	p.out = appendYAMLString(p.out, s)
	return p.nextContent(j - col)
}

// quoted scans the single- or double-quoted scalar at pos
// (scan_flow_scalar). It returns the value (in src when nothing needed
// decoding, else in p.buf), the position after the closing quote, and
// whether the scalar spans lines.
func (p *yamlFast) quoted(pos int) (val []byte, end int, multi, ok bool) {
	src := p.src
	single := src[pos] == '\''
	// Most scalars hold no escape and no line break.
	rest := src[pos+1:]
	if single {
		if q := bytes.IndexByte(rest, '\''); q >= 0 && bytes.IndexByte(rest[:q], '\n') < 0 && pos+1+q+1 < len(src) && src[pos+1+q+1] != '\'' {
			return rest[:q], pos + 1 + q + 1, false, true
		}
	} else if q := bytes.IndexByte(rest, '"'); q >= 0 && bytes.IndexByte(rest[:q], '\n') < 0 && bytes.IndexByte(rest[:q], '\\') < 0 {
		return rest[:q], pos + 1 + q + 1, false, true
	}
	s := p.buf[:0]
	ws := p.ws[:0]
	i := pos + 1
	for {
		// A document marker at the start of a line is an error.
		if src[i-1] == '\n' && (bytes.HasPrefix(src[i:], []byte("---")) || bytes.HasPrefix(src[i:], []byte("..."))) && p.blankz(i+3) {
			return nil, 0, false, false
		}
		if i >= len(src) {
			return nil, 0, false, false
		}
		leadingBlanks := false
	chars:
		for i < len(src) {
			c := src[i]
			switch {
			case c == ' ' || c == '\t' || c == '\n':
				break chars
			case single && c == '\'':
				if p.at(i+1) == '\'' {
					s = append(s, '\'')
					i += 2
					continue
				}
				break chars
			case !single && c == '"':
				break chars
			case !single && c == '\\' && p.at(i+1) == '\n':
				i += 2
				leadingBlanks = true
				multi = true
				break chars
			case !single && c == '\\':
				var ok bool
				if s, i, ok = appendEscape(s, src, i); !ok {
					return nil, 0, false, false
				}
			default:
				s = append(s, c)
				i++
			}
		}
		if i >= len(src) {
			return nil, 0, false, false
		}
		if (single && src[i] == '\'') || (!single && src[i] == '"') {
			break
		}
		leadingBreak, trailing := false, 0
		ws = ws[:0]
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n') {
			if src[i] != '\n' {
				if !leadingBlanks {
					ws = append(ws, src[i])
				}
			} else {
				multi = true
				if !leadingBlanks {
					ws = ws[:0]
					leadingBreak, leadingBlanks = true, true
				} else {
					trailing++
				}
			}
			i++
		}
		if leadingBlanks {
			if leadingBreak && trailing == 0 {
				s = append(s, ' ')
			}
			for range trailing {
				s = append(s, '\n')
			}
		} else {
			s = append(s, ws...)
		}
	}
	p.buf, p.ws = s, ws
	return s, i + 1, multi, true
}

// appendEscape decodes the double-quoted scalar's escape sequence at
// src[i] ('\\') onto s, and returns the position after it.
func appendEscape(s, src []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(src) {
		return s, 0, false
	}
	codeLen := 0
	switch src[i+1] {
	case '0':
		s = append(s, 0)
	case 'a':
		s = append(s, '\a')
	case 'b':
		s = append(s, '\b')
	case 't', '\t':
		s = append(s, '\t')
	case 'n':
		s = append(s, '\n')
	case 'v':
		s = append(s, '\v')
	case 'f':
		s = append(s, '\f')
	case 'r':
		s = append(s, '\r')
	case 'e':
		s = append(s, 0x1b)
	case ' ':
		s = append(s, ' ')
	case '"':
		s = append(s, '"')
	case '\'':
		s = append(s, '\'')
	case '\\':
		s = append(s, '\\')
	case 'N':
		s = append(s, "\u0085"...)
	case '_':
		s = append(s, "\u00a0"...)
	case 'L':
		s = append(s, "\u2028"...)
	case 'P':
		s = append(s, "\u2029"...)
	case 'x':
		codeLen = 2
	case 'u':
		codeLen = 4
	case 'U':
		codeLen = 8
	default:
		return s, 0, false
	}
	i += 2
	if codeLen == 0 {
		return s, i, true
	}
	if i+codeLen > len(src) {
		return s, 0, false
	}
	v := 0
	for _, c := range src[i : i+codeLen] {
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return s, 0, false
		}
		v = v<<4 + d
	}
	if (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF {
		return s, 0, false
	}
	return utf8.AppendRune(s, rune(v)), i + codeLen, true
}

// appendYAMLString appends s as a normalised JSON string.
func appendYAMLString(out, s []byte) []byte {
	if plainASCII(s) && bytes.IndexByte(s, '"') < 0 {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	return appendString(out, string(s))
}

// What a plain scalar resolves to (yaml.v2's resolve, untagged).
const (
	kindString = iota
	kindNull
	kindBool
	kindNumber
	kindOther // .nan, .inf, the merge key: left to the slow path
)

// plainKind resolves a plain scalar as yaml.v2 does, without converting
// numbers.
func plainKind(s []byte) int {
	k, _ := resolvePlain(nil, s)
	return k
}

// appendPlainScalar appends the JSON the slow path makes of a plain
// scalar; ok is false for what only the slow path handles.
func appendPlainScalar(out, s []byte) ([]byte, bool) {
	k, out := resolvePlain(out, s)
	if k == kindOther {
		return out, false
	}
	if k == kindString {
		out = appendYAMLString(out, s)
	}
	return out, true
}

// resolvePlain resolves the plain scalar s as yaml.v2's resolve does and,
// for null, booleans and numbers, appends the value as the slow path
// normalises it (numbers through encoding/json and float64).
func resolvePlain(out, s []byte) (int, []byte) {
	if len(s) == 0 {
		return kindNull, append(out, "null"...)
	}
	switch s[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		switch string(s) {
		case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
			return kindBool, append(out, "true"...)
		case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
			return kindBool, append(out, "false"...)
		case "~", "null", "Null", "NULL":
			return kindNull, append(out, "null"...)
		}
		return kindString, out
	case '<':
		if string(s) == "<<" {
			return kindOther, out
		}
		return kindString, out
	case '.':
		switch string(s) {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return kindOther, out
		}
		f, err := strconv.ParseFloat(string(s), 64)
		if err != nil {
			return kindString, out
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return kindOther, out
		}
		return kindNumber, appendFloat(out, f)
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return kindString, out
	}
	switch string(s) {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return kindOther, out
	}
	// Timestamps (YYYY-...) stay strings when decoded into interface{};
	// none is a number either.
	if len(s) > 4 && s[4] == '-' && isDigits(s[:4]) {
		return kindString, out
	}
	plain := string(s)
	if bytes.IndexByte(s, '_') >= 0 {
		plain = strings.ReplaceAll(plain, "_", "")
	}
	// strconv's integer parsers accept no '.'.
	if strings.IndexByte(plain, '.') < 0 && intLike(plain) {
		if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return kindNumber, appendIntJSON(out, strconv.AppendInt(nil, v, 10))
		}
		if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return kindNumber, appendIntJSON(out, strconv.AppendUint(nil, v, 10))
		}
	}
	if yamlStyleFloat(plain) {
		if f, err := strconv.ParseFloat(plain, 64); err == nil {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return kindOther, out
			}
			return kindNumber, appendFloat(out, f)
		}
	}
	if strings.HasPrefix(plain, "0b") {
		if v, err := strconv.ParseInt(plain[2:], 2, 64); err == nil {
			return kindNumber, appendIntJSON(out, strconv.AppendInt(nil, v, 10))
		}
		if v, err := strconv.ParseUint(plain[2:], 2, 64); err == nil {
			return kindNumber, appendIntJSON(out, strconv.AppendUint(nil, v, 10))
		}
	} else if strings.HasPrefix(plain, "-0b") {
		if v, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
			return kindNumber, appendIntJSON(out, strconv.AppendInt(nil, v, 10))
		}
	}
	return kindString, out
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// intLike reports whether s might be accepted by strconv.ParseInt or
// ParseUint with base 0: only a sign, digits, base prefixes and hex
// digits. (It spares the parsers' error allocations on version strings.)
func intLike(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F',
			c == 'x', c == 'X', c == 'o', c == 'O', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// yamlStyleFloat matches yaml.v2's
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func yamlStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// appendIntJSON appends the decimal integer dec as the normaliser writes
// the number encoding/json made of it: as is up to 15 digits, through
// float64 beyond.
func appendIntJSON(out, dec []byte) []byte {
	digits := len(dec)
	if dec[0] == '-' {
		digits--
	}
	if digits <= 15 {
		return append(out, dec...)
	}
	f, _ := strconv.ParseFloat(string(dec), 64)
	return appendFloat(out, f)
}
