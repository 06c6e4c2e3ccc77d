// Package validate is the action of `opm validate`: it loads what the
// command is given (a directory, a file, standard input or a catalog image)
// and checks it with pkg/validate. Loading images is this package's job, so
// that pkg/validate itself needs no registry code.
package validate

import (
	"context"
	"io"

	"github.com/opmkit/opm/pkg/render"
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
	return validate.Validate(ctx, cfg, validate.Options{Strict: opts.Strict, Schemas: schemas})
}
