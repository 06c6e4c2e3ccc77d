package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Image is an opened image: its labels are known, its layers are fetched
// when extracted.
type Image interface {
	// Ref returns the reference exactly as given to Open.
	Ref() string
	// Digest returns the digest of the image manifest.
	Digest() string
	// Labels returns the labels of the image config (never nil).
	Labels() map[string]string
	// Command returns what the image runs: its config's entrypoint and
	// command.
	Command() (entrypoint, cmd []string)
	// Extract writes the given paths of the image filesystem (all of it when
	// none is given) under dst, which must exist.
	Extract(ctx context.Context, dst string, paths ...string) error
	// Prefetch downloads every layer into the blob cache (registry images;
	// a no-op for local ones). Extract does it too.
	Prefetch(ctx context.Context) error
	// Close releases temporary files.
	Close() error
}

// layer is one filesystem layer of an image.
type layer struct {
	// digest names the layer in errors (the archive path for docker
	// archives).
	digest string
	// open returns the raw (possibly compressed) layer bytes; the reader
	// fails at its end when they do not match the digest and size.
	open func(ctx context.Context) (io.ReadCloser, error)
	// refetch downloads the layer again after open's reader found its
	// cache entry corrupted (nil for local images).
	refetch func(ctx context.Context) error
	// diffID, when set, is the digest the uncompressed tar must have
	// (docker archives, whose layers have no other digest to check).
	diffID v1.Hash
}

type image struct {
	ref     string
	digest  string
	labels  map[string]string
	config  v1.Config
	layers  []layer
	o       options
	fetch   func(ctx context.Context) error // prefetches layers (remote)
	cleanup []func() error
}

func (i *image) Ref() string               { return i.ref }
func (i *image) Digest() string            { return i.digest }
func (i *image) Labels() map[string]string { return i.labels }
func (i *image) Command() (entrypoint, cmd []string) {
	return slices.Clone(i.config.Entrypoint), slices.Clone(i.config.Cmd)
}

func (i *image) Close() error {
	var errs []error
	for j := len(i.cleanup) - 1; j >= 0; j-- {
		errs = append(errs, i.cleanup[j]())
	}
	i.cleanup = nil
	return errors.Join(errs...)
}

func (i *image) Prefetch(ctx context.Context) error {
	if i.fetch == nil {
		return nil
	}
	if i.o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, i.o.timeout)
		defer cancel()
	}
	if err := i.fetch(ctx); err != nil {
		return fmt.Errorf("pulling %s: %w", i.ref, err)
	}
	return nil
}

func (i *image) Extract(ctx context.Context, dst string, paths ...string) error {
	if err := i.Prefetch(ctx); err != nil {
		return err
	}
	if i.o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, i.o.timeout)
		defer cancel()
	}
	// A cache entry found corrupted while it is read is downloaded again
	// and the extraction starts over (once), as if it had been a miss.
	refetched := false
	for {
		err := i.extract(ctx, dst, paths)
		var ce *corruptError
		if err == nil || refetched || !errors.As(err, &ce) {
			return err
		}
		refetched = true
		for _, l := range i.layers {
			if l.refetch != nil && l.digest == ce.digest.String() {
				if err := l.refetch(ctx); err != nil {
					return fmt.Errorf("pulling %s: %w", i.ref, err)
				}
			}
		}
	}
}

// extract applies every layer to dst. On failure it removes what it
// created under dst.
func (i *image) extract(ctx context.Context, dst string, paths []string) (err error) {
	x, err := newExtractor(dst, paths, i.o.limits)
	if err != nil {
		return fmt.Errorf("extracting %s: %w", i.ref, err)
	}
	if i.o.fileModes {
		x.modes = map[string]fs.FileMode{}
	}
	defer func() {
		if err != nil {
			x.clean()
		}
		x.close()
	}()
	for _, l := range i.layers {
		if err := x.applyLayer(ctx, l); err != nil {
			return fmt.Errorf("extracting %s: layer %s: %w", i.ref, l.digest, err)
		}
	}
	if err := x.checkLinks(); err != nil {
		return fmt.Errorf("extracting %s: %w", i.ref, err)
	}
	if err := x.applyModes(); err != nil {
		return fmt.Errorf("extracting %s: %w", i.ref, err)
	}
	return nil
}

// Open opens ref (see the package documentation for the forms) and reads its
// labels. Layers are only downloaded by Extract or Prefetch. To open several
// images, a [Session] shares connections, credentials and resolved tags.
func Open(ctx context.Context, ref string, opts ...Option) (Image, error) {
	s := NewSession(opts...)
	img, err := s.open(ctx, ref)
	if err != nil {
		s.Close()
		return nil, err
	}
	img.cleanup = append(img.cleanup, s.Close)
	return img, nil
}

// wantPlatform returns the platform multi-platform indexes resolve to.
func wantPlatform(o options) (v1.Platform, error) {
	if o.platform == "" {
		return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}, nil
	}
	p, err := v1.ParsePlatform(o.platform)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return v1.Platform{}, fmt.Errorf("invalid platform %q: want os/arch[/variant]", o.platform)
	}
	return *p, nil
}

// pickPlatform chooses the manifest for want among an index's manifests.
func pickPlatform(idx *v1.IndexManifest, want v1.Platform) (v1.Descriptor, error) {
	var avail []string
	for _, d := range idx.Manifests {
		if d.Platform == nil {
			continue
		}
		if d.Platform.Satisfies(want) {
			return d, nil
		}
		if d.Platform.OS != "unknown" {
			avail = append(avail, d.Platform.String())
		}
	}
	if len(avail) == 0 && len(idx.Manifests) == 1 {
		return idx.Manifests[0], nil
	}
	return v1.Descriptor{}, fmt.Errorf("no image for platform %s in the index (it has %s)", want.String(), strings.Join(avail, ", "))
}

// configOf returns the config of a raw image config.
func configOf(raw []byte) (v1.Config, error) {
	cf, err := v1.ParseConfigFile(strings.NewReader(string(raw)))
	if err != nil {
		return v1.Config{}, fmt.Errorf("parsing image config: %w", err)
	}
	return cf.Config, nil
}
