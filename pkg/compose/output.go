package compose

import (
	"errors"
	"fmt"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/declcfg"
)

// NotEmptyError is returned for an output directory that holds files when
// replacing it was not asked for.
type NotEmptyError struct{ Dir string }

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("output directory %q is not empty", e.Dir)
}

// CheckOutputDir fails unless dir is absent or empty, or force allows
// replacing its contents; and, whatever force says, when dir is, holds or
// lies inside one of inputs, or is a system or home directory (see
// fsutil.CheckOutputDir). Callers check before any long work, so that a
// refusal comes at once.
func CheckOutputDir(dir string, force bool, inputs ...string) error {
	if err := fsutil.CheckOutputDir(dir, inputs...); err != nil {
		return err
	}
	empty, err := fsutil.EmptyOrAbsent(dir)
	if errors.Is(err, fsutil.ErrNotDirectory) {
		return fmt.Errorf("output directory %q is not a directory", dir)
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if !empty && !force {
		return &NotEmptyError{Dir: dir}
	}
	return nil
}

// WriteDir writes cfg under dir as `opm migrate` does (one directory per
// package holding catalog.json or catalog.yaml, and catalog.<ext> at the
// top for blobs of no package), atomically: the tree is built beside dir
// and moved into place when complete. A non-empty dir is refused unless
// force, which replaces its contents; dir is checked against inputs again
// (CheckOutputDir) just before.
func WriteDir(cfg *declcfg.DeclarativeConfig, dir string, format declcfg.Format, force bool, inputs ...string) error {
	if err := CheckOutputDir(dir, force, inputs...); err != nil {
		return err
	}
	empty, err := fsutil.EmptyOrAbsent(dir)
	if err != nil {
		return err
	}
	if empty {
		return declcfg.WriteFS(*cfg, dir, format)
	}
	return fsutil.ReplaceDir(dir, func(staging string) error {
		return declcfg.WriteFS(*cfg, staging, format)
	})
}
