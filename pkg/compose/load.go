package compose

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// StdinName names standard input in positions and messages.
const StdinName = "<stdin>"

// LoadOptions configure [Load].
type LoadOptions struct {
	// Stdin is read for the reference "-".
	Stdin io.Reader
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
}

// Load reads a catalog reference: "-" (a JSON or YAML stream on
// Stdin), a regular file (one FBC file, such as a package's fragment), a
// directory (a file-based catalog), or a catalog image. Directories and
// images go through pkg/render, so the blobs are those `opm render` gives.
func Load(ctx context.Context, ref string, opts LoadOptions) (*declcfg.DeclarativeConfig, error) {
	if ref == "-" {
		if opts.Stdin == nil {
			return nil, errors.New("no standard input to read")
		}
		return declcfg.LoadReaderContext(ctx, opts.Stdin, StdinName)
	}
	st, err := os.Stat(ref)
	if err == nil && !st.IsDir() {
		return declcfg.LoadPath(ctx, ref)
	}
	if err != nil && image.IsPath(ref) {
		return nil, err // a mistyped path, not an image to pull
	}
	return render.Render(ctx, render.Options{
		Refs:           []string{ref},
		AllowedRefMask: render.RefDCDir | render.RefDCFile | render.RefDCImage,
		Registry:       opts.Registry,
	})
}
