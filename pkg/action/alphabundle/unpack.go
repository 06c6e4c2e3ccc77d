package alphabundle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// UnpackOptions configure Unpack: upstream's `opm alpha bundle unpack`.
type UnpackOptions struct {
	// Ref is the bundle image: any reference pkg/image opens (a registry
	// image, oci:DIR, oci-archive:FILE, docker-archive:FILE).
	Ref string
	// OutDir receives the bundle's directories ("" = the current
	// directory). It must be absent or empty unless Overwrite.
	OutDir string
	// Overwrite unpacks into a non-empty OutDir, replacing the bundle's
	// directories that it has (manifests/, metadata/ and those the
	// annotations name) and leaving everything else.
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
	// Skipped are the image's other top-level entries, not written.
	Skipped []string `json:"skipped,omitempty"`
	// Bundle is the bundle's name, when it was validated.
	Bundle string `json:"bundle,omitempty"`
}

// NotEmptyError refuses a non-empty output directory without Overwrite.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("output directory %q is not empty: unpack into a new or empty directory (--out DIR), or add --overwrite to replace the bundle's directories (manifests/, metadata/) and keep everything else", e.Dir)
}

// bundleDirs are the top-level entries Unpack writes: manifests/,
// metadata/ and the directories the annotations name (image labels, and
// metadata/annotations.yaml in dir), each reduced to its first path
// element. A name that is empty, a dot segment or hidden (.git) is not
// taken: an image does not get to pick what in a checkout it replaces.
func bundleDirs(labels map[string]string, dir string) map[string]bool {
	dirs := map[string]bool{"manifests": true, "metadata": true}
	add := func(v string) {
		first, _, _ := strings.Cut(strings.TrimLeft(path.Clean("/"+strings.TrimSpace(v)), "/"), "/")
		if first != "" && !strings.HasPrefix(first, ".") && !strings.ContainsAny(first, "\\\x00") {
			dirs[first] = true
		}
	}
	keys := []string{bundle.AnnotationManifests, bundle.AnnotationMetadata}
	for _, k := range keys {
		if v, ok := labels[k]; ok {
			add(v)
		}
	}
	if root, err := os.OpenRoot(dir); err == nil {
		defer root.Close()
		if data, err := safefs.ReadRegular(root, "metadata/annotations.yaml", 1<<20); err == nil {
			if ann, err := bundle.DecodeAnnotations(data); err == nil {
				for _, k := range keys {
					if v, ok := ann[k]; ok {
						add(v)
					}
				}
			}
		}
	}
	return dirs
}

// Unpack pulls the image and writes its bundle directories (see
// bundleDirs) to OutDir through pkg/image's extraction (its limits, and
// links that stay inside); the image's other top-level entries are skipped
// and listed in the result. The
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
	all, err := os.ReadDir(tree)
	if err != nil {
		return nil, err
	}
	keep := bundleDirs(img.Labels(), tree)
	var entries []fs.DirEntry
	for _, e := range all {
		if keep[e.Name()] {
			entries = append(entries, e)
		} else {
			res.Skipped = append(res.Skipped, e.Name())
		}
	}
	if err := checkKept(tree, entries, keep); err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s has nothing to unpack: no manifests/, metadata/ or directory its annotations name (its other entries are not unpacked: %s)", opts.Ref, listOrNone(res.Skipped))
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

// checkKept refuses a kept entry that is not a directory, and a symbolic
// link in one that leads out of the kept entries: the extraction kept links
// inside the image, but a link to a skipped entry (manifests/x ->
// ../.git/config) would lead to the user's file of that name once unpacked.
func checkKept(tree string, entries []fs.DirEntry, keep map[string]bool) error {
	real, err := filepath.EvalSymlinks(tree)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			return fmt.Errorf("%s in the image is %s, not a directory: not unpacked", e.Name(), safefs.Kind(e.Type()))
		}
		err := filepath.WalkDir(filepath.Join(tree, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return err
			}
			rel, _ := filepath.Rel(tree, p)
			to, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("symbolic link %s in the image: %w", filepath.ToSlash(rel), safefs.UnwrapPath(err))
			}
			toRel, err := filepath.Rel(real, to)
			first, _, _ := strings.Cut(filepath.ToSlash(toRel), "/")
			if err != nil || !keep[first] {
				return fmt.Errorf("symbolic link %s in the image leads to %s, outside the bundle's directories: not unpacked", filepath.ToSlash(rel), filepath.ToSlash(toRel))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
