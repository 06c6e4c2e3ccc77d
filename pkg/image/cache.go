package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/singleflight"
)

// blobCache stores registry blobs by digest under dir/blobs/sha256/HEX.
// Entries are written atomically (temp file + rename) after their digest
// is verified, and verified again before each use, so a corrupted entry is
// replaced instead of trusted.
type blobCache struct {
	dir string
}

// flights de-duplicates concurrent fetches of one blob in this process.
var flights singleflight.Group

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

// ensure returns the path of the verified blob d, fetching it when it is
// absent or corrupted. fetched reports whether it was downloaded.
func (c *blobCache) ensure(ctx context.Context, d v1.Hash, fetch func(context.Context) (io.ReadCloser, error)) (path string, fetched bool, err error) {
	if d.Algorithm != "sha256" {
		return "", false, fmt.Errorf("blob %s: unsupported digest algorithm %q", d, d.Algorithm)
	}
	p := c.path(d)
	if verifyFile(p, d) == nil {
		return p, false, nil
	}
	_, err, _ = flights.Do(p, func() (any, error) {
		if verifyFile(p, d) == nil {
			return nil, nil
		}
		fetched = true
		return nil, c.fetchTo(ctx, p, d, fetch)
	})
	if err != nil {
		return "", false, err
	}
	return p, fetched, nil
}

func (c *blobCache) fetchTo(ctx context.Context, p string, d v1.Hash, fetch func(context.Context) (io.ReadCloser, error)) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	rc, err := fetch(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+d.Hex[:12]+"-*")
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
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, rc}); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.Hex {
		return fmt.Errorf("digest mismatch: got sha256:%s", got)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("blob cache: %w", err)
	}
	ok = true
	return nil
}

// verifyFile checks that the file at p has digest d.
func verifyFile(p string, d v1.Hash) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != d.Hex {
		os.Remove(p)
		return fmt.Errorf("cached blob %s is corrupted", d)
	}
	return nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
