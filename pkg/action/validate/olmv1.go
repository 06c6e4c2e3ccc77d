package validate

import (
	"context"
	"fmt"
	"io"
	"sort"

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

// bundles returns the manifests of bundles, by bundle name. A bundle
// without an image is left out; an image that cannot be pulled or
// rendered is an error naming the bundle.
func (p *manifestPuller) bundles(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string][]olmv1.Object, error) {
	names := map[string][]string{}
	var refs []string
	for _, b := range bundles {
		if b.Image == "" {
			continue
		}
		if _, ok := names[b.Image]; !ok {
			refs = append(refs, b.Image)
		}
		names[b.Image] = append(names[b.Image], b.Name)
	}
	out := map[string][]olmv1.Object{}
	if len(refs) == 0 {
		return out, nil
	}
	sort.Strings(refs)
	results, err := render.RenderEach(ctx, render.Options{Refs: refs, AllowedRefMask: render.RefBundleImage, Registry: p.reg})
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		if r.Err != nil {
			return nil, fmt.Errorf("package %s: bundle %s: pull %s: %w", pkg, names[r.Ref][0], r.Ref, r.Err)
		}
		if len(r.Config.Bundles) != 1 {
			return nil, fmt.Errorf("package %s: bundle %s: %s: expected one bundle, got %d", pkg, names[r.Ref][0], r.Ref, len(r.Config.Bundles))
		}
		b, _, err := olmv1.FromDeclcfg(&r.Config.Bundles[0])
		if err != nil {
			return nil, fmt.Errorf("package %s: bundle %s: %s: %w", pkg, names[r.Ref][0], r.Ref, err)
		}
		for _, n := range names[r.Ref] {
			out[n] = b.Objects
		}
	}
	if p.progress != nil {
		fmt.Fprintf(p.progress, "package %s: pulled %d bundle images for their manifests\n", pkg, len(refs))
	}
	return out, nil
}
