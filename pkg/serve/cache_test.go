package serve

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"

	"google.golang.org/protobuf/proto"
)

func digestOf(t *testing.T, fsys fs.FS) string {
	t.Helper()
	files, err := CatalogFiles(fsys)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Digest(context.Background(), fsys, files)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sameAnswers checks that two indexes answer alike.
func sameAnswers(t *testing.T, a, b *Index) {
	t.Helper()
	if a.Stats() != b.Stats() || len(a.records) != len(b.records) {
		t.Fatalf("stats %+v and %+v", a.Stats(), b.Stats())
	}
	for r := range a.records {
		ba, err := a.APIBundle(int32(r), false, true)
		if err != nil {
			t.Fatal(err)
		}
		bb, err := b.APIBundle(int32(r), false, true)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(ba, bb) {
			t.Errorf("record %d:\n%v\n%v", r, ba, bb)
		}
	}
	if !reflect.DeepEqual(a.packages, b.packages) || !reflect.DeepEqual(a.custom, b.custom) {
		t.Error("packages or custom blobs differ")
	}
}

func TestCacheRoundTrip(t *testing.T) {
	ctx := context.Background()
	fsys := testCatalog()
	dir := t.TempDir()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(t, fsys), HTTP: true}

	if _, err := CheckCache(dir, want); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty cache directory: %v", err)
	}
	built, err := BuildCache(ctx, fsys, dir, want, BuildOptions{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	have, err := CheckCache(dir, want)
	if err != nil {
		t.Fatal(err)
	}
	if have.Stats != built.Stats() || have.Created.IsZero() || !have.HTTP {
		t.Errorf("meta %+v", have)
	}
	loaded, err := LoadCache(dir, have)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	sameAnswers(t, built, loaded)
	if !reflect.DeepEqual(built.http.segs, loaded.http.segs) || !reflect.DeepEqual(built.http.pkg, loaded.http.pkg) || !loaded.http.modTime.Equal(have.Created) {
		t.Error("HTTP index differs")
	}

	// A rebuild replaces the cache and leaves nothing else behind.
	again, err := BuildCache(ctx, fsys, dir, want, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != CacheSubdir {
		t.Errorf("cache directory holds %v", ents)
	}
	// That one has no HTTP data.
	var mm *CacheMismatchError
	if _, err := CheckCache(dir, want); !errors.As(err, &mm) {
		t.Errorf("HTTP wanted, cache without: %v", err)
	}
}

func TestCacheMismatch(t *testing.T) {
	fsys := testCatalog()
	dir := t.TempDir()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(t, fsys)}
	x, err := BuildCache(context.Background(), fsys, dir, want, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x.Close()

	changed := fstest.MapFS{}
	for k, v := range fsys {
		changed[k] = v
	}
	changed["bar/catalog.json"] = &fstest.MapFile{Data: append([]byte("\n"), fsys["bar/catalog.json"].Data...)}
	if digestOf(t, changed) == want.Digest {
		t.Fatal("the digest does not see a changed file")
	}
	ignored := fstest.MapFS{}
	for k, v := range fsys {
		ignored[k] = v
	}
	ignored["bar/README.md"] = &fstest.MapFile{Data: []byte("changed")}
	if digestOf(t, ignored) != want.Digest {
		t.Error("the digest sees an ignored file")
	}

	var mm *CacheMismatchError
	w := want
	w.Digest = digestOf(t, changed)
	if _, err := CheckCache(dir, w); !errors.As(err, &mm) || mm.Have != want.Digest || mm.Want != w.Digest {
		t.Errorf("changed catalog: %v", err)
	} else if got := mm.Error(); got != `cache requires rebuild: cache reports digest as "`+want.Digest+`", but computed digest is "`+w.Digest+`"` {
		t.Errorf("message %q", got)
	}
	w = want
	w.OpmVersion = "v2"
	if _, err := CheckCache(dir, w); !errors.As(err, &mm) || mm.Reason != "cache built by opm v1, this is opm v2" {
		t.Errorf("other version: %v", err)
	}
	w = want
	w.Format = "other"
	if _, err := CheckCache(dir, w); !errors.As(err, &mm) {
		t.Errorf("other format: %v", err)
	}

	// A corrupt index is a mismatch too, never a panic.
	idx := filepath.Join(dir, CacheSubdir, "index.bin")
	data, _ := os.ReadFile(idx)
	if err := os.WriteFile(idx, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	meta, err := CheckCache(dir, want)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCache(dir, meta); !errors.As(err, &mm) {
		t.Errorf("truncated index: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, CacheSubdir, "meta.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckCache(dir, want); !errors.As(err, &mm) {
		t.Errorf("bad meta.json: %v", err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	x := buildTest(t, testCatalog(), true)
	b, err := x.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	y, err := UnmarshalIndex(b, x.data, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	y.http.modTime = x.http.modTime
	sameAnswers(t, x, y)
	if !reflect.DeepEqual(x.http, y.http) || !reflect.DeepEqual(x.records, y.records) || !reflect.DeepEqual(x.bundles, y.bundles) {
		t.Error("indexes differ")
	}
}

func FuzzUnmarshalIndex(f *testing.F) {
	dir := f.TempDir()
	x, _, err := BuildTemp(context.Background(), testCatalog(), dir, BuildOptions{HTTP: true})
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	seed, err := x.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(indexMagic))
	f.Add(append([]byte(indexMagic), 1, 3, 'a', 'b', 'c'))
	f.Fuzz(func(t *testing.T, data []byte) {
		y, err := UnmarshalIndex(data, x.data, 1<<20)
		if err != nil {
			return
		}
		// Whatever decodes must be safe to query.
		for r := range y.records {
			_, _ = y.APIBundle(int32(r), false, true)
			_ = y.IsHead(int32(r))
		}
		for _, p := range y.packages {
			for i := range p.Channels {
				if h := p.Channels[i].Head; h >= 0 {
					_ = y.BundleOf(h)
				}
			}
		}
		for g := range y.providers {
			_ = y.providerEntries(g, true)
		}
		if y.http != nil {
			buf := make([]byte, 64)
			_, _ = y.catalog().ReadAt(buf, 0)
		}
	})
}
