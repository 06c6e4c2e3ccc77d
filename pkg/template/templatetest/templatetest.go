// Package templatetest has a fake bundle renderer for template tests: no
// registry, bundles made up from their references.
package templatetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/render"
)

// Renderer renders references of the form HOST/PACKAGE:VERSION into one
// bundle named PACKAGE.vVERSION (PACKAGE-vVERSION-RELEASE when VERSION is
// VERSION_RELEASE), image = the reference, with a CSV whose description
// names the bundle. References whose package is "missing" fail, and "catalog"
// ones fail with render.ErrNotAllowed. It records the calls.
type Renderer struct {
	mu    sync.Mutex
	Calls [][]string
}

// Render is the template.Renderer.
func (r *Renderer) Render(_ context.Context, refs []string) ([]render.Rendered, error) {
	r.mu.Lock()
	r.Calls = append(r.Calls, append([]string(nil), refs...))
	r.mu.Unlock()
	out := make([]render.Rendered, len(refs))
	for i, ref := range refs {
		out[i] = render.Rendered{Ref: ref}
		cfg, err := Bundle(ref)
		if err != nil {
			out[i].Err = fmt.Errorf("render reference %q: %w", ref, err)
			continue
		}
		out[i].Config = cfg
	}
	return out, nil
}

// Bundle makes the config of one reference (see Renderer).
func Bundle(ref string) (*declcfg.DeclarativeConfig, error) {
	slash := strings.LastIndexByte(ref, '/')
	colon := strings.LastIndexByte(ref, ':')
	if slash < 0 || colon < slash {
		return nil, fmt.Errorf("bad test reference %q", ref)
	}
	pkg, version := ref[slash+1:colon], ref[colon+1:]
	switch pkg {
	case "missing":
		return nil, errors.New("manifest unknown")
	case "catalog":
		return nil, fmt.Errorf("cannot render declarative config image: %w", render.ErrNotAllowed)
	}
	name := pkg + ".v" + version
	release := ""
	if v, rel, ok := strings.Cut(version, "_"); ok {
		version, release = v, rel
		name = pkg + "-v" + version + "-" + release
	}
	b := declcfg.Bundle{
		Schema:     declcfg.SchemaBundle,
		Name:       name,
		Package:    pkg,
		Image:      ref,
		Properties: []property.Property{property.MustBuild(property.Package{PackageName: pkg, Version: version, Release: release})},
		CsvJSON:    fmt.Sprintf(`{"kind":"ClusterServiceVersion","metadata":{"name":%q},"spec":{"description":"about %s","icon":[{"base64data":"aWNvbg==","mediatype":"image/png"}]}}`, name, name),
	}
	return &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{b}}, nil
}
