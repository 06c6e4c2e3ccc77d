package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/opmkit/opm/pkg/declcfg"
)

func digestOf(t testing.TB, fsys fs.FS) string {
	t.Helper()
	files, err := declcfg.ListFiles(context.Background(), fsys)
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

// loadCache opens and loads the cache in dir for want.
func loadCache(ctx context.Context, dir string, want CacheMeta) (*Index, CacheMeta, error) {
	c, err := OpenCache(ctx, dir, want)
	if err != nil {
		return nil, CacheMeta{}, err
	}
	defer c.Close()
	if err := c.Check(want.Digest); err != nil {
		return nil, c.Meta(), err
	}
	x, err := c.Load()
	return x, c.Meta(), err
}

func TestCacheRoundTrip(t *testing.T) {
	ctx := context.Background()
	fsys := testCatalog()
	dir := t.TempDir()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(t, fsys), HTTP: true}

	if _, err := OpenCache(ctx, dir, want); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty cache directory: %v", err)
	}
	if _, err := OpenCache(ctx, filepath.Join(dir, "none"), want); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no cache directory: %v", err)
	}
	built, err := BuildCache(ctx, fsys, dir, want, BuildOptions{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	loaded, have, err := loadCache(ctx, dir, want)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if have.Stats != built.Stats() || have.Created.IsZero() || !have.HTTP || have.Seal != have.seal() || have.DataSize == 0 {
		t.Errorf("meta %+v", have)
	}
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
	if _, err := OpenCache(ctx, dir, want); !errors.As(err, &mm) {
		t.Errorf("HTTP wanted, cache without: %v", err)
	}
}

func TestCacheMismatch(t *testing.T) {
	ctx := context.Background()
	fsys := testCatalog()
	dir := t.TempDir()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(t, fsys)}
	x, err := BuildCache(ctx, fsys, dir, want, BuildOptions{})
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
	if _, _, err := loadCache(ctx, dir, w); !errors.As(err, &mm) || mm.Have != want.Digest || mm.Want != w.Digest {
		t.Errorf("changed catalog: %v", err)
	} else if got := mm.Error(); got != `cache requires rebuild: cache reports digest as "`+want.Digest+`", but computed digest is "`+w.Digest+`"` {
		t.Errorf("message %q", got)
	}
	w = want
	w.OpmVersion = "v2"
	if _, err := OpenCache(ctx, dir, w); !errors.As(err, &mm) || mm.Reason != "cache built by opm v1, this is opm v2" {
		t.Errorf("other version: %v", err)
	}
	w = want
	w.Format = "other"
	if _, err := OpenCache(ctx, dir, w); !errors.As(err, &mm) {
		t.Errorf("other format: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, CacheSubdir, "meta.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCache(ctx, dir, want); !errors.As(err, &mm) {
		t.Errorf("bad meta.json: %v", err)
	}
}

// TestCacheHostile: a cache directory is untrusted input. Whatever was
// done to it, loading it either gives the index that was built or a
// *CacheMismatchError saying what is wrong, at once: it never serves
// edited content or a file outside the cache directory, never blocks on a
// FIFO, and never reads a file past its limit.
func TestCacheHostile(t *testing.T) {
	ctx := context.Background()
	fsys := testCatalog()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(t, fsys), HTTP: true}
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	if err := os.WriteFile(secret, []byte("TOP-SECRET host file"), 0o600); err != nil {
		t.Fatal(err)
	}

	fresh := func(t *testing.T) (dir, sub string) {
		dir = t.TempDir()
		x, err := BuildCache(ctx, fsys, dir, want, BuildOptions{HTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		return dir, filepath.Join(dir, CacheSubdir)
	}
	read := func(t *testing.T, p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(t *testing.T, p string, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resealMeta := func(t *testing.T, sub string, edit func(m *CacheMeta)) {
		var m CacheMeta
		if err := json.Unmarshal(read(t, filepath.Join(sub, "meta.json")), &m); err != nil {
			t.Fatal(err)
		}
		edit(&m)
		m.Seal = m.seal()
		b, _ := json.Marshal(m)
		write(t, filepath.Join(sub, "meta.json"), b)
	}

	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, dir, sub string)
		want  string // in the error; "" = loads fine
	}{
		{"untouched", func(*testing.T, string, string) {}, ""},
		{"data.bin links out of the cache directory", func(t *testing.T, dir, sub string) {
			os.Remove(filepath.Join(sub, "data.bin"))
			if err := os.Symlink(secret, filepath.Join(sub, "data.bin")); err != nil {
				t.Skip(err)
			}
		}, "open opm-serve/data.bin: a symbolic link leads outside"},
		{"opm-serve links out of the cache directory", func(t *testing.T, dir, sub string) {
			other := t.TempDir()
			if err := os.Rename(sub, filepath.Join(other, CacheSubdir)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(other, CacheSubdir), sub); err != nil {
				t.Skip(err)
			}
		}, "opm-serve/meta.json: a symbolic link leads outside"},
		{"data.bin links inside the cache directory", func(t *testing.T, dir, sub string) {
			if err := os.Rename(filepath.Join(sub, "data.bin"), filepath.Join(dir, "data.elsewhere")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../data.elsewhere", filepath.Join(sub, "data.bin")); err != nil {
				t.Skip(err)
			}
		}, ""},
		{"data.bin is a FIFO", func(t *testing.T, dir, sub string) {
			os.Remove(filepath.Join(sub, "data.bin"))
			if err := syscall.Mkfifo(filepath.Join(sub, "data.bin"), 0o600); err != nil {
				t.Skip(err)
			}
		}, "open opm-serve/data.bin: not a regular file (a named pipe)"},
		{"index.bin is a FIFO", func(t *testing.T, dir, sub string) {
			os.Remove(filepath.Join(sub, "index.bin"))
			if err := syscall.Mkfifo(filepath.Join(sub, "index.bin"), 0o600); err != nil {
				t.Skip(err)
			}
		}, "open opm-serve/index.bin: not a regular file (a named pipe)"},
		{"meta.json is a FIFO", func(t *testing.T, dir, sub string) {
			os.Remove(filepath.Join(sub, "meta.json"))
			if err := syscall.Mkfifo(filepath.Join(sub, "meta.json"), 0o600); err != nil {
				t.Skip(err)
			}
		}, "open opm-serve/meta.json: not a regular file (a named pipe)"},
		{"data.bin is /dev/zero through a link", func(t *testing.T, dir, sub string) {
			os.Remove(filepath.Join(sub, "data.bin"))
			if err := os.Symlink("/dev/zero", filepath.Join(sub, "data.bin")); err != nil {
				t.Skip(err)
			}
		}, "open opm-serve/data.bin: a symbolic link leads outside"},
		{"same-length edit of index.bin", func(t *testing.T, dir, sub string) {
			p := filepath.Join(sub, "index.bin")
			b := read(t, p)
			i := bytes.Index(b, []byte("quay.io/foo"))
			if i < 0 {
				t.Fatal("no image in the index")
			}
			copy(b[i:], "evil.io/foo")
			write(t, p, b)
		}, "opm-serve/index.bin does not match the cache's meta.json"},
		{"invalid UTF-8 in index.bin", func(t *testing.T, dir, sub string) {
			p := filepath.Join(sub, "index.bin")
			b := read(t, p)
			i := bytes.Index(b, []byte("quay.io/foo"))
			b[i] = 0xff
			write(t, p, b)
		}, "opm-serve/index.bin does not match"},
		{"swapped data.bin", func(t *testing.T, dir, sub string) {
			p := filepath.Join(sub, "data.bin")
			b := read(t, p)
			for i := range b {
				if b[i] == 'a' {
					b[i] = 'b'
				}
			}
			write(t, p, b)
		}, "opm-serve/data.bin does not match the cache's meta.json"},
		{"data.bin of another size", func(t *testing.T, dir, sub string) {
			p := filepath.Join(sub, "data.bin")
			write(t, p, append(read(t, p), "more"...))
		}, "opm-serve/data.bin has "},
		{"edited meta.json", func(t *testing.T, dir, sub string) {
			p := filepath.Join(sub, "meta.json")
			b := bytes.Replace(read(t, p), []byte(`"created": "20`), []byte(`"created": "19`), 1)
			write(t, p, b)
		}, "opm-serve/meta.json was modified after the cache was built"},
		{"meta.json too large", func(t *testing.T, dir, sub string) {
			write(t, filepath.Join(sub, "meta.json"), make([]byte, maxMetaSize+1))
		}, "over the limit of 1 MiB"},
		{"resealed meta.json, edited index", func(t *testing.T, dir, sub string) {
			// Whoever can edit the cache can reseal it: the decoder must
			// still refuse what is inconsistent.
			p := filepath.Join(sub, "index.bin")
			b := read(t, p)
			b = b[:len(b)/2]
			write(t, p, b)
			resealMeta(t, sub, func(m *CacheMeta) { m.Index = contentDigestOf(b) })
		}, "decoding the cache index: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sub := fresh(t)
			tc.spoil(t, dir, sub)
			start := time.Now()
			x, _, err := loadCache(ctx, dir, want)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				x.Close()
				return
			}
			if err == nil {
				x.Close()
				t.Fatalf("loaded; want an error with %q", tc.want)
			}
			var mm *CacheMismatchError
			if !errors.As(err, &mm) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant a mismatch with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "TOP-SECRET") {
				t.Error("the error shows the host file")
			}
		})
	}

	// index.bin is held to the file size limit of the context.
	dir, _ := fresh(t)
	_, _, err := loadCache(declcfg.WithMaxFileSize(ctx, 100), dir, want)
	if !errors.Is(err, declcfg.ErrFileTooLarge) || !declcfg.IsMaxFileSizeError(err) || !strings.Contains(err.Error(), "read opm-serve/index.bin: file size") {
		t.Errorf("index over the limit: %v", err)
	}
	// Hashing stops when the context is done.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := loadCache(cctx, dir, want); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
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

// FuzzCache feeds OpenCache and Load whole cache directories: meta.json,
// index.bin and data.bin as the fuzzer makes them, either as they are or
// with meta.json resealed to match the other two (so that the decoder,
// not the integrity check, meets the garbage). Whatever they hold, the
// cache loads or fails with an error: no panic, no hang, and no more
// memory than a small multiple of the files' sizes.
func FuzzCache(f *testing.F) {
	ctx := context.Background()
	fsys := testCatalog()
	want := CacheMeta{Format: CacheFormat, OpmVersion: "v1", Digest: digestOf(f, fsys)}
	dir := f.TempDir()
	x, err := BuildCache(ctx, fsys, dir, want, BuildOptions{HTTP: true})
	if err != nil {
		f.Fatal(err)
	}
	x.Close()
	seed := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, CacheSubdir, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	meta, index, data := seed("meta.json"), seed("index.bin"), seed("data.bin")
	f.Add(meta, index, data, false)
	f.Add(meta, index, data, true)
	f.Add(meta, index[:len(index)/2], data, true)
	f.Add([]byte("{}"), []byte(indexMagic), []byte{}, true)
	f.Add(meta, append([]byte(indexMagic), 0xff, 0xff, 0xff, 0xff, 0x0f), data[:10], true)
	f.Fuzz(func(t *testing.T, meta, index, data []byte, reseal bool) {
		dir := t.TempDir()
		sub := filepath.Join(dir, CacheSubdir)
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		if reseal {
			var m CacheMeta
			_ = json.Unmarshal(meta, &m)
			m.Format, m.OpmVersion, m.Digest = want.Format, want.OpmVersion, want.Digest
			m.Index, m.Data, m.DataSize = contentDigestOf(index), contentDigestOf(data), int64(len(data))
			m.Seal = m.seal()
			meta, _ = json.Marshal(m)
		}
		for name, b := range map[string][]byte{"meta.json": meta, "index.bin": index, "data.bin": data} {
			if err := os.WriteFile(filepath.Join(sub, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		y, _, err := loadCache(ctx, dir, want)
		runtime.ReadMemStats(&after)
		if limit := 64*uint64(len(meta)+len(index)) + 8<<20; after.TotalAlloc-before.TotalAlloc > limit {
			t.Errorf("loading %d+%d bytes allocated %d bytes", len(meta), len(index), after.TotalAlloc-before.TotalAlloc)
		}
		if err != nil {
			var mm *CacheMismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("not a mismatch: %v", err)
			}
			return
		}
		defer y.Close()
		// Whatever loads must be safe to query.
		for r := range min(len(y.records), 64) {
			_, _ = y.APIBundle(int32(r), false, true)
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

// TestUnmarshalIndexQuadratic: one bundle providing many APIs, listed by
// many channels, would make the providers table quadratic in the index's
// size. Such an index is refused, and decoding it stays small.
func TestUnmarshalIndexQuadratic(t *testing.T) {
	const n = 2000
	x := &Index{custom: map[customKey][]span{}}
	p := Package{Name: "p"}
	b := Bundle{Name: "b", Package: "p"}
	for i := range n {
		b.Provided = append(b.Provided, GVK{Group: "g", Version: "v", Kind: fmt.Sprint(i)})
		p.Channels = append(p.Channels, Channel{Name: fmt.Sprintf("c%05d", i), Head: int32(i), Records: []int32{int32(i)}})
		x.records = append(x.records, Record{Package: 0, Channel: int32(i), Bundle: 0})
	}
	x.packages = []Package{p}
	x.bundles = []Bundle{b}
	buf, err := x.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = UnmarshalIndex(buf, bytes.NewReader(nil), 0)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more provided APIs across channels than an index of") {
		t.Errorf("got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64*uint64(len(buf)) {
		t.Errorf("decoding %d bytes allocated %d", len(buf), got)
	}

	// Every record must be listed by its channel.
	x.packages[0].Channels = x.packages[0].Channels[:1]
	x.records = append(x.records[:1], Record{Package: 0, Channel: 0, Bundle: 0})
	x.bundles[0].Provided = nil
	buf, _ = x.MarshalBinary()
	if _, err := UnmarshalIndex(buf, bytes.NewReader(nil), 0); err == nil || !strings.Contains(err.Error(), "2 records, 1 listed by channels") {
		t.Errorf("unlisted record: %v", err)
	}
}
