//go:build unix

package catalogedit

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/opmkit/opm/internal/fsutil"
)

// outsideSide keeps the files in a private directory beside the catalog
// directory; renames and links between it and the tree go through
// directory handles (renameat, linkat), the tree's opened inside the
// catalog's root.
type outsideSide struct {
	root *os.Root
	path string   // the private directory
	dir  *os.File // and its handle
	n    int
}

// newSide returns where the files of a write go for the catalog directory
// dir opened as root (see side).
func newSide(root *os.Root, dir string, single bool) side {
	if single {
		return treeSide{root}
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil || filepath.Dir(abs) == abs {
		return treeSide{root}
	}
	work, err := fsutil.MkdirUnique(filepath.Dir(abs), "."+filepath.Base(abs)+".opm-edit-")
	if err != nil {
		return treeSide{root}
	}
	d, err := os.Open(work)
	var wst, rst os.FileInfo
	if err == nil {
		wst, err = d.Stat()
	}
	if err == nil {
		rst, err = root.Stat(".")
	}
	if err != nil || !sameDevice(wst, rst) {
		if d != nil {
			d.Close()
		}
		_ = os.Remove(work)
		return treeSide{root}
	}
	return &outsideSide{root: root, path: work, dir: d}
}

func sameDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}

func (o *outsideSide) name(target, kind string) string {
	o.n++
	return strconv.Itoa(o.n) + "." + kind + "." + path.Base(target)
}

func (o *outsideSide) create(target string, data []byte, mode fs.FileMode, own owner) (string, error) {
	name := o.name(target, "new")
	f, err := os.OpenFile(filepath.Join(o.path, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return "", err
	}
	if err := fill(f, data, mode, own); err != nil {
		_ = os.Remove(filepath.Join(o.path, name))
		return "", err
	}
	return name, nil
}

// at runs op with a handle on target's directory inside the root.
func (o *outsideSide) at(what, target string, op func(dirfd int, base string) error) error {
	d, err := o.root.Open(path.Dir(target))
	if err != nil {
		return err
	}
	defer d.Close()
	err = op(int(d.Fd()), path.Base(target))
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return &os.PathError{Op: what, Path: target, Err: errno}
	}
	return err
}

func (o *outsideSide) moveIn(s, target string) error {
	return o.at("rename", target, func(fd int, base string) error {
		return unix.Renameat(int(o.dir.Fd()), s, fd, base)
	})
}

func (o *outsideSide) linkIn(s, target string) error {
	return o.at("link", target, func(fd int, base string) error {
		return unix.Linkat(int(o.dir.Fd()), s, fd, base, 0)
	})
}

func (o *outsideSide) moveOut(target string) (string, error) {
	b := o.name(target, "old")
	return b, o.at("rename", target, func(fd int, base string) error {
		return unix.Renameat(fd, base, int(o.dir.Fd()), b)
	})
}

func (o *outsideSide) linkOut(target string) (string, error) {
	b := o.name(target, "old")
	return b, o.at("link", target, func(fd int, base string) error {
		return unix.Linkat(fd, base, int(o.dir.Fd()), b, 0)
	})
}

func (o *outsideSide) remove(s string) error { return os.Remove(filepath.Join(o.path, s)) }

func (o *outsideSide) close() {
	o.dir.Close()
	_ = os.RemoveAll(o.path)
}

// fileOwner returns the owner of the file st describes.
func fileOwner(st fs.FileInfo) owner {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return owner{uid: int(s.Uid), gid: int(s.Gid), ok: true}
	}
	return owner{}
}
