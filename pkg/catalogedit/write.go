package catalogedit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// Writing: all files or none.
//
// Every check that can refuse the write runs first (each file is still a
// regular, writable file holding exactly the bytes that were edited, each
// new file does not exist yet). Then every new content is written to a
// temporary file and synced, with the old file's mode and owner. Only then
// are the targets replaced, one rename each, after keeping a hard link to
// each old file; if a step fails, the files already replaced are put back
// from those links. A refused or failed write leaves every file as it was.
// The temporary files and links live outside the catalog's tree when they
// can (see side), so that a process killed mid-write leaves nothing there
// that the loader would read.

// testFailAfter makes Write fail after that many replacements (tests).
var testFailAfter = -1

// testStep, when set, is called before each replacement and after the
// last, with the number done (tests).
var testStep func(done int)

// Write applies the changes to the files.
func (c *Catalog) Write(changes []FileChange) error {
	if len(changes) == 0 {
		return nil
	}
	modes := make([]fs.FileMode, len(changes))
	owners := make([]owner, len(changes))
	for i, ch := range changes {
		mode, own, err := c.preflight(ch)
		if err != nil {
			return err
		}
		modes[i], owners[i] = mode, own
	}
	sd := newSide(c.root, c.Path, c.single != "")
	defer sd.close()

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
				_ = sd.remove(s.tmp)
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
		tmp, err := sd.create(ch.Name, ch.New, modes[i], owners[i])
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
					_ = sd.remove(s.backup)
				}
				continue
			}
			switch s.ch.Action {
			case ActionCreated:
				_ = c.root.Remove(s.ch.Name)
			default:
				_ = sd.moveIn(s.backup, s.ch.Name)
			}
		}
	}
	for i, s := range steps {
		if testStep != nil {
			testStep(i)
		}
		if i == testFailAfter {
			rollback()
			cleanup()
			return fmt.Errorf("write %s: injected failure", s.ch.Display)
		}
		if err := replace(sd, s.ch, s.tmp, &s.backup); err != nil {
			rollback()
			cleanup()
			return fmt.Errorf("write %s: %w", s.ch.Display, err)
		}
		s.done, s.tmp = true, ""
	}
	if testStep != nil {
		testStep(len(steps))
	}
	for _, s := range steps {
		if s.backup != "" {
			_ = sd.remove(s.backup)
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
func (c *Catalog) preflight(ch FileChange) (fs.FileMode, owner, error) {
	if ch.Action == ActionCreated {
		if _, err := c.root.Lstat(ch.Name); !errors.Is(err, fs.ErrNotExist) {
			return 0, owner{}, fmt.Errorf("refusing to overwrite %s: it exists", ch.Display)
		}
		for dir := path.Dir(ch.Name); dir != "."; dir = path.Dir(dir) {
			st, err := c.root.Lstat(dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue // created with the file
			}
			if err != nil || !st.IsDir() {
				return 0, owner{}, fmt.Errorf("cannot create %s: %s is not a directory", ch.Display, c.DisplayName(dir))
			}
			break
		}
		return 0o666, owner{}, nil
	}
	st, err := c.root.Lstat(ch.Name)
	if err != nil {
		return 0, owner{}, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return 0, owner{}, fmt.Errorf("refusing to edit %s: it is a symbolic link (edit the file it points to)", ch.Display)
	}
	if !st.Mode().IsRegular() {
		return 0, owner{}, fmt.Errorf("refusing to edit %s: not a regular file", ch.Display)
	}
	if st.Mode().Perm()&0o222 == 0 {
		return 0, owner{}, fmt.Errorf("refusing to edit %s: the file is read-only", ch.Display)
	}
	f, err := c.root.OpenFile(ch.Name, os.O_WRONLY, 0)
	if err != nil {
		return 0, owner{}, fmt.Errorf("refusing to edit %s: %w", ch.Display, err)
	}
	f.Close()
	now, err := c.readFile(ch.Name)
	if err != nil {
		return 0, owner{}, err
	}
	if !bytes.Equal(now, ch.Old) {
		return 0, owner{}, fmt.Errorf("refusing to edit %s: it changed since it was read", ch.Display)
	}
	return st.Mode().Perm(), fileOwner(st), nil
}

// replace puts one change in place, leaving in *backup the name that
// restores the old file.
func replace(sd side, ch FileChange, tmp string, backup *string) error {
	switch ch.Action {
	case ActionCreated:
		// a link fails rather than overwrite a file created meanwhile
		if err := sd.linkIn(tmp, ch.Name); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return err
			}
			return sd.moveIn(tmp, ch.Name)
		}
		return sd.remove(tmp)
	case ActionDeleted:
		b, err := sd.moveOut(ch.Name)
		if err != nil {
			return err
		}
		*backup = b
		return nil
	default:
		b, err := sd.linkOut(ch.Name)
		if err != nil {
			// no hard links here: move the old file aside instead
			b, err = sd.moveOut(ch.Name)
			if err != nil {
				return err
			}
			*backup = b
			if err := sd.moveIn(tmp, ch.Name); err != nil {
				_ = sd.moveIn(b, ch.Name)
				*backup = ""
				return err
			}
			return nil
		}
		*backup = b
		if err := sd.moveIn(tmp, ch.Name); err != nil {
			_ = sd.remove(b)
			*backup = ""
			return err
		}
		return nil
	}
}
