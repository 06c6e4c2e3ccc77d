package catalogedit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
)

// Writing: all files or none.
//
// Every check that can refuse the write runs first (each file is still a
// regular, writable file holding exactly the bytes that were edited, each
// new file does not exist yet). Then every new content is written to a
// temporary file beside its target and synced. Only then are the targets
// replaced, one rename each, after keeping a hard link to each old file;
// if a step fails, the files already replaced are put back from those
// links. A refused or failed write leaves every file as it was.

// testFailAfter makes Write fail after that many replacements (tests).
var testFailAfter = -1

// Write applies the changes to the files.
func (c *Catalog) Write(changes []FileChange) error {
	if len(changes) == 0 {
		return nil
	}
	modes := make([]fs.FileMode, len(changes))
	for i, ch := range changes {
		mode, err := c.preflight(ch)
		if err != nil {
			return err
		}
		modes[i] = mode
	}

	type step struct {
		ch     FileChange
		tmp    string // the new content
		backup string // a link to (or the moved) old file
		done   bool
	}
	steps := make([]*step, len(changes))
	var madeDirs []string // directories created for new files, parents first
	cleanup := func() {
		for _, s := range steps {
			if s == nil {
				continue
			}
			if s.tmp != "" {
				_ = c.root.Remove(s.tmp)
			}
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			_ = c.root.Remove(madeDirs[i]) // only if still empty
		}
	}
	for i, ch := range changes {
		s := &step{ch: ch}
		steps[i] = s
		if ch.Action == ActionDeleted {
			continue
		}
		if ch.Action == ActionCreated {
			made, err := c.mkdirs(path.Dir(ch.Name))
			madeDirs = append(madeDirs, made...)
			if err != nil {
				cleanup()
				return fmt.Errorf("write %s: %w", ch.Display, err)
			}
		}
		tmp, err := c.writeTemp(ch.Name, ch.New, modes[i])
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", ch.Display, err)
		}
		s.tmp = tmp
	}

	rollback := func() {
		for i := len(steps) - 1; i >= 0; i-- {
			s := steps[i]
			if !s.done {
				if s.backup != "" {
					_ = c.root.Remove(s.backup)
				}
				continue
			}
			switch s.ch.Action {
			case ActionCreated:
				_ = c.root.Remove(s.ch.Name)
			default:
				_ = c.root.Rename(s.backup, s.ch.Name)
			}
		}
	}
	for i, s := range steps {
		if i == testFailAfter {
			rollback()
			cleanup()
			return fmt.Errorf("write %s: injected failure", s.ch.Display)
		}
		if err := c.replace(s.ch, s.tmp, &s.backup); err != nil {
			rollback()
			cleanup()
			return fmt.Errorf("write %s: %w", s.ch.Display, err)
		}
		s.done, s.tmp = true, ""
	}
	for _, s := range steps {
		if s.backup != "" {
			_ = c.root.Remove(s.backup)
		}
	}
	return nil
}

// mkdirs creates dir and its missing parents, returning those it created,
// parents first.
func (c *Catalog) mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "."; d = path.Dir(d) {
		if _, err := c.root.Lstat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
	}
	var made []string
	for _, d := range missing {
		if err := c.root.Mkdir(d, 0o777); err != nil {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}

// preflight checks that a change can be written and returns the mode of
// the file to write.
func (c *Catalog) preflight(ch FileChange) (fs.FileMode, error) {
	if ch.Action == ActionCreated {
		if _, err := c.root.Lstat(ch.Name); !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("refusing to overwrite %s: it exists", ch.Display)
		}
		for dir := path.Dir(ch.Name); dir != "."; dir = path.Dir(dir) {
			st, err := c.root.Lstat(dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue // created with the file
			}
			if err != nil || !st.IsDir() {
				return 0, fmt.Errorf("cannot create %s: %s is not a directory", ch.Display, c.DisplayName(dir))
			}
			break
		}
		return 0o666, nil
	}
	st, err := c.root.Lstat(ch.Name)
	if err != nil {
		return 0, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return 0, fmt.Errorf("refusing to edit %s: it is a symbolic link (edit the file it points to)", ch.Display)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("refusing to edit %s: not a regular file", ch.Display)
	}
	if st.Mode().Perm()&0o222 == 0 {
		return 0, fmt.Errorf("refusing to edit %s: the file is read-only", ch.Display)
	}
	f, err := c.root.OpenFile(ch.Name, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("refusing to edit %s: %w", ch.Display, err)
	}
	f.Close()
	now, err := c.readFile(ch.Name)
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(now, ch.Old) {
		return 0, fmt.Errorf("refusing to edit %s: it changed since it was read", ch.Display)
	}
	return st.Mode().Perm(), nil
}

// sideName returns a hidden name beside file for a temporary or backup.
func sideName(file, kind string) string {
	dir, base := path.Split(file)
	return dir + "." + base + ".opm-" + kind + "-" + strconv.FormatUint(rand.Uint64(), 36)
}

// writeTemp writes data to a new temporary file beside name.
func (c *Catalog) writeTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	for range 100 {
		tmp := sideName(name, "edit")
		f, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && mode != 0o666 {
			// keep the old file's mode exactly (OpenFile applies the umask)
			err = c.root.Chmod(tmp, mode)
		}
		if err != nil {
			_ = c.root.Remove(tmp)
			return "", err
		}
		return tmp, nil
	}
	return "", errors.New("cannot create a temporary file")
}

// replace puts one change in place, leaving in *backup the name that
// restores the old file.
func (c *Catalog) replace(ch FileChange, tmp string, backup *string) error {
	switch ch.Action {
	case ActionCreated:
		// a link fails rather than overwrite a file created meanwhile
		if err := c.root.Link(tmp, ch.Name); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return err
			}
			return c.root.Rename(tmp, ch.Name)
		}
		return c.root.Remove(tmp)
	case ActionDeleted:
		b := sideName(ch.Name, "old")
		if err := c.root.Rename(ch.Name, b); err != nil {
			return err
		}
		*backup = b
		return nil
	default:
		b := sideName(ch.Name, "old")
		if err := c.root.Link(ch.Name, b); err != nil {
			// no hard links here: move the old file aside instead
			if err := c.root.Rename(ch.Name, b); err != nil {
				return err
			}
			*backup = b
			if err := c.root.Rename(tmp, ch.Name); err != nil {
				_ = c.root.Rename(b, ch.Name)
				*backup = ""
				return err
			}
			return nil
		}
		*backup = b
		if err := c.root.Rename(tmp, ch.Name); err != nil {
			_ = c.root.Remove(b)
			*backup = ""
			return err
		}
		return nil
	}
}
