package catalogedit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// The blob scanner: where each blob of a catalog file lies, byte for byte.
//
// The loader (pkg/declcfg) says which file and line a blob starts at; an
// in-place edit needs the exact bytes, and what to cut to remove a blob
// without disturbing its neighbours. Scan reads a file the way the loader
// does (a JSON stream when the first non-space byte of the first 4096 is
// '{', YAML documents split on "---" lines otherwise) and returns one Span
// per blob, in file order, each with the loader's position so the two can
// be matched. A basic template (olm.template.basic) is one document whose
// blobs are the items of its entries list.

// Format is a file's format.
type Format string

// Formats.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// Span is where one blob lies in a file.
type Span struct {
	// Start and End delimit the blob's own bytes: a JSON value, the
	// content lines of a YAML document (without leading and trailing
	// comments and blank lines), or the lines of a template entry (from
	// the start of the line of its dash).
	Start, End int
	// CutStart and CutEnd delimit what removing the blob deletes: its
	// bytes with their separator, so that the neighbours stay as they are.
	CutStart, CutEnd int
	// Line and Col are where the loader positions the blob (1-based).
	Line, Column int
}

// Layout is where every blob of a file lies.
type Layout struct {
	Format   Format
	Template bool
	Blobs    []Span
	// Newline is "\r\n" when the file's lines end so, else "\n".
	Newline string
	// list describes a template's entries list (for insertions).
	list *listLayout
}

// listLayout is a template's entries list.
type listLayout struct {
	// json: the array node; yaml: the dash column and item content
	// column of the block sequence.
	arr        *jnode
	dashCol    int
	contentCol int
}

const jsonSniffLen = 4096

// errMixed is returned for a JSON stream that continues as YAML (the
// loader accepts it; editing it in place is not supported).
var errMixed = errors.New("the file starts as a JSON stream and continues as YAML; convert it to one format to edit it in place")

// Scan returns the layout of an FBC file: a JSON stream or YAML documents.
func Scan(data []byte) (*Layout, error) {
	l := &Layout{Newline: newlineOf(data)}
	if looksLikeJSON(data) {
		l.Format = FormatJSON
		spans, err := scanJSONStream(data)
		if err != nil {
			return nil, err
		}
		l.Blobs = spans
		return l, nil
	}
	l.Format = FormatYAML
	spans, err := scanYAMLStream(data)
	if err != nil {
		return nil, err
	}
	l.Blobs = spans
	return l, nil
}

func newlineOf(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

func looksLikeJSON(data []byte) bool {
	head := data
	if len(head) > jsonSniffLen {
		head = head[:jsonSniffLen]
	}
	return bytes.HasPrefix(bytes.TrimLeftFunc(head, unicode.IsSpace), []byte("{"))
}

func scanJSONStream(data []byte) ([]Span, error) {
	li := newLineIndex(data)
	var spans []Span
	off := 0
	for {
		off = skipJSONSpace(data, off)
		if off >= len(data) {
			return spans, nil
		}
		end, err := skipJSON(data, off)
		if err != nil {
			if len(spans) <= 1 {
				// The loader reads the rest as YAML.
				return nil, errMixed
			}
			return nil, err
		}
		if data[off] != '{' {
			return nil, fmt.Errorf("line %d: a blob must be a JSON object", lineOf(li, off))
		}
		line, col := li.pos(off)
		s := Span{Start: off, End: end, Line: line, Column: col}
		// Cut the blob's whole line when it stands alone on it.
		ls := li.lineStart(line)
		s.CutStart = off
		if len(bytes.Trim(data[ls:off], " \t")) == 0 {
			s.CutStart = ls
		}
		s.CutEnd = end
		j := end
		for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r') {
			j++
		}
		if j < len(data) && data[j] == '\n' {
			s.CutEnd = j + 1
		} else if s.CutStart == ls && j == len(data) {
			s.CutEnd = j
		}
		spans = append(spans, s)
		off = end
	}
}

func lineOf(li *lineIndex, off int) int {
	l, _ := li.pos(off)
	return l
}

// scanYAMLStream splits YAML documents as the loader does (k8s' YAMLReader):
// a line starting with "---" ends a document and may carry only a comment
// after it; documents with no bytes are skipped.
func scanYAMLStream(data []byte) ([]Span, error) {
	var spans []Span
	off := 0
	segStart := 0 // start of the current document's segment (its separator line)
	docStart, docLine := -1, 0
	flush := func(end int) {
		if docStart < 0 {
			return
		}
		s := Span{CutStart: segStart, CutEnd: end, Line: docLine, Column: 1}
		s.Start, s.End = contentRange(data, lineStartsBetween(data, docStart, end), docStart, end)
		// A document of blank lines and comments has no blob (the loader
		// skips or rejects it).
		if s.Start < s.End {
			spans = append(spans, s)
		}
		docStart = -1
	}
	for lineNo := 1; off < len(data); lineNo++ {
		lineStart := off
		nl := bytes.IndexByte(data[off:], '\n')
		var line []byte
		if nl < 0 {
			line = data[off:]
			off = len(data)
		} else {
			line = data[off : off+nl]
			off += nl + 1
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := bytes.TrimSpace(line[3:])
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, fmt.Errorf("line %d: invalid Yaml document separator: %s", lineNo, trimmed)
			}
			flush(lineStart)
			segStart = lineStart
			continue
		}
		if docStart < 0 {
			docStart, docLine = lineStart, lineNo
		}
	}
	flush(len(data))
	return spans, nil
}

// lineStartsBetween returns the offsets of the line starts in [from, to).
func lineStartsBetween(data []byte, from, to int) []int {
	starts := []int{from}
	for i := from; i < to; i++ {
		if data[i] == '\n' && i+1 < to {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// contentRange returns the lines of [from, to) from the first to the last
// line that is neither blank nor only a comment, the last one's line end
// included.
func contentRange(data []byte, starts []int, from, to int) (int, int) {
	lineAt := func(i int) []byte {
		end := to
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		t := bytes.TrimSuffix(data[starts[i]:end], []byte("\n"))
		return bytes.TrimSuffix(t, []byte("\r"))
	}
	first, last := -1, -1
	for i := range starts {
		t := lineAt(i)
		if isBlank(t) || isComment(t) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 {
		return from, from
	}
	end := to
	if last+1 < len(starts) {
		end = starts[last+1]
	}
	return starts[first], end
}

// IsTemplate reports whether data is a basic template: its first document
// has schema olm.template.basic.
func IsTemplate(data []byte) bool {
	first := data
	if !looksLikeJSON(data) {
		if spans, err := scanYAMLStream(data); err == nil && len(spans) > 0 {
			first = data[spans[0].Start:spans[0].End]
		}
	} else if n, _, err := parseJSON(data, skipJSONSpace(data, 0)); err == nil {
		first = n.text(data)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := yaml.Unmarshal(first, &head); err != nil {
		return false
	}
	return head.Schema == "olm.template.basic"
}

// ScanTemplate returns the layout of a basic template: one blob per item of
// its entries list. Only the first document is read, as upstream does.
func ScanTemplate(data []byte) (*Layout, error) {
	l := &Layout{Template: true, Newline: newlineOf(data)}
	if looksLikeJSON(data) {
		l.Format = FormatJSON
		return l, scanJSONTemplate(data, l)
	}
	l.Format = FormatYAML
	return l, scanYAMLTemplate(data, l)
}

func scanJSONTemplate(data []byte, l *Layout) error {
	n, _, err := parseJSON(data, skipJSONSpace(data, 0))
	if err != nil {
		return err
	}
	k := n.field(data, "entries")
	if k < 0 || n.elems[k].kind != '[' {
		return errors.New("the template has no entries list")
	}
	arr := n.elems[k]
	l.list = &listLayout{arr: arr}
	li := newLineIndex(data)
	for i, e := range arr.elems {
		if e.kind != '{' {
			return fmt.Errorf("line %d: entry %d is not an object", lineOf(li, e.start), i)
		}
		line, col := li.pos(e.start)
		s := Span{Start: e.start, End: e.end, Line: line, Column: col}
		s.CutStart, s.CutEnd = jsonItemCut(arr, i)
		l.Blobs = append(l.Blobs, s)
	}
	return nil
}

// jsonItemCut returns what removing element i of arr deletes: the element
// and the separator before it (after it, for the first element).
func jsonItemCut(arr *jnode, i int) (int, int) {
	e := arr.elems[i]
	switch {
	case len(arr.elems) == 1:
		return e.start, e.end
	case i == 0:
		return e.start, arr.elems[1].start
	default:
		return arr.elems[i-1].end, e.end
	}
}

func scanYAMLTemplate(data []byte, l *Layout) error {
	// The template is the first document.
	end := len(data)
	if spans, err := scanYAMLStream(data); err == nil && len(spans) > 0 {
		end = spans[0].CutEnd
	} else if err != nil {
		return err
	}
	doc := data[:end]
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil {
		return err
	}
	if root.Kind != yaml3.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml3.MappingNode {
		return errors.New("the template is not a mapping")
	}
	seq := yamlField(root.Content[0], "entries")
	if seq == nil || seq.Kind != yaml3.SequenceNode {
		return errors.New("the template has no entries list")
	}
	if seq.Style&yaml3.FlowStyle != 0 {
		return errors.New("the template's entries list is in flow style ([...]); write it as a block list to edit it in place")
	}
	li := newLineIndex(doc)
	items, err := yamlSeqItems(doc, li, seq)
	if err != nil {
		return err
	}
	// Each item must decode alone to what it is in the whole template:
	// this is what makes cutting and replacing items safe.
	whole, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var tmpl struct {
		Entries []jsonRaw `json:"entries"`
	}
	if err := yaml.Unmarshal(whole, &tmpl); err != nil {
		return err
	}
	if len(tmpl.Entries) != len(items) {
		return errors.New("cannot locate the template's entries")
	}
	for i, it := range items {
		if it.node.Kind != yaml3.MappingNode {
			return fmt.Errorf("line %d: entry %d is not a mapping", it.node.Line, i)
		}
		var one []jsonRaw
		if err := yaml.Unmarshal(doc[it.start:it.end], &one); err != nil || len(one) != 1 {
			return fmt.Errorf("line %d: cannot locate entry %d of the template", it.node.Line, i)
		}
		a, err1 := canonicalJSON(one[0])
		b, err2 := canonicalJSON(tmpl.Entries[i])
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			return fmt.Errorf("line %d: cannot locate entry %d of the template", it.node.Line, i)
		}
		l.Blobs = append(l.Blobs, Span{
			Start: it.start, End: it.end, CutStart: it.start, CutEnd: it.end,
			Line: it.node.Line, Column: it.node.Column,
		})
	}
	if len(items) > 0 {
		l.list = &listLayout{dashCol: items[0].dashCol, contentCol: items[0].contentCol}
	}
	return nil
}

// jsonRaw is raw JSON that sigs.k8s.io/yaml can decode into.
type jsonRaw []byte

func (r *jsonRaw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// yamlField returns the value node of key in a mapping node (exact match
// first, then case-insensitive).
func yamlField(m *yaml3.Node, key string) *yaml3.Node {
	if i := yamlFieldIndex(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// yamlFieldIndex returns the index in m.Content of key's key node, or -1.
func yamlFieldIndex(m *yaml3.Node, key string) int {
	if m == nil || m.Kind != yaml3.MappingNode {
		return -1
	}
	fold := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml3.ScalarNode {
			continue
		}
		if k.Value == key {
			return i
		}
		if fold < 0 && strings.EqualFold(k.Value, key) {
			fold = i
		}
	}
	return fold
}

// seqItem is one item of a block sequence.
type seqItem struct {
	node       *yaml3.Node
	start, end int // from the start of the dash's line to the end of its last line
	dashCol    int // 0-based column of the dash
	contentCol int // 0-based column of the item's content
}

// yamlSeqItems returns the items of a block sequence node of text. Each
// item runs from the start of the line of its dash to the end of its last
// line that is neither blank nor a comment at or left of the dash (such
// lines belong to what follows).
func yamlSeqItems(text []byte, li *lineIndex, seq *yaml3.Node) ([]seqItem, error) {
	items := make([]seqItem, 0, len(seq.Content))
	for _, n := range seq.Content {
		if n.Anchor != "" || n.Tag != "" && n.Style&yaml3.TaggedStyle != 0 {
			return nil, fmt.Errorf("line %d: anchors and tags on list items are not supported", n.Line)
		}
		off := li.offset(n.Line, n.Column)
		if off < 0 {
			return nil, fmt.Errorf("line %d: cannot locate list item", n.Line)
		}
		dash := off - 1
		for dash >= 0 && (text[dash] == ' ' || text[dash] == '\t') {
			dash--
		}
		if dash < 0 || text[dash] != '-' {
			return nil, fmt.Errorf("line %d: list item must start on the line of its dash", n.Line)
		}
		line := li.lineAt(dash)
		ls := li.lineStart(line + 1)
		if !isBlank(text[ls:dash]) || bytes.IndexByte(text[ls:dash], '\t') >= 0 {
			return nil, fmt.Errorf("line %d: nested list items are not supported", n.Line)
		}
		items = append(items, seqItem{node: n, start: ls, dashCol: dash - ls, contentCol: off - ls})
	}
	for i := range items {
		limit := -1
		if i+1 < len(items) {
			limit = items[i+1].start
		}
		items[i].end = itemEnd(li, items[i].start, items[i].dashCol, limit)
	}
	return items, nil
}

// itemEnd returns the end of the item starting at start: the line end of
// its last line that is neither blank nor a comment at or left of dashCol,
// before limit (-1: before the first line at or left of dashCol with
// content, or a document marker).
func itemEnd(li *lineIndex, start, dashCol, limit int) int {
	first := li.lineAt(start)
	last := first
	for i := first + 1; i < li.numLines(); i++ {
		if limit >= 0 && li.starts[i] >= limit {
			break
		}
		t := li.lineText(i)
		if isBlank(t) {
			continue
		}
		ind := indentOf(t)
		if isComment(t) {
			if ind <= dashCol {
				continue
			}
			last = i
			continue
		}
		if limit < 0 && (ind <= dashCol || bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("..."))) {
			break
		}
		last = i
	}
	return li.lineEnd(last + 1)
}
