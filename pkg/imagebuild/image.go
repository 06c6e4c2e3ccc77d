package imagebuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/pkg/image"
)

// OCI annotations naming the base image of an image manifest.
const (
	AnnotationBaseName   = "org.opencontainers.image.base.name"
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
)

// DefaultPlatform is the platform of images built on scratch when none is
// given: a fixed one, so that the digest does not depend on the machine.
var DefaultPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// imageSpec is one image to assemble: layers on a base (or scratch) and
// the config changes.
type imageSpec struct {
	base     *image.BaseImage // nil = scratch
	baseName string           // registry reference of the base ("" = none)
	platform v1.Platform      // scratch only
	layers   []specLayer
	labels   map[string]string // set over the base's
	// dropLabels are labels of the base not kept.
	dropLabels []string
	// entrypoint and cmd replace the base's when not nil.
	entrypoint, cmd []string
	// user, workingDir and env replace the base's when not empty.
	user, workingDir string
	env              []string
	created          time.Time
}

// specLayer is a layer to add and the history entry that says what it
// holds.
type specLayer struct {
	layer     *Layer
	createdBy string
}

// Image is an assembled image: manifest, config and layers, all known. It
// is a v1.Image.
type Image struct {
	raw      []byte
	manifest *v1.Manifest
	config   []byte
	cf       *v1.ConfigFile
	layers   []v1.Layer
	digest   v1.Hash
	platform v1.Platform
}

var _ v1.Image = (*Image)(nil)

// newImage assembles s.
func newImage(s imageSpec) (*Image, error) {
	var (
		cf     *v1.ConfigFile
		m      v1.Manifest
		layers []v1.Layer
		plat   v1.Platform
	)
	layerType := types.OCILayer
	if s.base == nil {
		plat = s.platform
		cf = &v1.ConfigFile{
			Architecture: plat.Architecture,
			OS:           plat.OS,
			OSVersion:    plat.OSVersion,
			Variant:      plat.Variant,
			OSFeatures:   plat.OSFeatures,
			RootFS:       v1.RootFS{Type: "layers"},
		}
		m = v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: v1.Descriptor{MediaType: types.OCIConfigJSON}}
	} else {
		plat = s.base.Platform
		cf = s.base.Config.DeepCopy()
		bm := s.base.Manifest
		m = v1.Manifest{SchemaVersion: 2, MediaType: s.base.MediaType, Config: v1.Descriptor{MediaType: bm.Config.MediaType}}
		if m.Config.MediaType == "" {
			m.Config.MediaType = types.OCIConfigJSON
		}
		for _, d := range bm.Layers {
			m.Layers = append(m.Layers, *d.DeepCopy())
		}
		layers = append(layers, s.base.Layers...)
		switch s.base.MediaType {
		case types.DockerManifestSchema2:
			layerType = types.DockerLayer
		case types.OCIManifestSchema1:
			m.Annotations = map[string]string{AnnotationBaseDigest: s.base.Digest.String()}
			if s.baseName != "" {
				m.Annotations[AnnotationBaseName] = s.baseName
			}
		default:
			return nil, fmt.Errorf("base image %s: unsupported manifest type %s", s.base.Digest, s.base.MediaType)
		}
	}
	created := s.created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	cf.Created = v1.Time{Time: created.UTC()}
	cf.RootFS.Type = "layers"
	for _, sl := range s.layers {
		l := sl.layer.WithMediaType(layerType)
		layers = append(layers, l)
		m.Layers = append(m.Layers, v1.Descriptor{MediaType: layerType, Size: l.size, Digest: l.digest})
		cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs, l.diffID)
		cf.History = append(cf.History, v1.History{Created: cf.Created, CreatedBy: sl.createdBy})
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for _, k := range s.dropLabels {
		delete(cf.Config.Labels, k)
	}
	for k, v := range s.labels {
		cf.Config.Labels[k] = v
	}
	if s.entrypoint != nil {
		cf.Config.Entrypoint = s.entrypoint
	}
	if s.cmd != nil {
		cf.Config.Cmd = s.cmd
	}
	if s.user != "" {
		cf.Config.User = s.user
	}
	if s.workingDir != "" {
		cf.Config.WorkingDir = s.workingDir
	}
	if s.env != nil {
		cf.Config.Env = s.env
	}

	config, err := json.Marshal(cf)
	if err != nil {
		return nil, err
	}
	m.Config.Size = int64(len(config))
	m.Config.Digest = sha(config)
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &Image{raw: raw, manifest: &m, config: config, cf: cf, layers: layers, digest: sha(raw), platform: plat}, nil
}

func sha(b []byte) v1.Hash {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h
}

func (i *Image) Layers() ([]v1.Layer, error)               { return append([]v1.Layer(nil), i.layers...), nil }
func (i *Image) MediaType() (types.MediaType, error)       { return i.manifest.MediaType, nil }
func (i *Image) Size() (int64, error)                      { return int64(len(i.raw)), nil }
func (i *Image) ConfigName() (v1.Hash, error)              { return i.manifest.Config.Digest, nil }
func (i *Image) ConfigFile() (*v1.ConfigFile, error)       { return i.cf.DeepCopy(), nil }
func (i *Image) RawConfigFile() ([]byte, error)            { return i.config, nil }
func (i *Image) Digest() (v1.Hash, error)                  { return i.digest, nil }
func (i *Image) Manifest() (*v1.Manifest, error)           { return i.manifest.DeepCopy(), nil }
func (i *Image) RawManifest() ([]byte, error)              { return i.raw, nil }
func (i *Image) Platform() v1.Platform                     { return i.platform }
func (i *Image) LayerByDiffID(h v1.Hash) (v1.Layer, error) { return i.layerBy(h, true) }
func (i *Image) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	if h == i.manifest.Config.Digest {
		return configLayer{i}, nil
	}
	return i.layerBy(h, false)
}

func (i *Image) layerBy(h v1.Hash, diffID bool) (v1.Layer, error) {
	for _, l := range i.layers {
		got, err := l.Digest()
		if diffID {
			got, err = l.DiffID()
		}
		if err != nil {
			return nil, err
		}
		if got == h {
			return l, nil
		}
	}
	return nil, fmt.Errorf("image %s has no layer %s", i.digest, h)
}

// configLayer is the config blob as a layer (go-containerregistry's
// writers upload it that way).
type configLayer struct{ i *Image }

func (c configLayer) Digest() (v1.Hash, error) { return c.i.manifest.Config.Digest, nil }
func (c configLayer) DiffID() (v1.Hash, error) { return c.i.manifest.Config.Digest, nil }
func (c configLayer) Size() (int64, error)     { return c.i.manifest.Config.Size, nil }
func (c configLayer) MediaType() (types.MediaType, error) {
	return c.i.manifest.Config.MediaType, nil
}
func (c configLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(c.i.config)), nil
}
func (c configLayer) Uncompressed() (io.ReadCloser, error) { return c.Compressed() }

// Index is an assembled index of images, one per platform. It is a
// v1.ImageIndex.
type Index struct {
	raw      []byte
	manifest *v1.IndexManifest
	images   []*Image
	digest   v1.Hash
}

var _ v1.ImageIndex = (*Index)(nil)

// newIndex assembles an index of mt (an OCI index or a docker manifest
// list) over images, in their order.
func newIndex(mt types.MediaType, images []*Image) (*Index, error) {
	im := v1.IndexManifest{SchemaVersion: 2, MediaType: mt}
	for _, img := range images {
		p := img.platform
		im.Manifests = append(im.Manifests, v1.Descriptor{
			MediaType: img.manifest.MediaType,
			Size:      int64(len(img.raw)),
			Digest:    img.digest,
			Platform:  &p,
		})
	}
	raw, err := json.Marshal(im)
	if err != nil {
		return nil, err
	}
	return &Index{raw: raw, manifest: &im, images: images, digest: sha(raw)}, nil
}

func (x *Index) MediaType() (types.MediaType, error)       { return x.manifest.MediaType, nil }
func (x *Index) Digest() (v1.Hash, error)                  { return x.digest, nil }
func (x *Index) Size() (int64, error)                      { return int64(len(x.raw)), nil }
func (x *Index) IndexManifest() (*v1.IndexManifest, error) { return x.manifest.DeepCopy(), nil }
func (x *Index) RawManifest() ([]byte, error)              { return x.raw, nil }
func (x *Index) ImageIndex(h v1.Hash) (v1.ImageIndex, error) {
	return nil, fmt.Errorf("index %s has no index %s", x.digest, h)
}

// Images returns the index's images, in order.
func (x *Index) Images() []*Image { return x.images }

func (x *Index) Image(h v1.Hash) (v1.Image, error) {
	for _, img := range x.images {
		if img.digest == h {
			return img, nil
		}
	}
	return nil, fmt.Errorf("index %s has no image %s", x.digest, h)
}

// platforms returns the platforms of images, sorted for messages.
func platforms(images []*Image) []string {
	var out []string
	for _, img := range images {
		out = append(out, img.platform.String())
	}
	sort.Strings(out)
	return out
}
