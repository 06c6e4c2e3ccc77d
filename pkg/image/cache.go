package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/singleflight"

	"github.com/opmkit/opm/internal/safefs"
)

// blobCache stores registry blobs by digest under dir/blobs/sha256/HEX.
//
//   - An entry is written to a temporary file in the same directory, read
//     from the registry up to its declared size and no further, verified
//     against its digest and size, and renamed into place: no process ever
//     sees a half-written entry.
//   - An entry is used only when it is a regular file of the declared size
//     (a FIFO or device in its place is never opened for a blocking read),
//     and its content is verified while it is read: a corrupted or swapped
//     entry fails the read with a *corruptError, and the caller downloads
//     it again (a miss).
//   - Downloads of one blob are de-duplicated within the session
//     (singleflight) and across processes sharing the directory (an
//     exclusive flock on blobs/sha256/.HEX.lock, where the system has flock):
//     the second waits, then finds the entry in place.
type blobCache struct {
	dir     string
	flights singleflight.Group

	rootOnce sync.Once
	root     *os.Root // dir, once it exists: entries are read through it
}

// rel is the entry of d relative to the cache directory.
func rel(d v1.Hash) string { return "blobs/" + d.Algorithm + "/" + d.Hex }

// openRoot returns the cache directory as an os.Root (nil when it cannot
// be opened: entries are then opened by path), so that an entry that is a
// link out of the cache is a miss, never read.
func (c *blobCache) openRoot() *os.Root {
	c.rootOnce.Do(func() {
		if os.MkdirAll(c.dir, 0o700) == nil {
			c.root, _ = os.OpenRoot(c.dir)
		}
	})
	return c.root
}

// close releases the cache's root.
func (c *blobCache) close() {
	if c.root != nil {
		c.root.Close()
	}
}

// corruptError is a cache entry whose content does not match its digest.
type corruptError struct {
	digest v1.Hash
	err    error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("cached blob %s is corrupted: %v", e.digest, e.err)
}

func (e *corruptError) Unwrap() error { return e.err }

// DefaultCacheDir returns the default cache directory,
// os.UserCacheDir()/opm, or "" when the system has none.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "opm")
}

func (c *blobCache) path(d v1.Hash) string {
	return filepath.Join(c.dir, "blobs", d.Algorithm, d.Hex)
}

// open returns a verifying reader of the cached blob d, or ok=false when
// the entry is absent, not a regular file, or of the wrong size. The
// reader fails with a *corruptError at its end when the content does not
// hash to d.
func (c *blobCache) open(ctx context.Context, d v1.Descriptor) (rc io.ReadCloser, ok bool, err error) {
	var (
		f    *os.File
		size int64
	)
	if root := c.openRoot(); root != nil {
		f, size, err = safefs.OpenRegular(root, rel(d.Digest))
	} else {
		f, size, err = safefs.OpenRegular(nil, c.path(d.Digest))
	}
	if err != nil {
		return nil, false, nil
	}
	if size != d.Size {
		f.Close()
		return nil, false, nil
	}
	v, err := newVerifier(ctx, f, f, d.Digest, d.Size)
	if err != nil {
		f.Close()
		return nil, false, err
	}
	v.bad = func(err error) error { return &corruptError{digest: d.Digest, err: err} }
	return v, true, nil
}

// present reports whether blob d is in the cache as a regular file of its
// size (its content is verified when it is read).
func (c *blobCache) present(d v1.Descriptor) bool {
	var (
		fi  fs.FileInfo
		err error
	)
	if root := c.openRoot(); root != nil {
		fi, err = root.Lstat(rel(d.Digest))
	} else {
		fi, err = os.Lstat(c.path(d.Digest))
	}
	return err == nil && fi.Mode().IsRegular() && fi.Size() == d.Size
}

// ensure makes sure blob d is in the cache, downloading it with fetch when
// it is absent (or when refetch is set: its entry was found corrupted).
// fetched reports whether it was downloaded.
func (c *blobCache) ensure(ctx context.Context, d v1.Descriptor, refetch bool, fetch func(context.Context) (io.ReadCloser, error)) (fetched bool, err error) {
	if d.Digest.Algorithm != "sha256" {
		return false, fmt.Errorf("blob %s: unsupported digest algorithm %q", d.Digest, d.Digest.Algorithm)
	}
	if !refetch && c.present(d) {
		return false, nil
	}
	key := d.Digest.String()
	if refetch {
		key += " again"
	}
	_, err, _ = c.flights.Do(key, func() (any, error) {
		p := c.path(d.Digest)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("blob cache: %w", err)
		}
		unlock, err := c.lock(ctx, d.Digest)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if refetch {
			// Another process may have replaced the bad entry while we
			// waited: take it only when it now verifies.
			if c.verifies(ctx, d) {
				return nil, nil
			}
		} else if c.present(d) {
			return nil, nil
		}
		fetched = true
		return nil, c.fetchTo(ctx, p, d, fetch)
	})
	return fetched, err
}

// verifies reports whether the entry of d reads back with its digest.
func (c *blobCache) verifies(ctx context.Context, d v1.Descriptor) bool {
	rc, ok, err := c.open(ctx, d)
	if !ok || err != nil {
		return false
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err == nil
}

// lock takes the cross-process lock of blob d, polling (so that ctx is
// honoured) while another process holds it. The lock file is removed on
// unlock.
func (c *blobCache) lock(ctx context.Context, d v1.Hash) (unlock func(), err error) {
	p := filepath.Join(c.dir, "blobs", d.Algorithm, "."+d.Hex+".lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blob cache: %w", err)
	}
	wait := 10 * time.Millisecond
	for {
		ok, err := lockFile(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("blob cache: locking %s: %w", p, err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
	return func() {
		// Removing the lock file while holding it is safe: a process that
		// opened it before takes the stale lock and finds the entry in
		// place; one that opens it after creates a new one.
		os.Remove(p)
		unlockFile(f)
		f.Close()
	}, nil
}

// fetchTo downloads blob d into a temporary file next to p, reading at
// most d.Size bytes, verifies it and renames it to p.
func (c *blobCache) fetchTo(ctx context.Context, p string, d v1.Descriptor, fetch func(context.Context) (io.ReadCloser, error)) error {
	rc, err := fetch(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+d.Digest.Hex[:12]+"-*")
	if err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	v, err := newVerifier(ctx, rc, nil, d.Digest, d.Size)
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, v); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	// A directory (or anything rename cannot replace) in the entry's
	// place goes first.
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("blob cache: %w", err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	ok = true
	return nil
}
