package template

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFirstDocument(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		line           int // of the document's first line
	}{
		{"yaml", "schema: a\nentries: []\n", `{"entries":[],"schema":"a"}`, 1},
		{"first yaml document only", "---\n# c\n\nschema: a\n---\nschema: b\n", `{"schema":"a"}`, 4},
		{"crlf", "schema: a\r\nk: 1\r\n", `{"k":1,"schema":"a"}`, 1},
		{"yaml 1.1 booleans", "n: y\n", `{"false":true}`, 1},
		{"comments only", "# nothing\n", `null`, 1},
		{"json first value only", "\n {\"schema\": \"a\"}\n{\"schema\": \"b\"}", `{"schema": "a"}`, 2},
		{"json falls back to yaml", `{"schema": "a", "x": [1,]}`, `{"schema":"a","x":[1]}`, 1},
		{"json after 4096 bytes of space is yaml", strings.Repeat(" ", 4097) + "{a: 1}", `{"a":1}`, 1},
		{"array is yaml", "[1, 2]", `[1,2]`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := FirstDocument([]byte(tc.in), "f")
			if err != nil {
				t.Fatal(err)
			}
			if string(d.JSON) != tc.want {
				t.Errorf("JSON %s, want %s", d.JSON, tc.want)
			}
			if got := d.Line(); got != tc.line {
				t.Errorf("line %d, want %d", got, tc.line)
			}
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "EOF"},
		{"separators only", "---\n---\n", "EOF"},
		{"bad separator", "schema: a\n--- x\n", "f:2: invalid YAML document separator: x"},
		{"bad yaml", "a: 1\nb: [\n", "f:2: invalid YAML:"},
		{"bad yaml in second doc is not read", "a: 1\n---\nb: [\n", ""},
		{"bad json", "{\n\"a\": ]}", "f:2:6: invalid character ']' looking for beginning of value"},
		{"json that is yaml", "{\n\"a\": }", ""},
		{"truncated json", "{\"a\": [", "f: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FirstDocument([]byte(tc.in), "f")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want == "EOF" && !errors.Is(err, io.EOF):
				t.Fatalf("got %v, want EOF", err)
			case tc.want != "" && tc.want != "EOF" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	src := "\n\nschema: x\nEntries:\n- a: 1\n- {b: 2,\n   c: [3, 4]}\nnested:\n  deep:\n    key: v\n"
	d, err := FirstDocument([]byte(src), "f")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path []any
		want int
	}{
		{nil, 3},
		{[]any{"schema"}, 3},
		{[]any{"entries"}, 4},
		{[]any{"entries", 0}, 5},
		{[]any{"entries", 1}, 6},
		{[]any{"entries", 1, "c"}, 7},
		{[]any{"entries", 9}, 4},
		{[]any{"nope"}, 3},
		{[]any{Anywhere("key")}, 10},
		{[]any{Anywhere("absent")}, 3},
	} {
		if got := d.Line(tc.path...); got != tc.want {
			t.Errorf("Line(%v) = %d, want %d", tc.path, got, tc.want)
		}
	}
}

func TestDetectType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"schema: olm.template.basic", "basic"},
		{"Schema: olm.semver", "semver"},
		{`{"schema": "olm.template.substitutes"}`, "substitutes"},
		{"schema: olm.Semver", "f:1: unknown template schema: olm.Semver"},
		{"entries: []", "f:1: template input missing required 'schema' field"},
		{"- a", "f:1: a template is an object, not a JSON array"},
		{"", "EOF"},
	} {
		got, err := DetectType([]byte(tc.in), "f")
		if err != nil {
			if err.Error() != tc.want {
				t.Errorf("%q: error %v, want %s", tc.in, err, tc.want)
			}
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestReadBounded(t *testing.T) {
	if b, err := readBounded(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := readBounded(strings.NewReader("123456"), 5); err == nil || err.Error() != "larger than 5 bytes" {
		t.Errorf("over the limit: %v", err)
	}
}

func TestParseType(t *testing.T) {
	if _, err := ParseType("composite"); err == nil || err.Error() != `invalid template type "composite", must be one of: [basic semver substitutes]` {
		t.Errorf("got %v", err)
	}
}

func FuzzFirstDocument(f *testing.F) {
	for _, s := range []string{"schema: a\nentries: []\n", "---\na: 1\n---\nb: 2", `{"a": [1, {"b": null}]}`, "{\"a\": [", "a: &x [*x]", "- [a, b]\n- {c: d}", "--- x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := FirstDocument(data, "fuzz")
		if err != nil {
			return
		}
		if !json.Valid(d.JSON) {
			t.Fatalf("invalid JSON %q", d.JSON)
		}
		if l := d.Line("entries", 0, Anywhere("image")); l < 1 {
			t.Fatalf("line %d", l)
		}
		_, _ = DetectType(data, "fuzz")
	})
}
