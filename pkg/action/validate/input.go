package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/validate"

	"github.com/opmkit/opm/internal/safefs"
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

// openInput opens what `opm validate` is given as LoadInput does, as an
// index of its blobs (a directory, a file, standard input) or, for a
// catalog image, as the rendered catalog.
func openInput(ctx context.Context, ref string, stdin io.Reader, reg render.RegistryOptions) (*declcfg.Index, *declcfg.DeclarativeConfig, error) {
	if ref == "-" {
		if stdin == nil {
			return nil, nil, errors.New("no standard input")
		}
		ix, err := declcfg.IndexReader(ctx, stdin, StdinName)
		if err != nil {
			return nil, nil, err
		}
		if ix.Len() == 0 {
			return nil, nil, ErrNoBlobs
		}
		return ix, nil, nil
	}
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		ix, err := declcfg.IndexDir(ctx, ref)
		return ix, nil, err
	case err == nil:
		ix, err := declcfg.IndexPath(ctx, ref)
		return ix, nil, err
	}
	cfg, err := LoadInput(ctx, ref, stdin, reg)
	return nil, cfg, err
}

// readConfig reads the validate.ConfigFile of the catalog directory ref,
// and the baseline it names (inside the directory). Both are nil when ref
// is not a directory or has no such file.
func readConfig(ref string) (*validate.Config, *validate.Baseline, error) {
	if ref == "-" {
		return nil, nil, nil
	}
	if st, err := os.Stat(ref); err != nil || !st.IsDir() {
		return nil, nil, nil // not a directory: reported when loading
	}
	root, err := os.OpenRoot(ref)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	data, err := safefs.ReadRegular(root, validate.ConfigFile, validate.MaxConfigSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		name := filepath.Join(ref, validate.ConfigFile)
		return nil, nil, fmt.Errorf("%s: %w", name, safefs.Refusal(err, name))
	}
	cfg, err := validate.ParseConfig(data, filepath.Join(ref, validate.ConfigFile))
	if err != nil {
		return nil, nil, err
	}
	if cfg.Baseline == "" {
		return cfg, nil, nil
	}
	data, err = safefs.ReadRegular(root, filepath.FromSlash(cfg.Baseline), validate.MaxBaselineSize)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: baseline: %w", filepath.Join(ref, validate.ConfigFile), err)
	}
	b, err := validate.ReadBaseline(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(root.Name(), filepath.FromSlash(cfg.Baseline)), err)
	}
	return cfg, b, nil
}

// configNotIgnored adds help to a load error about the configuration
// file: upstream opm reads it as FBC unless .indexignore lists it.
func configNotIgnored(res *validate.Result) {
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Code == validate.CodeLoad && path.Base(filepath.ToSlash(f.File)) == validate.ConfigFile {
			f.Help = "opm and upstream opm read every file of a catalog directory as FBC: list " +
				validate.ConfigFile + " in the catalog's " + declcfg.IndexIgnoreFilename
		}
	}
}

// bundleDirHelp adds help to a load error of a bundle directory (manifests/
// and metadata/) given where a catalog goes: its manifests are no FBC.
func bundleDirHelp(res *validate.Result, ref string) {
	if st, err := os.Stat(ref); err != nil || !st.IsDir() || !render.IsBundleDir(ref) {
		return
	}
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Code == validate.CodeLoad && f.Help == "" {
			f.Help = fmt.Sprintf("%s is a bundle directory (manifests/ and metadata/), not a file-based catalog: check the bundle with opm bundle validate %s, or render it as a catalog blob with opm render %s", ref, ref, ref)
		}
	}
}
