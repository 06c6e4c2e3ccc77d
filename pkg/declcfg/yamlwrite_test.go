package declcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// randJSON builds a random JSON value: nested objects and arrays, strings
// that yaml.v2 quotes, folds or writes as literal blocks, numbers of every
// kind, keys that need quoting or sort as numbers.
func randJSON(r *rand.Rand, depth int) any {
	if depth > 0 {
		switch r.IntN(7) {
		case 0, 1:
			m := map[string]any{}
			for range r.IntN(6) {
				m[randString(r, true)] = randJSON(r, depth-1)
			}
			return m
		case 2, 3:
			a := make([]any, r.IntN(6))
			for i := range a {
				a[i] = randJSON(r, depth-1)
			}
			return a
		}
	}
	switch r.IntN(8) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number([]string{"0", "-1", "12345678901234567890", "1.5", "1e3", "-0.0", "3.0", "1E-7", "100000000000000000000000", "-0", "42", "999999999999999999", "-999999999999999999"}[r.IntN(13)])
	default:
		return randString(r, false)
	}
}

var yamlWords = []string{"a", "b10", "b9", "B", "x_1", "true", "null", "~", "- x", "#c", "a: b", "'q'", "\"", "\\", "\t", "\n", " ", "é", "✓", "0x1F", "1.0", "010", "yes", "<<", "?", "&a", "*a", "!t", "%", "@", "`", "0", "00", "1_000"}

func randString(r *rand.Rand, key bool) string {
	var b strings.Builder
	n := r.IntN(6)
	if r.IntN(10) == 0 {
		n = 20 + r.IntN(60) // long: folded at 80 columns, or a "? " key
	}
	for i := range n {
		if i > 0 && r.IntN(2) == 0 {
			b.WriteByte(' ')
		}
		b.WriteString(yamlWords[r.IntN(len(yamlWords))])
	}
	return b.String()
}

// consistentKeys reports whether every object in v has keys yaml.v2
// orders the same way whatever the map order (see yamlKeysOrdered):
// otherwise upstream's output itself varies.
func consistentKeys(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k, x := range t {
			keys = append(keys, k)
			if !consistentKeys(x) {
				return false
			}
		}
		sort.Slice(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
		return yamlKeysOrdered(keys)
	case []any:
		for _, x := range t {
			if !consistentKeys(x) {
				return false
			}
		}
	}
	return true
}

// checkPieces compares the pieced conversion of a JSON object with
// JSONToYAML's, for every piece size down to one byte.
func checkPieces(t *testing.T, compact []byte) {
	t.Helper()
	var v any
	if json.Unmarshal(compact, &v) == nil && !consistentKeys(v) {
		return
	}
	want, err := yaml.JSONToYAML(compact)
	defer func(p int) { yamlPiece = p }(yamlPiece)
	for _, piece := range []int{1, 8, 40, 200} {
		yamlPiece = piece
		var got bytes.Buffer
		gerr := writeYAMLBlob(&got, compact)
		if (err != nil) != (gerr != nil) {
			t.Fatalf("piece %d: error %v, JSONToYAML's %v\n%s", piece, gerr, err, compact)
		}
		if err == nil && got.String() != string(want) {
			t.Fatalf("piece %d of %s:\ngot:\n%s\nwant:\n%s", piece, compact, got.String(), want)
		}
	}
}

func TestYAMLPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		v := map[string]any{"schema": "x", "v": randJSON(r, 5), randString(r, true): randJSON(r, 4)}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		checkPieces(t, bytes.TrimSpace(buf.Bytes()))
	}
	// Deep nesting of sequences and mappings in each other.
	checkPieces(t, []byte(`{"a":[[[[{"b":[[{"c":{"d":[1,2,{"e":[[3]]}]}}]],"a b":[["x y z"]]}]]]],"z":{"y":{"x":[{"w":[{"v":1}]}]}}}`))
}

// TestYAMLKeyOrder checks yamlKeyLess against yaml.v2's own sort.
func TestYAMLKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		m := map[string]int{}
		var keys []string
		for range 2 + r.IntN(8) {
			k := randString(r, true)
			if r.IntN(3) == 0 {
				k = []string{"a1", "a01", "a10", "a2", "a001", "0", "00", "1", "b", "B", "_", "é", "a-1", "a0b", "10x", "x10"}[r.IntN(16)]
			}
			if _, ok := m[k]; !ok && k != "<<" {
				m[k] = 0
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
		if !yamlKeysOrdered(keys) {
			continue // yaml.v2's order then depends on the map's
		}
		out, err := yaml2.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var ms yaml2.MapSlice
		if err := yaml2.Unmarshal(out, &ms); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, it := range ms {
			want = append(want, it.Key.(string))
		}
		sort.Slice(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
		if strings.Join(keys, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("got %q, yaml.v2 %q", keys, want)
		}
	}
}

// FuzzYAMLPieces: for any JSON object, the pieced conversion is
// JSONToYAML's, byte for byte.
func FuzzYAMLPieces(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"c d"}],"b":{"c":[[1],[2]]}}`))
	f.Add([]byte(`{"k":["` + strings.Repeat("word ", 30) + `",{"x":"y\nz"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if d.Decode(&v) != nil {
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) != nil {
			return
		}
		checkPieces(t, bytes.TrimSpace(buf.Bytes()))
	})
}

// TestYAMLPiecesLarge: a blob well over the piece size, with a flat array
// of scalars (the fast path), long strings and nested containers, is
// converted exactly as JSONToYAML converts it whole.
func TestYAMLPiecesLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString(`{"schema":"x.custom","package":"p","flat":[`)
	for i := range 40000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString([]string{"1", "-20", "true", "null", "1.5", `"a b"`, `"1"`, "0"}[r.IntN(8)])
	}
	b.WriteString(`],"nested":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		v, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("item-%d", i), "tags": []any{randString(r, false), i, []any{i, "x"}}, "text": strings.Repeat("word ", r.IntN(40))})
		b.Write(v)
	}
	b.WriteString(`]}`)
	compact := []byte(b.String())
	if len(compact) < 4*yamlPiece {
		t.Fatalf("only %d bytes", len(compact))
	}
	want, err := yaml.JSONToYAML(compact)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := writeYAMLBlob(&got, compact); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("differs from JSONToYAML (%d and %d bytes)", got.Len(), len(want))
	}
}
