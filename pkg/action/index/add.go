// Package index is the action of `opm index add` and of the other `opm
// index` commands: upstream opm's sqlite index commands (removed after
// v1.73.0), answered with file-based catalogs, so that Makefiles and scripts
// written for them keep working.
package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/action/dockerfile"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/index"
	"github.com/opmkit/opm/pkg/render"
)

// DefaultDockerfile is the Dockerfile --generate writes, as upstream.
const DefaultDockerfile = "index.Dockerfile"

// DefaultCatalogDir is the catalog directory --generate writes (upstream
// wrote database/index.db).
const DefaultCatalogDir = "index"

// Output says where a catalog the index commands make goes: built and
// pushed, or written as a directory with its Dockerfile.
type Output struct {
	// Generate writes the catalog directory and its Dockerfile instead of
	// building the image.
	Generate bool
	// OutDockerfile names the Dockerfile Generate writes (default
	// DefaultDockerfile).
	OutDockerfile string
	// CatalogDir names the catalog directory Generate writes (default
	// DefaultCatalogDir).
	CatalogDir string
	// Overwrite lets Generate replace an existing catalog directory and
	// Dockerfile.
	Overwrite bool
	// BinaryImage is the base image (upstream's --binary-image; default
	// that of `opm build catalog`, quay.io/operator-framework/opm:latest).
	BinaryImage string
	// Build says where the image goes (Tags) and how it is built; its
	// Registry is set from the command's registry options.
	Build build.Options
}

// Written is what an index command made.
type Written struct {
	// Files lists the catalog directory and Dockerfile Generate wrote.
	Files []string
	// Image describes the image built (nil with Generate).
	Image *build.Result
}

// AddOptions describe `opm index add`.
type AddOptions struct {
	index.AddOptions
	Output
}

// AddResult is what was made.
type AddResult struct {
	// Config is the catalog.
	Config *declcfg.DeclarativeConfig
	// FromSQLite is set when the from-index was an sqlite database.
	FromSQLite bool
	Written
}

// Add builds the catalog, then writes it (Generate) or builds and pushes
// its image.
func Add(ctx context.Context, o AddOptions) (*AddResult, error) {
	if o.Mode != "" {
		if _, err := index.ParseMode(string(o.Mode)); err != nil {
			return nil, &action.UsageError{Err: err}
		}
	}
	out, err := o.Output.check()
	if err != nil {
		return nil, err
	}
	res, err := index.Add(ctx, o.AddOptions)
	if err != nil {
		return nil, err
	}
	w, err := out.write(ctx, res.Config, o.Registry, o.Warn)
	return &AddResult{Config: res.Config, FromSQLite: res.FromSQLite, Written: w}, err
}

// check fills the defaults and refuses, before any work, what cannot be
// done: no tag to push to, files Generate would replace.
func (o Output) check() (Output, error) {
	if o.OutDockerfile == "" {
		o.OutDockerfile = DefaultDockerfile
	}
	if o.CatalogDir == "" {
		o.CatalogDir = DefaultCatalogDir
	}
	if o.BinaryImage == "" {
		o.BinaryImage = dockerfile.DefaultImage
	}
	if !o.Generate && len(o.Build.Tags) == 0 {
		return o, action.Usagef("--tag is required: the catalog image is pushed there (no container engine is used); --generate writes the catalog directory and its Dockerfile instead")
	}
	if o.Generate {
		if err := checkGenerate(o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// write writes the catalog as o says.
func (o Output) write(ctx context.Context, cfg *declcfg.DeclarativeConfig, reg render.RegistryOptions, warn func(string)) (Written, error) {
	if o.Generate {
		files, err := generate(o, cfg)
		return Written{Files: files}, err
	}
	img, err := buildImage(ctx, o, cfg, reg, warn)
	return Written{Image: img}, err
}

// checkGenerate refuses, before any work, to replace what Generate would
// write, unless Overwrite.
func checkGenerate(o Output) error {
	if err := fsutil.CheckOutputDir(o.CatalogDir); err != nil {
		return err
	}
	if o.Overwrite {
		return nil
	}
	empty, err := fsutil.EmptyOrAbsent(o.CatalogDir)
	if err != nil {
		return fmt.Errorf("catalog directory %s: %w", o.CatalogDir, err)
	}
	if !empty {
		return fmt.Errorf("catalog directory %s already exists and is not empty (use --overwrite to replace it)", o.CatalogDir)
	}
	if _, err := os.Lstat(o.OutDockerfile); err == nil {
		return fmt.Errorf("%s already exists (use --overwrite to replace it)", o.OutDockerfile)
	}
	return nil
}

// generate writes the catalog, one directory per package as `opm migrate`
// writes it, and its Dockerfile, each atomically.
func generate(o Output, cfg *declcfg.DeclarativeConfig) ([]string, error) {
	empty, err := fsutil.EmptyOrAbsent(o.CatalogDir)
	if err != nil {
		return nil, fmt.Errorf("catalog directory %s: %w", o.CatalogDir, err)
	}
	if empty {
		err = declcfg.WriteFS(*cfg, o.CatalogDir, declcfg.FormatJSON)
	} else {
		err = fsutil.ReplaceDir(o.CatalogDir, func(staging string) error {
			return declcfg.WriteFS(*cfg, staging, declcfg.FormatJSON)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", o.CatalogDir, err)
	}
	rel, err := filepath.Rel(filepath.Dir(absOr(o.OutDockerfile)), absOr(o.CatalogDir))
	if err != nil {
		rel = o.CatalogDir
	}
	text := dockerfile.Render(dockerfile.Options{BaseImage: o.BinaryImage, BuilderImage: o.BinaryImage, IndexDir: filepath.ToSlash(rel)})
	if err := fsutil.WriteFile(o.OutDockerfile, []byte(text), 0o644, o.Overwrite); err != nil {
		return nil, err
	}
	return []string{o.CatalogDir, o.OutDockerfile}, nil
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// buildImage writes the catalog to a private directory and builds its
// image as `opm build catalog` does.
func buildImage(ctx context.Context, o Output, cfg *declcfg.DeclarativeConfig, reg render.RegistryOptions, warn func(string)) (*build.Result, error) {
	tmp, err := os.MkdirTemp("", "opm-index-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "catalog")
	if err := declcfg.WriteFS(*cfg, dir, declcfg.FormatJSON); err != nil {
		return nil, err
	}
	bo := o.Build
	bo.Dir = dir
	bo.Registry = reg
	return build.RunCatalog(ctx, build.CatalogOptions{Options: bo, BaseImage: o.BinaryImage, Warn: warn})
}
