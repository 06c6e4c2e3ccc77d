package catalogedit

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
)

// Where a write keeps its temporary files (the new contents) and backups
// (links to the old files, or the old files themselves once moved aside).
//
// They live outside the catalog's tree when they can: in a private
// directory beside the catalog directory (".NAME.opm-edit-RANDOM"), on
// the same filesystem, reached by directory handles so that nothing in
// the tree is looked up by path twice. Killed mid-write (SIGKILL, a power
// cut), the edit then leaves nothing the loader reads: the catalog holds
// each file either old or new, and the directory beside it holds the new
// contents not yet moved in and the previous versions of the files
// replaced, for whoever wants to finish or undo the edit by hand.
//
// When no such directory can be made (the catalog is a single file, its
// parent is not writable, or is another filesystem) the files are hidden
// names beside each target (".FILE.opm-edit-RANDOM", ".FILE.opm-old-
// RANDOM"), as before.
type side interface {
	// create writes data to a new temporary file for target, with mode
	// and owner.
	create(target string, data []byte, mode fs.FileMode, own owner) (string, error)
	// moveIn renames the temporary or backup file s to target.
	moveIn(s, target string) error
	// linkIn links s as target; it fails if target exists.
	linkIn(s, target string) error
	// moveOut renames target to a new backup name, linkOut links it there.
	moveOut(target string) (string, error)
	linkOut(target string) (string, error)
	remove(s string) error
	// close removes what is left.
	close()
}

// owner is a file's owner and group; ok is false where unknown.
type owner struct {
	uid, gid int
	ok       bool
}

// sideName returns a hidden name beside file for a temporary or backup.
func sideName(file, kind string) string {
	dir, base := path.Split(file)
	return dir + "." + base + ".opm-" + kind + "-" + strconv.FormatUint(rand.Uint64(), 36)
}

// treeSide keeps the files beside their targets, inside the tree.
type treeSide struct{ root *os.Root }

func (t treeSide) create(target string, data []byte, mode fs.FileMode, own owner) (string, error) {
	for range 100 {
		tmp := sideName(target, "edit")
		f, err := t.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := fill(f, data, mode, own); err != nil {
			_ = t.root.Remove(tmp)
			return "", err
		}
		return tmp, nil
	}
	return "", errors.New("cannot create a temporary file")
}

func (t treeSide) moveIn(s, target string) error { return t.root.Rename(s, target) }
func (t treeSide) linkIn(s, target string) error { return t.root.Link(s, target) }
func (t treeSide) remove(s string) error         { return t.root.Remove(s) }
func (t treeSide) close()                        {}

func (t treeSide) moveOut(target string) (string, error) {
	b := sideName(target, "old")
	return b, t.root.Rename(target, b)
}

func (t treeSide) linkOut(target string) (string, error) {
	b := sideName(target, "old")
	return b, t.root.Link(target, b)
}

// fill writes data to the new file f, syncs and closes it, and gives it
// mode exactly (the umask applied at creation) and the owner own (when
// the process may; otherwise the file stays the process's, as any
// editor's rewrite leaves it).
func fill(f *os.File, data []byte, mode fs.FileMode, own owner) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil && mode != 0o666 { // 0o666: a new file, the umask applies
		err = f.Chmod(mode)
	}
	if err == nil && own.ok && (own.uid != os.Geteuid() || own.gid != os.Getegid()) {
		if cerr := f.Chown(own.uid, own.gid); cerr != nil && !errors.Is(cerr, fs.ErrPermission) {
			err = fmt.Errorf("keeping the owner: %w", cerr)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
