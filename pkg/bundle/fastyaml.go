package bundle

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A fast path for the YAML most manifests are written in.
//
// Bundle manifests are block YAML as generators write it: mappings,
// sequences, plain, quoted and block scalars, comments. yaml.v2 (libyaml's
// port) spends most of a bundle's decoding time on them. fastYAML parses
// that subset directly into the values decodeYAMLObject builds (strings,
// booleans, nil, int64, float64, []any, map[string]any), resolving plain
// scalars with yaml.v2's YAML 1.1 rules, and gives up (ok false) on
// anything else: anchors, aliases, tags, complex keys, multi-line flow
// collections, tabs, carriage returns, control or non-printable
// characters, directives, duplicate keys, keys that do not resolve to
// strings, timestamps, infinities, and every construct whose reading is
// not certain. Callers then take yaml.v2's path, so what fastYAML returns
// is what that path returns (a fuzz test and, when a corpus of bundles is
// at hand, TestFastYAMLCorpus compare them).

// fyLine is one line of the document.
type fyLine struct {
	start, end int // byte offsets; end excludes the line break
	indent     int // leading spaces
	blank      bool
}

type fastParser struct {
	src   []byte
	lines []fyLine
	i     int // current line
	// marker reports a document marker after the first line.
	marker bool
}

// errFast aborts the fast path.
type errFast struct{}

// fastYAML parses doc, one YAML document; ok is false when it holds
// something the fast path does not read. The result is nil for a
// document without content.
func fastYAML(doc []byte) (v any, ok bool) {
	if !fastSafe(doc) {
		return nil, false
	}
	p := &fastParser{src: doc}
	p.split()
	if p.marker {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(errFast); !is {
				panic(r)
			}
			v, ok = nil, false
		}
	}()
	p.skipBlank()
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		if t := strings.TrimRight(p.text(l, l.indent), " "); l.indent == 0 && (t == "---" || strings.HasPrefix(t, "--- #")) {
			p.i++
			p.skipBlank()
		}
	}
	if p.i >= len(p.lines) {
		return nil, true
	}
	n := p.lines[p.i].indent
	v = p.block(n)
	p.skipBlank()
	if p.i < len(p.lines) {
		p.fail()
	}
	return v, true
}

// fastSafe rejects documents with bytes the fast path does not handle:
// tabs, carriage returns, control characters, NEL and the Unicode line
// separators (line breaks in YAML 1.1), BOMs and other non-printable
// characters, and invalid UTF-8. (Anchors, aliases, tags and directives
// start with characters no plain scalar or key of the fast path starts
// with.)
func fastSafe(doc []byte) bool {
	for i := 0; i < len(doc); {
		c := doc[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
			case c < 0x20 || c == 0x7f:
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

var fastFailHook func()

func (p *fastParser) fail() {
	if fastFailHook != nil {
		fastFailHook()
	}
	panic(errFast{})
}

func (p *fastParser) split() {
	src := p.src
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		l := fyLine{start: start, end: end}
		for l.start+l.indent < end && src[l.start+l.indent] == ' ' {
			l.indent++
		}
		rest := src[l.start+l.indent : end]
		l.blank = len(rest) == 0 || rest[0] == '#'
		if l.indent == 0 && (bytes.HasPrefix(rest, []byte("---")) || bytes.HasPrefix(rest, []byte("..."))) &&
			(len(rest) == 3 || rest[3] == ' ') && (len(p.lines) > 0 || rest[0] == '.' || !bareStart(rest)) {
			// A document marker past the first line, or one followed by
			// content: yaml.v2's to judge.
			p.marker = true
		}
		p.lines = append(p.lines, l)
		if end == len(src) {
			break
		}
		start = end + 1
	}
}

// bareStart reports whether line, which starts with "---", is a document
// start marker alone (or followed by a comment).
func bareStart(line []byte) bool {
	t := bytes.TrimRight(line, " ")
	return len(t) == 3 || bytes.HasPrefix(t, []byte("--- #"))
}

func (p *fastParser) text(l fyLine, col int) string {
	if l.start+col > l.end {
		return ""
	}
	return string(p.src[l.start+col : l.end])
}

func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) && p.lines[p.i].blank {
		p.i++
	}
}

// block parses the node starting on the current line at its indentation
// n: a sequence or a mapping.
func (p *fastParser) block(n int) any {
	l := p.lines[p.i]
	if l.indent != n {
		p.fail()
	}
	rest := p.src[l.start+n : l.end]
	if rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ') {
		return p.sequence(n)
	}
	return p.mapping(n, n)
}

// mapping parses a block mapping of indentation n whose first key is at
// column col of the current line (col > n for a mapping in a sequence
// item, whose next keys are at col).
func (p *fastParser) mapping(n, col int) map[string]any {
	m := map[string]any{}
	indent := col
	first := true
	for {
		if !first {
			p.skipBlank()
			if p.i >= len(p.lines) {
				return m
			}
			l := p.lines[p.i]
			if l.indent < indent {
				return m
			}
			if l.indent > indent {
				p.fail()
			}
			col = indent
			rest := p.src[l.start+col : l.end]
			if rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ') {
				return m // a sequence at the parent's indentation ends us
			}
		}
		first = false
		key, after := p.key(col)
		if _, dup := m[key]; dup {
			p.fail()
		}
		m[key] = p.value(indent, after)
	}
}

// key reads the key at column col of the current line and returns it with
// the column just past its colon.
func (p *fastParser) key(col int) (string, int) {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	var key string
	i := col
	switch line[i] {
	case '"', '\'':
		s, end, ok := singleLineQuoted(line, i)
		if !ok {
			p.fail()
		}
		key, i = s, end
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i >= len(line) || line[i] != ':' || (i+1 < len(line) && line[i+1] != ' ') {
			p.fail()
		}
	default:
		if !plainStart(line[i:]) {
			p.fail()
		}
		j := i
		for j < len(line) {
			if line[j] == ':' && (j+1 == len(line) || line[j+1] == ' ') {
				break
			}
			if line[j] == ' ' && j+1 < len(line) && line[j+1] == '#' {
				p.fail()
			}
			j++
		}
		if j >= len(line) {
			p.fail()
		}
		key = strings.TrimRight(string(line[i:j]), " ")
		if key == "" || key == "<<" {
			p.fail()
		}
		if _, isStr := resolvePlain(key).(string); !isStr {
			p.fail()
		}
		i = j
	}
	if i-col > 1000 {
		// libyaml forgets a possible simple key 1024 characters on: a
		// longer one (quotes and spaces before the colon count) is an
		// error there.
		p.fail()
	}
	return key, i + 1
}

// plainStart reports whether s may start a plain scalar.
func plainStart(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	switch s[0] {
	case '-', '?', ':':
		return len(s) > 1 && s[1] != ' ' && s[0] == '-'
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// value parses the value of a mapping entry of indentation n, which
// starts at column col of the current line (just past the colon).
func (p *fastParser) value(n, col int) any {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	for col < len(line) && line[col] == ' ' {
		col++
	}
	if col < len(line) && col > 0 && line[col-1] != ' ' && line[col-1] != ':' {
		p.fail()
	}
	if col >= len(line) || line[col] == '#' {
		if col < len(line) && line[col-1] != ' ' {
			p.fail()
		}
		// The value is on the next lines, or null.
		p.i++
		p.skipBlank()
		if p.i >= len(p.lines) {
			return nil
		}
		next := p.lines[p.i]
		rest := p.src[next.start+next.indent : next.end]
		isSeq := rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')
		switch {
		case next.indent > n:
			return p.block(next.indent)
		case next.indent == n && isSeq:
			return p.sequence(n)
		}
		return nil
	}
	return p.scalarOrFlow(n, col)
}

// sequence parses a block sequence of indentation n.
func (p *fastParser) sequence(n int) []any {
	out := []any{}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out
		}
		l := p.lines[p.i]
		if l.indent != n {
			if l.indent > n {
				p.fail()
			}
			return out
		}
		line := p.src[l.start:l.end]
		rest := line[n:]
		if rest[0] != '-' || (len(rest) > 1 && rest[1] != ' ') {
			return out // a mapping key at this indentation ends us
		}
		col := n + 1
		for col < len(line) && line[col] == ' ' {
			col++
		}
		if col >= len(line) || line[col] == '#' {
			p.i++
			p.skipBlank()
			if p.i < len(p.lines) && p.lines[p.i].indent > n {
				out = append(out, p.block(p.lines[p.i].indent))
			} else {
				out = append(out, nil)
			}
			continue
		}
		switch {
		case line[col] == '-' && (col+1 == len(line) || line[col+1] == ' '):
			p.fail() // a sequence in a sequence item
		case p.isKey(line, col):
			out = append(out, p.mapping(n, col))
		default:
			out = append(out, p.scalarOrFlow(n, col))
		}
	}
}

// isKey reports whether a mapping key starts at col of line.
func (p *fastParser) isKey(line []byte, col int) bool {
	switch line[col] {
	case '"', '\'':
		_, end, ok := singleLineQuoted(line, col)
		if !ok {
			return false
		}
		for end < len(line) && line[end] == ' ' {
			end++
		}
		return end < len(line) && line[end] == ':' && (end+1 == len(line) || line[end+1] == ' ')
	case '[', '{', '|', '>':
		return false
	}
	for j := col; j < len(line); j++ {
		if line[j] == ' ' && j+1 < len(line) && line[j+1] == '#' {
			return false
		}
		if line[j] == ':' && (j+1 == len(line) || line[j+1] == ' ') {
			return true
		}
	}
	return false
}

// scalarOrFlow parses a value that starts at col of the current line, in
// a node of indentation n: a block scalar, a quoted or plain scalar, or a
// one-line flow collection. It leaves the current line past the value.
func (p *fastParser) scalarOrFlow(n, col int) any {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	switch line[col] {
	case '|', '>':
		return p.blockScalar(n, col)
	case '"', '\'':
		return p.quoted(n, col)
	case '[', '{':
		v, end, ok := flow(line, col)
		if !ok || !restIsComment(line, end) {
			p.fail()
		}
		p.i++
		return v
	}
	return p.plain(n, col)
}

func restIsComment(line []byte, i int) bool {
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i == len(line) || (line[i] == '#' && line[i-1] == ' ')
}

// plain parses a plain scalar, with its continuation lines (more indented
// than n), folded.
func (p *fastParser) plain(n, col int) any {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	if !plainStart(line[col:]) {
		p.fail()
	}
	end, comment := plainEnd(line, col)
	if end < 0 {
		p.fail()
	}
	text := strings.TrimRight(string(line[col:end]), " ")
	p.i++
	if comment {
		return resolvePlain(text)
	}
	var sb *strings.Builder
	empty := 0
	for p.i < len(p.lines) {
		c := p.lines[p.i]
		rest := p.src[c.start+c.indent : c.end]
		if len(rest) == 0 {
			empty++
			p.i++
			continue
		}
		if c.indent <= n {
			break
		}
		if !continuationSafe(rest) {
			p.fail()
		}
		e, comment := plainEnd(rest, 0)
		if e < 0 || comment {
			p.fail()
		}
		if sb == nil {
			sb = &strings.Builder{}
			sb.WriteString(text)
		}
		if empty == 0 {
			sb.WriteByte(' ')
		}
		for ; empty > 0; empty-- {
			sb.WriteByte('\n')
		}
		sb.WriteString(strings.TrimRight(string(rest[:e]), " "))
		p.i++
	}
	if sb == nil {
		return resolvePlain(text)
	}
	return resolvePlain(sb.String())
}

// continuationSafe reports whether a continuation line of a plain scalar
// starts with an ordinary character.
func continuationSafe(rest []byte) bool {
	// In block context libyaml's plain scalar scanner (scannerc.go,
	// yaml_parser_scan_plain_scalar) ends a continuation line only at a
	// comment, ": " (plainEnd's to find) or a document marker at column
	// 0 (never here: continuations are indented); every other indicator
	// character starts content there. Controller-gen's CRD descriptions
	// continue with '"', '%', '`' and '-': half the bytes of a bundle.
	return rest[0] != '#'
}

// plainEnd returns where a plain scalar starting at col of line ends: at
// a comment (comment true) or the end of the line; -1 when it holds ": "
// (a mapping where none may be).
func plainEnd(line []byte, col int) (int, bool) {
	for j := col; j < len(line); j++ {
		switch line[j] {
		case ':':
			if j+1 == len(line) || line[j+1] == ' ' {
				return -1, false
			}
		case ' ':
			if j+1 < len(line) && line[j+1] == '#' {
				return j, true
			}
		}
	}
	return len(line), false
}

// quoted parses a single- or double-quoted scalar, possibly over several
// lines (continuations more indented than n), folded: the white space
// around a line break goes, and the break is a space, or as many line
// feeds as there are empty lines (none after an escaped break).
func (p *fastParser) quoted(n, col int) any {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	q := line[col]
	var buf []byte
	seg := line[col+1:]
	for {
		var closed, escapedBreak bool
		var end, keep int
		buf, closed, end, keep, escapedBreak = quotedSegment(buf, seg, q)
		if closed {
			if !restIsComment(seg, end) {
				p.fail()
			}
			p.i++
			return string(buf)
		}
		if !escapedBreak {
			buf = buf[:keep] // the spaces before the break go
		}
		p.i++
		empty := 0
		for p.i < len(p.lines) && p.lines[p.i].start+p.lines[p.i].indent == p.lines[p.i].end {
			empty++
			p.i++
		}
		if p.i >= len(p.lines) || p.lines[p.i].indent <= n {
			p.fail()
		}
		c := p.lines[p.i]
		switch {
		case escapedBreak && empty > 0:
			p.fail()
		case escapedBreak:
		case empty == 0:
			buf = append(buf, ' ')
		default:
			for ; empty > 0; empty-- {
				buf = append(buf, '\n')
			}
		}
		seg = p.src[c.start+c.indent : c.end]
	}
}

// quotedSegment appends to buf the text of seg, the rest of a line in a
// quoted scalar, up to its closing quote (closed, end just past it) or the
// end of the line (escapedBreak when it ends with a backslash, in a
// double-quoted scalar). keep is the length of buf without the spaces the
// line ends with.
func quotedSegment(buf, seg []byte, q byte) (out []byte, closed bool, end, keep int, escapedBreak bool) {
	keep = len(buf)
	for j := 0; j < len(seg); j++ {
		c := seg[j]
		switch {
		case c == q && q == '\'':
			if j+1 < len(seg) && seg[j+1] == '\'' {
				buf = append(buf, '\'')
				keep = len(buf)
				j++
				continue
			}
			return buf, true, j + 1, len(buf), false
		case c == q:
			return buf, true, j + 1, len(buf), false
		case c == '\\' && q == '"':
			if j+1 == len(seg) {
				return buf, false, 0, len(buf), true
			}
			r, size, ok := unescape(seg[j+1:])
			if !ok {
				panic(errFast{})
			}
			buf = utf8.AppendRune(buf, r)
			keep = len(buf)
			j += size
		default:
			buf = append(buf, c)
			if c != ' ' {
				keep = len(buf)
			}
		}
	}
	return buf, false, 0, keep, false
}

// singleLineQuoted reads a quoted scalar that closes on its line; it
// returns the text and the column past the closing quote.
func singleLineQuoted(line []byte, col int) (s string, end int, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(errFast); !is {
				panic(r)
			}
			s, end, ok = "", 0, false
		}
	}()
	buf, closed, e, _, _ := quotedSegment(nil, line[col+1:], line[col])
	if !closed {
		return "", 0, false
	}
	return string(buf), col + 1 + e, true
}

// unescape reads a double-quoted escape (after the backslash).
func unescape(s []byte) (rune, int, bool) {
	if len(s) == 0 {
		return 0, 0, false
	}
	switch s[0] {
	case '0':
		return 0, 1, false // NUL: let yaml.v2 decide
	case 'a':
		return 7, 1, true
	case 'b':
		return 8, 1, true
	case 't':
		return 9, 1, true
	case 'n':
		return 10, 1, true
	case 'v':
		return 11, 1, true
	case 'f':
		return 12, 1, true
	case 'r':
		return 13, 1, true
	case 'e':
		return 0x1b, 1, true
	case ' ':
		return ' ', 1, true
	case '"':
		return '"', 1, true
	case '\\':
		return '\\', 1, true
	case 'N':
		return 0x85, 1, true
	case '_':
		return 0xA0, 1, true
	case 'L':
		return 0x2028, 1, true
	case 'P':
		return 0x2029, 1, true
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
		if len(s) < 1+n {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(string(s[1:1+n]), 16, 32)
		if err != nil || v == 0 || (v >= 0xD800 && v <= 0xDFFF) || v > utf8.MaxRune {
			return 0, 0, false
		}
		return rune(v), 1 + n, true
	}
	return 0, 0, false
}

// blockScalar parses a literal (|) or folded (>) scalar whose indicator is
// at col of the current line, in a node of indentation n. Its lines are
// those up to the first non-empty one indented less than its first
// non-empty line, which sets its indentation; trailing empty lines are
// chomped (clip: one line feed, -: none, +: all).
func (p *fastParser) blockScalar(n, col int) any {
	l := p.lines[p.i]
	line := p.src[l.start:l.end]
	literal := line[col] == '|'
	chomp := byte(0)
	j := col + 1
	if j < len(line) && (line[j] == '-' || line[j] == '+') {
		chomp = line[j]
		j++
	}
	if !restIsComment(line, j) {
		p.fail() // an indentation indicator, or text: yaml.v2's
	}
	p.i++
	start := p.i
	indent := -1
	for p.i < len(p.lines) {
		c := p.lines[p.i]
		if c.start+c.indent == c.end { // empty (spaces only)
			p.i++
			continue
		}
		if indent < 0 {
			if c.indent <= n {
				break
			}
			indent = c.indent
		} else if c.indent < indent {
			break
		}
		p.i++
	}
	lines := p.lines[start:p.i]
	if indent < 0 {
		if chomp == '+' && len(lines) > 0 {
			p.fail()
		}
		p.i = start // empty lines after an empty scalar are no one's
		return ""
	}
	// Trailing empty lines are chomped; those below the next node's
	// indentation are not the scalar's, but count alike.
	trail := 0
	for len(lines) > 0 && lines[len(lines)-1].start+lines[len(lines)-1].indent == lines[len(lines)-1].end {
		if lines[len(lines)-1].indent > indent {
			p.fail() // spaces beyond the indentation: content or not, yaml.v2's call
		}
		trail++
		lines = lines[:len(lines)-1]
	}
	if trail > 0 && p.lines[p.i-1].end == len(p.src) {
		p.fail() // an empty last line without a line break: yaml.v2's
	}
	var buf []byte
	seenText := false
	emptyRun := 0
	for _, c := range lines {
		if c.start+c.indent == c.end {
			switch {
			case c.indent > indent && (literal && seenText):
				// spaces beyond the indentation are content
				buf = appendBreaks(buf, literal, seenText, emptyRun)
				emptyRun = 0
				buf = append(buf, strings.Repeat(" ", c.indent-indent)...)
				seenText = true
				continue
			case c.indent > indent:
				p.fail()
			}
			emptyRun++
			continue
		}
		content := p.src[c.start+indent : c.end]
		if !literal && content[0] == ' ' {
			p.fail() // a more-indented line of a folded scalar
		}
		buf = appendBreaks(buf, literal, seenText, emptyRun)
		emptyRun = 0
		buf = append(buf, content...)
		seenText = true
	}
	if last := lines[len(lines)-1]; last.end == len(p.src) {
		return string(buf) // no line break to keep at the end of the stream
	}
	switch chomp {
	case '-':
	case '+':
		buf = append(buf, '\n')
		for ; trail > 0; trail-- {
			buf = append(buf, '\n')
		}
	default:
		buf = append(buf, '\n')
	}
	return string(buf)
}

// appendBreaks appends what separates a line of a block scalar from the
// previous one: after empty lines (emptyRun of them) and a line of text
// or none (seenText). Literal scalars keep every break; folded ones fold
// a single break between two lines of text into a space.
func appendBreaks(buf []byte, literal, seenText bool, emptyRun int) []byte {
	switch {
	case !seenText:
		for ; emptyRun > 0; emptyRun-- {
			buf = append(buf, '\n')
		}
	case literal:
		for ; emptyRun >= 0; emptyRun-- {
			buf = append(buf, '\n')
		}
	case emptyRun == 0:
		buf = append(buf, ' ')
	default:
		for ; emptyRun > 0; emptyRun-- {
			buf = append(buf, '\n')
		}
	}
	return buf
}

// flow parses a one-line flow sequence or mapping of scalars at col of
// line; ok is false for anything else (nesting, a missing closing
// bracket, empty entries).
func flow(line []byte, col int) (any, int, bool) {
	open := line[col]
	closeCh := byte(']')
	if open == '{' {
		closeCh = '}'
	}
	i := col + 1
	skip := func() {
		for i < len(line) && line[i] == ' ' {
			i++
		}
	}
	scalar := func() (any, bool) {
		skip()
		if i >= len(line) {
			return nil, false
		}
		switch line[i] {
		case '"', '\'':
			s, end, ok := singleLineQuoted(line, i)
			if !ok {
				return nil, false
			}
			i = end
			return s, true
		case '[', ']', '{', '}', ',', '#', '&', '*', '!', '|', '>', '%', '@', '`', '?', ':', '-':
			if line[i] == '-' && i+1 < len(line) && line[i+1] != ' ' && line[i+1] != ',' {
				break
			}
			return nil, false
		}
		j := i
		for j < len(line) && line[j] != ',' && line[j] != ']' && line[j] != '}' && line[j] != ':' && line[j] != '#' && line[j] != '[' && line[j] != '{' {
			j++
		}
		if j < len(line) && line[j] == ':' && j+1 < len(line) && line[j+1] != ' ' && line[j+1] != ',' {
			return nil, false // a ':' inside a flow scalar
		}
		text := strings.TrimRight(string(line[i:j]), " ")
		if text == "" || (j < len(line) && line[j] == '#') {
			return nil, false
		}
		i = j
		return resolvePlain(text), true
	}
	skip()
	if i < len(line) && line[i] == closeCh {
		i++
		if open == '[' {
			return []any{}, i, true
		}
		return map[string]any{}, i, true
	}
	var seq []any
	m := map[string]any{}
	for {
		k, ok := scalar()
		if !ok {
			return nil, 0, false
		}
		skip()
		if open == '{' {
			key, isStr := k.(string)
			if !isStr || i >= len(line) || line[i] != ':' {
				return nil, 0, false
			}
			if _, dup := m[key]; dup {
				return nil, 0, false
			}
			i++
			v, ok := scalar()
			if !ok {
				return nil, 0, false
			}
			m[key] = v
			skip()
		} else {
			if i < len(line) && line[i] == ':' {
				return nil, 0, false
			}
			seq = append(seq, k)
		}
		if i >= len(line) {
			return nil, 0, false
		}
		if line[i] == closeCh {
			i++
			break
		}
		if line[i] != ',' {
			return nil, 0, false
		}
		i++
		skip()
		if i < len(line) && line[i] == closeCh {
			return nil, 0, false // a trailing comma: yaml.v2's
		}
	}
	if open == '{' {
		return m, i, true
	}
	return seq, i, true
}

var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolvePlain resolves a plain scalar as yaml.v2 does (YAML 1.1) and
// converts it as decodeYAMLObject does: integers to int64 (uint64 beyond
// its range to float64), floats that print as integers to int64. It
// aborts the fast path on timestamps, infinities, NaN and merge keys.
func resolvePlain(s string) any {
	if s == "" {
		return nil
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false
	case "~", "null", "Null", "NULL":
		return nil
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<":
		panic(errFast{})
	}
	switch c := s[0]; {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return floatValue(f)
		}
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		if looksLikeTimestamp(s) {
			panic(errFast{})
		}
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return float64(u) // beyond int64: upstream's float
		}
		if yamlStyleFloat.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return floatValue(f)
			}
		}
		if strings.HasPrefix(plain, "0b") || strings.HasPrefix(plain, "-0b") {
			panic(errFast{})
		}
	}
	return s
}

// looksLikeTimestamp is yaml.v2's precondition for a timestamp: four
// digits and a dash.
func looksLikeTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i == 4 && i < len(s) && s[i] == '-'
}

// floatValue is a float as decodeYAMLObject keeps it.
func floatValue(f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic(errFast{})
	}
	js, err := json.Marshal(f)
	if err != nil {
		panic(errFast{})
	}
	if i, err := strconv.ParseInt(string(js), 10, 64); err == nil {
		return i
	}
	return f
}
