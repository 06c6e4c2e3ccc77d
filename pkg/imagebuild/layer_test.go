package imagebuild

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/image"
)

// writeTree writes files (name -> body; a name ending in / is a
// directory) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type entry struct {
	name, link string
	typ        byte
	mode       int64
	size       int64
	body       string
	uid, gid   int
	mtime      int64
}

// entries lists the tar entries of l.
func entries(t testing.TB, l *Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out = append(out, entry{name: h.Name, link: h.Linkname, typ: h.Typeflag, mode: h.Mode, size: h.Size, body: string(b), uid: h.Uid, gid: h.Gid, mtime: h.ModTime.Unix()})
	}
	return out
}

func build(t testing.TB, dir string, trees []Tree, o LayerOptions) *Layer {
	t.Helper()
	l, err := BuildLayer(context.Background(), dir, trees, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

var configs = []Tree{{Src: ".", Dst: "configs"}}

func TestBuildLayer(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"b/catalog.json": `{"schema":"olm.package","name":"b"}`,
		"a.json":         "{}",
		"a/x.yaml":       "x: 1",
		".indexignore":   "README*",
		"README.md":      "hello",
		"empty/":         "",
		"run.sh":         "#!/bin/sh",
	})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "README.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b/catalog.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	l := build(t, dir, configs, LayerOptions{ModTime: time.Unix(1700000000, 999)})
	got := entries(t, l)
	want := []entry{
		{name: "configs/", typ: tar.TypeDir, mode: 0o755},
		{name: "configs/.indexignore", typ: tar.TypeReg, mode: 0o644, size: 7, body: "README*"},
		{name: "configs/README.md", typ: tar.TypeReg, mode: 0o644, size: 5, body: "hello"},
		{name: "configs/a/", typ: tar.TypeDir, mode: 0o755},
		{name: "configs/a/x.yaml", typ: tar.TypeReg, mode: 0o644, size: 4, body: "x: 1"},
		{name: "configs/a.json", typ: tar.TypeReg, mode: 0o644, size: 2, body: "{}"},
		{name: "configs/b/", typ: tar.TypeDir, mode: 0o755},
		{name: "configs/b/catalog.json", typ: tar.TypeReg, mode: 0o644, size: 35, body: `{"schema":"olm.package","name":"b"}`},
		{name: "configs/empty/", typ: tar.TypeDir, mode: 0o755},
		{name: "configs/link.json", typ: tar.TypeSymlink, mode: 0o777, link: "b/catalog.json"},
		{name: "configs/run.sh", typ: tar.TypeReg, mode: 0o755, size: 9, body: "#!/bin/sh"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		w := want[i]
		w.mtime = 1700000000
		if got[i] != w {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], w)
		}
	}
	if l.Files() != 6 {
		t.Errorf("Files() = %d, want 6", l.Files())
	}
	if l.UncompressedSize()%512 != 0 {
		t.Errorf("uncompressed size %d is not a tar size", l.UncompressedSize())
	}
	// The digests are those of the bytes.
	rc, _ := l.Compressed()
	b, _ := io.ReadAll(rc)
	rc.Close()
	if d, _ := l.Digest(); d != sha(b) {
		t.Errorf("digest %s, bytes hash to %s", d, sha(b))
	}
	if s, _ := l.Size(); s != int64(len(b)) {
		t.Errorf("size %d, %d bytes", s, len(b))
	}
	u, _ := l.Uncompressed()
	ub, _ := io.ReadAll(u)
	u.Close()
	if d, _ := l.DiffID(); d != sha(ub) {
		t.Errorf("diff id %s, tar hashes to %s", d, sha(ub))
	}
}

// TestBuildLayerReproducible checks that modes, times, owners' umask and
// the order files were created in do not change the layer, and that a
// changed file does.
func TestBuildLayerReproducible(t *testing.T) {
	files := map[string]string{"p/catalog.yaml": "schema: olm.package\nname: p\n", "q/catalog.json": "{}", "README": "x"}
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, files)
	old := syscall.Umask(0o077)
	writeTree(t, b, map[string]string{"README": "x"})
	writeTree(t, b, map[string]string{"q/catalog.json": "{}"})
	writeTree(t, b, map[string]string{"p/catalog.yaml": "schema: olm.package\nname: p\n"})
	syscall.Umask(old)
	if err := os.Chmod(filepath.Join(b, "README"), 0o664); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-72 * time.Hour)
	filepath.Walk(b, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, past, past) })
	la := build(t, a, configs, LayerOptions{})
	time.Sleep(1100 * time.Millisecond)
	lb := build(t, b, configs, LayerOptions{})
	da, _ := la.Digest()
	db, _ := lb.Digest()
	if da != db {
		t.Fatalf("same content, different layers: %s and %s", da, db)
	}
	if err := os.WriteFile(filepath.Join(b, "q/catalog.json"), []byte("{ }"), 0o644); err != nil {
		t.Fatal(err)
	}
	lc := build(t, b, configs, LayerOptions{})
	if dc, _ := lc.Digest(); dc == da {
		t.Fatal("a changed file did not change the layer")
	}
	// SOURCE_DATE_EPOCH changes the times, hence the digest.
	ld := build(t, a, configs, LayerOptions{ModTime: time.Unix(1, 0)})
	if dd, _ := ld.Digest(); dd == da {
		t.Fatal("another time did not change the layer")
	}
}

func TestBuildLayerTrees(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"manifests/csv.yaml": "kind: x", "metadata/annotations.yaml": "annotations: {}", "tests/x": "no"})
	l := build(t, dir, []Tree{{Src: "manifests", Dst: "manifests"}, {Src: "metadata", Dst: "/metadata/"}}, LayerOptions{})
	var names []string
	for _, e := range entries(t, l) {
		names = append(names, e.name)
	}
	if got := strings.Join(names, " "); got != "manifests/ manifests/csv.yaml metadata/ metadata/annotations.yaml" {
		t.Errorf("entries: %s", got)
	}
	l = build(t, dir, []Tree{{Src: "manifests", Dst: "a/b/c"}}, LayerOptions{})
	names = nil
	for _, e := range entries(t, l) {
		names = append(names, e.name)
	}
	if got := strings.Join(names, " "); got != "a/ a/b/ a/b/c/ a/b/c/csv.yaml" {
		t.Errorf("entries: %s", got)
	}
}

// TestBuildLayerHostile checks what a directory may not hold, and the
// limits. Each error names the file.
func TestBuildLayerHostile(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		trees []Tree
		o     LayerOptions
		want  []string
		is    error
	}{
		{name: "AbsoluteLink", setup: func(t *testing.T, dir string) {
			os.Symlink(secret, filepath.Join(dir, "x.json"))
		}, want: []string{"x.json", "absolute path"}, is: ErrUnsupported},
		{name: "LinkOut", setup: func(t *testing.T, dir string) {
			rel, _ := filepath.Rel(dir, secret)
			os.Symlink(rel, filepath.Join(dir, "x.json"))
		}, want: []string{"x.json", "stay inside"}, is: ErrUnsupported},
		{name: "LinkChainOut", setup: func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
			os.Symlink("..", filepath.Join(dir, "sub", "d"))
			os.Symlink("sub/d/sub/d/../../../etc/passwd", filepath.Join(dir, "x.json"))
		}, want: []string{"x.json"}, is: ErrUnsupported},
		{name: "DirLinkOut", setup: func(t *testing.T, dir string) {
			os.Symlink(outside, filepath.Join(dir, "pkg"))
		}, want: []string{"pkg", "absolute"}, is: ErrUnsupported},
		{name: "Dangling", setup: func(t *testing.T, dir string) {
			os.Symlink("nowhere.json", filepath.Join(dir, "x.json"))
		}, want: []string{"x.json", "does not exist"}, is: ErrUnsupported},
		{name: "Loop", setup: func(t *testing.T, dir string) {
			os.Symlink("b", filepath.Join(dir, "a"))
			os.Symlink("a", filepath.Join(dir, "b"))
		}, want: []string{"a"}, is: ErrUnsupported},
		{name: "FIFO", setup: func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
				t.Skip(err)
			}
		}, want: []string{"pipe.json", "a named pipe"}, is: ErrUnsupported},
		{name: "Socket", setup: func(t *testing.T, dir string) {
			l, err := net.Listen("unix", filepath.Join(dir, "s"))
			if err != nil {
				t.Skip(err)
			}
			t.Cleanup(func() { l.Close() })
		}, want: []string{"a socket"}, is: ErrUnsupported},
		{name: "Entries", setup: func(t *testing.T, dir string) {
			for i := range 20 {
				os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644)
			}
		}, o: LayerOptions{Limits: image.Limits{Entries: 10}}, want: []string{"more than 10 entries"}, is: image.ErrTooLarge},
		{name: "Bytes", setup: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "big"), make([]byte, 5000), 0o644)
		}, o: LayerOptions{Limits: image.Limits{Extract: 4096}}, want: []string{"more than 4096 bytes"}, is: image.ErrTooLarge},
		{name: "Depth", setup: func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "a/b/c/d/e"), 0o755)
		}, o: LayerOptions{Limits: image.Limits{PathDepth: 4}}, want: []string{"path components", "depth limit is 4"}, is: image.ErrTooLarge},
		{name: "MissingTree", setup: func(t *testing.T, dir string) {}, trees: []Tree{{Src: "manifests", Dst: "manifests"}}, want: []string{"manifests", "no such file"}},
		{name: "TreeIsFile", setup: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "manifests"), nil, 0o644)
		}, trees: []Tree{{Src: "manifests", Dst: "manifests"}}, want: []string{"manifests: not a directory"}},
		{name: "TreeLinkOut", setup: func(t *testing.T, dir string) {
			os.Symlink(outside, filepath.Join(dir, "manifests"))
		}, trees: []Tree{{Src: "manifests", Dst: "manifests"}}, want: []string{"manifests"}},
		{name: "LinkOutOfSubtree", setup: func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
			os.WriteFile(filepath.Join(dir, "other"), nil, 0o644)
			os.Symlink("../other", filepath.Join(dir, "manifests", "x"))
		}, trees: []Tree{{Src: "manifests", Dst: "manifests"}}, want: []string{filepath.Join("manifests", "x"), "stay inside"}, is: ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			trees := tc.trees
			if trees == nil {
				trees = configs
			}
			tmp := t.TempDir()
			tc.o.TempDir = tmp
			_, err := BuildLayer(context.Background(), dir, trees, tc.o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Error("the secret shows")
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestBuildLayerCancel(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "1", "b/c": "2"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BuildLayer(ctx, dir, configs, LayerOptions{TempDir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestBuildLayerInsideLink checks that links staying inside the directory
// are kept as links, however they are chained.
func TestBuildLayerInsideLink(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"pkg/catalog.json": "{}", "sub/x": ""})
	os.Symlink("../pkg", filepath.Join(dir, "sub", "p"))
	os.Symlink("sub/p/catalog.json", filepath.Join(dir, "c.json"))
	os.Symlink("pkg", filepath.Join(dir, "pkgdir"))
	l := build(t, dir, configs, LayerOptions{})
	links := map[string]string{}
	for _, e := range entries(t, l) {
		if e.typ == tar.TypeSymlink {
			links[e.name] = e.link
		}
	}
	want := map[string]string{"configs/c.json": "sub/p/catalog.json", "configs/pkgdir": "pkg", "configs/sub/p": "../pkg"}
	if fmt.Sprint(links) != fmt.Sprint(want) {
		t.Errorf("links %v, want %v", links, want)
	}
}
