package jsoncache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/serve"
)

// The tests check Write and Digest against every rule of
// ../shared/docs/serve-cache.md (the format as upstream's binary writes and
// checks it): the layout and modes (§2), packages.json (§5), the bundle
// files (§6), the meta files (§7) and the digest (§8), here with a tar
// writer of their own made from the doc's header table, byte by byte; and,
// in conformance_test.go, that a reader of the cache answers upstream's
// recorded calls.

// longName is a 120-character bundle name: its cache file name has no
// slash and is over 100 bytes, so the digest's tar needs PAX for it.
var longName = "q.v1.0.0-" + strings.Repeat("x", 111)

// deepDir is a catalog directory whose files' paths are over 100 bytes
// with a slash to split them at (USTAR's prefix field).
var deepDir = strings.Repeat("d", 60) + "/" + strings.Repeat("e", 60)

func writeCatalog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	files := map[string]string{
		"p/catalog.yaml": `---
schema: olm.package
name: p
defaultChannel: stable
description: "<b>Tools</b> & more"
icon: {base64data: aWNvbg==, mediatype: image/svg+xml}
---
schema: olm.channel
package: p
name: stable
entries:
- name: p.v1.0.0
- name: p.v1.1.0
  replaces: p.v1.0.0
  skips: []
---
schema: olm.channel
package: p
name: fast
entries:
- name: p.v1.0.0
- name: p.v1.1.0
  replaces: p.v1.0.0
  skips: [p.v0.9.0]
  skipRange: ">=0.9.0 <1.1.0"
---
schema: olm.bundle
package: p
name: p.v1.0.0
image: quay.io/example/p:v1.0.0
properties:
- {type: olm.package, value: {packageName: p, version: 1.0.0}}
- {type: olm.gvk, value: {group: "", version: v1, kind: Thing}}
---
schema: olm.bundle
package: p
name: p.v1.1.0
image: quay.io/example/p:v1.1.0
properties:
- {type: olm.package, value: {packageName: p, version: 1.1.0}}
- {type: olm.gvk, value: {group: p.example.com, version: v1, kind: Thing}}
- {type: olm.gvk.required, value: {group: q.example.com, version: v1, kind: Other}}
- {type: olm.package.required, value: {packageName: q, versionRange: ">=1.0.0"}}
- {type: olm.maxOpenShiftVersion, value: "4.16"}
- {type: example.note, value: {text: "a<b & c>d", num: 1.0, big: 12345678901234567890}}
---
schema: olm.deprecations
package: p
entries:
- {reference: {schema: olm.package}, message: "p is deprecated"}
- {reference: {schema: olm.channel, name: fast}, message: "use stable"}
- {reference: {schema: olm.bundle, name: p.v1.0.0}, message: "p.v1.0.0 has a bug"}
`,
		"q/catalog.json": `{"schema":"olm.package","name":"q","defaultChannel":"alpha"}
{"schema":"olm.channel","package":"q","name":"alpha","entries":[{"name":"` + longName + `"}]}
{"schema":"olm.bundle","package":"q","name":"` + longName + `","image":"quay.io/example/q:v1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}
{"schema":"example.custom","package":"q","name":"one","n":1}
{"schema":"example.custom","package":"q","name":"one","n":1}
{"schema":"example.custom","name":"global","text":"<x>"}
`,
		deepDir + "/blob.json": `{"schema":"example.deep","name":"deep"}`,
		"\u00fcber/blob.json":  `{"schema":"example.other","package":"q","name":"\u00fc"}`,
		"README.md":            "not a catalog file\n",
		".indexignore":         "README.md\nlink-*\n",
		"setgid/sticky/x.json": `{"schema":"example.other","name":"x"}`,
		"secret/private.json":  `{"schema":"example.other","name":"private"}`,
		"a/z.json":             `{"schema":"example.order","name":"a/z"}`,
		"a.json":               `{"schema":"example.order","name":"a.json"}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]fs.FileMode{
		".":                   0o755,
		"setgid":              0o755 | fs.ModeSetgid,
		"setgid/sticky":       0o777 | fs.ModeSticky,
		"secret/private.json": 0o600,
	} {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("README.md", filepath.Join(dir, "link-readme")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func build(t *testing.T, dir string) *serve.Index {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	x, _, err := serve.BuildTemp(context.Background(), root.FS(), t.TempDir(), serve.BuildOptions{Name: "catalog"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWrite(t *testing.T) {
	catalog := writeCatalog(t)
	x := build(t, catalog)
	dir := filepath.Join(t.TempDir(), "cache-dir")
	digest, err := Write(context.Background(), x, catalog, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}

	// §2: the layout, and upstream's modes: 0640 files, 0750 directories.
	var got []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got = append(got, fmt.Sprintf("%s %o", filepath.ToSlash(rel), fi.Mode().Perm()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	metaQ := fnvHex([]byte(`{"n":1,"name":"one","package":"q","schema":"example.custom"}` + "\n"))
	metaGlobal := fnvHex([]byte(`{"name":"global","schema":"example.custom","text":"<x>"}` + "\n"))
	want := []string{
		". 750",
		"cache 750",
		"cache/metas 750",
		"cache/metas/example.custom 750",
		"cache/metas/example.custom/" + metaGlobal + ".json 640",
		"cache/metas/example.custom/q 750",
		"cache/metas/example.custom/q/" + metaQ + ".json 640",
		"cache/metas/example.deep 750",
		"cache/metas/example.deep/" + fnvHex([]byte(`{"name":"deep","schema":"example.deep"}`+"\n")) + ".json 640",
		"cache/metas/example.order 750",
		"cache/metas/example.order/" + fnvHex([]byte(`{"name":"a.json","schema":"example.order"}`+"\n")) + ".json 640",
		"cache/metas/example.order/" + fnvHex([]byte(`{"name":"a/z","schema":"example.order"}`+"\n")) + ".json 640",
		"cache/metas/example.other 750",
		"cache/metas/example.other/" + fnvHex([]byte(`{"name":"private","schema":"example.other"}`+"\n")) + ".json 640",
		"cache/metas/example.other/" + fnvHex([]byte(`{"name":"x","schema":"example.other"}`+"\n")) + ".json 640",
		"cache/metas/example.other/q 750",
		"cache/metas/example.other/q/" + fnvHex([]byte(`{"name":"ü","package":"q","schema":"example.other"}`+"\n")) + ".json 640",
		"cache/p_fast_p.v1.0.0.json 640",
		"cache/p_fast_p.v1.1.0.json 640",
		"cache/p_stable_p.v1.0.0.json 640",
		"cache/p_stable_p.v1.1.0.json 640",
		"cache/packages.json 640",
		"cache/q_alpha_" + longName + ".json 640",
		"digest 640",
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// §7: a meta file is the normalised blob and a newline (identical
	// blobs share one); its name has no leading zeros.
	if got := read(t, filepath.Join(dir, "cache/metas/example.custom/q", metaQ+".json")); got != `{"n":1,"name":"one","package":"q","schema":"example.custom"}`+"\n" {
		t.Errorf("meta file %q", got)
	}
	if got := read(t, filepath.Join(dir, "cache/metas/example.custom", metaGlobal+".json")); got != `{"name":"global","schema":"example.custom","text":"<x>"}`+"\n" {
		t.Errorf("meta file %q: not HTML-escaped, as upstream", got)
	}

	// §5: packages.json, keyed by package, upstream's field order and
	// case, HTML-escaped, no newline at the end; skips null when absent,
	// [] when empty; icon null when there is none.
	wantPkgs := `{"p":{"name":"p","description":"\u003cb\u003eTools\u003c/b\u003e \u0026 more","icon":{"base64data":"aWNvbg==","mediatype":"image/svg+xml"},` +
		`"defaultChannel":"stable","Channels":{` +
		`"fast":{"Name":"fast","Head":"p.v1.1.0","Bundles":{` +
		`"p.v1.0.0":{"package":"p","channel":"fast","name":"p.v1.0.0","replaces":"","skips":null},` +
		`"p.v1.1.0":{"package":"p","channel":"fast","name":"p.v1.1.0","replaces":"p.v1.0.0","skips":["p.v0.9.0"]}},` +
		`"deprecation":{"message":"use stable"}},` +
		`"stable":{"Name":"stable","Head":"p.v1.1.0","Bundles":{` +
		`"p.v1.0.0":{"package":"p","channel":"stable","name":"p.v1.0.0","replaces":"","skips":null},` +
		`"p.v1.1.0":{"package":"p","channel":"stable","name":"p.v1.1.0","replaces":"p.v1.0.0","skips":[]}}}},` +
		`"deprecation":{"message":"p is deprecated"}},` +
		`"q":{"name":"q","description":"","icon":null,"defaultChannel":"alpha","Channels":{"alpha":{"Name":"alpha","Head":"` + longName + `","Bundles":{` +
		`"` + longName + `":{"package":"q","channel":"alpha","name":"` + longName + `","replaces":"","skips":null}}}}}}`
	if got := read(t, filepath.Join(dir, "cache/packages.json")); got != wantPkgs {
		t.Errorf("packages.json:\n%s\nwant:\n%s", got, wantPkgs)
	}

	// §6: a bundle file per channel membership: the api.Bundle with this
	// channel's entry (replaces, skips, skipRange), properties but the
	// object and csv metadata ones as normalised text, dependencies,
	// deprecation; no csvJson or object for a bundle with neither.
	wantFast := `{"csvName":"p.v1.1.0","packageName":"p","channelName":"fast","bundlePath":"quay.io/example/p:v1.1.0",` +
		`"providedApis":[{"group":"p.example.com","version":"v1","kind":"Thing"}],` +
		`"requiredApis":[{"group":"q.example.com","version":"v1","kind":"Other"}],` +
		`"version":"1.1.0","skipRange":"\u003e=0.9.0 \u003c1.1.0",` +
		`"dependencies":[{"type":"olm.gvk","value":"{\"group\":\"q.example.com\",\"kind\":\"Other\",\"version\":\"v1\"}"},` +
		`{"type":"olm.package","value":"{\"packageName\":\"q\",\"version\":\"\u003e=1.0.0\"}"}],` +
		`"properties":[{"type":"olm.package","value":"{\"packageName\":\"p\",\"version\":\"1.1.0\"}"},` +
		`{"type":"olm.gvk","value":"{\"group\":\"p.example.com\",\"kind\":\"Thing\",\"version\":\"v1\"}"},` +
		`{"type":"olm.gvk.required","value":"{\"group\":\"q.example.com\",\"kind\":\"Other\",\"version\":\"v1\"}"},` +
		`{"type":"olm.package.required","value":"{\"packageName\":\"q\",\"versionRange\":\"\u003e=1.0.0\"}"},` +
		`{"type":"olm.maxOpenShiftVersion","value":"\"4.16\""},` +
		`{"type":"example.note","value":"{\"big\":12345678901234567000,\"num\":1,\"text\":\"a\u003cb \u0026 c\u003ed\"}"}],` +
		`"replaces":"p.v1.0.0","skips":["p.v0.9.0"]}`
	if got := read(t, filepath.Join(dir, "cache/p_fast_p.v1.1.0.json")); got != wantFast {
		t.Errorf("bundle file:\n%s\nwant:\n%s", got, wantFast)
	}
	wantOld := `{"csvName":"p.v1.0.0","packageName":"p","channelName":"stable","bundlePath":"quay.io/example/p:v1.0.0",` +
		`"providedApis":[{"version":"v1","kind":"Thing"}],"version":"1.0.0",` +
		`"properties":[{"type":"olm.package","value":"{\"packageName\":\"p\",\"version\":\"1.0.0\"}"},` +
		`{"type":"olm.gvk","value":"{\"group\":\"\",\"kind\":\"Thing\",\"version\":\"v1\"}"}],` +
		`"deprecation":{"message":"p.v1.0.0 has a bug"}}`
	if got := read(t, filepath.Join(dir, "cache/p_stable_p.v1.0.0.json")); got != wantOld {
		t.Errorf("bundle file:\n%s\nwant:\n%s", got, wantOld)
	}

	// §8: the digest file is 16 lowercase hex digits without a newline,
	// computed over the catalog and cache/ by the doc's tar.
	if got := read(t, filepath.Join(dir, DigestFile)); got != digest || len(got) != 16 || strings.ToLower(got) != got {
		t.Errorf("digest file %q, Write returned %q", got, digest)
	}
	if want := docDigest(t, catalog, filepath.Join(dir, CacheSubdir), nil); digest != want {
		t.Errorf("digest %s, the doc's tar gives %s", digest, want)
	}
	if err := Check(context.Background(), catalog, dir); err != nil {
		t.Fatal(err)
	}

	// A second cache in the same place is refused.
	if _, err := Write(context.Background(), x, catalog, dir, Options{}); err == nil {
		t.Error("Write over an existing cache: no error")
	}
}

// TestWriteModes: the modes asked for are set exactly, whatever the umask,
// and the digest is computed over the modes the trees will have where the
// server reads them (here, as an image layer normalises them).
func TestWriteModes(t *testing.T) {
	catalog := writeCatalog(t)
	x := build(t, catalog)
	dir := filepath.Join(t.TempDir(), "c")
	layer := func(m fs.FileMode) fs.FileMode {
		if m.IsDir() || m&0o100 != 0 {
			return m&fs.ModeDir | 0o755
		}
		return 0o644
	}
	digest, err := Write(context.Background(), x, catalog, dir, Options{FileMode: 0o644, DirMode: 0o755, Mode: layer})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"cache", "cache/metas", "cache/packages.json", DigestFile} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o644)
		if fi.IsDir() {
			want = 0o755
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", p, fi.Mode().Perm(), want)
		}
	}
	if want := docDigest(t, catalog, filepath.Join(dir, CacheSubdir), layer); digest != want {
		t.Errorf("digest %s, the doc's tar over the layer's modes gives %s", digest, want)
	}
	// On disk the catalog has other modes (setgid, sticky, 0600): the
	// digest of what is on disk differs, so Check fails until the modes are
	// those of the layer.
	if err := Check(context.Background(), catalog, dir); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Check with the modes on disk: %v, want a mismatch", err)
	}
	err = filepath.WalkDir(catalog, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chmod(p, layer(fi.Mode()))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(context.Background(), catalog, dir); err != nil {
		t.Fatalf("Check with the layer's modes: %v", err)
	}
}

// TestCheck: what enters the digest (names, bytes, modes, the file set,
// ignored and hidden files) and what does not (times, symbolic links,
// entries beside cache/).
func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, catalog, dir string)
		ok     bool
	}{
		{"unchanged", func(*testing.T, string, string) {}, true},
		{"a time", func(t *testing.T, catalog, _ string) {
			must(t, os.Chtimes(filepath.Join(catalog, "p/catalog.yaml"), time.Now(), time.Unix(1e9, 0)))
		}, true},
		{"a symbolic link added", func(t *testing.T, catalog, _ string) {
			must(t, os.Symlink("p", filepath.Join(catalog, "link-p")))
		}, true},
		{"an entry beside cache/", func(t *testing.T, _, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "opm-serve"), 0o700))
		}, true},
		{"a byte of the catalog", func(t *testing.T, catalog, _ string) {
			must(t, os.WriteFile(filepath.Join(catalog, "a.json"), []byte(`{"schema":"example.order","name":"a.jsoN"}`), 0o644))
		}, false},
		{"an ignored file", func(t *testing.T, catalog, _ string) {
			must(t, os.WriteFile(filepath.Join(catalog, "README.md"), []byte("changed\n"), 0o644))
		}, false},
		{"a hidden file added", func(t *testing.T, catalog, _ string) {
			must(t, os.WriteFile(filepath.Join(catalog, ".hidden"), nil, 0o644))
		}, false},
		{"a file's mode", func(t *testing.T, catalog, _ string) {
			must(t, os.Chmod(filepath.Join(catalog, "a.json"), 0o664))
		}, false},
		{"the catalog root's mode", func(t *testing.T, catalog, _ string) {
			must(t, os.Chmod(catalog, 0o750))
		}, false},
		{"cache/'s mode", func(t *testing.T, _, dir string) {
			must(t, os.Chmod(filepath.Join(dir, CacheSubdir), 0o755))
		}, false},
		{"a bundle file", func(t *testing.T, _, dir string) {
			must(t, os.Remove(filepath.Join(dir, CacheSubdir, "p_fast_p.v1.0.0.json")))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			catalog := writeCatalog(t)
			dir := filepath.Join(t.TempDir(), "c")
			if _, err := Write(ctx, build(t, catalog), catalog, dir, Options{}); err != nil {
				t.Fatal(err)
			}
			tc.change(t, catalog, dir)
			err := Check(ctx, catalog, dir)
			switch {
			case tc.ok && err != nil:
				t.Fatalf("Check: %v", err)
			case !tc.ok && !errors.Is(err, ErrMismatch):
				t.Fatalf("Check: %v, want a mismatch", err)
			case !tc.ok && !strings.Contains(err.Error(), "cache requires rebuild: cache reports digest as \""):
				t.Fatalf("Check: %v: not upstream's wording", err)
			}
		})
	}
}

// TestWriteRefuses: what upstream's format cannot hold.
func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog")
	must(t, os.Mkdir(catalog, 0o755))
	// Two (package, channel, bundle) triples with the same file name.
	must(t, os.WriteFile(filepath.Join(catalog, "c.yaml"), []byte(`---
schema: olm.package
name: a
defaultChannel: b_c
---
schema: olm.channel
package: a
name: b_c
entries: [{name: d}]
---
schema: olm.channel
package: a
name: b
entries: [{name: c_d}]
---
schema: olm.bundle
package: a
name: d
image: example.com/a:d
properties: [{type: olm.package, value: {packageName: a, version: 1.0.0}}]
---
schema: olm.bundle
package: a
name: c_d
image: example.com/a:c_d
properties: [{type: olm.package, value: {packageName: a, version: 2.0.0}}]
`), 0o644))
	_, err := Write(context.Background(), build(t, catalog), catalog, filepath.Join(dir, "cache"), Options{})
	if err == nil || !strings.Contains(err.Error(), "both would be stored as a_b_c_d.json") {
		t.Fatalf("Write: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// docDigest computes the digest as ../shared/docs/serve-cache.md §8
// describes it, with tar headers built field by field from its table.
func docDigest(t *testing.T, catalog, cache string, mode ModeFunc) string {
	t.Helper()
	h := fnv.New64a()
	for _, root := range []string{catalog, cache} {
		h.Write(docTar(t, root, mode))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

func docTar(t *testing.T, root string, mode ModeFunc) []byte {
	t.Helper()
	var out bytes.Buffer
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		m := fi.Mode()
		if mode != nil {
			m = mode(m)
		}
		if d.IsDir() {
			out.Write(docHeader(rel, '5', m, 0))
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out.Write(docHeader(rel, '0', m, int64(len(data))))
		out.Write(data)
		out.Write(make([]byte, (512-len(data)%512)%512))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out.Write(make([]byte, 1024))
	return out.Bytes()
}

// docHeader is one entry's header block(s): USTAR, with the name split
// into prefix and suffix when it is over 100 bytes, or a PAX extended
// header first when it cannot be held.
func docHeader(name string, typ byte, m fs.FileMode, size int64) []byte {
	perm := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		perm |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		perm |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			ascii = false
		}
	}
	var prefix string
	short := name
	pax := false
	if len(name) > 100 || !ascii {
		pax = true
		if ascii {
			// The last slash that leaves a suffix of 1 to 100 bytes and a
			// prefix of at most 155.
			for i := len(name) - 1; i > 0; i-- {
				if name[i] == '/' && i <= 155 && len(name)-i-1 >= 1 && len(name)-i-1 <= 100 {
					prefix, short, pax = name[:i], name[i+1:], false
					break
				}
			}
		}
	}
	var out []byte
	if pax {
		rec := " path=" + name + "\n"
		n := len(rec) + 1
		for len(strconv.Itoa(n))+len(rec) != n {
			n++
		}
		rec = strconv.Itoa(n) + rec
		dir, file := path.Split(name)
		xname := strings.TrimRight(cut(asciiOnly(path.Join(dir, "PaxHeaders.0", file)), 100), "/")
		blk := make([]byte, 512)
		copy(blk[0:], xname)
		copy(blk[100:], octal(0, 8))
		copy(blk[108:], octal(0, 8))
		copy(blk[116:], octal(0, 8))
		copy(blk[124:], octal(int64(len(rec)), 12))
		copy(blk[136:], octal(0, 12))
		blk[156] = 'x'
		copy(blk[257:], "ustar\x0000")
		checksum(blk)
		out = append(out, blk...)
		data := make([]byte, (len(rec)+511)/512*512)
		copy(data, rec)
		out = append(out, data...)
		short = cut(asciiOnly(name), 100)
	}
	blk := make([]byte, 512)
	copy(blk[0:], short)
	copy(blk[100:], octal(perm, 8))
	copy(blk[108:], octal(0, 8))
	copy(blk[116:], octal(0, 8))
	copy(blk[124:], octal(size, 12))
	copy(blk[136:], octal(0, 12))
	blk[156] = typ
	copy(blk[257:], "ustar\x0000")
	copy(blk[329:], octal(0, 8))
	copy(blk[337:], octal(0, 8))
	copy(blk[345:], prefix)
	checksum(blk)
	return append(out, blk...)
}

// octal is an octal field of width w: w-1 digits and a NUL.
func octal(v int64, w int) string {
	s := strconv.FormatInt(v, 8)
	return strings.Repeat("0", w-1-len(s)) + s + "\x00"
}

func checksum(blk []byte) {
	copy(blk[148:156], "        ")
	sum := 0
	for _, c := range blk {
		sum += int(c)
	}
	copy(blk[148:], octal(int64(sum), 7)+" ")
}

func asciiOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// TestTarHeaders compares the digest's tar stream with the doc's, for the
// entries that take each path: a short name, a name split into prefix and
// suffix, a long name with no slash (PAX), a non-ASCII name (PAX).
func TestTarHeaders(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"short.json",
		deepDir + "/blob.json",
		"p_" + longName + ".json",
		"\u00fcber/blob.json",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(name), 0o640))
	}
	var got bytes.Buffer
	if err := tarTree(context.Background(), &got, dir, nil); err != nil {
		t.Fatal(err)
	}
	want := docTar(t, dir, nil)
	if !bytes.Equal(got.Bytes(), want) {
		for i := 0; i < min(got.Len(), len(want)); i++ {
			if got.Bytes()[i] != want[i] {
				t.Fatalf("tar streams differ at byte %d (block %d, offset %d): %q, want %q", i, i/512, i%512, got.Bytes()[i], want[i])
			}
		}
		t.Fatalf("tar stream %d bytes, want %d", got.Len(), len(want))
	}
}
