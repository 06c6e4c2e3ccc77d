package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// systemDirs are directories no command should ever replace, whatever the
// user asked for: the filesystem root, the top-level directories of the
// Filesystem Hierarchy Standard, and their usual system subdirectories.
var systemDirs = []string{
	"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64",
	"/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin",
	"/srv", "/sys", "/tmp", "/usr", "/var",
	"/usr/bin", "/usr/lib", "/usr/lib64", "/usr/local", "/usr/sbin", "/usr/share",
	"/usr/local/bin", "/var/lib", "/var/log", "/var/tmp",
}

// OutputDirError is an output directory refused by CheckOutputDir.
type OutputDirError struct {
	Dir    string // as given
	Input  string // the input it conflicts with, as given ("" for a system directory)
	Reason string
}

func (e *OutputDirError) Error() string {
	if e.Input == "" {
		return fmt.Sprintf("output directory %q %s; choose a new or dedicated directory (refused even with --force)", e.Dir, e.Reason)
	}
	return fmt.Sprintf("output directory %q %s %q; write the output elsewhere (refused even with --force)", e.Dir, e.Reason, e.Input)
}

// CheckOutputDir refuses an output directory whose contents a command
// would replace when replacing it would destroy something: a directory
// that is one of inputs (directories or files; references that name no
// local path, like images and "-", are skipped), holds one of them, or
// lies inside an input directory; a system directory (/, /etc, /usr, ...);
// the home directory or one of its ancestors. Paths are compared after
// resolving symbolic links (for an output directory that does not exist
// yet, those of its deepest existing ancestor). This holds whatever a
// force option says: force allows replacing the output directory's own
// previous contents, never the inputs.
func CheckOutputDir(dir string, inputs ...string) error {
	out, err := realPath(dir)
	if err != nil {
		return fmt.Errorf("output directory %q: %w", dir, err)
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if _, err := os.Stat(in); err != nil {
			continue // not a local path (an image reference), or gone
		}
		p, err := realPath(in)
		if err != nil {
			continue
		}
		switch {
		case p == out:
			return &OutputDirError{Dir: dir, Input: in, Reason: "is the input"}
		case within(out, p):
			return &OutputDirError{Dir: dir, Input: in, Reason: "holds the input"}
		case within(p, out):
			return &OutputDirError{Dir: dir, Input: in, Reason: "is inside the input"}
		}
	}
	for _, s := range systemDirs {
		if out == s {
			return &OutputDirError{Dir: dir, Reason: "is a system directory"}
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if h, err := realPath(home); err == nil && within(out, h) {
			if h == out {
				return &OutputDirError{Dir: dir, Reason: "is the home directory"}
			}
			return &OutputDirError{Dir: dir, Reason: "holds the home directory"}
		}
	}
	return nil
}

// within reports whether path p lies inside directory d (both clean and
// absolute).
func within(d, p string) bool {
	if d == p {
		return true
	}
	if d == "/" {
		return true
	}
	return strings.HasPrefix(p, d+string(filepath.Separator))
}

// realPath is p absolute with its symbolic links resolved; for a path
// that does not exist, those of its deepest existing ancestor, with the
// rest appended.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
