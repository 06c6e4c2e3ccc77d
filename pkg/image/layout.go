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
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/safefs"
)

// Local images (OCI layouts, OCI archives, docker archives) are read by the
// code below rather than by go-containerregistry's pkg/v1/layout and
// pkg/v1/tarball, which (at v0.22.1) do not do what hostile input needs
// (see the package documentation and layout_test.go for each case).

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// store is where the files of a layout or archive live.
type store interface {
	// open opens name (slash-separated, relative) for reading; it must be
	// a regular file, whose size is returned.
	open(name string) (io.ReadCloser, int64, error)
	Close() error
}

// dirStore is a layout directory, read through an os.Root: links stay
// inside it, and FIFOs and devices are refused without being read.
type dirStore struct{ root *os.Root }

func (d dirStore) open(name string) (io.ReadCloser, int64, error) {
	f, size, err := safefs.OpenRegular(d.root, name)
	if err != nil {
		return nil, 0, err
	}
	return f, size, nil
}

func (d dirStore) Close() error { return d.root.Close() }

// openLayoutDir opens an image of an OCI layout directory.
func openLayoutDir(ctx context.Context, r Reference, o options) (*image, error) {
	root, err := os.OpenRoot(r.Path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	st := dirStore{root}
	img, err := openLayout(ctx, st, r, o)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img.cleanup = append(img.cleanup, st.Close)
	return img, nil
}

// openOCIArchive opens an image of a tarred OCI layout.
func openOCIArchive(ctx context.Context, r Reference, o options) (*image, error) {
	afs, err := openTarStore(ctx, r.Path, o.limits)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img, err := openLayout(ctx, afs, r, o)
	if err != nil {
		afs.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img.cleanup = append(img.cleanup, afs.Close)
	return img, nil
}

// readFile reads a small file of st, refusing one over limit bytes.
func readFile(ctx context.Context, st store, name, what string, limit int64) ([]byte, error) {
	rc, size, err := st.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > limit {
		return nil, tooLarge("%s: %d bytes, over the %s %s limit", name, size, humanSize(limit), what)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(ctxReader{ctx, rc}, b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// openLayout opens the image of an OCI layout that r selects: by digest,
// by its org.opencontainers.image.ref.name annotation, or the only one.
func openLayout(ctx context.Context, st store, r Reference, o options) (*image, error) {
	lim := o.limits
	raw, err := readFile(ctx, st, "index.json", "manifest", lim.Manifest)
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
		desc = v1.Descriptor{Digest: h, Size: -1}
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
		raw, err := readBlob(ctx, st, desc, "manifest", lim.Manifest)
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
		if err := checkManifest(m, lim); err != nil {
			return nil, err
		}
		cfg, err := readBlob(ctx, st, m.Config, "config", lim.Config)
		if err != nil {
			return nil, err
		}
		img := &image{digest: desc.Digest.String()}
		if img.config, err = configOf(cfg); err != nil {
			return nil, fmt.Errorf("config %s: %w", m.Config.Digest, err)
		}
		img.labels = img.config.Labels
		for _, ld := range m.Layers {
			img.layers = append(img.layers, layer{
				digest: ld.Digest.String(),
				open: func(ctx context.Context) (io.ReadCloser, error) {
					return openBlob(ctx, st, ld)
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

// readBlob reads and verifies a small blob (a manifest or config) of a
// layout. A descriptor size of -1 (a digest typed by the user) takes the
// file's size, within limit.
func readBlob(ctx context.Context, st store, d v1.Descriptor, what string, limit int64) ([]byte, error) {
	if d.Size > limit {
		return nil, tooLarge("%s %s: %d bytes declared, over the %s %s limit", what, d.Digest, d.Size, humanSize(limit), what)
	}
	rc, err := openBlobSized(ctx, st, d, limit)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, d.Digest, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, d.Digest, err)
	}
	return b, nil
}

// openBlob opens a layer blob of a layout; the reader fails at its end
// unless the bytes match the descriptor's digest.
func openBlob(ctx context.Context, st store, d v1.Descriptor) (io.ReadCloser, error) {
	rc, err := openBlobSized(ctx, st, d, -1)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	return rc, nil
}

// openBlobSized opens blob d, whose file must have the descriptor's size
// (or, for size -1, at most limit bytes), behind a verifying reader.
func openBlobSized(ctx context.Context, st store, d v1.Descriptor, limit int64) (io.ReadCloser, error) {
	if d.Digest.Algorithm != "sha256" {
		return nil, fmt.Errorf("unsupported digest algorithm %q", d.Digest.Algorithm)
	}
	f, size, err := st.open(blobPath(d.Digest))
	if err != nil {
		return nil, err
	}
	want := d.Size
	switch {
	case want < 0 && size > limit:
		f.Close()
		return nil, tooLarge("%d bytes, over the %s manifest limit", size, humanSize(limit))
	case want < 0:
		want = size
	case size != want:
		f.Close()
		return nil, fmt.Errorf("the file has %d bytes, the descriptor declares %d: %w", size, want, ErrDigest)
	}
	v, err := newVerifier(ctx, f, f, d.Digest, want)
	if err != nil {
		f.Close()
		return nil, err
	}
	return v, nil
}

// tarStore is a read-only view of the regular files (and links to them)
// of an uncompressed tar archive, indexed once (headers only: data is
// skipped by seeking) and read through section readers.
type tarStore struct {
	f     *os.File
	files map[string]tarEntry
}

type tarEntry struct {
	off, size int64
	link      string // target of a symbolic (relative) or hard (root) link
	symlink   bool
}

// openTarStore indexes the archive at file, which must be a regular file.
func openTarStore(ctx context.Context, file string, lim Limits) (*tarStore, error) {
	lim = lim.withDefaults()
	f, size, err := safefs.OpenRegular(nil, file)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	if n, _ := f.ReadAt(magic[:], 0); n >= 2 && (magic[0] == 0x1f && magic[1] == 0x8b || magic == [4]byte{0x28, 0xb5, 0x2f, 0xfd}) {
		f.Close()
		return nil, errors.New("compressed archives are not supported: decompress it first")
	}
	sr := io.NewSectionReader(f, 0, size)
	tr := tar.NewReader(sr)
	t := &tarStore{f: f, files: map[string]tarEntry{}}
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			f.Close()
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reading archive: %w", err)
		}
		if n >= lim.Entries {
			f.Close()
			return nil, tooLarge("archive: more than %d entries (the entries limit)", lim.Entries)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "/"))
		switch h.Typeflag {
		case tar.TypeReg:
			off, _ := sr.Seek(0, io.SeekCurrent)
			t.files[name] = tarEntry{off: off, size: h.Size}
		case tar.TypeSymlink:
			t.files[name] = tarEntry{link: path.Join(path.Dir(name), h.Linkname), symlink: true}
		case tar.TypeLink:
			t.files[name] = tarEntry{link: path.Clean(strings.TrimPrefix(h.Linkname, "/"))}
		default:
			delete(t.files, name)
		}
	}
	return t, nil
}

func (t *tarStore) Close() error { return t.f.Close() }

func (t *tarStore) open(name string) (io.ReadCloser, int64, error) {
	p := path.Clean(name)
	for hops := 0; ; hops++ {
		e, ok := t.files[p]
		if !ok {
			return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		if e.link == "" {
			return io.NopCloser(io.NewSectionReader(t.f, e.off, e.size)), e.size, nil
		}
		if hops == maxLinkHops {
			return nil, 0, &fs.PathError{Op: "open", Path: name, Err: errors.New("too many links")}
		}
		p = e.link
	}
}

// openDockerArchive opens an image of a `docker save` archive.
func openDockerArchive(ctx context.Context, r Reference, o options) (*image, error) {
	if r.Digest != "" {
		return nil, fmt.Errorf("opening %s: docker archives select images by tag, not digest", r.Raw)
	}
	afs, err := openTarStore(ctx, r.Path, o.limits)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img, err := dockerArchiveImage(ctx, afs, r, o.limits)
	if err != nil {
		afs.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	img.cleanup = append(img.cleanup, afs.Close)
	return img, nil
}

// parseDockerManifest parses a docker archive's manifest.json.
func parseDockerManifest(raw []byte) (tarball.Manifest, error) {
	var ms tarball.Manifest
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	for i, m := range ms {
		if m.Config == "" {
			return nil, fmt.Errorf("manifest.json: image %d has no config", i)
		}
	}
	return ms, nil
}

func dockerArchiveImage(ctx context.Context, afs *tarStore, r Reference, lim Limits) (*image, error) {
	lim = lim.withDefaults()
	raw, err := readFile(ctx, afs, "manifest.json", "manifest", lim.Manifest)
	if err != nil {
		return nil, fmt.Errorf("not a docker archive: %w", err)
	}
	ms, err := parseDockerManifest(raw)
	if err != nil {
		return nil, err
	}
	m, err := pickDockerImage(ms, r.Tag)
	if err != nil {
		return nil, err
	}
	cfg, err := readFile(ctx, afs, m.Config, "config", lim.Config)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config, err)
	}
	cfgDigest := sha256Hex(cfg)
	// A config named by its digest must have it.
	if h, ok := configDigestInName(m.Config); ok && h.Hex != cfgDigest {
		return nil, fmt.Errorf("config %s: hashes to sha256:%s: %w", m.Config, cfgDigest, ErrDigest)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(cfg))
	if err != nil {
		return nil, fmt.Errorf("config %s: parsing image config: %w", m.Config, err)
	}
	if len(cf.RootFS.DiffIDs) != len(m.Layers) {
		return nil, fmt.Errorf("config %s: %d diff_ids for %d layers in manifest.json", m.Config, len(cf.RootFS.DiffIDs), len(m.Layers))
	}
	img := &image{digest: "sha256:" + cfgDigest, labels: cf.Config.Labels, config: cf.Config}
	for i, lp := range m.Layers {
		diffID := cf.RootFS.DiffIDs[i]
		if diffID.Algorithm != "sha256" {
			return nil, fmt.Errorf("layer %s: unsupported diff_id %s", lp, diffID)
		}
		img.layers = append(img.layers, layer{
			digest: lp,
			diffID: diffID,
			open: func(ctx context.Context) (io.ReadCloser, error) {
				f, size, err := afs.open(lp)
				if err != nil {
					return nil, err
				}
				if size > lim.Blob {
					return nil, tooLarge("%d bytes, over the %s blob limit", size, humanSize(lim.Blob))
				}
				// Layers named by their digest (blobs/sha256/HEX, docker 25+)
				// are verified as stored too; every layer is checked
				// against its diff_id once uncompressed.
				if d, ok := layerDigestInName(lp); ok {
					return newVerifier(ctx, f, f, d, size)
				}
				return f, nil
			},
		})
	}
	return img, nil
}

// pickDockerImage selects the image of a docker archive by repo tag, or
// the only one.
func pickDockerImage(ms tarball.Manifest, tag string) (*tarball.Descriptor, error) {
	var m *tarball.Descriptor
	var all []string
	for i := range ms {
		all = append(all, ms[i].RepoTags...)
		for _, t := range ms[i].RepoTags {
			if tag != "" && (t == tag || strings.TrimPrefix(t, "docker.io/library/") == tag || strings.TrimPrefix(t, "docker.io/") == tag) {
				m = &ms[i]
			}
		}
	}
	sort.Strings(all)
	switch {
	case tag != "" && m == nil:
		return nil, fmt.Errorf("no image tagged %q in the archive (tags: %s)", tag, strings.Join(nonEmpty(all), ", "))
	case tag == "" && len(ms) != 1:
		return nil, fmt.Errorf("the archive holds %d images: name one with :REPO:TAG (tags: %s)", len(ms), strings.Join(nonEmpty(all), ", "))
	case tag == "":
		m = &ms[0]
	}
	return m, nil
}

// configDigestInName returns the digest a docker archive's config path
// names: HEX.json (docker before 25, podman), sha256:HEX
// (go-containerregistry) or blobs/sha256/HEX (docker 25+).
func configDigestInName(p string) (v1.Hash, bool) {
	s := strings.TrimSuffix(p, ".json")
	s = strings.TrimPrefix(s, "sha256:")
	return hexDigest(strings.TrimPrefix(s, "blobs/sha256/"))
}

// layerDigestInName returns the digest a docker archive's layer path
// names: only blobs/sha256/HEX (docker 25+) is unambiguous (other tools
// name layers by their diff_id or by their compressed digest).
func layerDigestInName(p string) (v1.Hash, bool) {
	s, ok := strings.CutPrefix(p, "blobs/sha256/")
	if !ok {
		return v1.Hash{}, false
	}
	return hexDigest(s)
}

func hexDigest(s string) (v1.Hash, bool) {
	if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return v1.Hash{}, false
	}
	return v1.Hash{Algorithm: "sha256", Hex: s}, true
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
