package docpath

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	got := Parse(`entries[3].skips[1].x."a.b"[x]`)
	want := []Elem{{Key: "entries", Index: -1}, {Index: 3}, {Key: "skips", Index: -1}, {Index: 1},
		{Key: "x", Index: -1}, {Key: "a.b", Index: -1}, {Key: "x", Index: -1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v, want %+v", got, want)
	}
}

func TestLocateYAML(t *testing.T) {
	doc := []byte("a:\n  b:\n  - x\n  - y: 1\n    \"c.d\": 2\n")
	tests := []struct {
		path             string
		line, col, found int
	}{
		{"a.b[1].y", 4, 8, 4},
		{`a.b[1]."c.d"`, 5, 12, 4},
		{"a.b[7]", 3, 3, 2},
		{"A.B", 3, 3, 2}, // keys match case-insensitively, as the loader types blobs
	}
	for _, tt := range tests {
		line, col, found := LocateYAML(doc, Parse(tt.path))
		if line != tt.line || col != tt.col || found != tt.found {
			t.Errorf("%s: %d:%d (%d found), want %d:%d (%d)", tt.path, line, col, found, tt.line, tt.col, tt.found)
		}
	}
	if l, _, _ := LocateYAML([]byte("a: [\n"), Parse("a")); l != 0 {
		t.Errorf("a document that does not parse: line %d", l)
	}
}
