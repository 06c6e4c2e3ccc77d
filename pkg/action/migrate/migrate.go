// Package migrate is the action of `opm migrate`: render a file-based
// catalog (a directory or a catalog image) or an sqlite index (a database
// file or an index image), apply migrations up to a level
// (pkg/migrations), and write it back as one directory per package,
// atomically.
package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/render"
)

// Options configure a migration.
type Options struct {
	// CatalogRef is an FBC directory or catalog image reference, or an
	// sqlite index database or index image.
	CatalogRef string
	// OutputDir receives <package>/catalog.<ext> per package, and
	// catalog.<ext> for blobs without a package.
	OutputDir string
	// MigrationLevel names the last migration to run ("" or "none": none).
	MigrationLevel string
	// Format is declcfg.FormatJSON (the default when empty) or FormatYAML.
	Format declcfg.Format
	// Force replaces the contents of a non-empty OutputDir. Without it, a
	// non-empty OutputDir is refused before anything is rendered.
	Force bool
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
	// Logf, when set, receives upstream's two progress lines.
	Logf func(format string, args ...any)
	// Warn receives what the render goes past (see render.Options.Warn).
	Warn func(string)
}

// NotEmptyError is returned for a non-empty output directory without Force;
// its text is upstream's.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string { return fmt.Sprintf("output dir %q must be empty", e.Dir) }

// Run runs the migration. On error, OutputDir is left as it was. An
// unknown format or migration level is an *action.UsageError, returned
// before anything else happens.
func Run(ctx context.Context, o Options) error {
	if o.Format == "" {
		o.Format = declcfg.FormatJSON
	}
	if o.Format != declcfg.FormatJSON && o.Format != declcfg.FormatYAML {
		return action.Usagef("invalid output format %q, expected (json|yaml)", o.Format)
	}
	if err := migrations.Check(o.MigrationLevel); err != nil {
		return &action.UsageError{Err: err}
	}
	if err := fsutil.CheckOutputDir(o.OutputDir, o.CatalogRef); err != nil {
		return err
	}
	empty, err := isEmptyOrAbsent(o.OutputDir)
	if err != nil {
		return err
	}
	if !empty && !o.Force {
		return &NotEmptyError{Dir: o.OutputDir}
	}

	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	logf("rendering catalog %q as file-based catalog", o.CatalogRef)
	cfg, err := render.Render(ctx, render.Options{
		Refs:           []string{o.CatalogRef},
		AllowedRefMask: render.RefDCImage | render.RefDCDir | render.RefSqliteImage | render.RefSqliteFile,
		MigrationLevel: o.MigrationLevel,
		Registry:       o.Registry,
		Warn:           o.Warn,
	})
	if err != nil {
		return fmt.Errorf("render catalog image: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if empty {
		err = declcfg.WriteFS(*cfg, o.OutputDir, o.Format)
	} else {
		err = fsutil.ReplaceDir(o.OutputDir, func(staging string) error {
			return declcfg.WriteFS(*cfg, staging, o.Format)
		})
	}
	if err != nil {
		return fmt.Errorf("writing %q: %w", o.OutputDir, err)
	}
	logf("wrote rendered file-based catalog to %q", o.OutputDir)
	return nil
}

// isEmptyOrAbsent reports whether dir is absent or an empty directory.
func isEmptyOrAbsent(dir string) (bool, error) {
	empty, err := fsutil.EmptyOrAbsent(dir)
	if errors.Is(err, fsutil.ErrNotDirectory) {
		return false, fmt.Errorf("output dir %q is not a directory", dir)
	}
	if err != nil {
		return false, fmt.Errorf("output dir: %w", err)
	}
	return empty, nil
}
