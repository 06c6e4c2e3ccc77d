package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/docpath"
	"github.com/opmkit/opm/internal/jsonscan"
)

// Element positions.
//
// The loader records where each blob starts, not where its fields are. A
// finding about an element of a blob (a channel entry, one of its skips, a
// property, a field) carries the element's path in the blob; once the
// findings are known, the blobs that have any are read again and re-scanned
// with a position-aware parser to turn each path into a line and column.
// Only those blobs are parsed twice, so a clean catalog costs nothing.

// pathElem is one step of an element path: a key, or an index when key is
// empty and index >= 0.
type pathElem struct {
	key   string
	index int
}

// parsePath splits an element path such as `entries[3].skips[1]` or
// `properties[0].value."a.b"` into steps (see docpath.Parse).
func parsePath(p string) []pathElem {
	in := docpath.Parse(p)
	out := make([]pathElem, len(in))
	for i, e := range in {
		out[i] = pathElem{key: e.Key, index: e.Index}
	}
	return out
}

// locator finds elements in the text of one blob. What it reads on the way
// is kept for the blob's next findings: the YAML tree, the offsets of each
// JSON array's elements and where lines start. A blob with thousands of
// findings (a channel of 20,000 entries, each with a warning) is so read
// a few times, not once per finding (44 s of CPU for that channel).
type locator struct {
	t        blobText
	root     *yaml.Node // parsed on first use; nil when it does not parse
	parsed   bool
	elements map[int][]int    // JSON: offset of an array -> offsets of its elements
	members  map[int][]member // JSON: offset of an object -> its members
	lines    []int            // offsets where the lines of t.data start
}

func newLocator(t blobText) *locator {
	return &locator{t: t, elements: map[int][]int{}, members: map[int][]member{}}
}

// locateJSON returns the offset in the blob (one JSON value) of the value
// at path, or of the deepest step of path that exists, and how many steps
// were found. Keys match exactly, else case-insensitively (as the loader
// types blobs); of duplicate keys the last counts, as when decoding.
func (l *locator) locateJSON(path []pathElem) (off, found int) {
	data := l.t.data
	off = jsonscan.SkipSpace(data, 0)
	for found < len(path) {
		if off >= len(data) {
			return off, found
		}
		step := path[found]
		next := -1
		switch data[off] {
		case '{':
			if step.index >= 0 {
				return off, found
			}
			members, ok := l.members[off]
			if !ok {
				members = jsonMembers(data, off)
				l.members[off] = members
			}
			next = memberOffset(members, step.key)
		case '[':
			if step.index < 0 {
				return off, found
			}
			elems, ok := l.elements[off]
			if !ok {
				elems = jsonElements(data, off)
				l.elements[off] = elems
			}
			if step.index < len(elems) {
				next = elems[step.index]
			}
		}
		if next < 0 {
			return off, found
		}
		off = next
		found++
	}
	return off, found
}

// member is a key of a JSON object and the offset of its value.
type member struct {
	key string
	off int
}

// jsonMembers returns the members of the object at data[off], in order.
func jsonMembers(data []byte, off int) []member {
	var out []member
	i := jsonscan.SkipSpace(data, off+1)
	for i < len(data) && data[i] == '"' {
		end := jsonscan.SkipString(data, i)
		if end < 0 {
			break
		}
		k := jsonKey(data[i:end])
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			break
		}
		v := jsonscan.SkipSpace(data, i+1)
		out = append(out, member{k, v})
		i = jsonscan.SkipSpace(data, skipJSONValue(data, v))
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return out
}

// memberOffset returns the offset of the value of key among members, or
// -1: the last exact match, else the last case-insensitive one.
func memberOffset(members []member, key string) int {
	exact, folded := -1, -1
	for _, m := range members {
		switch {
		case m.key == key:
			exact = m.off
		case strings.EqualFold(m.key, key):
			folded = m.off
		}
	}
	if exact >= 0 {
		return exact
	}
	return folded
}

// jsonElements returns the offsets of the elements of the array at
// data[off].
func jsonElements(data []byte, off int) []int {
	var out []int
	i := jsonscan.SkipSpace(data, off+1)
	for i < len(data) && data[i] != ']' {
		out = append(out, i)
		i = jsonscan.SkipSpace(data, skipJSONValue(data, i))
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return out
}

func jsonKey(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return string(quoted[1 : len(quoted)-1])
	}
	return s
}

// skipJSONValue returns the offset just past the value at data[i] (the end
// of data if it does not end).
func skipJSONValue(data []byte, i int) int {
	if end := jsonscan.SkipValue(data, i); end >= 0 {
		return end
	}
	return len(data)
}

// locateYAML returns the 1-based line and byte column of the node at path
// in the blob (a YAML document), or of its deepest step that exists, and
// how many steps were found.
func (l *locator) locateYAML(path []pathElem) (line, col, found int) {
	if !l.parsed {
		l.parsed = true
		var root yaml.Node
		if yaml.NewDecoder(bytes.NewReader(l.t.data)).Decode(&root) == nil {
			l.root = &root
		}
	}
	if l.root == nil {
		return 0, 0, 0
	}
	elems := make([]docpath.Elem, len(path))
	for i, e := range path {
		elems[i] = docpath.Elem{Key: e.key, Index: e.index}
	}
	n, found := docpath.Walk(l.root, elems)
	if n == nil {
		return 0, 0, 0
	}
	return n.Line, l.byteColumn(n.Line, n.Column), found
}

// lineStart returns the offset where line n (1-based) of the blob starts.
func (l *locator) lineStart(n int) int {
	if l.lines == nil {
		l.lines = []int{0}
		for i, c := range l.t.data {
			if c == '\n' {
				l.lines = append(l.lines, i+1)
			}
		}
	}
	return l.lines[min(max(n, 1), len(l.lines))-1]
}

// byteColumn turns a character column of line (1-based) into a byte
// column.
func (l *locator) byteColumn(line, col int) int {
	return docpath.ByteColumn(l.t.data[l.lineStart(line):], 1, col)
}

// lineCol returns the 1-based line and byte column of offset off in the
// blob, whose first byte is at t.line, t.col.
func (l *locator) lineCol(off int) (int, int) {
	off = min(max(off, 0), len(l.t.data))
	l.lineStart(1)
	k := sort.SearchInts(l.lines, off+1) - 1 // the line holding off
	if k == 0 {
		return l.t.line, l.t.col + off
	}
	return l.t.line + k, off - l.lines[k] + 1
}

// locate moves every finding about an element of a blob from the blob's
// start to the element, reading each blob that has such findings once.
// Tree leaves follow their findings.
func locate(ctx context.Context, src catalogSource, fs []Finding) error {
	byRef := map[int][]int{}
	for i, f := range fs {
		if f.ref >= 0 && f.Path != "" {
			byRef[f.ref] = append(byRef[f.ref], i)
		}
	}
	refs := make([]int, 0, len(byRef))
	for r := range byRef {
		refs = append(refs, r)
	}
	sort.Ints(refs)
	for _, ref := range refs {
		t, err := src.text(ctx, ref)
		if err != nil {
			return err
		}
		if t.data == nil {
			continue
		}
		l := newLocator(t)
		for _, i := range byRef[ref] {
			if line, col, ok := l.locate(parsePath(fs[i].Path)); ok {
				fs[i].File, fs[i].Line, fs[i].Column = t.file, line, col
			}
		}
	}
	for i := range fs {
		for _, l := range fs[i].leaves {
			l.Pos = fs[i].Pos()
		}
	}
	return nil
}

// locate returns the position of the element at path (or of its deepest
// part that exists); ok is false when nothing below the blob itself was
// found.
func (l *locator) locate(path []pathElem) (line, col int, ok bool) {
	if l.t.yaml {
		ln, c, found := l.locateYAML(path)
		if ln == 0 || found == 0 {
			return 0, 0, false
		}
		return l.t.line + ln - 1, c, true
	}
	off, found := l.locateJSON(path)
	if found == 0 {
		return 0, 0, false
	}
	line, col = l.lineCol(off)
	return line, col, true
}
