package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// ReplaceDir replaces the contents of the existing directory dir with a
// tree that write builds at the path it is given (which does not exist
// yet, beside dir). The new tree is moved into place only once complete,
// with dir's permissions; if anything fails, dir is left as it was. A
// symlink to a directory is followed: its target is replaced.
func ReplaceDir(dir string, write func(staging string) error) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	st, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%q is %w", dir, ErrNotDirectory)
	}
	parent, base := filepath.Split(filepath.Clean(real))
	if parent == "" {
		parent = "."
	}
	staging, err := freeName(parent, "."+base+".new-")
	if err != nil {
		return err
	}
	if err := write(staging); err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	if err := os.Chmod(staging, st.Mode().Perm()); err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	backup, err := freeName(parent, "."+base+".old-")
	if err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	if err := os.Rename(real, backup); err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	if err := os.Rename(staging, real); err != nil {
		if rerr := os.Rename(backup, real); rerr != nil {
			return fmt.Errorf("%w (and restoring the previous contents from %s failed: %v)", err, backup, rerr)
		}
		_ = os.RemoveAll(staging)
		return err
	}
	if err := os.RemoveAll(backup); err != nil {
		return fmt.Errorf("removing the previous contents (%s): %w", backup, err)
	}
	return nil
}

// freeName returns a path in parent, starting with prefix, that does not
// exist yet.
func freeName(parent, prefix string) (string, error) {
	for range 100 {
		name := filepath.Join(parent, prefix+strconv.FormatUint(rand.Uint64(), 36))
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
	}
	return "", fmt.Errorf("cannot find a free temporary name in %s", parent)
}
