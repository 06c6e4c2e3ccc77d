package validate

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/distribution/reference"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// StdinName names standard input in positions.
const StdinName = "<stdin>"

// ErrNoBlobs is returned for standard input that holds no blob at all: in
// `opm render ... | opm validate -` it means the command before the pipe
// failed, and must not pass as an empty, valid catalog.
var ErrNoBlobs = errors.New("no blobs on standard input: nothing to validate (did the command before the pipe fail? run it with set -o pipefail)")

// LoadInput loads what `opm validate` is given: "-" (a stream on stdin),
// a directory (an FBC root, as upstream), a single file, or a catalog image
// reference (for a path that does not exist but parses as a reference).
// Errors about the catalog's content are *declcfg.LoadError; others are
// about reaching it (see [IsContentError]), including [ErrNoBlobs].
func LoadInput(ctx context.Context, ref string, stdin io.Reader, reg render.RegistryOptions) (*declcfg.DeclarativeConfig, error) {
	if ref == "-" {
		if stdin == nil {
			return nil, errors.New("no standard input")
		}
		cfg, err := declcfg.LoadReaderContext(ctx, stdin, StdinName)
		if err != nil {
			return nil, err
		}
		if isEmpty(cfg) {
			return nil, ErrNoBlobs
		}
		return cfg, nil
	}
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		return declcfg.LoadDir(ctx, ref)
	case err == nil:
		return declcfg.LoadPath(ctx, ref)
	case !errors.Is(err, fs.ErrNotExist) || !looksLikeImage(ref):
		return nil, err
	}
	cfg, err := render.Render(ctx, render.Options{Refs: []string{ref}, AllowedRefMask: render.RefDCImage, Registry: reg})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func isEmpty(cfg *declcfg.DeclarativeConfig) bool {
	return len(cfg.Packages) == 0 && len(cfg.Channels) == 0 && len(cfg.Bundles) == 0 &&
		len(cfg.Deprecations) == 0 && len(cfg.Others) == 0
}

// looksLikeImage reports whether ref can be an image reference rather than
// a mistyped path.
func looksLikeImage(ref string) bool {
	if strings.HasPrefix(ref, ".") || image.IsPath(ref) {
		return false
	}
	for _, p := range []string{"oci:", "oci-archive:", "docker-archive:"} {
		if strings.HasPrefix(ref, p) {
			return true
		}
	}
	_, err := reference.ParseNormalizedNamed(ref)
	return err == nil && strings.ContainsAny(ref, "/:@")
}

// IsContentError reports whether a LoadInput error is about the catalog's
// content (an invalid catalog, exit 1) rather than about reading it (exit
// 2).
func IsContentError(err error) bool {
	var le *declcfg.LoadError
	if !errors.As(err, &le) {
		return false
	}
	return !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrNotExist)
}
