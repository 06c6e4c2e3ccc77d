package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// ReplaceDir replaces the contents of the existing directory dir with a
// tree that write builds at the path it is given (which does not exist
// yet, beside dir). The new tree is moved into place only once complete,
// with dir's permissions; if anything fails, dir is left as it was. A
// symlink to a directory is followed: its target is replaced.
//
// The new and the old tree live inside a private directory beside dir
// (MkdirUnique creates it, so no other process can hold its name), which
// is removed at the end; it is kept only when restoring the old tree
// failed, since it then holds the previous contents.
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
	work, err := MkdirUnique(parent, "."+base+".replace-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(work)
		}
	}()
	staging, backup := filepath.Join(work, "new"), filepath.Join(work, "old")
	if err := write(staging); err != nil {
		return err
	}
	if err := os.Chmod(staging, st.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(real, backup); err != nil {
		return err
	}
	if err := os.Rename(staging, real); err != nil {
		if rerr := os.Rename(backup, real); rerr != nil {
			keep = true
			return fmt.Errorf("%w (and restoring the previous contents from %s failed: %v)", err, backup, rerr)
		}
		return err
	}
	if err := os.RemoveAll(work); err != nil {
		keep = true
		return fmt.Errorf("removing the previous contents (%s): %w", backup, err)
	}
	return nil
}

// ReplaceFile writes data to path atomically: to a temporary file beside
// it (hidden, ".NAME.tmp-RANDOM"), synced, given mode perm, then renamed
// over path, so that a reader sees the old file or the new one, never a
// part. The temporary file is removed on error.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}
