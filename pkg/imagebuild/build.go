package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/pkg/image"
)

// ConfigsDir is where a catalog image holds its catalog, as the generated
// Dockerfile puts it.
const ConfigsDir = "/configs"

// Built is a built image or index.
type Built struct {
	// Artifact is the *Image or the *Index to write (image.Session.Write).
	Artifact image.Artifact
	// Digest and MediaType are the manifest's or the index's.
	Digest    v1.Hash
	MediaType types.MediaType
	// Images are the images built, one per platform, in index order.
	Images []*Image
	// Layer is the layer built from the directory (shared by every
	// platform).
	Layer *Layer
	// Extra are the other layers added (CatalogOptions.Extra, or the
	// layers of an opm image), closed with it.
	Extra []*Layer
}

// Close removes the layers' temporary files.
func (b *Built) Close() error {
	if b == nil {
		return nil
	}
	var errs []error
	if b.Layer != nil {
		errs = append(errs, b.Layer.Close())
	}
	for _, l := range b.Extra {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Platforms lists the platforms built, sorted.
func (b *Built) Platforms() []string { return platforms(b.Images) }

// CatalogOptions describe a catalog image.
type CatalogOptions struct {
	// Dir is the catalog directory, copied to /configs.
	Dir string
	// Base is the base image (nil = scratch). BaseName, when the base is a
	// registry image, is recorded in OCI manifests'
	// org.opencontainers.image.base.name annotation.
	Base     *image.Base
	BaseName string
	// Platforms are the platforms of a scratch image, one image each
	// (default [DefaultPlatform]). With a base, its own are built: narrow
	// them when opening it, and pass them here too, so that a single one
	// gives an image rather than an index of one.
	Platforms []v1.Platform
	// Labels are set over the base's. A catalog image needs
	// operators.operatorframework.io.index.configs.v1=/configs.
	Labels map[string]string
	// DropLabels are labels of the base not kept (those that describe
	// the base's software rather than the catalog); Labels may set them
	// again.
	DropLabels []string
	// Entrypoint and Cmd replace the base's when not nil.
	Entrypoint, Cmd []string
	// Created is the config's creation time; ModTime the files'. See
	// [Epoch]. The zero time is the Unix epoch.
	Created, ModTime time.Time
	// Limits bound the directory read (see [LayerOptions]).
	Limits  image.Limits
	TempDir string
	// Extra are more layers to add after the catalog's (a pre-built serve
	// cache, say), each with its history entry. Catalog owns them: they are
	// closed with the result, or on failure.
	Extra []ExtraLayer
}

// ExtraLayer is a layer to add to an image, with the history entry that
// says what it holds.
type ExtraLayer struct {
	Layer     *Layer
	CreatedBy string
}

// Catalog builds a catalog image: the base image (or scratch) with one
// layer holding o.Dir at /configs, and the labels, entrypoint and command
// o gives. pkg/action/build gives those `opm generate dockerfile` writes.
func Catalog(ctx context.Context, o CatalogOptions) (*Built, error) {
	closeExtra := func() {
		for _, e := range o.Extra {
			e.Layer.Close()
		}
	}
	layer, err := BuildLayer(ctx, o.Dir, []Tree{{Src: ".", Dst: ConfigsDir}}, LayerOptions{ModTime: o.ModTime, Limits: o.Limits, TempDir: o.TempDir})
	if err != nil {
		closeExtra()
		return nil, err
	}
	spec := imageSpec{
		layers:     []specLayer{{layer, "COPY . " + ConfigsDir + " # opm build catalog"}},
		labels:     o.Labels,
		dropLabels: o.DropLabels,
		entrypoint: o.Entrypoint,
		cmd:        o.Cmd,
		created:    o.Created,
	}
	var extra []*Layer
	for _, e := range o.Extra {
		spec.layers = append(spec.layers, specLayer{e.Layer, e.CreatedBy})
		extra = append(extra, e.Layer)
	}
	b, err := assemble(spec, o.Base, o.BaseName, o.Platforms)
	if err != nil {
		layer.Close()
		closeExtra()
		return nil, err
	}
	b.Layer, b.Extra = layer, extra
	return b, nil
}

// BundleOptions describe a bundle image.
type BundleOptions struct {
	// Dir is the bundle directory: its manifests/ and metadata/ go to
	// /manifests and /metadata.
	Dir string
	// Labels are the image's labels: a bundle's are the annotations of its
	// metadata/annotations.yaml ([BundleLabels]).
	Labels map[string]string
	// Platforms are the platforms to build, one image each (default
	// [DefaultPlatform]).
	Platforms        []v1.Platform
	Created, ModTime time.Time
	Limits           image.Limits
	TempDir          string
}

// Bundle builds the image upstream's bundle Dockerfile describes: FROM
// scratch, one LABEL per annotation, manifests/ and metadata/ copied to
// the image root (here as one layer).
func Bundle(ctx context.Context, o BundleOptions) (*Built, error) {
	layer, err := BuildLayer(ctx, o.Dir, []Tree{{Src: "manifests", Dst: "manifests"}, {Src: "metadata", Dst: "metadata"}}, LayerOptions{ModTime: o.ModTime, Limits: o.Limits, TempDir: o.TempDir})
	if err != nil {
		return nil, err
	}
	spec := imageSpec{
		layers:  []specLayer{{layer, "COPY manifests /manifests/ metadata /metadata/ # opm build bundle"}},
		labels:  o.Labels,
		created: o.Created,
	}
	b, err := assemble(spec, nil, "", o.Platforms)
	if err != nil {
		layer.Close()
		return nil, err
	}
	b.Layer = layer
	return b, nil
}

// assemble builds spec on every image of base (or on scratch, once per
// platform). The result is an index when it has several images, or when
// the base is an index and no platform was asked for (the base's shape is
// kept); otherwise one image, as `docker build --platform` gives.
func assemble(spec imageSpec, base *image.Base, baseName string, plats []v1.Platform) (*Built, error) {
	b := &Built{}
	if base == nil {
		if len(plats) == 0 {
			plats = []v1.Platform{DefaultPlatform}
		}
		seen := map[string]bool{}
		for _, p := range plats {
			if seen[p.String()] {
				continue
			}
			seen[p.String()] = true
			s := spec
			s.platform = p
			img, err := newImage(s)
			if err != nil {
				return nil, err
			}
			b.Images = append(b.Images, img)
		}
	} else {
		if len(base.Images) == 0 {
			return nil, fmt.Errorf("base image %s: no image to build on", base.Ref)
		}
		for _, bi := range base.Images {
			s := spec
			s.base, s.baseName = bi, baseName
			img, err := newImage(s)
			if err != nil {
				return nil, err
			}
			b.Images = append(b.Images, img)
		}
	}
	if len(b.Images) == 1 && (base == nil || !base.IsIndex || len(plats) > 0) {
		img := b.Images[0]
		b.Artifact, b.Digest, b.MediaType = img, img.digest, img.manifest.MediaType
		return b, nil
	}
	mt := types.OCIImageIndex
	if base != nil {
		mt = base.MediaType
	}
	idx, err := newIndex(mt, b.Images)
	if err != nil {
		return nil, err
	}
	b.Artifact, b.Digest, b.MediaType = idx, idx.digest, mt
	return b, nil
}

// Epoch returns the build's time: sourceDateEpoch (the value of the
// SOURCE_DATE_EPOCH variable, whole seconds since the Unix epoch) when it
// is set, else the Unix epoch itself.
func Epoch(sourceDateEpoch string) (time.Time, error) {
	if sourceDateEpoch == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(sourceDateEpoch, 10, 64)
	if err != nil || n < 0 || n > 253402300799 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want whole seconds since 1970-01-01T00:00:00Z", sourceDateEpoch)
	}
	return time.Unix(n, 0).UTC(), nil
}

// ParseCreated parses a creation time: "now" (the wall clock, truncated to
// seconds), an RFC 3339 time, or whole seconds since the Unix epoch.
func ParseCreated(s string, now func() time.Time) (time.Time, error) {
	switch {
	case s == "now":
		return now().UTC().Truncate(time.Second), nil
	case s != "" && strings.Trim(s, "0123456789") == "":
		return Epoch(s)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("want now, an RFC 3339 time (2024-05-01T12:00:00Z) or seconds since the Unix epoch")
	}
	return t.UTC(), nil
}

// ParsePlatforms parses os/arch[/variant] platforms.
func ParsePlatforms(list []string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := v1.ParsePlatform(s)
		if err != nil || p.OS == "" || p.Architecture == "" || strings.Count(s, "/") > 2 || strings.Contains(s, ":") {
			return nil, fmt.Errorf("invalid platform %q: want os/arch[/variant]", s)
		}
		out = append(out, *p)
	}
	return out, nil
}
