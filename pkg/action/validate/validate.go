// Package validate is the action of `opm validate`: it loads what the
// command is given (a directory, a file, standard input or a catalog image)
// and checks it with pkg/validate. Loading images is this package's job, so
// that pkg/validate itself needs no registry code.
package validate

import (
	"context"
	"fmt"
	"io"

	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/resolve"
	"github.com/opmkit/opm/pkg/validate"
)

// Options are what `opm validate` is given.
type Options struct {
	// Ref is a directory, a file, "-" (Stdin) or a catalog image.
	Ref string
	// Stdin is read when Ref is "-".
	Stdin io.Reader
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
	// Strict turns warnings into errors.
	Strict bool
	// SchemaDir holds extra CUE schemas ("" = none).
	SchemaDir string
	// CheckDependencies resolves every channel head's dependencies as OLM
	// classic would (pkg/validate CheckDependencies).
	CheckDependencies bool
	// With are extra catalogs (directories, files or images) dependencies
	// may come from; giving any turns CheckDependencies on.
	With []string
}

// Run validates opts.Ref. An invalid catalog, including one whose files do
// not parse, is a Result that did not pass, never an error. The error is
// for what kept it from validating anything: a path that does not exist or
// cannot be read, an unreachable image, standard input without blobs
// ([ErrNoBlobs]), schemas that do not build.
func Run(ctx context.Context, opts Options) (*validate.Result, error) {
	schemas, err := validate.LoadSchemas(opts.SchemaDir)
	if err != nil {
		return nil, err
	}
	cfg, err := LoadInput(ctx, opts.Ref, opts.Stdin, opts.Registry)
	if err != nil {
		if IsContentError(err) {
			return validate.LoadErrorResult(err), nil
		}
		return nil, err
	}
	vopts := validate.Options{Strict: opts.Strict, Schemas: schemas}
	if opts.CheckDependencies || len(opts.With) > 0 {
		if vopts.Dependencies, err = loadDependencyCatalogs(ctx, opts.With, opts.Registry); err != nil {
			return nil, err
		}
	}
	return validate.Validate(ctx, cfg, vopts)
}

// loadDependencyCatalogs loads the --with catalogs (directories, files or
// images, as LoadInput takes them), each named after its reference.
func loadDependencyCatalogs(ctx context.Context, refs []string, reg render.RegistryOptions) (*validate.DependencyOptions, error) {
	opts := &validate.DependencyOptions{}
	seen := map[string]bool{validate.ValidatedCatalog: true}
	for _, ref := range refs {
		if seen[ref] {
			return nil, fmt.Errorf("--with %s: given twice (or named %q)", ref, validate.ValidatedCatalog)
		}
		seen[ref] = true
		cfg, err := LoadInput(ctx, ref, nil, reg)
		if err != nil {
			return nil, fmt.Errorf("load --with catalog %s: %w", ref, err)
		}
		opts.With = append(opts.With, resolve.Catalog{Name: ref, Config: cfg})
	}
	return opts, nil
}
