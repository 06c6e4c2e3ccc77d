package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile atomically writes data to path: the data goes to a temporary
// file in the same directory, which then takes path's place, so a reader
// never sees a partial file.
//
// Without overwrite, an existing path is never replaced, even one created
// meanwhile: the temporary file is hard-linked to path, which fails
// (wrapping fs.ErrExist, as `path "p": file already exists`) when path
// exists. With overwrite, it is renamed over path; an existing file keeps
// its permission bits. A new file gets perm minus the umask.
func WriteFile(path string, data []byte, perm fs.FileMode, overwrite bool) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if overwrite {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			perm = st.Mode().Perm()
			defer func() {
				if err == nil {
					err = os.Chmod(path, perm)
				}
			}()
		}
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("creating %q: %w", path, err)
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		_ = os.Remove(tmp)
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %q: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %q: %w", path, err)
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return fmt.Errorf("writing %q: %w", path, cerr)
	}
	if overwrite {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %q: %w", path, err)
		}
		return nil
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("path %q: %w", path, fs.ErrExist)
		}
		// The file system may not support hard links: fall back to a
		// check followed by a rename.
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("path %q: %w", path, fs.ErrExist)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %q: %w", path, err)
		}
	}
	return nil
}
