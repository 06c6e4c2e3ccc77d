// Package crdsource loads the CRDs and example custom resources of a
// bundle from where they live: a CRD manifest file, a bundle directory, or
// a bundle image (pulled through pkg/render and pkg/image: registries.conf,
// the blob cache, bounded concurrency). pkg/crd itself reads no files and
// pulls no images, so that opm validate's library stays free of registry
// code.
package crdsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
)

// MaxFileSize bounds a CRD manifest file read by Load.
const MaxFileSize = 64 << 20

// Load reads ref: a bundle directory (manifests/ and metadata/), a file
// holding one or more CRDs (YAML documents or one JSON object; other
// objects are ignored, a CSV's alm-examples read), or a bundle image.
func Load(ctx context.Context, ref string, reg render.RegistryOptions) (*crd.Bundle, error) {
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		if !render.IsBundleDir(ref) {
			return nil, fmt.Errorf("%s: a directory that is not a bundle (no manifests/ and metadata/)", ref)
		}
		return crd.FromBundleDir(ctx, ref)
	case err == nil:
		return loadFile(ctx, ref)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	b, err := pullOne(ctx, ref, reg)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// loadFile reads a manifest file of CRDs.
func loadFile(ctx context.Context, path string) (*crd.Bundle, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := safefs.ReadRegular(root, filepath.Base(path), MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	docs, err := crd.SplitDocuments(path, data)
	if err != nil {
		return nil, err
	}
	b, err := crd.NewBundle(ctx, path, docs, nil)
	if err != nil {
		return nil, err
	}
	if len(b.CRDs) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition (apiextensions.k8s.io/v1 or v1beta1) in the file", path)
	}
	return b, nil
}

// pullOne renders one bundle image.
func pullOne(ctx context.Context, ref string, reg render.RegistryOptions) (*crd.Bundle, error) {
	cfg, err := render.Render(ctx, render.Options{Refs: []string{ref}, AllowedRefMask: render.RefBundleImage, Registry: reg})
	if err != nil {
		return nil, err
	}
	return fromRendered(ctx, ref, cfg)
}

func fromRendered(ctx context.Context, ref string, cfg *declcfg.DeclarativeConfig) (*crd.Bundle, error) {
	if len(cfg.Bundles) != 1 {
		return nil, fmt.Errorf("%s: expected one bundle, got %d", ref, len(cfg.Bundles))
	}
	b, ok, err := crd.FromDeclcfg(ctx, &cfg.Bundles[0], nil)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: the bundle has no manifests", ref)
	}
	return b, nil
}

// Puller pulls the bundle images of catalog bundles that carry no
// olm.bundle.object properties (those with olm.csv.metadata only), to read
// their CRDs. Images are pulled several at a time through one image
// session (shared connections, tokens and blob cache), each once per call.
type Puller struct {
	Registry render.RegistryOptions
	// Progress, when set, gets a line per call: how many images it pulled.
	Progress io.Writer
	// Pulled counts the images pulled so far.
	Pulled int
}

// Bundles returns the CRDs of the given catalog bundles, keyed by bundle
// name, pulling their images. A bundle without an image is left out; an
// image that cannot be pulled or rendered is an error naming the bundle.
func (p *Puller) Bundles(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string]*crd.Bundle, error) {
	rendered, pulled, err := render.BundleImages(ctx, pkg, bundles, p.Registry)
	if err != nil {
		return nil, err
	}
	out := map[string]*crd.Bundle{}
	read := map[*declcfg.Bundle]*crd.Bundle{} // an image several bundles name is read once
	for _, n := range slices.Sorted(maps.Keys(rendered)) {
		rb := rendered[n]
		b, done := read[rb]
		if !done {
			var ok bool
			b, ok, err = crd.FromDeclcfg(ctx, rb, nil)
			if err == nil && !ok {
				err = fmt.Errorf("%s: the bundle has no manifests", rb.Image)
			}
			if err != nil {
				return nil, fmt.Errorf("package %s: bundle %s: %w", pkg, n, err)
			}
			read[rb] = b
		}
		out[n] = b.WithName(n)
	}
	if pulled == 0 {
		return out, nil
	}
	p.Pulled += pulled
	if p.Progress != nil {
		fmt.Fprintf(p.Progress, "package %s: pulled %d bundle images for their CRDs\n", pkg, pulled)
	}
	return out, nil
}
