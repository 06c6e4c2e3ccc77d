package serve

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opmkit/opm/internal/safefs"
)

// Caches.
//
// A cache directory holds one subdirectory, opm-serve/, with the data file
// (data.bin), the serialised index (index.bin) and meta.json, which says
// which catalog (a SHA-256 digest of its files), which opm version and
// which cache format built it. meta.json is written last, and the
// subdirectory is built beside the old one and swapped in with renames, so
// a reader sees a complete cache or none. Anything else in the directory
// (upstream's pogreb.v1, say) is left alone.

// CacheSubdir is the directory a cache lives in, inside the cache
// directory.
const CacheSubdir = "opm-serve"

// CacheFormat names the cache layout; bump it with any change to the data
// file or index encoding.
const CacheFormat = "opm-serve-cache/1"

// File and directory modes: group-writable, as upstream's cache, because
// OpenShift runs containers with a random UID in group 0.
const (
	cacheDirMode  = 0o770
	cacheFileMode = 0o660
)

// CacheMeta describes a cache: what built it and from which catalog.
type CacheMeta struct {
	Format     string    `json:"format"`
	OpmVersion string    `json:"opmVersion"`
	Digest     string    `json:"digest"`
	HTTP       bool      `json:"http"`
	Created    time.Time `json:"created"`
	Stats      Stats     `json:"stats"`
}

// CacheMismatchError says why a cache cannot serve the catalog.
type CacheMismatchError struct {
	Reason string
	// Have and Want are the cached and computed digests when the catalog
	// changed.
	Have, Want string
}

func (e *CacheMismatchError) Error() string {
	if e.Have != "" || e.Want != "" {
		return fmt.Sprintf("cache requires rebuild: cache reports digest as %q, but computed digest is %q", e.Have, e.Want)
	}
	return "cache requires rebuild: " + e.Reason
}

// Digest hashes the catalog files (paths, sizes and contents, in order)
// with SHA-256, reading up to the number of CPUs files at once.
func Digest(ctx context.Context, fsys fs.FS, files []string) (string, error) {
	sums := make([][sha256.Size]byte, len(files))
	errs := make([]error, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.NumCPU(), len(files)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 256<<10)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					return
				}
				sums[i], errs[i] = hashFile(fsys, files[i], buf)
			}
		}()
	}
	wg.Wait()
	h := sha256.New()
	io.WriteString(h, CacheFormat+"\n")
	var n [8]byte
	for i, f := range files {
		if errs[i] != nil {
			return "", errs[i]
		}
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		io.WriteString(h, f)
		h.Write(sums[i][:])
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(fsys fs.FS, p string, buf []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := fsys.Open(p)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return sum, fmt.Errorf("reading %s: %w", p, err)
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(n))
	h.Write(size[:])
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// ReadCacheMeta reads the meta.json of the cache in dir.
func ReadCacheMeta(dir string) (CacheMeta, error) {
	var m CacheMeta
	data, err := safefs.ReadRegular(nil, filepath.Join(dir, CacheSubdir, "meta.json"), 1<<20)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("reading the cache's meta.json: %w", err)
	}
	return m, nil
}

// CheckCache compares the cache in dir with want (format, opm version,
// digest and, if want.HTTP, HTTP data). It returns a *CacheMismatchError
// when the cache does not match, or an error wrapping fs.ErrNotExist when
// there is no cache.
func CheckCache(dir string, want CacheMeta) (CacheMeta, error) {
	have, err := ReadCacheMeta(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return have, err
		}
		return have, &CacheMismatchError{Reason: err.Error()}
	}
	switch {
	case have.Format != want.Format:
		return have, &CacheMismatchError{Reason: fmt.Sprintf("cache format %q, this opm writes %q", have.Format, want.Format)}
	case have.OpmVersion != want.OpmVersion:
		return have, &CacheMismatchError{Reason: fmt.Sprintf("cache built by opm %s, this is opm %s", have.OpmVersion, want.OpmVersion)}
	case have.Digest != want.Digest:
		return have, &CacheMismatchError{Have: have.Digest, Want: want.Digest}
	case want.HTTP && !have.HTTP:
		return have, &CacheMismatchError{Reason: "the cache has no data for the HTTP API"}
	}
	return have, nil
}

// LoadCache opens the index cached in dir. Call CheckCache first.
func LoadCache(dir string, meta CacheMeta) (*Index, error) {
	sub := filepath.Join(dir, CacheSubdir)
	f, err := os.Open(filepath.Join(sub, "data.bin"))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	buf, err := safefs.ReadRegular(nil, filepath.Join(sub, "index.bin"), 1<<31)
	if err != nil {
		f.Close()
		return nil, err
	}
	x, err := UnmarshalIndex(buf, f, st.Size())
	if err != nil {
		f.Close()
		return nil, &CacheMismatchError{Reason: err.Error()}
	}
	if x.http != nil {
		x.http.modTime = meta.Created
	}
	x.closer = f
	return x, nil
}

// BuildCache builds the index of fsys into the cache directory dir
// (created if needed), replacing any cache there once the new one is
// complete. meta's Format, OpmVersion, Digest and HTTP describe the cache;
// opts.Data and DataReader are set here.
func BuildCache(ctx context.Context, fsys fs.FS, dir string, meta CacheMeta, opts BuildOptions) (*Index, error) {
	if err := os.MkdirAll(dir, cacheDirMode); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, "."+CacheSubdir+"-new-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, cacheDirMode); err != nil {
		return nil, err
	}
	x, err := buildInto(ctx, fsys, tmp, opts, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			x.Close()
		}
	}()
	idx, err := x.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(tmp, "index.bin"), idx); err != nil {
		return nil, err
	}
	meta.HTTP = x.http != nil
	meta.Stats = x.Stats()
	if meta.Created.IsZero() {
		meta.Created = time.Now().UTC()
	}
	if x.http != nil {
		x.http.modTime = meta.Created
	}
	mj, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(tmp, "meta.json"), append(mj, '\n')); err != nil {
		return nil, err
	}
	// Swap: the old cache moves aside, the new one takes its place. The
	// open data file stays valid across the rename.
	final := filepath.Join(dir, CacheSubdir)
	var old string
	if _, err := os.Lstat(final); err == nil {
		old, err = os.MkdirTemp(dir, "."+CacheSubdir+"-old-")
		if err != nil {
			return nil, err
		}
		if err := os.Rename(final, filepath.Join(old, CacheSubdir)); err != nil {
			os.Remove(old)
			return nil, err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	ok = true
	if old != "" {
		os.RemoveAll(old)
	}
	syncDir(dir)
	return x, nil
}

// BuildTemp builds the index of fsys with its data file in a new directory
// under tmpDir ("" = the system's); the directory is removed when the index
// is closed.
func BuildTemp(ctx context.Context, fsys fs.FS, tmpDir string, opts BuildOptions) (*Index, string, error) {
	dir, err := os.MkdirTemp(tmpDir, "opm-serve-cache-")
	if err != nil {
		return nil, "", err
	}
	x, err := buildInto(ctx, fsys, dir, opts, false)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	x.cleanup = dir
	return x, dir, nil
}

// buildInto builds with the data file in dir, synced to disk if sync.
func buildInto(ctx context.Context, fsys fs.FS, dir string, opts BuildOptions, sync bool) (*Index, error) {
	f, err := os.OpenFile(filepath.Join(dir, "data.bin"), os.O_RDWR|os.O_CREATE|os.O_EXCL, cacheFileMode)
	if err != nil {
		return nil, err
	}
	opts.Data, opts.DataReader = f, f
	x, err := Build(ctx, fsys, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, err
		}
	}
	x.closer = f
	return x, nil
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, cacheFileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Close releases the index's data file (and removes its temporary
// directory, if it has one).
func (x *Index) Close() error {
	var err error
	if x.closer != nil {
		err = x.closer.Close()
		x.closer = nil
	}
	if x.cleanup != "" {
		if rerr := os.RemoveAll(x.cleanup); err == nil {
			err = rerr
		}
		x.cleanup = ""
	}
	return err
}
