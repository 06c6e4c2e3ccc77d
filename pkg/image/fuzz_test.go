package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseReference checks that reference parsing never panics and that
// accepted registry references name their registry.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{"quay.io/a/b:v1", "busybox", "oci:x:y", "oci-archive:f@sha256:00", "docker-archive:f:a:b",
		"docker://docker.io/library/x", "localhost:5000/x@sha256:" + strings.Repeat("a", 64), "[::1]:5000/x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s, false)
		if err != nil || r.Transport != Remote {
			return
		}
		if r.Name.Context().RegistryStr() == "" {
			t.Errorf("%q: accepted without a registry", s)
		}
	})
}

// fuzzTar builds a layer from (name, type, linkname, body) entries.
func fuzzTar(entries ...[4]string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Typeflag: e[1][0], Linkname: e[2], Mode: 0o644}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e[3]))
		}
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			io.WriteString(tw, e[3])
		}
	}
	tw.Close()
	return buf.Bytes()
}

// FuzzExtract applies two arbitrary layers and checks that extraction never
// panics and never creates anything outside the destination.
func FuzzExtract(f *testing.F) {
	reg, dir, sym, link := string(tar.TypeReg), string(tar.TypeDir), string(tar.TypeSymlink), string(tar.TypeLink)
	f.Add(fuzzTar([4]string{"configs/a", reg, "", "a"}, [4]string{"configs/l", sym, "a", ""}), fuzzTar([4]string{"configs/.wh.a", reg, "", ""}))
	f.Add(fuzzTar([4]string{"configs/up", sym, "..", ""}, [4]string{"configs/up/x", sym, "../y", ""}), fuzzTar([4]string{"configs/up/x/z", reg, "", "z"}))
	f.Add(fuzzTar([4]string{"configs/../../e", reg, "", "e"}), fuzzTar([4]string{"/configs/e", reg, "", "e"}))
	f.Add(fuzzTar([4]string{"configs/d", dir, "", ""}, [4]string{"configs/h", link, "configs/d", ""}), fuzzTar([4]string{"configs/.wh..wh..opq", reg, "", ""}))
	f.Add(fuzzTar([4]string{"configs", sym, "/etc", ""}), fuzzTar([4]string{"configs/passwd", reg, "", "x"}))
	f.Fuzz(func(t *testing.T, l1, l2 []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "dst")
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		x, err := newExtractor(dst, []string{"configs"}, 1<<20, 1000)
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		for i, b := range [][]byte{l1, l2} {
			l := layer{digest: "l", open: func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(b)), nil
			}}
			if err := x.applyLayer(context.Background(), l); err != nil {
				_ = i
				break
			}
		}
		ents, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 || ents[0].Name() != "dst" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("extraction escaped: %v", names)
		}
		// Everything extracted stays under configs/.
		filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
			rel, _ := filepath.Rel(dst, p)
			if err == nil && rel != "." && rel != "configs" && !strings.HasPrefix(rel, "configs"+string(filepath.Separator)) {
				t.Errorf("extracted %s outside the wanted paths", rel)
			}
			return nil
		})
	})
}
