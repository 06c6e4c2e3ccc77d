package image

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseReference checks that reference parsing never panics and that
// accepted registry references name their registry.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{"quay.io/a/b:v1", "busybox", "oci:x:y", "oci-archive:f@sha256:00", "docker-archive:f:a:b",
		"docker://docker.io/library/x", "localhost:5000/x@sha256:" + strings.Repeat("a", 64), "[::1]:5000/x", "",
		"./catalgo", "/tmp/x", "../x", "~/x", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s, false)
		if err != nil || r.Transport != Remote {
			return
		}
		for _, p := range []string{"/", "./", "../", "~"} {
			if strings.HasPrefix(s, p) {
				t.Errorf("%q: a path taken for a registry reference", s)
			}
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
	// Issue 10: a chain that is harmless lexically and leads out physically.
	f.Add(fuzzTar([4]string{"configs/sub/d", sym, "..", ""}, [4]string{"configs/x.json", sym, "sub/d/sub/d/../../../etc/passwd", ""}), fuzzTar())
	f.Add(fuzzTar([4]string{"configs/x.json", sym, "sub/d/sub/d/../../../etc/passwd", ""}), fuzzTar([4]string{"configs/sub/d", sym, "..", ""}))
	f.Fuzz(func(t *testing.T, l1, l2 []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "dst")
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		x, err := newExtractor(dst, []string{"configs"}, Limits{Extract: 1 << 20, Entries: 1000, PathDepth: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		ok := true
		for _, b := range [][]byte{l1, l2} {
			l := layer{digest: "l", open: func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(b)), nil
			}}
			if err := x.applyLayer(context.Background(), l); err != nil {
				ok = false
				break
			}
		}
		if ok && x.checkLinks() == nil {
			// Every link the check let through resolves inside dst.
			realDst, _ := filepath.EvalSymlinks(dst)
			filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
				if err != nil || fi.Mode()&os.ModeSymlink == 0 {
					return nil
				}
				if r, err := filepath.EvalSymlinks(p); err == nil && r != realDst && !strings.HasPrefix(r, realDst+string(filepath.Separator)) {
					t.Errorf("link %s resolves to %s, outside the destination", p, r)
				}
				return nil
			})
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

// memStore is a store over in-memory files.
type memStore map[string][]byte

func (m memStore) open(name string) (io.ReadCloser, int64, error) {
	b, ok := m[name]
	if !ok {
		return nil, 0, os.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

func (memStore) Close() error { return nil }

// FuzzOpenLayout parses arbitrary index.json, manifest and config bytes as
// an OCI layout (the manifest and config stored under their digests): it
// never panics, and accepts only verified content.
func FuzzOpenLayout(f *testing.F) {
	cfg := []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"a":"b"}},"rootfs":{"type":"layers","diff_ids":[]}}`)
	man := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":` +
		strconv.Itoa(len(cfg)) + `,"digest":"sha256:` + sha256Hex(cfg) + `"},"layers":[]}`)
	idx := []byte(`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":` +
		strconv.Itoa(len(man)) + `,"digest":"sha256:` + sha256Hex(man) + `","annotations":{"org.opencontainers.image.ref.name":"v1"}}]}`)
	f.Add(idx, man, cfg, "")
	f.Add(idx, man, cfg, "v1")
	f.Add([]byte(`{"manifests":[{"digest":"sha256:`+sha256Hex(man)+`","size":-1}]}`), man, cfg, "")
	f.Add([]byte(`{"manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:`+sha256Hex(man)+`","size":`+strconv.Itoa(len(man))+`}]}`), man, cfg, "")
	f.Add([]byte(`[`), []byte(`{`), []byte(`{"config":{"Labels":null}}`), "x")
	f.Fuzz(func(t *testing.T, idx, man, cfg []byte, tag string) {
		st := memStore{"index.json": idx, "blobs/sha256/" + sha256Hex(man): man, "blobs/sha256/" + sha256Hex(cfg): cfg}
		o := defaultOptions()
		o.limits = Limits{Manifest: 1 << 16, Config: 1 << 16}.withDefaults()
		img, err := openLayout(context.Background(), st, Reference{Raw: "oci:fuzz", Tag: tag}, o)
		if err != nil {
			return
		}
		if img.labels == nil && img.digest == "" {
			t.Errorf("an image with neither digest nor labels")
		}
	})
}

// FuzzDockerManifest parses arbitrary manifest.json bytes and picks an
// image by tag: it never panics.
func FuzzDockerManifest(f *testing.F) {
	f.Add([]byte(`[{"Config":"c.json","RepoTags":["example.com/a:v1"],"Layers":["l/layer.tar"]}]`), "example.com/a:v1")
	f.Add([]byte(`[{"Config":"c.json","RepoTags":["docker.io/library/a:v1"]},{"Config":"d.json"}]`), "a:v1")
	f.Add([]byte(`[{"Config":""}]`), "")
	f.Add([]byte(`{}`), "")
	f.Fuzz(func(t *testing.T, raw []byte, tag string) {
		ms, err := parseDockerManifest(raw)
		if err != nil {
			return
		}
		m, err := pickDockerImage(ms, tag)
		if err == nil && m == nil {
			t.Errorf("no image and no error")
		}
	})
}

// FuzzTarStore indexes arbitrary archive bytes and reads every file it
// lists: it never panics, and every read stays within the archive.
func FuzzTarStore(f *testing.F) {
	f.Add(fuzzTar([4]string{"index.json", string(tar.TypeReg), "", "{}"}, [4]string{"blobs/sha256/x", string(tar.TypeSymlink), "../index.json", ""}))
	f.Add(fuzzTar([4]string{"a", string(tar.TypeLink), "b", ""}, [4]string{"b", string(tar.TypeLink), "a", ""}))
	f.Add(fuzzTar([4]string{"manifest.json", string(tar.TypeSymlink), "/etc/passwd", ""}))
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		file := filepath.Join(t.TempDir(), "a.tar")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := openTarStore(context.Background(), file, Limits{Entries: 1000})
		if err != nil {
			return
		}
		defer st.Close()
		for name := range st.files {
			rc, size, err := st.open(name)
			if err != nil {
				continue
			}
			n, _ := io.Copy(io.Discard, rc)
			rc.Close()
			if n > size || size > int64(len(b)) {
				t.Errorf("%s: read %d bytes of %d, from a %d-byte archive", name, n, size, len(b))
			}
		}
	})
}
