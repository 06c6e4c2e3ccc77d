package catalogedit

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	yaml3 "go.yaml.in/yaml/v3"
)

// Patching: the bytes of one file rewritten by splices, each blob edit
// as small as it can be. Changing a blob compares its old and new values
// key by key: a changed string value has its scalar replaced, a changed
// list (a channel's or deprecations' entries) has only its changed items
// rewritten, and anything else re-emits the whole blob in the file's
// style. Every patched blob is decoded again and must equal the intended
// value (the way the loader decodes it), or the blob is re-emitted whole;
// a re-emitted blob is checked the same way.

// splice replaces data[start:end] with text.
type splice struct {
	start, end int
	text       []byte
	seq        int // order of insertions at the same offset
}

// fileEdit is one file being edited.
type fileEdit struct {
	name    string
	data    []byte
	layout  *Layout
	splices []splice
	seq     int

	jst *jsonStyle
	yst *yamlStyle
}

var errWhole = errors.New("re-emit the whole blob")

// How often blobs were patched in place or re-emitted whole (tests report
// it).
var patchedInPlace, patchedWhole atomic.Int64

func (fe *fileEdit) add(start, end int, text []byte) {
	fe.seq++
	fe.splices = append(fe.splices, splice{start: start, end: end, text: text, seq: fe.seq})
}

func (fe *fileEdit) jsonStyle() jsonStyle {
	if fe.jst == nil {
		st := detectJSONStyle(fe.data, fe.layout)
		fe.jst = &st
	}
	return *fe.jst
}

func (fe *fileEdit) yamlStyle() yamlStyle {
	if fe.yst == nil {
		st := detectYAMLStyle(fe.data, fe.layout.Newline)
		fe.yst = &st
	}
	return *fe.yst
}

// result applies the splices and returns the new bytes and the changed
// regions.
func (fe *fileEdit) result() ([]byte, []region, error) {
	sp := append([]splice(nil), fe.splices...)
	sort.SliceStable(sp, func(i, j int) bool {
		if sp[i].start != sp[j].start {
			return sp[i].start < sp[j].start
		}
		// insertions (empty ranges) before a cut at the same offset
		if (sp[i].end == sp[i].start) != (sp[j].end == sp[j].start) {
			return sp[i].end == sp[i].start
		}
		return sp[i].seq < sp[j].seq
	})
	var out bytes.Buffer
	var regions []region
	prev := 0
	for _, s := range sp {
		if s.start < prev {
			return nil, nil, fmt.Errorf("%s: overlapping edits", fe.name)
		}
		out.Write(fe.data[prev:s.start])
		n0 := out.Len()
		out.Write(s.text)
		regions = append(regions, region{o0: s.start, o1: s.end, n0: n0, n1: out.Len()})
		prev = s.end
	}
	out.Write(fe.data[prev:])
	return out.Bytes(), regions, nil
}

// replaceBlob changes blob i from old to new.
func (fe *fileEdit) replaceBlob(i int, old, new *Object) error {
	s := fe.layout.Blobs[i]
	var sp []splice
	var err error
	if fe.layout.Format == FormatJSON {
		sp, err = fe.patchJSON(s, old, new)
	} else {
		sp, err = fe.patchYAML(s, old, new)
	}
	if err == nil {
		patchedInPlace.Add(1)
		for _, x := range sp {
			fe.add(x.start, x.end, x.text)
		}
		return nil
	}
	patchedWhole.Add(1)
	text, err := fe.emitBlob(s, new)
	if err != nil {
		return err
	}
	fe.add(s.Start, s.End, text)
	return nil
}

// deleteBlob removes blob i with its separator.
func (fe *fileEdit) deleteBlob(i int) {
	s := fe.layout.Blobs[i]
	fe.add(s.CutStart, s.CutEnd, nil)
}

// emitBlob writes v in place of the blob at s and checks it reads back.
func (fe *fileEdit) emitBlob(s Span, v *Object) ([]byte, error) {
	var buf bytes.Buffer
	var want any = v
	switch {
	case fe.layout.Format == FormatJSON:
		st := fe.jsonStyle()
		prefix := ""
		if fe.layout.Template {
			prefix = lineIndent(fe.data, s.Start)
			if n, _, err := parseJSON(fe.data, s.Start); err == nil {
				st = jsonStyleOf(fe.data, n, fe.layout.Newline)
			}
		}
		if err := writeJSON(&buf, v, st, prefix); err != nil {
			return nil, err
		}
	case fe.layout.Template:
		dash, content := fe.itemColumns(s)
		writeYAMLItem(&buf, v, dash, content, fe.yamlStyle())
		want = []any{v}
	default:
		writeYAMLMapping(&buf, v, 0, false, fe.yamlStyle())
	}
	if !sameValue(buf.Bytes(), fe.layout.Format, want) {
		return nil, fmt.Errorf("%s:%d: cannot write the edited blob so that it reads back unchanged", fe.name, s.Line)
	}
	return buf.Bytes(), nil
}

// itemColumns returns the dash and content columns of the template item
// at s (or of the template's list).
func (fe *fileEdit) itemColumns(s Span) (int, int) {
	if l := fe.layout.list; l != nil {
		return l.dashCol, l.contentCol
	}
	return 0, 2
}

// insertAfter inserts new blobs after blob i (i < 0: at the end of the
// file or list).
func (fe *fileEdit) insertAfter(i int, vals []*Object) error {
	if len(vals) == 0 {
		return nil
	}
	nl := fe.layout.Newline
	var buf bytes.Buffer
	var at int
	switch {
	case fe.layout.Template && fe.layout.Format == FormatJSON:
		arr := fe.layout.list.arr
		if len(arr.elems) == 0 {
			return fmt.Errorf("%s: cannot insert into an empty entries list", fe.name)
		}
		if i < 0 {
			i = len(arr.elems) - 1
		}
		sep := []byte("," + nl + lineIndent(fe.data, arr.elems[0].start))
		if len(arr.elems) > 1 {
			sep = fe.data[arr.elems[0].end:arr.elems[1].start]
		}
		st := jsonStyleOf(fe.data, arr.elems[i], nl)
		prefix := lineIndent(fe.data, arr.elems[i].start)
		for _, v := range vals {
			buf.Write(sep)
			var one bytes.Buffer
			if err := writeJSON(&one, v, st, prefix); err != nil {
				return err
			}
			if !sameValue(one.Bytes(), FormatJSON, v) {
				return fmt.Errorf("%s: cannot write a new blob so that it reads back unchanged", fe.name)
			}
			buf.Write(one.Bytes())
		}
		at = arr.elems[i].end
	case fe.layout.Template:
		if len(fe.layout.Blobs) == 0 {
			return fmt.Errorf("%s: cannot insert into an empty entries list", fe.name)
		}
		if i < 0 {
			i = len(fe.layout.Blobs) - 1
		}
		s := fe.layout.Blobs[i]
		at = s.End
		if at > 0 && fe.data[at-1] != '\n' {
			buf.WriteString(nl)
		}
		dash, content := fe.itemColumns(s)
		for _, v := range vals {
			var one bytes.Buffer
			writeYAMLItem(&one, v, dash, content, fe.yamlStyle())
			if !sameValue(one.Bytes(), FormatYAML, []any{v}) {
				return fmt.Errorf("%s: cannot write a new blob so that it reads back unchanged", fe.name)
			}
			buf.Write(one.Bytes())
		}
	default:
		at = len(fe.data)
		if i >= 0 {
			s := fe.layout.Blobs[i]
			at = s.CutEnd
			if fe.layout.Format == FormatJSON && (at == 0 || fe.data[at-1] != '\n') {
				at = s.End
			}
		}
		if at > 0 && fe.data[at-1] != '\n' {
			buf.WriteString(nl)
		}
		text, err := emitNewBlobs(vals, fe.layout.Format, fe.jsonStyleOrDefault(), fe.yamlStyle(), nl, len(fe.layout.Blobs) > 0 || at > 0)
		if err != nil {
			return fmt.Errorf("%s: %w", fe.name, err)
		}
		buf.Write(text)
	}
	fe.add(at, at, buf.Bytes())
	return nil
}

func (fe *fileEdit) jsonStyleOrDefault() jsonStyle {
	if len(fe.layout.Blobs) == 0 {
		return jsonStyle{indent: "    ", kvSep: ":", itemSep: ",", newline: fe.layout.Newline}
	}
	return fe.jsonStyle()
}

// emitNewBlobs writes blobs for an FBC stream: JSON values each followed
// by a line end, or YAML documents each after a "---" line (the first one
// too when sep is set, i.e. when something comes before it).
func emitNewBlobs(vals []*Object, f Format, jst jsonStyle, yst yamlStyle, nl string, sep bool) ([]byte, error) {
	var buf bytes.Buffer
	for i, v := range vals {
		var one bytes.Buffer
		if f == FormatJSON {
			if err := writeJSON(&one, v, jst, ""); err != nil {
				return nil, err
			}
			one.WriteString(nl)
		} else {
			writeYAMLMapping(&one, v, 0, false, yst)
		}
		if !sameValue(one.Bytes(), f, v) {
			return nil, errors.New("cannot write a new blob so that it reads back unchanged")
		}
		if f == FormatYAML && (sep || i > 0) {
			buf.WriteString("---" + nl)
		}
		buf.Write(one.Bytes())
	}
	return buf.Bytes(), nil
}

// --- JSON blobs ---

func (fe *fileEdit) patchJSON(s Span, old, new *Object) ([]splice, error) {
	data := fe.data
	n, _, err := parseJSON(data, s.Start)
	if err != nil || n.kind != '{' || len(n.keys) != len(old.Keys) {
		return nil, errWhole
	}
	keys, err := changedKeys(old, new)
	if err != nil {
		return nil, err
	}
	var out []splice
	for _, k := range keys {
		idx := n.field(data, old.Keys[k])
		if idx < 0 {
			return nil, errWhole
		}
		vn := n.elems[idx]
		switch ov := old.Vals[k].(type) {
		case string:
			nv, ok := new.Vals[k].(string)
			if !ok || vn.kind != '"' {
				return nil, errWhole
			}
			out = append(out, splice{start: vn.start, end: vn.end, text: jsonString(nv)})
		case []any:
			nv, ok := new.Vals[k].([]any)
			if !ok || vn.kind != '[' || len(vn.elems) != len(ov) || len(ov) == 0 || len(nv) == 0 {
				return nil, errWhole
			}
			sp, err := fe.patchJSONList(vn, ov, nv)
			if err != nil {
				return nil, err
			}
			out = append(out, sp)
		default:
			return nil, errWhole
		}
	}
	if !patchedReadsBack(data, s.Start, s.End, out, FormatJSON, new) {
		return nil, errWhole
	}
	return out, nil
}

func (fe *fileEdit) patchJSONList(arr *jnode, old, new []any) (splice, error) {
	data := fe.data
	plan, err := alignItems(old, new)
	if err != nil {
		return splice{}, err
	}
	nl := fe.layout.Newline
	defSep := []byte("," + nl + lineIndent(data, arr.elems[0].start))
	if len(arr.elems) > 1 {
		defSep = data[arr.elems[0].end:arr.elems[1].start]
	} else if !bytes.Contains(data[arr.start:arr.elems[0].start], []byte("\n")) {
		defSep = []byte(", ")
	}
	// the style of the sibling with the most keys
	model := arr.elems[0]
	for _, e := range arr.elems {
		if len(e.keys) > len(model.keys) {
			model = e
		}
	}
	st := jsonStyleOf(data, model, nl)
	prefix := lineIndent(data, arr.elems[0].start)
	var buf bytes.Buffer
	for j, p := range plan {
		if j > 0 {
			if p.old > 0 {
				buf.Write(data[arr.elems[p.old-1].end:arr.elems[p.old].start])
			} else {
				buf.Write(defSep)
			}
		}
		if p.old >= 0 && !p.changed {
			buf.Write(arr.elems[p.old].text(data))
			continue
		}
		ist := st
		if p.old >= 0 {
			ist = jsonStyleOf(data, arr.elems[p.old], nl)
		}
		if err := writeJSON(&buf, new[j], ist, prefix); err != nil {
			return splice{}, err
		}
	}
	return splice{start: arr.elems[0].start, end: arr.elems[len(arr.elems)-1].end, text: buf.Bytes()}, nil
}

// --- YAML blobs ---

// yamlBlob is a YAML blob parsed for patching.
type yamlBlob struct {
	base int        // offset of the region in the file
	li   *lineIndex // over the region
	m    *yaml3.Node
}

func (fe *fileEdit) parseYAMLBlob(s Span) (*yamlBlob, error) {
	region := fe.data[s.Start:s.End]
	var doc yaml3.Node
	if err := yaml3.Unmarshal(region, &doc); err != nil || doc.Kind != yaml3.DocumentNode || len(doc.Content) != 1 {
		return nil, errWhole
	}
	m := doc.Content[0]
	if fe.layout.Template {
		if m.Kind != yaml3.SequenceNode || len(m.Content) != 1 {
			return nil, errWhole
		}
		m = m.Content[0]
	}
	if m.Kind != yaml3.MappingNode || m.Style&yaml3.FlowStyle != 0 {
		return nil, errWhole
	}
	return &yamlBlob{base: s.Start, li: newLineIndex(region), m: m}, nil
}

func (fe *fileEdit) patchYAML(s Span, old, new *Object) ([]splice, error) {
	yb, err := fe.parseYAMLBlob(s)
	if err != nil {
		return nil, err
	}
	if len(yb.m.Content) != 2*len(old.Keys) {
		return nil, errWhole
	}
	keys, err := changedKeys(old, new)
	if err != nil {
		return nil, err
	}
	region := fe.data[s.Start:s.End]
	var out []splice
	for _, k := range keys {
		vn := yamlField(yb.m, old.Keys[k])
		if vn == nil {
			return nil, errWhole
		}
		switch ov := old.Vals[k].(type) {
		case string:
			nv, ok := new.Vals[k].(string)
			if !ok || vn.Kind != yaml3.ScalarNode {
				return nil, errWhole
			}
			start, end, ok := yamlScalarRange(region, yb.li, vn)
			text, literal := yamlScalar(nv)
			if !ok || literal {
				return nil, errWhole
			}
			out = append(out, splice{start: s.Start + start, end: s.Start + end, text: []byte(text)})
		case []any:
			nv, ok := new.Vals[k].([]any)
			if !ok || vn.Kind != yaml3.SequenceNode || vn.Style&yaml3.FlowStyle != 0 || len(vn.Content) != len(ov) || len(ov) == 0 || len(nv) == 0 {
				return nil, errWhole
			}
			sp, err := fe.patchYAMLList(region, yb, vn, ov, nv)
			if err != nil {
				return nil, err
			}
			sp.start += s.Start
			sp.end += s.Start
			out = append(out, sp)
		default:
			return nil, errWhole
		}
	}
	var want any = new
	if fe.layout.Template {
		want = []any{new}
	}
	if !patchedReadsBack(fe.data, s.Start, s.End, out, FormatYAML, want) {
		return nil, errWhole
	}
	return out, nil
}

func (fe *fileEdit) patchYAMLList(region []byte, yb *yamlBlob, seq *yaml3.Node, old, new []any) (splice, error) {
	items, err := yamlSeqItems(region, yb.li, seq)
	if err != nil {
		return splice{}, errWhole
	}
	plan, err := alignItems(old, new)
	if err != nil {
		return splice{}, err
	}
	st := fe.yamlStyle()
	// Nested lists inside the items follow the blob's own habit when it
	// shows one.
	if local := detectYAMLStyle(region, fe.layout.Newline); hasSeqEvidence(region) {
		st.seqIndent = local.seqIndent
	}
	var buf bytes.Buffer
	for j, p := range plan {
		if p.old > 0 {
			// the comments and blank lines between an item and the one
			// before it go with it
			buf.Write(region[items[p.old-1].end:items[p.old].start])
		}
		if p.old >= 0 && !p.changed {
			buf.Write(region[items[p.old].start:items[p.old].end])
			continue
		}
		it := items[0]
		if p.old >= 0 {
			it = items[p.old]
		}
		if b := buf.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
			buf.WriteString(fe.layout.Newline) // the list ended the file
		}
		writeYAMLItem(&buf, new[j], it.dashCol, it.contentCol, st)
	}
	last := items[len(items)-1]
	return splice{start: items[0].start, end: last.end, text: buf.Bytes()}, nil
}

// hasSeqEvidence reports whether text holds a block list under a key.
func hasSeqEvidence(text []byte) bool {
	li := newLineIndex(text)
	for i := 0; i+1 < li.numLines(); i++ {
		t := bytes.TrimRight(li.lineText(i), " \t")
		if !bytes.HasSuffix(t, []byte(":")) {
			continue
		}
		next := bytes.TrimLeft(li.lineText(i+1), " ")
		if bytes.HasPrefix(next, []byte("- ")) {
			return true
		}
	}
	return false
}

// yamlScalarRange returns the bytes of a one-line scalar node.
func yamlScalarRange(text []byte, li *lineIndex, n *yaml3.Node) (int, int, bool) {
	off := li.offset(n.Line, n.Column)
	if off < 0 || n.Anchor != "" || n.Style&yaml3.TaggedStyle != 0 {
		return 0, 0, false
	}
	lineEnd := li.lineEnd(n.Line)
	line := text[off:lineEnd]
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	switch {
	case n.Style&yaml3.DoubleQuotedStyle != 0:
		for i := 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				return off, off + i + 1, true
			}
		}
		return 0, 0, false
	case n.Style&yaml3.SingleQuotedStyle != 0:
		for i := 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				return off, off + i + 1, true
			}
		}
		return 0, 0, false
	case n.Style == 0:
		end := len(line)
		if i := bytes.Index(line, []byte(" #")); i >= 0 {
			end = i
		}
		for end > 0 && (line[end-1] == ' ' || line[end-1] == '\t') {
			end--
		}
		if end == 0 {
			return 0, 0, false
		}
		return off, off + end, true
	}
	return 0, 0, false
}

// --- shared ---

// changedKeys returns the indexes of the keys whose values differ, and
// errWhole when the two objects do not have the same keys in the same
// order.
func changedKeys(old, new *Object) ([]int, error) {
	if len(old.Keys) != len(new.Keys) {
		return nil, errWhole
	}
	var out []int
	for i := range old.Keys {
		if old.Keys[i] != new.Keys[i] {
			return nil, errWhole
		}
		a, err1 := canonical(old.Vals[i])
		b, err2 := canonical(new.Vals[i])
		if err1 != nil || err2 != nil {
			return nil, errWhole
		}
		if !bytes.Equal(a, b) {
			out = append(out, i)
		}
	}
	return out, nil
}

// patchedReadsBack applies splices (file offsets) to data[start:end] and
// reports whether the result decodes to want.
func patchedReadsBack(data []byte, start, end int, sp []splice, f Format, want any) bool {
	sorted := append([]splice(nil), sp...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	var buf bytes.Buffer
	prev := start
	for _, s := range sorted {
		if s.start < prev || s.end > end {
			return false
		}
		buf.Write(data[prev:s.start])
		buf.Write(s.text)
		prev = s.end
	}
	buf.Write(data[prev:end])
	return sameValue(buf.Bytes(), f, want)
}

// planItem is one item of a rewritten list: the old item it keeps (-1 for
// a new one) and whether its value changed.
type planItem struct {
	old     int
	changed bool
}

// alignItems matches the new list's items to the old one's by identity
// (an entry's name, a deprecation's reference), keeping their order.
func alignItems(old, new []any) ([]planItem, error) {
	ids := make(map[string][]int, len(old))
	for i, v := range old {
		id := itemID(v)
		ids[id] = append(ids[id], i)
	}
	plan := make([]planItem, len(new))
	last := -1
	for j, v := range new {
		id := itemID(v)
		cands := ids[id]
		if len(cands) == 0 {
			plan[j] = planItem{old: -1}
			continue
		}
		i := cands[0]
		ids[id] = cands[1:]
		if i < last {
			return nil, errWhole
		}
		last = i
		a, err1 := canonical(old[i])
		b, err2 := canonical(v)
		if err1 != nil || err2 != nil {
			return nil, errWhole
		}
		plan[j] = planItem{old: i, changed: !bytes.Equal(a, b)}
	}
	return plan, nil
}

// itemID identifies a list item across an edit.
func itemID(v any) string {
	if o, ok := v.(*Object); ok {
		if n, ok := o.Get("name"); ok {
			if s, ok := n.(string); ok {
				return "name:" + s
			}
		}
		if r, ok := o.Get("reference"); ok {
			if b, err := canonical(r); err == nil {
				return "ref:" + string(b)
			}
		}
	}
	b, _ := canonical(v)
	return "value:" + string(b)
}
