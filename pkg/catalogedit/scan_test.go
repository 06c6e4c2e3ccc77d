package catalogedit

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// loadedBlobs returns the blobs the loader finds in data, in file order,
// as normalised JSON, with their lines and columns.
func loadedBlobs(t testing.TB, data []byte) ([]declcfg.Position, [][]byte, bool) {
	cfg, err := declcfg.LoadReader(bytes.NewReader(data), "f")
	if err != nil {
		return nil, nil, false
	}
	type pb struct {
		pos  declcfg.Position
		blob []byte
	}
	var all []pb
	add := func(pos declcfg.Position, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, pb{pos, b})
	}
	for _, x := range cfg.Packages {
		add(x.Pos, x)
	}
	for _, x := range cfg.Channels {
		add(x.Pos, x)
	}
	for _, x := range cfg.Bundles {
		add(x.Pos, x)
	}
	for _, x := range cfg.Deprecations {
		add(x.Pos, x)
	}
	for _, x := range cfg.Others {
		add(x.Pos, x.Blob)
	}
	// order by position
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && (all[j].pos.Line < all[j-1].pos.Line || all[j].pos.Line == all[j-1].pos.Line && all[j].pos.Column < all[j-1].pos.Column); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	var pos []declcfg.Position
	var blobs [][]byte
	for _, x := range all {
		pos = append(pos, x.pos)
		blobs = append(blobs, x.blob)
	}
	return pos, blobs, true
}

// checkScan checks the scanner against the loader on data: same blobs at
// the same lines, each span decoding alone to the loader's blob, spans in
// order and inside their cuts, and removing one blob leaving the others
// as the loader reads them.
func checkScan(t *testing.T, data []byte) { checkScanOpts(t, data, true) }

func checkScanOpts(t *testing.T, data []byte, removals bool) {
	t.Helper()
	l, err := Scan(data)
	pos, blobs, ok := loadedBlobs(t, data)
	if err != nil {
		return // refusing is always allowed
	}
	prevEnd := 0
	for i, s := range l.Blobs {
		if s.Start < 0 || s.End > len(data) || s.Start > s.End || s.CutStart > s.Start || s.CutEnd < s.End || s.CutStart < prevEnd {
			t.Fatalf("span %d out of order or bounds: %+v (previous cut end %d)", i, s, prevEnd)
		}
		prevEnd = s.CutEnd
	}
	if !ok {
		return
	}
	if len(l.Blobs) != len(pos) {
		t.Fatalf("scanner found %d blobs, loader %d", len(l.Blobs), len(pos))
	}
	for i, s := range l.Blobs {
		if s.Line != pos[i].Line || l.Format == FormatJSON && s.Column != pos[i].Column {
			t.Fatalf("blob %d: scanner at %d:%d, loader at %d:%d", i, s.Line, s.Column, pos[i].Line, pos[i].Column)
		}
		one, err := declcfg.LoadReader(bytes.NewReader(data[s.Start:s.End]), "f")
		if err != nil {
			t.Fatalf("blob %d does not load alone: %v\n%q", i, err, data[s.Start:s.End])
		}
		_, got, _ := loadedBlobs(t, data[s.Start:s.End])
		if len(got) != 1 || !bytes.Equal(got[0], blobs[i]) {
			t.Fatalf("blob %d alone reads %s, in the file %s", i, got, blobs[i])
		}
		_ = one
	}
	if len(l.Blobs) < 2 || !removals {
		return
	}
	for i, s := range l.Blobs {
		cut := append(append([]byte(nil), data[:s.CutStart]...), data[s.CutEnd:]...)
		_, rest, ok := loadedBlobs(t, cut)
		if !ok {
			t.Fatalf("removing blob %d leaves a file that does not load:\n%s", i, cut)
		}
		want := append(append([][]byte(nil), blobs[:i]...), blobs[i+1:]...)
		if len(rest) != len(want) {
			t.Fatalf("removing blob %d leaves %d blobs, want %d", i, len(rest), len(want))
		}
		for j := range want {
			if !bytes.Equal(rest[j], want[j]) {
				t.Fatalf("removing blob %d changes blob %d", i, j)
			}
		}
	}
}

var scanCases = map[string]string{
	"yaml":             "schema: a\nname: x\n---\nschema: b\n",
	"yaml leading sep": "---\nschema: a\n---\n# about b\nschema: b\nname: y # trailing\n# tail\n",
	"yaml empty docs":  "---\n---\nschema: a\n---\n---\nschema: b\n---\n",
	"yaml crlf":        "---\r\nschema: a\r\nentries:\r\n- name: x\r\n---\r\nschema: b\r\n",
	"yaml no newline":  "schema: a\n---\nschema: b",
	"yaml sep comment": "schema: a\n--- # next\nschema: b\n",
	"json":             "{\"schema\":\"a\"}\n{\"schema\":\"b\",\"x\":[1,2]}\n",
	"json one line":    "{\"schema\":\"a\"}{\"schema\":\"b\"} {\"schema\":\"c\"}",
	"json pretty":      "{\n    \"schema\": \"a\",\n    \"entries\": [\n        {\"name\": \"x\"}\n    ]\n}\n{\n    \"schema\": \"b\"\n}\n",
	"json strings":     "{\"schema\":\"a\",\"s\":\"}{\\\"\\\\\"}\n{\"schema\":\"b\"}",
}

func TestScan(t *testing.T) {
	for name, in := range scanCases {
		t.Run(name, func(t *testing.T) {
			l, err := Scan([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Blobs) < 2 {
				t.Fatalf("found %d blobs", len(l.Blobs))
			}
			checkScan(t, []byte(in))
		})
	}
}

func TestScanRefusesMixedStream(t *testing.T) {
	_, err := Scan([]byte("{\"schema\":\"a\"}\nschema: b\n"))
	if err == nil || !strings.Contains(err.Error(), "continues as YAML") {
		t.Fatalf("got %v", err)
	}
}

// conformanceDir is ../shared/conformance relative to the repository root.
const conformanceDir = "../../../shared/conformance"

// TestScanConformance checks the scanner against the loader on every file
// of every conformance catalog.
func TestScanConformance(t *testing.T) {
	root := filepath.Join(conformanceDir, "catalog")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("conformance suite not found at %s", root)
	}
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, string(filepath.Separator)+"input"+string(filepath.Separator)) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// Large files only get the count and the lines checked: YAML
		// parsing dominates, and the race detector (which has nothing to
		// watch in this single-threaded scanner) multiplies it.
		limit := 2 << 20
		if testing.Short() || raceEnabled {
			limit = 24 << 10
		}
		if len(data) > limit {
			return nil
		}
		t.Run(strings.TrimPrefix(p, root), func(t *testing.T) {
			if len(data) < 128<<10 {
				if _, err := Scan(data); err != nil {
					t.Fatalf("scan: %v", err)
				}
				checkScanOpts(t, data, len(data) < 16<<10)
				return
			}
			l, err := Scan(data)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			pos, _, ok := loadedBlobs(t, data)
			if ok && len(l.Blobs) != len(pos) {
				t.Fatalf("scanner found %d blobs, loader %d", len(l.Blobs), len(pos))
			}
			for i := range pos {
				if l.Blobs[i].Line != pos[i].Line {
					t.Fatalf("blob %d: scanner at line %d, loader at %d", i, l.Blobs[i].Line, pos[i].Line)
				}
			}
		})
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no catalog file checked")
	}
}

func TestScanTemplate(t *testing.T) {
	for name, in := range map[string]string{
		"yaml":          "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n# about the channel\n- schema: olm.channel\n  package: a\n  entries:\n  - name: x\n",
		"yaml indented": "schema: olm.template.basic\nentries:\n  - schema: olm.package\n    name: a\n\n  - schema: olm.bundle\n    image: i\nother: 1\n",
		"json":          "{\"schema\": \"olm.template.basic\", \"entries\": [\n  {\"schema\": \"olm.package\", \"name\": \"a\"},\n  {\"schema\": \"olm.bundle\", \"image\": \"i\"}\n]}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if !IsTemplate([]byte(in)) {
				t.Fatal("not detected as a template")
			}
			l, err := ScanTemplate([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Blobs) != 2 {
				t.Fatalf("found %d entries", len(l.Blobs))
			}
			for i, s := range l.Blobs {
				text := in[s.Start:s.End]
				if !strings.Contains(text, "schema") || strings.Contains(text, "about") || strings.Contains(text, "other") {
					t.Errorf("entry %d: %q", i, text)
				}
			}
		})
	}
}

func FuzzScan(f *testing.F) {
	for _, in := range scanCases {
		f.Add([]byte(in))
	}
	f.Add([]byte("schema: a\nentries:\n- name: x\n  skips:\n  - y\n---\nschema: b\n"))
	f.Add([]byte("{\"schema\":\"a\"}\nschema: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		checkScan(t, data)
	})
}

func FuzzScanTemplate(f *testing.F) {
	f.Add([]byte("schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n- schema: olm.bundle\n  image: i\n"))
	f.Add([]byte("schema: olm.template.basic\nentries:\n  - {schema: a}\n  - schema: b\n    x: |\n      text\n      # not a comment\n"))
	f.Add([]byte("{\"schema\": \"olm.template.basic\", \"entries\": [{\"schema\": \"a\"}, {\"schema\": \"b\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		l, err := ScanTemplate(data)
		if err != nil {
			return
		}
		prev := 0
		for i, s := range l.Blobs {
			if s.Start < prev || s.End > len(data) || s.Start > s.End || s.CutStart > s.Start || s.CutEnd < s.End {
				t.Fatalf("entry %d out of order or bounds: %+v", i, s)
			}
			prev = s.End
			// every entry reads back alone (the scanner checks YAML
			// entries itself; JSON ones are exact)
			if l.Format == FormatJSON {
				var v any
				if err := json.Unmarshal(data[s.Start:s.End], &v); err != nil {
					t.Fatalf("entry %d: %v", i, err)
				}
			} else if _, err := valueFromYAML(data[s.Start:s.End]); err != nil {
				t.Fatalf("entry %d: %v", i, err)
			}
		}
	})
}

// FuzzJSONParser checks the positional JSON parser against encoding/json,
// and the node-less skip against the parser.
func FuzzJSONParser(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"\u00e9\"x"}`, `[]`, `-0.5e+3`, `{"a":}`, `"\ud800"`, `{"a":1}{"b":2}`, `[1,]`, `tru`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n, end, err := parseJSON(data, 0)
		send, serr := skipJSON(data, 0)
		if (err == nil) != (serr == nil) || err == nil && end != send {
			t.Fatalf("parse (%v, %d) and skip (%v, %d) disagree", err, end, serr, send)
		}
		if err != nil {
			return
		}
		if !json.Valid(data[:end]) {
			t.Fatalf("parser accepted invalid JSON %q", data[:end])
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		if dec.Decode(&v) == nil && int(dec.InputOffset()) != end {
			t.Fatalf("value ends at %d, encoding/json says %d", end, dec.InputOffset())
		}
		if c, err := canonical(n.value(data)); err == nil {
			want, err := canonicalJSON(data[:end])
			if err != nil || !bytes.Equal(c, want) {
				t.Fatalf("value %s, encoding/json %s", c, want)
			}
		}
	})
}
