package catalogedit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Locking: an edit reads the catalog, checks it, edits and writes; two
// editors at once would each write what they read, and one update would
// be lost. Lock serializes them: it takes an advisory lock (flock) on the
// catalog's directory (for a file catalog: the directory holding the
// file), exclusive for an edit, shared for a dry run, held until the
// unlock func is called. A directory is locked rather than a lock file so
// that nothing is left beside or inside the catalog; a file is not locked
// itself because an edit replaces it (a new inode, which a later editor
// would lock while an earlier one still waits on the old).
//
// A second editor waits up to wait, then fails with a *LockedError, which
// names the process holding the lock where the system says (Linux's
// /proc/locks).

// DefaultLockWait is how long an edit waits for another edit of the same
// catalog to finish.
const DefaultLockWait = 20 * time.Second

// LockedError is returned when another process kept the catalog locked
// for longer than the wait.
type LockedError struct {
	Catalog string
	// Holder describes the process holding the lock ("pid 123: opm
	// catalog promote ..."), "" when unknown.
	Holder string
	Wait   time.Duration
}

func (e *LockedError) Error() string {
	holder := "another process"
	if e.Holder != "" {
		holder = "another process (" + e.Holder + ")"
	}
	return fmt.Sprintf("catalog %s is being edited by %s: gave up after waiting %s (retry when it is done, or wait longer with --lock-wait)", e.Catalog, holder, e.Wait)
}

// lockTarget is the directory whose lock guards the catalog at p.
func lockTarget(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return p, nil
	}
	return filepath.Dir(p), nil
}

// Lock locks the catalog at p for an edit (exclusive) or a dry run
// (shared, exclusive false), waiting up to wait (0: not at all) while
// another process holds it, and returns the function that unlocks it.
// It stops waiting when ctx is done.
func Lock(ctx context.Context, p string, exclusive bool, wait time.Duration) (unlock func(), err error) {
	target, err := lockTarget(p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(target)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	delay := 10 * time.Millisecond
	for {
		ok, err := tryLock(f, exclusive)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock catalog %s: %w", p, err)
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			holder := lockHolder(f)
			f.Close()
			return nil, &LockedError{Catalog: p, Holder: holder, Wait: wait}
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}
