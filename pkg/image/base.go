package image

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Base images: an image or index opened to build on ([Session.OpenBase]).
// Everything is read through the same bounded, verified paths as [Open]:
// manifests and configs within the limits, every blob checked against its
// digest and size. Layers are not read when the base is opened: they are
// go-containerregistry layers whose bytes are fetched (registry layers into
// the blob cache) only when a writer needs them, so a push to a registry
// that already has them, or can mount them, downloads nothing.

// Base is a base image opened with [Session.OpenBase]: one image, or an
// index of images for several platforms.
type Base struct {
	// Ref is the reference as given.
	Ref string
	// Digest and MediaType are those of the manifest or index Ref names.
	Digest    v1.Hash
	MediaType types.MediaType
	// IsIndex reports whether Ref names an index (a multi-platform image).
	IsIndex bool
	// Images are the images kept, in the index's order (one when Ref names
	// an image).
	Images []*BaseImage
	// Remote is the repository of a registry base ("" otherwise), where
	// pushes to the same registry may mount its layers from.
	Remote name.Repository

	cleanup []func() error
}

// BaseImage is one image of a [Base].
type BaseImage struct {
	// Platform comes from the index entry, or from the config for a single
	// image.
	Platform v1.Platform
	// Digest and MediaType are the image manifest's.
	Digest    v1.Hash
	MediaType types.MediaType
	// Manifest is the parsed manifest, RawManifest its bytes.
	Manifest    *v1.Manifest
	RawManifest []byte
	// Config is the parsed image config, RawConfig its bytes.
	Config    *v1.ConfigFile
	RawConfig []byte
	// Layers are the image's layers, in order; their bytes are read, and
	// verified, when a writer asks for them.
	Layers []v1.Layer
}

// Close releases what the base holds open (layouts, archives). Its layers
// must not be read after it.
func (b *Base) Close() error {
	var errs []error
	for i := len(b.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, b.cleanup[i]())
	}
	b.cleanup = nil
	return errors.Join(errs...)
}

// OpenBase opens ref (a registry image, oci:DIR[:TAG|@DIGEST] or
// oci-archive:FILE[:TAG|@DIGEST]) to build on. When ref names an index,
// every image of a platform is kept (entries without a platform, or of
// platform unknown/unknown such as attestations, are skipped), or only
// those satisfying one of platforms when it is not empty; a platform that
// matches no image is an error listing those the index has. When ref names
// one image and platforms is not empty, the image must satisfy one of them.
//
// ctx bounds the opening and every later read of the layers' bytes; the
// session must stay open while the layers are read.
func (s *Session) OpenBase(ctx context.Context, ref string, platforms []v1.Platform) (*Base, error) {
	r, err := ParseReference(ref, s.o.useHTTP)
	if err != nil {
		return nil, err
	}
	var b *Base
	switch r.Transport {
	case Remote:
		b, err = s.openRemoteBase(ctx, r, platforms)
		if err != nil {
			err = s.pullError(ref, err)
		}
	case OCILayout:
		b, err = openLayoutBaseDir(ctx, r, s.o, platforms)
	case OCIArchive:
		b, err = openLayoutBaseArchive(ctx, r, s.o, platforms)
	default:
		err = fmt.Errorf("base image %s: docker archives cannot be used as a base image (write it as an OCI layout or archive)", ref)
	}
	if err != nil {
		return nil, err
	}
	b.Ref = ref
	return b, nil
}

// fetchedManifest is a manifest or index as read, with its descriptor.
type fetchedManifest struct {
	desc v1.Descriptor
	raw  []byte
}

// baseReader reads the blobs of one base, wherever it lives.
type baseReader struct {
	// manifest fetches the manifest or index that desc describes (desc.Size
	// -1 for the top one, named by reference).
	manifest func(ctx context.Context, desc v1.Descriptor) (fetchedManifest, error)
	// config reads a config blob (its size is checked against the limit
	// first).
	config func(ctx context.Context, desc v1.Descriptor) ([]byte, error)
	// layer returns the layer of desc, whose uncompressed digest is diffID.
	layer func(desc v1.Descriptor, diffID v1.Hash) v1.Layer
	lim   Limits
}

// open reads the top manifest and, for an index, the images it keeps.
func (br *baseReader) open(ctx context.Context, top fetchedManifest, platforms []v1.Platform) (*Base, error) {
	mt := top.desc.MediaType
	if mt == "" {
		mt = sniffMediaType(top.raw)
	}
	b := &Base{Digest: top.desc.Digest, MediaType: mt}
	switch {
	case mt.IsSchema1():
		return nil, fmt.Errorf("docker schema 1 manifests are not supported (%s)", mt)
	case mt.IsIndex():
		idx, err := v1.ParseIndexManifest(bytes.NewReader(top.raw))
		if err != nil {
			return nil, fmt.Errorf("parsing index %s: %w", top.desc.Digest, err)
		}
		b.IsIndex = true
		keep, err := pickPlatforms(idx, platforms)
		if err != nil {
			return nil, err
		}
		for _, d := range keep {
			if d.MediaType.IsIndex() {
				return nil, fmt.Errorf("index %s: nested indexes are not supported in a base image", top.desc.Digest)
			}
			if d.Size < 0 || d.Size > br.lim.Manifest {
				return nil, tooLarge("manifest %s: %d bytes declared, over the %s manifest limit", d.Digest, d.Size, humanSize(br.lim.Manifest))
			}
			fm, err := br.manifest(ctx, d)
			if err != nil {
				return nil, err
			}
			img, err := br.image(ctx, fm)
			if err != nil {
				return nil, err
			}
			img.Platform = *d.Platform
			b.Images = append(b.Images, img)
		}
	default:
		top.desc.MediaType = mt
		img, err := br.image(ctx, top)
		if err != nil {
			return nil, err
		}
		img.Platform = configPlatform(img.Config)
		if len(platforms) > 0 && !satisfiesAny(img.Platform, platforms) {
			return nil, fmt.Errorf("the image is for %s, not %s", img.Platform.String(), platformList(platforms))
		}
		b.Images = []*BaseImage{img}
	}
	return b, nil
}

// image reads one image manifest and its config.
func (br *baseReader) image(ctx context.Context, fm fetchedManifest) (*BaseImage, error) {
	mt := fm.desc.MediaType
	if mt == "" {
		mt = sniffMediaType(fm.raw)
	}
	if mt.IsSchema1() {
		return nil, fmt.Errorf("docker schema 1 manifests are not supported (%s)", mt)
	}
	if !mt.IsImage() {
		return nil, fmt.Errorf("manifest %s: %s is not an image manifest", fm.desc.Digest, mt)
	}
	m, err := v1.ParseManifest(bytes.NewReader(fm.raw))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest %s: %w", fm.desc.Digest, err)
	}
	if err := checkManifest(m, br.lim); err != nil {
		return nil, err
	}
	raw, err := br.config(ctx, m.Config)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config.Digest, err)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("config %s: parsing image config: %w", m.Config.Digest, err)
	}
	if len(cf.RootFS.DiffIDs) != len(m.Layers) {
		return nil, fmt.Errorf("config %s: %d diff_ids for %d layers in manifest %s", m.Config.Digest, len(cf.RootFS.DiffIDs), len(m.Layers), fm.desc.Digest)
	}
	img := &BaseImage{Digest: fm.desc.Digest, MediaType: mt, Manifest: m, RawManifest: fm.raw, Config: cf, RawConfig: raw}
	for i, ld := range m.Layers {
		if ld.Digest.Algorithm != "sha256" {
			return nil, fmt.Errorf("layer %s: unsupported digest algorithm %q", ld.Digest, ld.Digest.Algorithm)
		}
		img.Layers = append(img.Layers, br.layer(ld, cf.RootFS.DiffIDs[i]))
	}
	return img, nil
}

// pickPlatforms returns the entries of idx to keep.
func pickPlatforms(idx *v1.IndexManifest, want []v1.Platform) ([]v1.Descriptor, error) {
	var keep []v1.Descriptor
	var avail []string
	for _, d := range idx.Manifests {
		if d.Platform == nil || d.Platform.OS == "" || d.Platform.OS == "unknown" {
			continue
		}
		avail = append(avail, d.Platform.String())
		if len(want) == 0 || satisfiesAny(*d.Platform, want) {
			keep = append(keep, d)
		}
	}
	if len(avail) == 0 {
		return nil, errors.New("the index lists no image with a platform")
	}
	for _, w := range want {
		found := false
		for _, d := range keep {
			if d.Platform.Satisfies(w) {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no image for platform %s in the index (it has %s)", w.String(), strings.Join(avail, ", "))
		}
	}
	return keep, nil
}

func satisfiesAny(p v1.Platform, want []v1.Platform) bool {
	for _, w := range want {
		if p.Satisfies(w) {
			return true
		}
	}
	return false
}

func platformList(ps []v1.Platform) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}

// configPlatform is the platform an image config declares.
func configPlatform(cf *v1.ConfigFile) v1.Platform {
	if p := cf.Platform(); p != nil {
		return *p
	}
	return v1.Platform{}
}

// sniffMediaType guesses the media type of a manifest whose descriptor does
// not give one.
func sniffMediaType(raw []byte) types.MediaType {
	var probe struct {
		MediaType string          `json:"mediaType"`
		Manifests json.RawMessage `json:"manifests"`
	}
	_ = json.Unmarshal(raw, &probe)
	return typesMediaType(probe.MediaType, probe.Manifests != nil)
}

// openRemoteBase opens a registry base at the first place registries.conf
// lists for it that has it.
func (s *Session) openRemoteBase(ctx context.Context, r Reference, platforms []v1.Platform) (*Base, error) {
	if err := s.init(); err != nil {
		return nil, err
	}
	return trySources(ctx, s, r, func(at name.Reference) (*Base, error) {
		return s.openRemoteBaseAt(ctx, r, at, platforms)
	})
}

func (s *Session) openRemoteBaseAt(ctx context.Context, r Reference, ref name.Reference, platforms []v1.Platform) (*Base, error) {
	repo := ref.Context()
	br := &baseReader{
		lim: s.o.limits,
		manifest: func(ctx context.Context, d v1.Descriptor) (fetchedManifest, error) {
			target := ref
			if d.Size >= 0 {
				target = repo.Digest(d.Digest.String())
			}
			desc, err := s.puller.Get(ctx, target)
			if err != nil {
				return fetchedManifest{}, err
			}
			if d.Size >= 0 && int64(len(desc.Manifest)) != d.Size {
				return fetchedManifest{}, fmt.Errorf("manifest %s: %d bytes, the index declares %d: %w", desc.Digest, len(desc.Manifest), d.Size, ErrDigest)
			}
			return fetchedManifest{desc: v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: int64(len(desc.Manifest))}, raw: desc.Manifest}, nil
		},
		config: func(ctx context.Context, d v1.Descriptor) ([]byte, error) {
			return s.config(ctx, repo, d)
		},
		layer: func(d v1.Descriptor, diffID v1.Hash) v1.Layer {
			return &remoteLayer{s: s, ctx: ctx, r: r, repo: repo, desc: d, diffID: diffID}
		},
	}
	top, err := br.manifest(ctx, v1.Descriptor{Size: -1})
	if err != nil {
		return nil, err
	}
	b, err := br.open(ctx, top, platforms)
	if err != nil {
		return nil, err
	}
	b.Remote = repo
	return b, nil
}

// remoteLayer is a registry layer, fetched into the blob cache when its
// bytes are first needed.
type remoteLayer struct {
	s      *Session
	ctx    context.Context
	r      Reference
	repo   name.Repository
	desc   v1.Descriptor
	diffID v1.Hash
}

func (l *remoteLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *remoteLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *remoteLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *remoteLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }

// Compressed downloads the layer into the cache unless an entry there
// verifies, then reads it back through a verifying reader.
func (l *remoteLayer) Compressed() (io.ReadCloser, error) {
	ctx, s := l.ctx, l.s
	fetch := s.blobFetcher(l.repo, l.desc.Digest)
	refetch := s.cache.present(l.desc) && !s.cache.verifies(ctx, l.desc)
	for range 2 {
		if _, err := s.ensureBlob(ctx, l.r, l.desc, refetch, fetch); err != nil {
			return nil, fmt.Errorf("pulling %s: %w", l.r.Raw, err)
		}
		rc, ok, err := s.cache.open(ctx, l.desc)
		if err != nil || ok {
			return rc, err
		}
		refetch = true
	}
	return nil, fmt.Errorf("blob cache: %s vanished after its download", l.desc.Digest)
}

func (l *remoteLayer) Uncompressed() (io.ReadCloser, error) { return uncompressed(l) }

// Source is the registry repository the layer comes from (for mounts).
func (l *remoteLayer) Source() name.Reference { return l.repo.Digest(l.desc.Digest.String()) }

// uncompressed decompresses l's bytes (gzip, zstd or none).
func uncompressed(l v1.Layer) (io.ReadCloser, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	d, err := decompress(bufio.NewReader(rc))
	if err != nil {
		rc.Close()
		return nil, err
	}
	return closeBoth{d, rc}, nil
}

type closeBoth struct {
	io.ReadCloser
	under io.Closer
}

func (c closeBoth) Close() error { return errors.Join(c.ReadCloser.Close(), c.under.Close()) }

// openLayoutBaseDir opens a base in an OCI layout directory.
func openLayoutBaseDir(ctx context.Context, r Reference, o options, platforms []v1.Platform) (*Base, error) {
	root, err := os.OpenRoot(r.Path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	st := dirStore{root}
	b, err := openLayoutBase(ctx, st, r, o, platforms)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	b.cleanup = append(b.cleanup, st.Close)
	return b, nil
}

// openLayoutBaseArchive opens a base in a tarred OCI layout.
func openLayoutBaseArchive(ctx context.Context, r Reference, o options, platforms []v1.Platform) (*Base, error) {
	afs, err := openTarStore(ctx, r.Path, o.limits)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	b, err := openLayoutBase(ctx, afs, r, o, platforms)
	if err != nil {
		afs.Close()
		return nil, fmt.Errorf("opening %s: %w", r.Raw, err)
	}
	b.cleanup = append(b.cleanup, afs.Close)
	return b, nil
}

// openLayoutBase opens the image or index of a layout that r selects: by
// digest, by its org.opencontainers.image.ref.name annotation, or the only
// one.
func openLayoutBase(ctx context.Context, st store, r Reference, o options, platforms []v1.Platform) (*Base, error) {
	lim := o.limits
	raw, err := readFile(ctx, st, "index.json", "manifest", lim.Manifest)
	if err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	desc, err := selectLayoutEntry(idx, r)
	if err != nil {
		return nil, err
	}
	br := &baseReader{
		lim: lim,
		manifest: func(ctx context.Context, d v1.Descriptor) (fetchedManifest, error) {
			raw, err := readBlob(ctx, st, d, "manifest", lim.Manifest)
			if err != nil {
				return fetchedManifest{}, err
			}
			d.Size = int64(len(raw))
			return fetchedManifest{desc: d, raw: raw}, nil
		},
		config: func(ctx context.Context, d v1.Descriptor) ([]byte, error) {
			return readBlob(ctx, st, d, "config", lim.Config)
		},
		layer: func(d v1.Descriptor, diffID v1.Hash) v1.Layer {
			return &storeLayer{ctx: ctx, st: st, desc: d, diffID: diffID}
		},
	}
	top, err := br.manifest(ctx, desc)
	if err != nil {
		return nil, err
	}
	return br.open(ctx, top, platforms)
}

// selectLayoutEntry picks the entry of a layout's index.json that r names.
func selectLayoutEntry(idx *v1.IndexManifest, r Reference) (v1.Descriptor, error) {
	var tags []string
	for _, d := range idx.Manifests {
		tags = append(tags, d.Annotations[annotationRefName])
	}
	switch {
	case r.Digest != "":
		h, err := v1.NewHash(r.Digest)
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("invalid digest %q: %w", r.Digest, err)
		}
		for _, d := range idx.Manifests {
			if d.Digest == h {
				return d, nil
			}
		}
		// A digest not listed may still name a blob of the layout (a
		// platform's manifest): its size is then the file's.
		return v1.Descriptor{Digest: h, Size: -1}, nil
	case r.Tag != "":
		for _, d := range idx.Manifests {
			if d.Annotations[annotationRefName] == r.Tag || d.Annotations["io.containerd.image.name"] == r.Tag {
				return d, nil
			}
		}
		return v1.Descriptor{}, fmt.Errorf("no image tagged %q in the layout (tags: %s)", r.Tag, strings.Join(nonEmpty(tags), ", "))
	case len(idx.Manifests) != 1:
		return v1.Descriptor{}, fmt.Errorf("the layout holds %d images: name one with :TAG or @DIGEST (tags: %s)", len(idx.Manifests), strings.Join(nonEmpty(tags), ", "))
	}
	return idx.Manifests[0], nil
}

// storeLayer is a layer blob of a layout or archive, verified as it is
// read.
type storeLayer struct {
	ctx    context.Context
	st     store
	desc   v1.Descriptor
	diffID v1.Hash
}

func (l *storeLayer) Digest() (v1.Hash, error)             { return l.desc.Digest, nil }
func (l *storeLayer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *storeLayer) Size() (int64, error)                 { return l.desc.Size, nil }
func (l *storeLayer) MediaType() (types.MediaType, error)  { return l.desc.MediaType, nil }
func (l *storeLayer) Compressed() (io.ReadCloser, error)   { return openBlob(l.ctx, l.st, l.desc) }
func (l *storeLayer) Uncompressed() (io.ReadCloser, error) { return uncompressed(l) }
