package alphabundle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// UnpackOptions configure Unpack: upstream's `opm alpha bundle unpack`.
type UnpackOptions struct {
	// Ref is the bundle image: any reference pkg/image opens (a registry
	// image, oci:DIR, oci-archive:FILE, docker-archive:FILE).
	Ref string
	// OutDir receives the image's filesystem ("" = the current
	// directory). It must be absent or empty unless Overwrite.
	OutDir string
	// Overwrite unpacks into a non-empty OutDir, replacing the entries
	// the image has (manifests/, metadata/, ...) and leaving the others.
	Overwrite bool
	// SkipValidation unpacks an image that does not render as a bundle.
	SkipValidation bool
	// Registry configures the pull (TLS, CA, cache, limits).
	Registry render.RegistryOptions
}

// UnpackResult is what Unpack wrote.
type UnpackResult struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	OutDir string `json:"outDir"`
	// Entries are the top-level names written in OutDir.
	Entries []string `json:"entries"`
	// Bundle is the bundle's name, when it was validated.
	Bundle string `json:"bundle,omitempty"`
}

// NotEmptyError refuses a non-empty output directory without Overwrite.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("output directory %q is not empty: unpack into a new or empty directory (--out DIR), or add --overwrite to replace the entries the image has and keep the others", e.Dir)
}

// Unpack pulls the image and writes its filesystem to OutDir through
// pkg/image's extraction (its limits, and links that stay inside). The
// image is unpacked into a private directory inside OutDir, checked to
// render as a bundle (unless SkipValidation), then moved into place entry
// by entry: on failure OutDir is left as it was.
func Unpack(ctx context.Context, opts UnpackOptions) (*UnpackResult, error) {
	out := opts.OutDir
	if out == "" {
		out = "."
	}
	empty, err := fsutil.EmptyOrAbsent(out)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	if !empty && !opts.Overwrite {
		return nil, &NotEmptyError{Dir: out}
	}
	img, err := image.Open(ctx, opts.Ref, opts.Registry.ImageOptions()...)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	res := &UnpackResult{Ref: opts.Ref, Digest: img.Digest(), OutDir: out}

	_, statErr := os.Stat(out)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, err
	}
	ok := false
	if created {
		defer func() {
			if !ok {
				_ = os.RemoveAll(out)
			}
		}()
	}
	work, err := fsutil.MkdirUnique(out, ".opm-unpack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	tree := filepath.Join(work, "tree")
	if err := os.Mkdir(tree, 0o700); err != nil {
		return nil, err
	}
	if err := img.Extract(ctx, tree); err != nil {
		return nil, err
	}
	if err := openModes(tree); err != nil {
		return nil, err
	}
	if !opts.SkipValidation {
		name, err := checkBundle(ctx, tree, opts.Ref)
		if err != nil {
			return nil, fmt.Errorf("%s is not a bundle that renders: %w (use --skip-validation to unpack it anyway)", opts.Ref, err)
		}
		res.Bundle = name
	}
	entries, err := os.ReadDir(tree)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := moveEntries(tree, out, filepath.Join(work, "old"), entries, opts.Overwrite); err != nil {
		return nil, err
	}
	for _, e := range entries {
		res.Entries = append(res.Entries, e.Name())
	}
	ok = true
	return res, nil
}

// checkBundle renders the bundle at dir as `opm render` renders a bundle
// image, and returns its name.
func checkBundle(ctx context.Context, dir, ref string) (string, error) {
	b, err := bundle.ParseDir(ctx, dir)
	if err != nil {
		return "", err
	}
	if _, err := b.Declcfg(ref); err != nil {
		return "", err
	}
	return b.Name, nil
}

// openModes gives what the extraction wrote (files 0600, directories
// 0700) the modes of a user's checkout: 0644 and 0755, executables 0755.
// Links are left alone (the walk does not follow them).
func openModes(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Chmod(p, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if info.Mode()&0o100 != 0 {
				mode = 0o755
			}
			return os.Chmod(p, mode)
		}
		return nil
	})
}

// moveEntries renames every entry of from into to. An entry that exists in
// to is moved to backup first (only with overwrite; without, its
// appearance is an error). On failure, what was moved is moved back.
func moveEntries(from, to, backup string, entries []fs.DirEntry, overwrite bool) error {
	type moved struct{ name, old string }
	var done []moved
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			m := done[i]
			dst := filepath.Join(to, m.name)
			_ = os.RemoveAll(dst)
			if m.old != "" {
				_ = os.Rename(m.old, dst)
			}
		}
	}
	for _, e := range entries {
		dst := filepath.Join(to, e.Name())
		m := moved{name: e.Name()}
		if _, err := os.Lstat(dst); err == nil {
			if !overwrite {
				undo()
				return fmt.Errorf("%s: %w (created meanwhile; use --overwrite to replace it)", dst, fs.ErrExist)
			}
			if err := os.MkdirAll(backup, 0o700); err != nil {
				undo()
				return err
			}
			m.old = filepath.Join(backup, e.Name())
			if err := os.Rename(dst, m.old); err != nil {
				undo()
				return err
			}
		}
		if err := os.Rename(filepath.Join(from, e.Name()), dst); err != nil {
			if m.old != "" {
				_ = os.Rename(m.old, dst)
			}
			undo()
			return err
		}
		done = append(done, m)
	}
	return nil
}
