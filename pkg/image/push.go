package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Writing images: [Session.Write] pushes an image or index to a registry
// with the session's transport, TLS options and credentials (those of
// pulls), or writes it to an OCI layout, an OCI archive or a docker
// archive, the reference forms [Open] reads. Local files are written
// atomically: blobs and index.json through a temporary file renamed into
// place (inside the layout, through an os.Root), archives to a temporary
// file beside the target, linked or renamed into place once complete.

// Artifact is what [Session.Write] writes: a v1.Image or a v1.ImageIndex
// (whose children must be images).
type Artifact interface {
	MediaType() (types.MediaType, error)
	Digest() (v1.Hash, error)
	Size() (int64, error)
	RawManifest() ([]byte, error)
}

// Destination is a parsed place to write an image to.
type Destination struct {
	// Raw is the destination as given.
	Raw       string
	Transport Transport
	// Name is the registry tag (Remote).
	Name name.Reference
	// Path is the layout directory or the archive file.
	Path string
	// Tag is the image's name in a layout (org.opencontainers.image.ref.name)
	// or an OCI archive, or its REPO:TAG in a docker archive ("" = none).
	Tag string
}

func (d Destination) String() string { return d.Raw }

// ParseDestination parses where to write an image: a registry tag
// (HOST/REPO[:TAG], the tag defaulting to latest; not a digest),
// oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG].
// A local path is the whole text when it exists (as a directory for oci:,
// as a file for the archives); otherwise it ends at the first ':', as
// containers/image reads these references. A registry destination written
// as a path (see [IsPath]) is refused. insecure allows plain HTTP.
func ParseDestination(ref string, insecure bool) (Destination, error) {
	d := Destination{Raw: ref}
	local := func(t Transport, s string, wantDir bool) (Destination, error) {
		d.Transport = t
		if s == "" {
			return d, fmt.Errorf("invalid destination %q: missing path", ref)
		}
		if st, err := os.Stat(s); err == nil && st.IsDir() == wantDir {
			d.Path = s
			return d, nil
		}
		d.Path, d.Tag, _ = strings.Cut(s, ":")
		if d.Path == "" {
			return d, fmt.Errorf("invalid destination %q: missing path", ref)
		}
		if strings.Contains(s, ":") && d.Tag == "" {
			return d, fmt.Errorf("invalid destination %q: empty tag", ref)
		}
		return d, nil
	}
	switch {
	case strings.HasPrefix(ref, "oci:"):
		d, err := local(OCILayout, strings.TrimPrefix(ref, "oci:"), true)
		if err == nil && d.Tag != "" && !validRefName(d.Tag) {
			err = fmt.Errorf("invalid destination %q: %q is not a valid image name in a layout", ref, d.Tag)
		}
		return d, err
	case strings.HasPrefix(ref, "oci-archive:"):
		d, err := local(OCIArchive, strings.TrimPrefix(ref, "oci-archive:"), false)
		if err == nil && d.Tag != "" && !validRefName(d.Tag) {
			err = fmt.Errorf("invalid destination %q: %q is not a valid image name in a layout", ref, d.Tag)
		}
		return d, err
	case strings.HasPrefix(ref, "docker-archive:"):
		d, err := local(DockerArchive, strings.TrimPrefix(ref, "docker-archive:"), false)
		if err == nil && d.Tag != "" {
			if strings.Contains(d.Tag, "@") {
				return d, fmt.Errorf("invalid destination %q: a docker archive names images by REPO:TAG, not by digest", ref)
			}
			if _, perr := name.NewTag(d.Tag); perr != nil {
				return d, fmt.Errorf("invalid destination %q: %w", ref, perr)
			}
			if !hasTag(d.Tag) {
				d.Tag += ":latest"
			}
		}
		return d, err
	}
	if IsPath(ref) {
		return d, fmt.Errorf("invalid destination %q: a local path: write oci:PATH, oci-archive:PATH or docker-archive:PATH to write an image file", ref)
	}
	s := strings.TrimPrefix(ref, "docker://")
	if strings.Contains(s, "@") {
		return d, fmt.Errorf("invalid destination %q: push to a tag, not a digest", ref)
	}
	r, err := ParseReference(ref, insecure)
	if err != nil {
		return d, err
	}
	d.Transport, d.Name = Remote, r.Name
	return d, nil
}

// validRefName reports whether s is a valid org.opencontainers.image.ref.name
// (the OCI image layout's grammar: alphanumeric components separated by
// -._:@/+ and --).
func validRefName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-._:@/+", c):
		default:
			return false
		}
	}
	return true
}

// WriteOptions tune [Session.Write].
type WriteOptions struct {
	// Overwrite allows replacing an existing archive file. Without it an
	// existing file is an error wrapping fs.ErrExist, and is left alone.
	Overwrite bool
	// ModTime is the modification time of archive entries (the zero time
	// means the Unix epoch), so that archives are reproducible.
	ModTime time.Time
}

// Write writes a (a v1.Image or v1.ImageIndex) to dst, parsed by
// [ParseDestination].
func (s *Session) Write(ctx context.Context, dst Destination, a Artifact, wo WriteOptions) error {
	if s.o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.o.timeout)
		defer cancel()
	}
	var err error
	switch dst.Transport {
	case Remote:
		err = s.push(ctx, dst, a)
	case OCILayout:
		err = writeLayout(ctx, dst, a, s.o.limits)
	case OCIArchive:
		err = writeArchive(ctx, dst, wo, func(tw *archiveWriter) error { return tw.ociLayout(dst.Tag, a) })
	case DockerArchive:
		img, ok := a.(v1.Image)
		if !ok {
			return fmt.Errorf("writing %s: a docker archive holds single-platform images, not an index: choose one platform", dst.Raw)
		}
		err = writeArchive(ctx, dst, wo, func(tw *archiveWriter) error { return tw.dockerArchive(dst.Tag, img) })
	default:
		err = errors.New("unknown destination")
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", dst.Raw, err)
	}
	return nil
}

// push pushes a to a registry with the session's transport and keychain.
func (s *Session) push(ctx context.Context, dst Destination, a Artifact) error {
	if err := s.init(); err != nil {
		return err
	}
	target, err := s.pushTarget(dst.Name)
	if err != nil {
		return err
	}
	p, err := remote.NewPusher(s.remoteOptions(s.o.jobs)...)
	if err != nil {
		return err
	}
	var t remote.Taggable
	switch a := a.(type) {
	case v1.Image:
		t = mountImage{a, target.Context()}
	case v1.ImageIndex:
		t = mountIndex{a, target.Context()}
	default:
		return fmt.Errorf("cannot push a %T", a)
	}
	if err := p.Push(ctx, target, t); err != nil {
		return s.explain(err)
	}
	return nil
}

// sourced is a layer that knows the registry blob it comes from.
type sourced interface{ Source() name.Reference }

// mountImage offers the layers of a that come from a repository of the
// destination's registry for a cross-repository mount, so that the
// registry copies them instead of receiving them.
type mountImage struct {
	v1.Image
	dst name.Repository
}

func (m mountImage) mountable(l v1.Layer) v1.Layer {
	if src, ok := l.(sourced); ok && src.Source().Context().RegistryStr() == m.dst.RegistryStr() {
		return &remote.MountableLayer{Layer: l, Reference: src.Source()}
	}
	return l
}

func (m mountImage) Layers() ([]v1.Layer, error) {
	ls, err := m.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for i, l := range ls {
		out[i] = m.mountable(l)
	}
	return out, nil
}

func (m mountImage) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := m.Image.LayerByDigest(h)
	if err != nil {
		return nil, err
	}
	return m.mountable(l), nil
}

// mountIndex does the same for the images of an index. (Its index is a
// named field: embedded, the field ImageIndex would hide the method.)
type mountIndex struct {
	idx v1.ImageIndex
	dst name.Repository
}

func (m mountIndex) MediaType() (types.MediaType, error)       { return m.idx.MediaType() }
func (m mountIndex) Digest() (v1.Hash, error)                  { return m.idx.Digest() }
func (m mountIndex) Size() (int64, error)                      { return m.idx.Size() }
func (m mountIndex) IndexManifest() (*v1.IndexManifest, error) { return m.idx.IndexManifest() }
func (m mountIndex) RawManifest() ([]byte, error)              { return m.idx.RawManifest() }
func (m mountIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("index %s: nested indexes are not written", h)
}

func (m mountIndex) Image(h v1.Hash) (v1.Image, error) {
	img, err := m.idx.Image(h)
	if err != nil {
		return nil, err
	}
	return mountImage{img, m.dst}, nil
}

// blob is one blob of an artifact.
type blob struct {
	desc v1.Descriptor
	data []byte                        // manifests and configs
	open func() (io.ReadCloser, error) // layers
}

// artifactBlobs returns the descriptor of a and every blob it is made of
// (manifests, configs, layers), each once, sorted by digest.
func artifactBlobs(a Artifact) (v1.Descriptor, []blob, error) {
	seen := map[v1.Hash]bool{}
	var out []blob
	add := func(b blob) {
		if !seen[b.desc.Digest] {
			seen[b.desc.Digest] = true
			out = append(out, b)
		}
	}
	manifestBlob := func(a Artifact) (v1.Descriptor, error) {
		raw, err := a.RawManifest()
		if err != nil {
			return v1.Descriptor{}, err
		}
		mt, err := a.MediaType()
		if err != nil {
			return v1.Descriptor{}, err
		}
		d := v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: v1.Hash{Algorithm: "sha256", Hex: sha256Hex(raw)}}
		add(blob{desc: d, data: raw})
		return d, nil
	}
	image := func(img v1.Image) (v1.Descriptor, error) {
		d, err := manifestBlob(img)
		if err != nil {
			return d, err
		}
		m, err := img.Manifest()
		if err != nil {
			return d, err
		}
		cfg, err := img.RawConfigFile()
		if err != nil {
			return d, err
		}
		add(blob{desc: m.Config, data: cfg})
		ls, err := img.Layers()
		if err != nil {
			return d, err
		}
		if len(ls) != len(m.Layers) {
			return d, fmt.Errorf("image %s: %d layers for %d in its manifest", d.Digest, len(ls), len(m.Layers))
		}
		for i, l := range ls {
			add(blob{desc: m.Layers[i], open: l.Compressed})
		}
		return d, nil
	}
	var top v1.Descriptor
	var err error
	switch a := a.(type) {
	case v1.Image:
		top, err = image(a)
	case v1.ImageIndex:
		top, err = manifestBlob(a)
		if err != nil {
			break
		}
		var im *v1.IndexManifest
		if im, err = a.IndexManifest(); err != nil {
			break
		}
		for _, d := range im.Manifests {
			if !d.MediaType.IsImage() {
				err = fmt.Errorf("index %s: entry %s is a %s, not an image", top.Digest, d.Digest, d.MediaType)
				break
			}
			var img v1.Image
			if img, err = a.Image(d.Digest); err != nil {
				break
			}
			if _, err = image(img); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("cannot write a %T", a)
	}
	if err != nil {
		return top, nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].desc.Digest.Hex < out[j].desc.Digest.Hex })
	return top, out, nil
}

// reader returns the bytes of b behind a reader that fails at the end
// unless they have b's digest and size.
func (b blob) reader(ctx context.Context) (io.ReadCloser, error) {
	var rc io.ReadCloser
	if b.data != nil {
		rc = io.NopCloser(bytes.NewReader(b.data))
	} else {
		var err error
		if rc, err = b.open(); err != nil {
			return nil, err
		}
	}
	v, err := newVerifier(ctx, rc, rc, b.desc.Digest, b.desc.Size)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return v, nil
}

// copyBlob writes b to w and checks its digest and size.
func copyBlob(ctx context.Context, w io.Writer, b blob) error {
	rc, err := b.reader(ctx)
	if err != nil {
		return fmt.Errorf("blob %s: %w", b.desc.Digest, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("blob %s: %w", b.desc.Digest, err)
	}
	return nil
}

const ociLayoutFile = `{"imageLayoutVersion":"1.0.0"}`

// layoutIndex is the index.json written for a: one entry, named tag when
// it is not empty.
func layoutIndex(top v1.Descriptor, tag string) v1.Descriptor {
	d := v1.Descriptor{MediaType: top.MediaType, Size: top.Size, Digest: top.Digest}
	if tag != "" {
		d.Annotations = map[string]string{annotationRefName: tag}
	}
	return d
}

func marshalIndex(entries []v1.Descriptor) ([]byte, error) {
	if entries == nil {
		entries = []v1.Descriptor{}
	}
	return json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: entries})
}

// writeLayout adds a to the OCI layout directory dst.Path, creating it when
// it does not exist. The entry named dst.Tag (or, without a tag, every
// unnamed entry) is replaced; other entries and every blob stay. A layout
// this call started (a new or empty directory) is removed again when the
// write fails.
func writeLayout(ctx context.Context, dst Destination, a Artifact, lim Limits) (err error) {
	top, blobs, err := artifactBlobs(a)
	if err != nil {
		return err
	}
	_, statErr := os.Lstat(dst.Path)
	if err := os.MkdirAll(dst.Path, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dst.Path)
	if err != nil {
		return err
	}
	defer root.Close()
	fresh := false
	if _, err := root.Lstat("oci-layout"); errors.Is(err, fs.ErrNotExist) {
		f, err := root.Open(".")
		if err != nil {
			return err
		}
		names, _ := f.Readdirnames(1)
		f.Close()
		if len(names) > 0 {
			return fmt.Errorf("%s is not an OCI image layout (it has no oci-layout file) and is not empty", dst.Path)
		}
		fresh = true
	} else if err != nil {
		return err
	} else if _, err := readFile(ctx, dirStore{root}, "oci-layout", "manifest", lim.Manifest); err != nil {
		return fmt.Errorf("oci-layout: %w", err)
	}
	if fresh {
		defer func() {
			if err == nil {
				return
			}
			if errors.Is(statErr, fs.ErrNotExist) {
				os.RemoveAll(dst.Path)
				return
			}
			for _, n := range []string{"blobs", "index.json", "oci-layout"} {
				root.RemoveAll(n)
			}
		}()
		if err := putRootFile(root, "oci-layout", []byte(ociLayoutFile)); err != nil {
			return err
		}
	}
	var entries []v1.Descriptor
	if !fresh {
		raw, err := readFile(ctx, dirStore{root}, "index.json", "manifest", lim.Manifest)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil {
			idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
			if err != nil {
				return fmt.Errorf("index.json: %w", err)
			}
			for _, d := range idx.Manifests {
				if d.Annotations[annotationRefName] != dst.Tag {
					entries = append(entries, d)
				}
			}
		}
	}
	if err := root.MkdirAll("blobs/sha256", 0o755); err != nil {
		return err
	}
	for _, b := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := putLayoutBlob(ctx, root, b); err != nil {
			return err
		}
	}
	idx, err := marshalIndex(append(entries, layoutIndex(top, dst.Tag)))
	if err != nil {
		return err
	}
	return putRootFile(root, "index.json", idx)
}

// putLayoutBlob writes blob b into the layout unless a regular file with
// its content is already there.
func putLayoutBlob(ctx context.Context, root *os.Root, b blob) error {
	if b.desc.Digest.Algorithm != "sha256" {
		return fmt.Errorf("blob %s: unsupported digest algorithm", b.desc.Digest)
	}
	p := "blobs/sha256/" + b.desc.Digest.Hex
	if rc, err := openBlobSized(ctx, dirStore{root}, b.desc, -1); err == nil {
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err == nil {
			return nil
		}
	}
	tmp, f, err := createTemp(root, "blobs/sha256/.tmp-"+b.desc.Digest.Hex[:12])
	if err != nil {
		return err
	}
	err = copyBlob(ctx, f, b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// putRootFile replaces name in root with data, through a temporary file.
func putRootFile(root *os.Root, name string, data []byte) error {
	tmp, f, err := createTemp(root, "."+name+".tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// createTemp creates a new file prefix-RANDOM in root.
func createTemp(root *os.Root, prefix string) (string, *os.File, error) {
	for range 10 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", nil, err
		}
		name := prefix + "-" + hex.EncodeToString(b[:])
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("cannot create a temporary file")
}

// writeArchive writes an archive to a temporary file beside dst.Path with
// fill, then moves it into place: renamed over the target with
// Overwrite, else linked, so that a file created meanwhile is not
// replaced either.
func writeArchive(ctx context.Context, dst Destination, wo WriteOptions, fill func(*archiveWriter) error) (err error) {
	if !wo.Overwrite {
		if _, err := os.Lstat(dst.Path); err == nil {
			return fmt.Errorf("%s: %w", dst.Path, fs.ErrExist)
		}
	}
	dir, base := filepath.Split(dst.Path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	name := f.Name()
	defer func() {
		f.Close()
		os.Remove(name)
	}()
	mtime := wo.ModTime
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	tw := &archiveWriter{ctx: ctx, tw: tar.NewWriter(f), mtime: mtime.UTC()}
	if err := fill(tw); err != nil {
		return err
	}
	if err := tw.tw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if wo.Overwrite {
		return os.Rename(name, dst.Path)
	}
	if err := os.Link(name, dst.Path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", dst.Path, fs.ErrExist)
		}
		if _, serr := os.Lstat(dst.Path); serr == nil {
			return fmt.Errorf("%s: %w", dst.Path, fs.ErrExist)
		}
		return os.Rename(name, dst.Path)
	}
	return nil
}

// archiveWriter writes reproducible tar entries: fixed owner, modes and
// time.
type archiveWriter struct {
	ctx   context.Context
	tw    *tar.Writer
	mtime time.Time
	dirs  map[string]bool
}

func (w *archiveWriter) dir(name string) error {
	if w.dirs == nil {
		w.dirs = map[string]bool{}
	}
	if w.dirs[name] {
		return nil
	}
	w.dirs[name] = true
	return w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: w.mtime, Format: tar.FormatPAX})
}

func (w *archiveWriter) file(name string, data []byte) error {
	if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: w.mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

func (w *archiveWriter) blobs(bs []blob) error {
	if err := w.dir("blobs"); err != nil {
		return err
	}
	if err := w.dir("blobs/sha256"); err != nil {
		return err
	}
	for _, b := range bs {
		if b.desc.Digest.Algorithm != "sha256" {
			return fmt.Errorf("blob %s: unsupported digest algorithm", b.desc.Digest)
		}
		if err := w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "blobs/sha256/" + b.desc.Digest.Hex, Mode: 0o644, Size: b.desc.Size, ModTime: w.mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if err := copyBlob(w.ctx, w.tw, b); err != nil {
			return err
		}
	}
	return nil
}

// ociLayout writes a as a tarred OCI layout.
func (w *archiveWriter) ociLayout(tag string, a Artifact) error {
	top, bs, err := artifactBlobs(a)
	if err != nil {
		return err
	}
	idx, err := marshalIndex([]v1.Descriptor{layoutIndex(top, tag)})
	if err != nil {
		return err
	}
	if err := w.file("oci-layout", []byte(ociLayoutFile)); err != nil {
		return err
	}
	if err := w.file("index.json", idx); err != nil {
		return err
	}
	return w.blobs(bs)
}

// dockerArchive writes img as a docker archive (`docker save` format, with
// blobs named by digest as docker 25 does), tagged repoTag when it is not
// empty.
func (w *archiveWriter) dockerArchive(repoTag string, img v1.Image) error {
	_, bs, err := artifactBlobs(img)
	if err != nil {
		return err
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	entry := struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{Config: "blobs/sha256/" + m.Config.Digest.Hex, RepoTags: []string{}}
	if repoTag != "" {
		entry.RepoTags = []string{repoTag}
	}
	for _, l := range m.Layers {
		entry.Layers = append(entry.Layers, "blobs/sha256/"+l.Digest.Hex)
	}
	raw, err := json.Marshal([]any{entry})
	if err != nil {
		return err
	}
	// The image manifest itself is not part of a docker archive.
	mfDigest, err := img.Digest()
	if err != nil {
		return err
	}
	var keep []blob
	for _, b := range bs {
		if b.desc.Digest != mfDigest {
			keep = append(keep, b)
		}
	}
	if err := w.file("manifest.json", raw); err != nil {
		return err
	}
	return w.blobs(keep)
}
