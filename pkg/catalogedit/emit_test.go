package catalogedit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzEmitString checks that any string, as a value, a key or a list item,
// is written so that YAML (read as the loader reads it) and JSON give it
// back unchanged.
func FuzzEmitString(f *testing.F) {
	for _, s := range []string{"", "yes", "n", "1.0", "01", ">=1.0.0 <2.0.0", "a: b", "- x", "#c", "x #c",
		"line1\nline2\n", "line1\n\n\nline2\n\n", " lead", "\tt", "trail ", "~", "null", "@at", "`tick", "'q'", "\"dq\"",
		"long text that goes on and on past eighty columns so that yaml.v2 would fold it onto two lines ok",
		"\u2028", "\x00", "\xff", "é", "a\r\nb",
		// YAML 1.1 line breaks in text that would be a literal block, and
		// DEL and NEL where only a quoted string holds the value.
		"a\u0085b\nc\n", "a\u2028b\nc\n", "a\u2029b\nc\n",
		"0000000000000000000000000\u0085000000000000000000000\xbd0000",
		"0000000000000000000000000\x7f000000000000000000000\xbd0000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 || s == "k" {
			return // implicit YAML keys are limited to 1024 characters
		}
		o := &Object{Keys: []string{"k", s}, Vals: []any{s, []any{s, &Object{Keys: []string{"n"}, Vals: []any{s}}}}}
		for _, st := range []yamlStyle{{indent: 2}, {indent: 4, seqIndent: true}} {
			var buf bytes.Buffer
			writeYAMLMapping(&buf, o, 0, false, st)
			if !sameValue(buf.Bytes(), FormatYAML, o) {
				t.Fatalf("YAML %+v does not read back:\n%s", st, buf.String())
			}
			buf.Reset()
			writeYAMLItem(&buf, o, 2, 4, st)
			if !sameValue(buf.Bytes(), FormatYAML, []any{o}) {
				t.Fatalf("YAML item does not read back:\n%s", buf.String())
			}
		}
		for _, st := range []jsonStyle{{compact: true, kvSep: ": ", itemSep: ", "}, {indent: "\t"}} {
			var buf bytes.Buffer
			if err := writeJSON(&buf, o, st, "  "); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) || !sameValue(buf.Bytes(), FormatJSON, o) {
				t.Fatalf("JSON does not read back:\n%s", buf.String())
			}
		}
	})
}

func TestEmitNumbersAndAtoms(t *testing.T) {
	o := &Object{
		Keys: []string{"i", "f", "e", "t", "z", "empty", "list"},
		Vals: []any{Number("10"), Number("1.5"), Number("1e3"), true, nil, &Object{}, []any{}},
	}
	var buf bytes.Buffer
	writeYAMLMapping(&buf, o, 0, false, yamlStyle{indent: 2})
	want := "i: 10\nf: 1.5\ne: 1000\nt: true\nz: null\nempty: {}\nlist: []\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	if !sameValue(buf.Bytes(), FormatYAML, o) {
		t.Error("does not read back")
	}
}
