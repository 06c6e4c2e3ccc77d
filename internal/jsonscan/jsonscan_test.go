package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSkipValue(t *testing.T) {
	cases := []struct {
		in   string
		at   int
		want int
	}{
		{`"a"`, 0, 3},
		{`"a\"b",1`, 0, 6},
		{`"a\\",1`, 0, 5},
		{`{"a":[1,{"b":"]"}]},2`, 0, 19},
		{`[1, 2 ] x`, 0, 7},
		{`123,`, 0, 3},
		{`true}`, 0, 4},
		{`-1.5e3 `, 0, 6},
		{`null`, 0, 4},
		{`{"a":1`, 0, -1},
		{`"abc`, 0, -1},
		{`"ab\`, 0, -1},
		{``, 0, -1},
		{`x:"a"`, 2, 5},
	}
	for _, tc := range cases {
		if got := SkipValue([]byte(tc.in), tc.at); got != tc.want {
			t.Errorf("SkipValue(%q, %d) = %d, want %d", tc.in, tc.at, got, tc.want)
		}
	}
}

func TestSkipSpace(t *testing.T) {
	if got := SkipSpace([]byte(" \t\r\nx "), 0); got != 4 {
		t.Errorf("SkipSpace = %d, want 4", got)
	}
	if got := SkipSpace([]byte("  "), 1); got != 2 {
		t.Errorf("SkipSpace at end = %d, want 2", got)
	}
}

// FuzzSkipValue checks SkipValue against encoding/json on valid JSON: the
// extent of a value followed by a delimiter is the value, whatever it holds.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `{"a":[1,"}"]}`, `-0.5e-3`, `[]`, `"\\\\"`, `{"k":"\u005c"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := bytes.TrimSpace([]byte(s))
		if !json.Valid(b) {
			return
		}
		in := append(append([]byte{}, b...), ',', ' ')
		if got := SkipValue(in, 0); got != len(b) {
			t.Fatalf("SkipValue(%q) = %d, want %d", in, got, len(b))
		}
		if b[0] == '"' {
			if got := SkipString(in, 0); got != len(b) {
				t.Fatalf("SkipString(%q) = %d, want %d", in, got, len(b))
			}
		}
	})
}
