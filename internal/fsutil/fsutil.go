// Package fsutil holds the small filesystem steps opm's atomic writers
// share.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// ErrNotDirectory is wrapped by EmptyOrAbsent for a path that exists but is
// not a directory.
var ErrNotDirectory = errors.New("not a directory")

// EmptyOrAbsent reports whether dir does not exist or is an empty
// directory. A path that exists but is not a directory is an error
// wrapping ErrNotDirectory.
func EmptyOrAbsent(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, fmt.Errorf("%q is %w", dir, ErrNotDirectory)
	}
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return false, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return true, nil
}

// MkdirUnique creates a new directory named prefix plus a random suffix in
// parent, with mode 0777 minus umask (os.MkdirTemp would use 0700), and
// returns its path.
func MkdirUnique(parent, prefix string) (string, error) {
	for range 100 {
		name := filepath.Join(parent, prefix+strconv.FormatUint(rand.Uint64(), 36))
		err := os.Mkdir(name, 0o777)
		if err == nil {
			return name, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create a temporary directory in %s", parent)
}
