package yamlorjson

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// refSplitAll is a line-by-line transcription of apimachinery's YAMLReader
// over its LineReader (bufio.Reader.ReadLine), returning every document.
// keep=false drops separator lines before a document's content.
func refSplitAll(data []byte, keep bool) ([]string, error) {
	var docs []string
	var buf []byte
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else {
			line, data = data, nil
		}
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := strings.TrimSpace(string(line[3:]))
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return docs, errors.New("invalid separator")
			}
			if len(buf) != 0 {
				docs = append(docs, string(buf))
				buf = nil
				continue
			}
			if !keep {
				continue
			}
		}
		buf = append(append(buf, line...), '\n')
	}
	if len(buf) != 0 {
		docs = append(docs, string(buf))
	}
	return docs, nil
}

// splitAll runs Split over data, feeding it one byte more at a time when
// chunked (to exercise the "more" path), and returns every document.
func splitAll(t *testing.T, s Splitter, data []byte, chunked bool) ([]string, error) {
	var docs []string
	off, avail := 0, len(data)
	if chunked {
		avail = 0
	}
	for {
		atEOF := avail == len(data)
		doc, adv, more, err := s.Split(data[off:avail], atEOF)
		if err != nil {
			return docs, err
		}
		if more {
			if atEOF {
				t.Fatalf("more data asked for at EOF (off %d of %q)", off, data)
			}
			avail++
			continue
		}
		if doc.Data != nil {
			if doc.Start < 0 || off+doc.Start > len(data) {
				t.Fatalf("start %d out of range", doc.Start)
			}
			docs = append(docs, string(doc.Data))
		}
		off += adv
		if off >= len(data) {
			return docs, nil
		}
		if adv == 0 {
			t.Fatalf("no progress at %d of %q", off, data)
		}
		if avail < off {
			avail = off
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		keep     bool
		want     []string
		wantErr  bool
	}{
		{name: "Plain", in: "a: 1\nb: 2", want: []string{"a: 1\nb: 2\n"}},
		{name: "LeadingSeparatorKept", keep: true, in: "---\na: 1\n---\nb: 2\n", want: []string{"---\na: 1\n", "b: 2\n"}},
		{name: "LeadingSeparatorDropped", in: "---\na: 1\n---\nb: 2\n", want: []string{"a: 1\n", "b: 2\n"}},
		{name: "BareSeparatorsKept", keep: true, in: "---\n---\n", want: []string{"---\n"}},
		{name: "BareSeparatorsDropped", in: "---\n---\n"},
		{name: "SeparatorComment", in: "a: 1\n--- # next\nb: 2\n", want: []string{"a: 1\n", "b: 2\n"}},
		{name: "CRLF", in: "a: 1\r\n---\r\nb: 2\r\n", want: []string{"a: 1\n", "b: 2\n"}},
		{name: "LastLineCRKept", in: "a\r", want: []string{"a\r\n"}},
		{name: "BlankLinesAreADocument", in: "\n\n", want: []string{"\n\n"}},
		{name: "BadSeparator", in: "a: 1\n---x\n", want: nil, wantErr: true},
		{name: "Empty", in: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunked := range []bool{false, true} {
				got, err := splitAll(t, Splitter{KeepLeadingSeparator: tc.keep}, []byte(tc.in), chunked)
				if (err != nil) != tc.wantErr {
					t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
					t.Errorf("chunked=%v: got %q, want %q", chunked, got, tc.want)
				}
			}
		})
	}
}

func TestSplitAliasesCleanDocuments(t *testing.T) {
	data := []byte("a: 1\n---\nb: 2\n")
	doc, adv, _, err := Splitter{}.Split(data, true)
	if err != nil || adv != 9 || doc.Start != 0 {
		t.Fatalf("got %+v %d %v", doc, adv, err)
	}
	if &doc.Data[0] != &data[0] {
		t.Error("a document of plain lines is copied")
	}
}

func TestSeparatorErrorOffset(t *testing.T) {
	_, _, _, err := Splitter{}.Split([]byte("a: 1\n--- x\n"), true)
	var se *SeparatorError
	if !errors.As(err, &se) || se.Offset != 5 || se.Error() != "invalid Yaml document separator: x" {
		t.Fatalf("got %v", err)
	}
}

func TestIsJSON(t *testing.T) {
	for _, tc := range []struct {
		in    string
		sniff int
		want  bool
	}{
		{`{"a":1}`, BundleSniffLen, true},
		{"  \n\t{", BundleSniffLen, true},
		{"\u00a0{", BundleSniffLen, true}, // unicode.IsSpace, as upstream
		{strings.Repeat(" ", 30) + "{", BundleSniffLen, false},
		{strings.Repeat(" ", 30) + "{", CatalogSniffLen, true},
		{"a: {", CatalogSniffLen, false},
		{"[1]", CatalogSniffLen, false},
		{"", CatalogSniffLen, false},
	} {
		if got := IsJSON([]byte(tc.in), tc.sniff); got != tc.want {
			t.Errorf("IsJSON(%q, %d) = %v", tc.in, tc.sniff, got)
		}
	}
}

// FuzzSplit checks Split, whole and fed byte by byte, against the
// transcription of apimachinery's reader, in both modes.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: 2\n", "---\r\na\r\n---", "\n---\n", "---", "a\n---x\n", "x\r", "a\n--- #c\n", "---\n---\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, keep bool) {
		if len(data) > 4096 {
			return
		}
		want, werr := refSplitAll(data, keep)
		for _, chunked := range []bool{false, true} {
			got, err := splitAll(t, Splitter{KeepLeadingSeparator: keep}, data, chunked)
			if (err != nil) != (werr != nil) || strings.Join(got, "\x00|") != strings.Join(want, "\x00|") || len(got) != len(want) {
				t.Fatalf("Split(%q, keep=%v, chunked=%v) = %q, %v; want %q, %v", data, keep, chunked, got, err, want, werr)
			}
		}
	})
}

func TestKeyString(t *testing.T) {
	cases := []struct {
		in   any
		want string
		ok   bool
	}{
		{"a", "a", true},
		{7, "7", true},
		{int64(-9), "-9", true},
		{1.5, "1.5", true},
		{0.1, "0.1", true},
		{math.Inf(1), ".inf", true},
		{math.Inf(-1), "-.inf", true},
		{math.NaN(), ".nan", true},
		{true, "true", true},
		{[]any{1}, "", false},
		{nil, "", false},
	}
	for _, tc := range cases {
		got, ok := KeyString(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("KeyString(%v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
