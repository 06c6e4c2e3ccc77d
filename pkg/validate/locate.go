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

// locateJSON returns the offset in data (one JSON value) of the value at
// path, or of the deepest step of path that exists, and how many steps
// were found. Keys match exactly, else case-insensitively (as the loader
// types blobs); of duplicate keys the last counts, as when decoding.
func locateJSON(data []byte, path []pathElem) (off, found int) {
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
			next = jsonMember(data, off, step.key)
		case '[':
			if step.index < 0 {
				return off, found
			}
			next = jsonElement(data, off, step.index)
		}
		if next < 0 {
			return off, found
		}
		off = next
		found++
	}
	return off, found
}

// jsonMember returns the offset of the value of key in the object at
// data[off], or -1.
func jsonMember(data []byte, off int, key string) int {
	exact, folded := -1, -1
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
		switch {
		case k == key:
			exact = v
		case strings.EqualFold(k, key):
			folded = v
		}
		i = jsonscan.SkipSpace(data, skipJSONValue(data, v))
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	if exact >= 0 {
		return exact
	}
	return folded
}

// jsonElement returns the offset of element n of the array at data[off],
// or -1.
func jsonElement(data []byte, off, n int) int {
	i := jsonscan.SkipSpace(data, off+1)
	for k := 0; i < len(data) && data[i] != ']'; k++ {
		if k == n {
			return i
		}
		i = jsonscan.SkipSpace(data, skipJSONValue(data, i))
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return -1
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

// lineCol returns the 1-based line and byte column of offset off in data,
// a text whose first byte is at line, col.
func lineCol(data []byte, off, line, col int) (int, int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	nl := bytes.Count(before, []byte("\n"))
	if nl == 0 {
		return line, col + off
	}
	return line + nl, off - bytes.LastIndexByte(before, '\n')
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
		at := t.locator()
		for _, i := range byRef[ref] {
			if line, col, ok := at(parsePath(fs[i].Path)); ok {
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

// locator returns a function that gives the position of the element at
// path (or of its deepest part that exists); ok is false when nothing
// below the blob itself was found. A YAML blob is parsed once, however
// many elements are looked for.
func (t blobText) locator() func(path []pathElem) (line, col int, ok bool) {
	if !t.yaml {
		return func(path []pathElem) (int, int, bool) {
			off, found := locateJSON(t.data, path)
			if found == 0 {
				return 0, 0, false
			}
			line, col := lineCol(t.data, off, t.line, t.col)
			return line, col, true
		}
	}
	var root yaml.Node
	if yaml.NewDecoder(bytes.NewReader(t.data)).Decode(&root) != nil {
		return func([]pathElem) (int, int, bool) { return 0, 0, false }
	}
	return func(path []pathElem) (int, int, bool) {
		elems := make([]docpath.Elem, len(path))
		for i, e := range path {
			elems[i] = docpath.Elem{Key: e.key, Index: e.index}
		}
		n, found := docpath.Walk(&root, elems)
		if n == nil || n.Line == 0 || found == 0 {
			return 0, 0, false
		}
		return t.line + n.Line - 1, docpath.ByteColumn(t.data, n.Line, n.Column), true
	}
}
