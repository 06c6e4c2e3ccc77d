// Package render is the action of `opm render`: references (catalog and
// bundle directories and images) in, their FBC blobs out, migrated and with
// derived channels as the options ask.
package render

import (
	"context"
	"io"
	"text/template"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/render"
)

// Options are what `opm render` is given.
type Options struct {
	// Refs are rendered in order and their blobs concatenated.
	Refs []string
	// MigrateLevel names the last migration to run ("" = none).
	MigrateLevel string
	// Migrate runs every migration; it cannot be combined with
	// MigrateLevel.
	Migrate bool
	// ImageRefTemplate, when set, computes the image of bundle directories
	// from {{.Package}}, {{.Name}} and {{.Version}}.
	ImageRefTemplate string
	// WithChannels derives olm.package and olm.channel blobs for the
	// rendered bundles (beyond upstream).
	WithChannels bool
	// Registry configures image pulls.
	Registry render.RegistryOptions
	// Warn receives what the render goes past (see render.Options.Warn).
	Warn func(string)
}

// Run renders opts.Refs. Bad options (an unknown migration level, both
// Migrate and MigrateLevel, a template that does not parse) are
// *action.UsageError.
func Run(ctx context.Context, opts Options) (*declcfg.DeclarativeConfig, error) {
	ro, err := renderOptions(opts)
	if err != nil {
		return nil, err
	}
	return render.Render(ctx, ro)
}

// Write renders opts.Refs and writes the blobs to w in format, as Run
// followed by declcfg.Write would, streaming catalog directories one
// package at a time (see render.Write). Errors writing to w are wrapped as
// "write output: ...".
func Write(ctx context.Context, opts Options, w io.Writer, format declcfg.Format) error {
	ro, err := renderOptions(opts)
	if err != nil {
		return err
	}
	return render.Write(ctx, ro, w, format)
}

func renderOptions(opts Options) (render.Options, error) {
	ro := render.Options{
		Refs:           opts.Refs,
		MigrationLevel: opts.MigrateLevel,
		WithChannels:   opts.WithChannels,
		Registry:       opts.Registry,
		Warn:           opts.Warn,
	}
	if opts.Migrate {
		if opts.MigrateLevel != "" {
			return ro, action.Usagef("--migrate and --migrate-level cannot be used together")
		}
		ro.MigrationLevel = migrations.LevelAll
	}
	if err := migrations.Check(ro.MigrationLevel); err != nil {
		return ro, &action.UsageError{Err: err}
	}
	if opts.ImageRefTemplate != "" {
		tmpl, err := template.New("image-ref-template").Option("missingkey=error").Parse(opts.ImageRefTemplate)
		if err != nil {
			return ro, action.Usagef("invalid image reference template: %v", err)
		}
		ro.ImageRefTemplate = tmpl
	}
	return ro, nil
}
