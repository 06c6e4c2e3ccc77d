package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// openLayoutDir opens an image of an OCI layout directory.
func openLayoutDir(r Reference, o options) (*image, error) {
	img, err := openLayoutFS(os.DirFS(r.Path), r, o)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	return img, nil
}

// openOCIArchive opens an image of a tarred OCI layout.
func openOCIArchive(r Reference, o options) (*image, error) {
	afs, err := openTarFS(r.Path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img, err := openLayoutFS(afs, r, o)
	if err != nil {
		afs.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img.cleanup = append(img.cleanup, afs.Close)
	return img, nil
}

// openLayoutFS opens the image of an OCI layout that r selects: by digest,
// by its org.opencontainers.image.ref.name annotation, or the only one.
func openLayoutFS(fsys fs.FS, r Reference, o options) (*image, error) {
	raw, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	var desc v1.Descriptor
	switch {
	case r.Digest != "":
		h, err := v1.NewHash(r.Digest)
		if err != nil {
			return nil, fmt.Errorf("invalid digest %q: %w", r.Digest, err)
		}
		desc = v1.Descriptor{Digest: h, MediaType: ""}
		for _, d := range idx.Manifests {
			if d.Digest == h {
				desc = d
			}
		}
	case r.Tag != "":
		var tags []string
		found := false
		for _, d := range idx.Manifests {
			t := d.Annotations[annotationRefName]
			tags = append(tags, t)
			if t == r.Tag || d.Annotations["io.containerd.image.name"] == r.Tag {
				desc, found = d, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no image tagged %q in the layout (tags: %s)", r.Tag, strings.Join(nonEmpty(tags), ", "))
		}
	default:
		if len(idx.Manifests) != 1 {
			var tags []string
			for _, d := range idx.Manifests {
				tags = append(tags, d.Annotations[annotationRefName])
			}
			return nil, fmt.Errorf("the layout holds %d images: name one with :TAG or @DIGEST (tags: %s)", len(idx.Manifests), strings.Join(nonEmpty(tags), ", "))
		}
		desc = idx.Manifests[0]
	}
	want, err := wantPlatform(o)
	if err != nil {
		return nil, err
	}
	for depth := 0; depth < 4; depth++ {
		raw, err := readBlob(fsys, desc.Digest)
		if err != nil {
			return nil, err
		}
		mt := desc.MediaType
		if mt == "" {
			var probe struct {
				MediaType string          `json:"mediaType"`
				Manifests json.RawMessage `json:"manifests"`
			}
			_ = json.Unmarshal(raw, &probe)
			mt = typesMediaType(probe.MediaType, probe.Manifests != nil)
		}
		if mt.IsIndex() {
			sub, err := v1.ParseIndexManifest(bytes.NewReader(raw))
			if err != nil {
				return nil, fmt.Errorf("index %s: %w", desc.Digest, err)
			}
			if desc, err = pickPlatform(sub, want); err != nil {
				return nil, err
			}
			continue
		}
		m, err := v1.ParseManifest(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", desc.Digest, err)
		}
		cfg, err := readBlob(fsys, m.Config.Digest)
		if err != nil {
			return nil, err
		}
		img := &image{digest: desc.Digest.String()}
		if img.labels, err = labelsOf(cfg); err != nil {
			return nil, err
		}
		for _, ld := range m.Layers {
			d := ld.Digest
			img.layers = append(img.layers, layer{
				digest: d.String(),
				open: func(context.Context) (io.ReadCloser, error) {
					return openBlob(fsys, d)
				},
			})
		}
		return img, nil
	}
	return nil, errors.New("image indexes nested too deeply")
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func blobPath(d v1.Hash) string { return path.Join("blobs", d.Algorithm, d.Hex) }

// readBlob reads and verifies a small blob of a layout.
func readBlob(fsys fs.FS, d v1.Hash) ([]byte, error) {
	rc, err := openBlob(fsys, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// openBlob opens a layout blob; the reader fails at EOF on a digest
// mismatch.
func openBlob(fsys fs.FS, d v1.Hash) (io.ReadCloser, error) {
	if d.Algorithm != "sha256" {
		return nil, fmt.Errorf("blob %s: unsupported digest algorithm %q", d, d.Algorithm)
	}
	f, err := fsys.Open(blobPath(d))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", d, err)
	}
	return &verifyReader{r: f, c: f, want: d, h: sha256.New()}, nil
}

type verifyReader struct {
	r    io.Reader
	c    io.Closer
	want v1.Hash
	h    hash.Hash
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Hex {
			return n, fmt.Errorf("blob %s: digest mismatch: got sha256:%s", v.want, got)
		}
	}
	return n, err
}

func (v *verifyReader) Close() error { return v.c.Close() }

// tarFS is a read-only fs.FS over the regular files of an uncompressed tar
// archive, indexed once.
type tarFS struct {
	f     *os.File
	files map[string]tarEntry
}

type tarEntry struct{ off, size int64 }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func openTarFS(file string) (*tarFS, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	if n, _ := io.ReadFull(f, magic[:]); n >= 2 && (magic[0] == 0x1f && magic[1] == 0x8b || magic == [4]byte{0x28, 0xb5, 0x2f, 0xfd}) {
		f.Close()
		return nil, errors.New("compressed archives are not supported: decompress it first")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	t := &tarFS{f: f, files: map[string]tarEntry{}}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reading archive: %w", err)
		}
		if h.Typeflag == tar.TypeReg {
			t.files[path.Clean(strings.TrimPrefix(h.Name, "/"))] = tarEntry{off: cr.n, size: h.Size}
		}
	}
	return t, nil
}

func (t *tarFS) Close() error { return t.f.Close() }

func (t *tarFS) Open(name string) (fs.File, error) {
	e, ok := t.files[path.Clean(name)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &tarFile{SectionReader: io.NewSectionReader(t.f, e.off, e.size), name: name}, nil
}

type tarFile struct {
	*io.SectionReader
	name string
}

func (f *tarFile) Stat() (fs.FileInfo, error) { return nil, errors.New("stat not supported") }
func (f *tarFile) Close() error               { return nil }

// dockerManifest is one entry of a docker archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// openDockerArchive opens an image of a `docker save` archive.
func openDockerArchive(r Reference, o options) (*image, error) {
	if r.Digest != "" {
		return nil, fmt.Errorf("opening %s: docker archives select images by tag, not digest", r.Raw)
	}
	afs, err := openTarFS(r.Path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img, err := dockerArchiveImage(afs, r)
	if err != nil {
		afs.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img.cleanup = append(img.cleanup, afs.Close)
	return img, nil
}

func dockerArchiveImage(afs *tarFS, r Reference) (*image, error) {
	raw, err := fs.ReadFile(afs, "manifest.json")
	if err != nil {
		return nil, fmt.Errorf("not a docker archive: %w", err)
	}
	var ms []dockerManifest
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	var m *dockerManifest
	var all []string
	for i := range ms {
		all = append(all, ms[i].RepoTags...)
		for _, t := range ms[i].RepoTags {
			if r.Tag != "" && (t == r.Tag || strings.TrimPrefix(t, "docker.io/library/") == r.Tag || strings.TrimPrefix(t, "docker.io/") == r.Tag) {
				m = &ms[i]
			}
		}
	}
	sort.Strings(all)
	switch {
	case r.Tag != "" && m == nil:
		return nil, fmt.Errorf("no image tagged %q in the archive (tags: %s)", r.Tag, strings.Join(nonEmpty(all), ", "))
	case r.Tag == "" && len(ms) != 1:
		return nil, fmt.Errorf("the archive holds %d images: name one with :REPO:TAG (tags: %s)", len(ms), strings.Join(nonEmpty(all), ", "))
	case r.Tag == "":
		m = &ms[0]
	}
	cfg, err := fs.ReadFile(afs, m.Config)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config, err)
	}
	img := &image{digest: "sha256:" + sha256Hex(cfg)}
	if img.labels, err = labelsOf(cfg); err != nil {
		return nil, err
	}
	for _, lp := range m.Layers {
		img.layers = append(img.layers, layer{
			digest: lp,
			open: func(context.Context) (io.ReadCloser, error) {
				f, err := afs.Open(lp)
				if err != nil {
					return nil, err
				}
				// Layers named blobs/sha256/HEX (docker 25+) are verified.
				if d, err := v1.NewHash(strings.Replace(strings.TrimPrefix(lp, "blobs/"), "/", ":", 1)); err == nil {
					return &verifyReader{r: f, c: f, want: d, h: sha256.New()}, nil
				}
				return f, nil
			},
		})
	}
	return img, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// typesMediaType guesses the media type of a layout blob that its
// descriptor does not type.
func typesMediaType(mt string, hasManifests bool) types.MediaType {
	if mt != "" {
		return types.MediaType(mt)
	}
	if hasManifests {
		return types.OCIImageIndex
	}
	return types.OCIManifestSchema1
}

const annotationRefName = "org.opencontainers.image.ref.name"
