// Package rendertemplate is the action of `opm alpha render-template`:
// read a catalog template (basic, semver or substitutes, or detected from
// its schema), render the bundle images it names and return the FBC.
package rendertemplate

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/template"
	"github.com/opmkit/opm/pkg/template/basic"
	"github.com/opmkit/opm/pkg/template/semver"
	"github.com/opmkit/opm/pkg/template/substitutes"
)

// Options configure a render.
type Options struct {
	// Type is the template type; "" detects it from the template's schema.
	Type template.Type
	// Input is the template; Name names it in messages.
	Input io.Reader
	Name  string
	// MigrationLevel names the last migration applied to rendered bundles
	// ("" = none, "all").
	MigrationLevel string
	// Registry configures image pulls (registries.conf applies).
	Registry render.RegistryOptions
	// Renderer renders bundle images; nil means pkg/render (bundle images
	// only, all of them concurrently through one image session).
	Renderer template.Renderer
}

// Result is a rendered template.
type Result struct {
	// Type is the template type (detected or given).
	Type template.Type
	// Config is the FBC the template renders to.
	Config *declcfg.DeclarativeConfig
}

// Run renders the template. Errors name the template file and line.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := migrations.Check(opts.MigrationLevel); err != nil {
		return nil, err
	}
	name := opts.Name
	if name == "" {
		name = "<stdin>"
	}
	data, err := template.ReadInput(opts.Input)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	typ := opts.Type
	if typ == "" {
		if typ, err = template.DetectType(data, name); err != nil {
			return nil, fmt.Errorf("auto-detecting template type: %w", noDocument(err, name))
		}
	}
	r := opts.Renderer
	if r == nil {
		r = BundleRenderer(opts.MigrationLevel, opts.Registry)
	}
	cfg, err := renderType(ctx, typ, data, name, r)
	if err != nil {
		return nil, fmt.Errorf("rendering template: %w", noDocument(err, name))
	}
	return &Result{Type: typ, Config: cfg}, nil
}

func renderType(ctx context.Context, typ template.Type, data []byte, name string, r template.Renderer) (*declcfg.DeclarativeConfig, error) {
	switch typ {
	case template.Basic:
		t, err := basic.Parse(data, name)
		if err != nil {
			return nil, err
		}
		return t.Render(ctx, r)
	case template.Semver:
		t, err := semver.Parse(data, name)
		if err != nil {
			return nil, err
		}
		return t.Render(ctx, r)
	case template.Substitutes:
		t, err := substitutes.Parse(data, name)
		if err != nil {
			return nil, err
		}
		return t.Render(ctx, r)
	}
	_, err := template.ParseType(string(typ))
	return nil, err
}

// noDocument words the "no document at all" case.
func noDocument(err error, name string) error {
	if errors.Is(err, io.EOF) {
		return &template.Error{File: name, Err: errors.New("empty input: no YAML or JSON document")}
	}
	return err
}

// BundleRenderer renders bundle images with pkg/render: only bundle images
// are accepted, the migrations up to level are applied, and every image is
// pulled concurrently through one image session and the blob cache.
func BundleRenderer(level string, reg render.RegistryOptions) template.Renderer {
	return func(ctx context.Context, refs []string) ([]render.Rendered, error) {
		return render.RenderEach(ctx, render.Options{
			Refs:           refs,
			AllowedRefMask: render.RefBundleImage,
			MigrationLevel: level,
			Registry:       reg,
		})
	}
}
