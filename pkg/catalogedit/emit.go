package catalogedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"
	yaml3 "go.yaml.in/yaml/v3"
)

// Emitters: a Value written as JSON or YAML in the style of the file it
// goes into.

// jsonStyle is how a file writes JSON.
type jsonStyle struct {
	compact bool
	kvSep   string // compact: ":" or ": "
	itemSep string // compact: "," or ", "
	indent  string // pretty: one level of indentation
	newline string
}

// writeJSON writes v. In pretty style, lines after the first start with
// prefix plus one indent per level.
func writeJSON(buf *bytes.Buffer, v any, st jsonStyle, prefix string) error {
	nl := st.newline
	if nl == "" {
		nl = "\n"
	}
	switch t := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case Number:
		buf.WriteString(string(t))
	case string:
		buf.Write(jsonString(t))
	case *Object:
		if len(t.Keys) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				if st.compact {
					buf.WriteString(st.itemSep)
				} else {
					buf.WriteByte(',')
				}
			}
			if !st.compact {
				buf.WriteString(nl + prefix + st.indent)
			}
			buf.Write(jsonString(k))
			if st.compact {
				buf.WriteString(st.kvSep)
			} else {
				buf.WriteString(": ")
			}
			if err := writeJSON(buf, t.Vals[i], st, prefix+st.indent); err != nil {
				return err
			}
		}
		if !st.compact {
			buf.WriteString(nl + prefix)
		}
		buf.WriteByte('}')
	case []any:
		if len(t) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				if st.compact {
					buf.WriteString(st.itemSep)
				} else {
					buf.WriteByte(',')
				}
			}
			if !st.compact {
				buf.WriteString(nl + prefix + st.indent)
			}
			if err := writeJSON(buf, x, st, prefix+st.indent); err != nil {
				return err
			}
		}
		if !st.compact {
			buf.WriteString(nl + prefix)
		}
		buf.WriteByte(']')
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// jsonString encodes s as Go's encoder does with HTML escaping off.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// yamlStyle is how a file writes YAML.
type yamlStyle struct {
	indent    int  // columns per mapping level
	seqIndent bool // block sequences indented under their key
	newline   string
}

func (st yamlStyle) nl() string {
	if st.newline == "" {
		return "\n"
	}
	return st.newline
}

func (st yamlStyle) unit() int {
	if st.indent < 1 {
		return 2
	}
	return st.indent
}

// writeYAMLMapping writes the non-empty object o as a block mapping whose
// keys sit at column col. When inline is set the cursor already is at col
// (after a sequence dash), so the first key gets no indentation.
func writeYAMLMapping(buf *bytes.Buffer, o *Object, col int, inline bool, st yamlStyle) {
	for i, k := range o.Keys {
		if i > 0 || !inline {
			buf.WriteString(strings.Repeat(" ", col))
		}
		buf.WriteString(yamlKeyScalar(k))
		buf.WriteByte(':')
		writeYAMLValue(buf, o.Vals[i], col, col+st.unit(), st)
	}
}

// writeYAMLValue writes what follows "key:" or "-": a space and a scalar,
// or a line end and a nested block. parentCol is the column of the key
// or dash; childCol the column of nested mapping keys.
func writeYAMLValue(buf *bytes.Buffer, v any, parentCol, childCol int, st yamlStyle) {
	nl := st.nl()
	switch t := v.(type) {
	case *Object:
		if len(t.Keys) == 0 {
			buf.WriteString(" {}" + nl)
			return
		}
		buf.WriteString(nl)
		writeYAMLMapping(buf, t, childCol, false, st)
	case []any:
		if len(t) == 0 {
			buf.WriteString(" []" + nl)
			return
		}
		buf.WriteString(nl)
		dash := parentCol
		if st.seqIndent {
			dash = parentCol + st.unit()
		}
		writeYAMLSeq(buf, t, dash, st)
	case string:
		s, literal := yamlScalar(t)
		if !literal {
			buf.WriteString(" " + s + nl)
			return
		}
		writeLiteral(buf, t, childCol, st)
	default:
		buf.WriteString(" " + yamlAtom(t) + nl)
	}
}

// writeYAMLSeq writes a non-empty block sequence with dashes at col.
func writeYAMLSeq(buf *bytes.Buffer, a []any, col int, st yamlStyle) {
	for _, x := range a {
		writeYAMLItem(buf, x, col, col+2, st)
	}
}

// writeYAMLItem writes one sequence item: the dash at dashCol and the
// item's content at contentCol.
func writeYAMLItem(buf *bytes.Buffer, x any, dashCol, contentCol int, st yamlStyle) {
	nl := st.nl()
	buf.WriteString(strings.Repeat(" ", dashCol))
	buf.WriteByte('-')
	pad := strings.Repeat(" ", max(contentCol-dashCol-1, 1))
	switch t := x.(type) {
	case *Object:
		if len(t.Keys) == 0 {
			buf.WriteString(" {}" + nl)
			return
		}
		buf.WriteString(pad)
		writeYAMLMapping(buf, t, contentCol, true, st)
	case []any:
		if len(t) == 0 {
			buf.WriteString(" []" + nl)
			return
		}
		buf.WriteString(nl)
		writeYAMLSeq(buf, t, contentCol, st)
	case string:
		s, literal := yamlScalar(t)
		if !literal {
			buf.WriteString(pad + s + nl)
			return
		}
		writeLiteral(buf, t, contentCol, st)
	default:
		buf.WriteString(pad + yamlAtom(t) + nl)
	}
}

// writeLiteral writes " |" (with chomping) and the lines of s at col.
func writeLiteral(buf *bytes.Buffer, s string, col int, st yamlStyle) {
	nl := st.nl()
	body := strings.TrimRight(s, "\n")
	trailing := len(s) - len(body)
	switch trailing {
	case 0:
		buf.WriteString(" |-" + nl)
	case 1:
		buf.WriteString(" |" + nl)
	default:
		buf.WriteString(" |+" + nl)
	}
	ind := strings.Repeat(" ", col)
	for _, line := range strings.Split(body, "\n") {
		if line != "" {
			buf.WriteString(ind + line)
		}
		buf.WriteString(nl)
	}
	for i := 1; i < trailing; i++ {
		buf.WriteString(nl)
	}
}

// yamlAtom renders a non-string scalar.
func yamlAtom(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case Number:
		return yamlNumber(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var intRE = regexp.MustCompile(`^-?[0-9]+$`)

// yamlNumber renders a JSON number the way sigs.k8s.io/yaml's JSONToYAML
// would (integers as they are, other numbers as yaml.v2 writes a float64).
func yamlNumber(n Number) string {
	s := string(n)
	if intRE.MatchString(s) {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	b, err := yaml2.Marshal(f)
	if err != nil {
		return s
	}
	return strings.TrimSuffix(string(b), "\n")
}

// yamlScalar renders a string as a single-line YAML scalar quoted the way
// yaml.v2 (the loader's YAML library) reads it back as the same string, or
// reports that it should be a literal block (multi-line text).
func yamlScalar(s string) (string, bool) {
	if strings.Contains(s, "\n") && literalOK(s) {
		return "", true
	}
	if b, err := yaml2.Marshal(s); err == nil {
		if out := strings.TrimSuffix(string(b), "\n"); !strings.Contains(out, "\n") && readsBack(out, s) {
			return out, false
		}
	}
	// yaml.v2 folds long plain scalars over several lines; yaml.v3 does not.
	if b, err := yaml3.Marshal(s); err == nil {
		if out := strings.TrimSuffix(string(b), "\n"); !strings.Contains(out, "\n") && readsBack(out, s) {
			return out, false
		}
	}
	return yamlQuoted(s), false
}

// yamlKeyScalar renders a mapping key: a one-line scalar that yaml.v2
// reads back as the key k.
func yamlKeyScalar(k string) string {
	if out, literal := yamlScalar(k); !literal {
		var m map[string]any
		if err := yaml2.Unmarshal([]byte(out+": x"), &m); err == nil {
			if _, ok := m[k]; ok && len(m) == 1 {
				return out
			}
		}
	}
	return yamlQuoted(k)
}

// yamlQuoted renders s as a JSON string, which YAML reads as a
// double-quoted scalar, with every character YAML does not keep as it is
// written (DEL, C1 controls, U+FEFF, U+FFFE, U+FFFF, and NEL, which YAML 1.1
// reads as a line break; JSON escapes only those below U+0020 and U+2028/9)
// written as a \u escape.
func yamlQuoted(s string) string {
	q := string(jsonString(s))
	keep := func(r rune) bool { return yamlPrintable(r) && !yamlBreak(r) }
	if !strings.ContainsFunc(q, func(r rune) bool { return !keep(r) }) {
		return q
	}
	var b strings.Builder
	for _, r := range q {
		if keep(r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// yamlPrintable reports whether YAML 1.1 allows r raw in a document (its
// printable set, less tab and line breaks, which JSON escapes anyway).
func yamlPrintable(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0x7e, r == 0x85:
	case r >= 0xa0 && r <= 0xd7ff:
	case r >= 0xe000 && r <= 0xfffd && r != 0xfeff:
	case r >= 0x10000 && r <= 0x10ffff:
	default:
		return false
	}
	return true
}

// yamlBreak reports whether r is one of the line breaks YAML 1.1 (yaml.v2)
// knows besides LF and CR: NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
func yamlBreak(r rune) bool {
	return r == 0x85 || r == 0x2028 || r == 0x2029
}

// readsBack reports whether yaml.v2 reads the scalar text as the string s.
func readsBack(text, s string) bool {
	var m map[string]any
	if err := yaml2.Unmarshal([]byte("k: "+text), &m); err != nil {
		return false
	}
	got, ok := m["k"].(string)
	return ok && got == s
}

// literalOK reports whether s can be written as a literal block scalar
// without an indentation indicator.
func literalOK(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != '\t' && r != '\n' && (!yamlPrintable(r) || yamlBreak(r)) {
			return false
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		// The first non-empty line sets the indentation: it must not
		// start with a space (or a tab, which YAML forbids there).
		return line[0] != ' ' && line[0] != '\t'
	}
	return false
}
