package declcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// byGroup splits a whole load into the configs LoadGroup must return:
// each package's blobs, in load order.
func byGroup(cfg *DeclarativeConfig) map[string]*DeclarativeConfig {
	out := map[string]*DeclarativeConfig{}
	get := func(g string) *DeclarativeConfig {
		if out[g] == nil {
			out[g] = &DeclarativeConfig{}
		}
		return out[g]
	}
	for _, p := range cfg.Packages {
		get(p.Name).Packages = append(get(p.Name).Packages, p)
	}
	for _, c := range cfg.Channels {
		get(c.Package).Channels = append(get(c.Package).Channels, c)
	}
	for _, b := range cfg.Bundles {
		get(b.Package).Bundles = append(get(b.Package).Bundles, b)
	}
	for _, d := range cfg.Deprecations {
		get(d.Package).Deprecations = append(get(d.Package).Deprecations, d)
	}
	for _, m := range cfg.Others {
		get(m.Package).Others = append(get(m.Package).Others, m)
	}
	return out
}

// checkIndex compares an index with the whole load it must reproduce:
// every group, every position and rank.
func checkIndex(t *testing.T, ix *Index, whole *DeclarativeConfig) {
	t.Helper()
	want := byGroup(whole)
	groups := ix.Groups()
	if len(groups) != len(want) {
		t.Fatalf("groups %q, want %d", groups, len(want))
	}
	for _, g := range groups {
		got, err := ix.LoadGroup(context.Background(), g)
		if err != nil {
			t.Fatalf("LoadGroup(%q): %v", g, err)
		}
		w := want[g]
		if w == nil {
			t.Fatalf("group %q not in the whole load", g)
		}
		normalizeForCompare(got)
		normalizeForCompare(w)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("LoadGroup(%q):\ngot  %+v\nwant %+v", g, got, w)
		}
	}
	// Ranks and positions: the i-th blob of a kind is the i-th of the
	// whole load's slice.
	for i := 0; i < ix.Len(); i++ {
		b := ix.Blob(i)
		var pos Position
		switch b.Kind {
		case KindPackage:
			pos = whole.Packages[b.Seq].Pos
		case KindChannel:
			pos = whole.Channels[b.Seq].Pos
		case KindBundle:
			pos = whole.Bundles[b.Seq].Pos
		case KindDeprecation:
			pos = whole.Deprecations[b.Seq].Pos
		default:
			pos = whole.Others[b.Seq].Pos
		}
		if pos != ix.Pos(i) {
			t.Errorf("blob %d (kind %d, rank %d) at %s, the whole load has it at %s", i, b.Kind, b.Seq, ix.Pos(i), pos)
		}
		// A YAML document after a JSON value on its line starts at column
		// 1 too: Find gives the first blob at a position.
		if j, ok := ix.Find(pos); !ok || ix.Pos(j) != pos || j > i {
			t.Errorf("Find(%s) = %d, %v; want %d", pos, j, ok, i)
		}
	}
}

// normalizeForCompare makes empty and nil slices alike.
func normalizeForCompare(c *DeclarativeConfig) {
	if len(c.Packages) == 0 {
		c.Packages = nil
	}
	if len(c.Channels) == 0 {
		c.Channels = nil
	}
	if len(c.Bundles) == 0 {
		c.Bundles = nil
	}
	if len(c.Deprecations) == 0 {
		c.Deprecations = nil
	}
	if len(c.Others) == 0 {
		c.Others = nil
	}
}

var indexFiles = fstest.MapFS{
	"a/catalog.yaml": {Data: []byte(`---
schema: olm.package
name: foo
defaultChannel: stable
---
# leading comment

schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v0.1.0
---
---
schema: olm.package
name: bar
--- # comment
{"schema": "olm.bundle", "package": "foo", "name": "flow", "image": "x"}
---
Schema: olm.bundle
Package: foo
Name: foo.v0.1.0
Image: quay.io/foo/foo:v0.1.0
`)},
	"b/other.json": {Data: []byte(`{"schema":"custom","package":"foo","z":1}{"schema":"custom2"}  {"schema":"olm.channel","package":"bar","name":"c"}
  {"schema":"olm.bundle","package":"bar","name":"b1","properties":[{"type":"olm.package","value":{"packageName":"bar","version":"1.0.0"}}]}
{"schema":"olm.deprecations","package":"foo","entries":[]}`)},
	"c/mixed.json": {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"baz\"}\nschema: olm.channel\npackage: baz\nname: s\n---\nschema: olm.bundle\npackage: foo\nname: foo.v9\n")},
	"d/crlf.yaml":  {Data: []byte("schema: olm.package\r\nname: crlf\r\n---\r\nschema: olm.channel\r\npackage: crlf\r\nname: x\r\n")},
	"e/nopkg.yaml": {Data: []byte("schema: olm.bundle\nname: orphan\n---\nschema: olm.package\n---\nschema: custom\nname: x\n")},
	"f/empty.yaml": {Data: []byte("---\n---\n")},
}

func TestIndexMatchesLoad(t *testing.T) {
	ctx := context.Background()
	whole, err := LoadFS(ctx, indexFiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, conc := range []int{1, 3} {
		ix, err := IndexFS(ctx, indexFiles, WithConcurrency(conc))
		if err != nil {
			t.Fatal(err)
		}
		checkIndex(t, ix, whole)
		ix.Close()
	}
	// A file read through a small window: the ranges are the same.
	withWindow(t, 7, func() {
		ix, err := IndexFS(ctx, indexFiles)
		if err != nil {
			t.Fatal(err)
		}
		checkIndex(t, ix, whole)
	})
}

func TestIndexBytesMatchesLoadReader(t *testing.T) {
	ctx := context.Background()
	for _, seed := range append(streamSeeds, string(indexFiles["a/catalog.yaml"].Data), string(indexFiles["b/other.json"].Data), string(indexFiles["c/mixed.json"].Data)) {
		whole, werr := LoadReaderContext(ctx, strings.NewReader(seed), "s")
		ix, ierr := IndexReader(ctx, strings.NewReader(seed), "s")
		if (werr == nil) != (ierr == nil) || (werr != nil && werr.Error() != ierr.Error()) {
			t.Errorf("%.40q: index error %v, load error %v", seed, ierr, werr)
			continue
		}
		if werr == nil {
			checkIndex(t, ix, whole)
		}
	}
}

func TestIndexErrorsMatchLoad(t *testing.T) {
	ctx := context.Background()
	for _, files := range []map[string]string{
		{"a.yaml": "schema: olm.package\nname: a\n", "b.json": `{"schema":`, "c.yaml": "schema: x\n--- bad\n"},
		{"a.yaml": "schema: olm.bundle\nimage: 5\n"},
		{"a.yaml": "name: no schema\n"},
		{"z/README.md": "not fbc\n", "a.yaml": "schema: olm.package\nname: a\n"},
	} {
		fsys := fstest.MapFS{}
		for n, d := range files {
			fsys[n] = &fstest.MapFile{Data: []byte(d)}
		}
		_, lerr := LoadFS(ctx, fsys)
		_, ierr := IndexFS(ctx, fsys)
		if lerr == nil || ierr == nil || lerr.Error() != ierr.Error() {
			t.Errorf("%v: index error %v, load error %v", files, ierr, lerr)
		}
	}
}

func TestIndexDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, f := range indexFiles {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := LoadDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := IndexDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkIndex(t, ix, whole)
	data, err := ix.ReadBlob(ctx, 1)
	if err != nil || !bytes.HasPrefix(data, []byte("# leading comment\n\nschema: olm.channel")) || !bytes.HasSuffix(data, []byte("foo.v0.1.0\n---\n")) {
		t.Errorf("ReadBlob(1) = %q, %v", data, err)
	}

	// A single file, as LoadPath.
	single := filepath.Join(dir, "b", "other.json")
	wp, err := LoadPath(ctx, single)
	if err != nil {
		t.Fatal(err)
	}
	ip, err := IndexPath(ctx, single)
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, ip, wp)
	ip.Close()

	// A file that changes between the passes is refused.
	p := filepath.Join(dir, "a", "catalog.yaml")
	if err := os.WriteFile(p, []byte("schema: olm.package\nname: foo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.LoadGroup(ctx, "foo"); !errors.Is(err, ErrChanged) {
		t.Errorf("LoadGroup after a change: %v, want ErrChanged", err)
	}

	if _, err := IndexDir(ctx, single); err == nil || err.Error() != fmt.Sprintf("%q is not a directory", single) {
		t.Errorf("IndexDir(file) = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := IndexDir(cctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("IndexDir(cancelled) = %v", err)
	}
}

// TestIndexConformanceCatalogs indexes every catalog of the shared
// conformance suite (real third-party layouts) and compares each package
// with the whole load.
func TestIndexConformanceCatalogs(t *testing.T) {
	root := "../../../shared/conformance"
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", root)
	}
	ctx := context.Background()
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		whole, lerr := LoadDir(ctx, dir)
		ix, ierr := IndexDir(ctx, dir)
		if (lerr == nil) != (ierr == nil) || (lerr != nil && lerr.Error() != ierr.Error()) {
			t.Errorf("%s: index error %v, load error %v", dir, ierr, lerr)
			continue
		}
		if lerr == nil {
			checkIndex(t, ix, whole)
			ix.Close()
		}
	}
}

// FuzzIndexBytes indexes arbitrary streams: the index fails exactly as the
// loader does, and otherwise gives back every package as the loader has it.
func FuzzIndexBytes(f *testing.F) {
	for _, s := range streamSeeds {
		f.Add([]byte(s))
	}
	for _, file := range indexFiles {
		f.Add(file.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		whole, werr := LoadReaderContext(ctx, bytes.NewReader(data), "s")
		ix, ierr := IndexBytes(ctx, data, "s")
		if (werr == nil) != (ierr == nil) || (werr != nil && werr.Error() != ierr.Error()) {
			t.Fatalf("index error %v, load error %v", ierr, werr)
		}
		if werr == nil {
			checkIndex(t, ix, whole)
		}
	})
}
