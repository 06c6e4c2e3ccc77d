package alphabundle

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/render"
)

// ImageBuilders are the values upstream's --image-builder takes. None is
// run: the image is built by opm itself.
var ImageBuilders = []string{"docker", "podman", "buildah"}

// BuildOptions configure Build: upstream's `opm alpha bundle build` flags.
type BuildOptions struct {
	// GenerateOptions are the flags build shares with generate; its
	// BaseImage must be scratch (or empty): bundle images are built on
	// scratch.
	GenerateOptions
	// Tag is where the image goes (--tag): a registry reference, pushed
	// (upstream tags it in the engine's local store), or any destination
	// `opm build bundle` takes (oci:DIR[:TAG], ...).
	Tag string
	// ImageBuilder (--image-builder) names upstream's engine; it is
	// checked and otherwise has no effect.
	ImageBuilder string
	// Registry configures the push; SourceDateEpoch is $SOURCE_DATE_EPOCH.
	Registry        render.RegistryOptions
	SourceDateEpoch string
}

// BuildResult is what Build did: the generate step and the image.
type BuildResult struct {
	Generate *GenerateResult `json:"generate"`
	Image    *build.Result   `json:"image"`
}

// Build runs Generate, then builds the bundle image from the bundle
// directory it wrote (manifests/ and metadata/) as `opm build bundle`
// does, with no container engine.
func Build(ctx context.Context, opts BuildOptions) (*BuildResult, error) {
	if opts.Tag == "" {
		return nil, action.Usagef("no image tag: give it with --tag")
	}
	if opts.ImageBuilder != "" && !slices.Contains(ImageBuilders, opts.ImageBuilder) {
		return nil, action.Usagef("%s is not supported image builder (one of docker, podman, buildah; none is run here)", opts.ImageBuilder)
	}
	if opts.BaseImage != "" && opts.BaseImage != "scratch" {
		return nil, action.Usagef("--base-image %s: bundle images are built on scratch here (use generate for a Dockerfile FROM another base)", opts.BaseImage)
	}
	if opts.OutputDir == "" && opts.Directory != "" && filepath.Base(filepath.Clean(opts.Directory)) != "manifests" {
		return nil, action.Usagef("--directory %s is not a directory named manifests: the image is built from a bundle directory (manifests/ beside metadata/); add --output-dir DIR to copy the manifests into DIR/manifests and build from DIR", opts.Directory)
	}
	gen, err := Generate(ctx, opts.GenerateOptions)
	if err != nil {
		return nil, err
	}
	res := &BuildResult{Generate: gen}
	if gen.MediaType != bundle.MediaTypeRegistryV1 {
		return res, fmt.Errorf("the manifests are of media type %s: opm builds registry+v1 bundles (a ClusterServiceVersion among the manifests) only", gen.MediaType)
	}
	img, err := build.RunBundle(ctx, build.BundleOptions{Options: build.Options{
		Dir:             gen.BundleDir,
		Tags:            []string{opts.Tag},
		SourceDateEpoch: opts.SourceDateEpoch,
		Registry:        opts.Registry,
	}})
	if err != nil {
		return res, err
	}
	res.Image = img
	return res, nil
}
