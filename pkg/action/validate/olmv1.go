package validate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/render"
)

// TargetOLMv1 is the --target that checks what OLM v1 installs.
const TargetOLMv1 = "olm-v1"

// manifestPuller pulls the images of catalog bundles without
// olm.bundle.object properties, for the OLM v1 checks of their manifests.
type manifestPuller struct {
	reg      render.RegistryOptions
	progress io.Writer
}

// bundles returns the manifests of bundles, by bundle name, from their
// images (render.BundleImages).
func (p *manifestPuller) bundles(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string][]olmv1.Object, error) {
	rendered, pulled, err := render.BundleImages(ctx, pkg, bundles, p.reg)
	if err != nil {
		return nil, err
	}
	out := map[string][]olmv1.Object{}
	for _, n := range slices.Sorted(maps.Keys(rendered)) {
		rb := rendered[n]
		b, _ := olmv1.FromDeclcfg(rb)
		out[n] = b.Objects
	}
	if pulled > 0 && p.progress != nil {
		fmt.Fprintf(p.progress, "package %s: pulled %d bundle images for their manifests\n", pkg, pulled)
	}
	return out, nil
}

// manifestBundles returns bundles, by bundle name, loaded from their
// images for the bundle validators (--check-bundles --pull-bundles).
func (p *manifestPuller) manifestBundles(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string]*manifest.Bundle, error) {
	rendered, pulled, err := render.BundleImages(ctx, pkg, bundles, p.reg)
	if err != nil {
		return nil, err
	}
	out := map[string]*manifest.Bundle{}
	for n, rb := range rendered {
		b, err := manifest.FromDeclcfg(rb)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", n, err)
		}
		out[n] = b
	}
	if pulled > 0 && p.progress != nil {
		fmt.Fprintf(p.progress, "package %s: pulled %d bundle images to validate them\n", pkg, pulled)
	}
	return out, nil
}
