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

	"github.com/cespare/xxhash/v2"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Caches.
//
// A cache directory holds one subdirectory, opm-serve/, with the data file
// (data.bin), the serialised index (index.bin) and meta.json, which says
// which catalog (a SHA-256 digest of its files), which opm version and
// which cache format built it, and the XXH64 digests of index.bin and
// data.bin; a seal (a SHA-256 digest of meta.json's other fields) covers
// meta.json itself. So everything that is served is checked when a cache
// is loaded: an edited index, a swapped data file or an edited meta.json
// is a mismatch, never served. meta.json is written last, and the
// subdirectory is built beside the old one and swapped in with renames, so
// a reader sees a complete cache or none. Anything else in the directory
// (upstream's pogreb.v1, say) is left alone.
//
// A cache is read as untrusted input: through an os.Root of the cache
// directory (a link that leads out of it is refused), regular files only
// (a FIFO or device is refused without blocking on it), within size limits,
// and the index decoder bounds every count by the bytes that encode it.

// CacheSubdir is the directory a cache lives in, inside the cache
// directory.
const CacheSubdir = "opm-serve"

// CacheFormat names the cache layout; bump it with any change to the data
// file or index encoding, or to meta.json.
const CacheFormat = "opm-serve-cache/2"

// File and directory modes: group-writable, as upstream's cache, because
// OpenShift runs containers with a random UID in group 0.
const (
	cacheDirMode  = 0o770
	cacheFileMode = 0o660
)

// Limits on the files of a cache. The index is read whole, so it is held
// to the limit on one catalog file (--max-file-size, through the
// context); the data file is only hashed and read in sections.
const (
	// maxMetaSize bounds meta.json.
	maxMetaSize = 1 << 20
	// MaxDataSize bounds data.bin.
	MaxDataSize int64 = 64 << 30
)

// CacheMeta describes a cache: what built it, from which catalog, and the
// digests of its files.
type CacheMeta struct {
	Format     string    `json:"format"`
	OpmVersion string    `json:"opmVersion"`
	Digest     string    `json:"digest"`
	HTTP       bool      `json:"http"`
	Created    time.Time `json:"created"`
	Stats      Stats     `json:"stats"`
	// Index and Data are the content digests (XXH64) of index.bin and
	// data.bin, DataSize the size of data.bin.
	Index    string `json:"index"`
	Data     string `json:"data"`
	DataSize int64  `json:"dataSize"`
	// Seal is the SHA-256 digest of the other fields (see seal).
	Seal string `json:"seal"`
}

// Sealed returns m with its Seal set, as BuildCache writes it. A seal is
// not keyed: it detects an edited meta.json, not a forged one (anyone can
// seal), which is why --cache-enforce-integrity compares the cache with
// the catalog (Compare).
func (m CacheMeta) Sealed() CacheMeta {
	m.Seal = m.seal()
	return m
}

// seal returns the digest of m's fields but Seal: their JSON encoding,
// hashed.
func (m CacheMeta) seal() string {
	m.Seal = ""
	b, _ := json.Marshal(m)
	return sha256Hex(b)
}

// Content digests of the cache's files: XXH64, which hashes a data file of
// hundreds of megabytes in a few tens of milliseconds (SHA-256 took five
// times as long). They detect edits and corruption; like upstream's FNV
// digest of its cache they authenticate nothing: whoever can write the
// cache can rewrite meta.json too.
func contentDigest(h *xxhash.Digest) string { return fmt.Sprintf("xxh64:%016x", h.Sum64()) }

// contentDigestOf is the content digest of b.
func contentDigestOf(b []byte) string { return fmt.Sprintf("xxh64:%016x", xxhash.Sum64(b)) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
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

func mismatch(format string, args ...any) error {
	return &CacheMismatchError{Reason: fmt.Sprintf(format, args...)}
}

// Digest hashes the catalog files (paths, sizes and contents, in order)
// with SHA-256, reading up to the number of CPUs files at once. Files are
// read as the loader reads them (safefs: regular files only, within the
// size limit of ctx, cancellable); errors name the file.
func Digest(ctx context.Context, fsys fs.FS, files []string) (string, error) {
	if _, ok := fsys.(*safefs.FS); !ok {
		fsys = safefs.New(ctx, fsys)
	}
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
	if err := ctx.Err(); err != nil {
		return "", err
	}
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
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(fsys fs.FS, p string, buf []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := fsys.Open(p)
	if err != nil {
		return sum, &declcfg.LoadError{Pos: declcfg.Position{File: p}, Err: err}
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return sum, &declcfg.LoadError{Pos: declcfg.Position{File: p}, Err: err}
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(n))
	h.Write(size[:])
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// cacheFile names a file of the cache, relative to the cache directory.
func cacheFile(name string) string { return CacheSubdir + "/" + name }

// Cache is a cache directory's cache, opened and checked by OpenCache.
type Cache struct {
	meta  CacheMeta
	index []byte   // index.bin
	data  *os.File // data.bin
	size  int64
}

// OpenCache opens the cache in dir and checks everything but which
// catalog it was built from (see Check): meta.json must match want's
// format and opm version (and have HTTP data if want.HTTP) and be sealed,
// and index.bin and data.bin must have the digests meta.json records.
// index.bin is hashed as it is read; data.bin is hashed whole, through the
// file that is then served from, so what was checked is what is served.
//
// Files are read through an os.Root of dir (a link that leads out of it is
// refused), regular files only (a FIFO or device is refused without
// blocking), within limits: meta.json 1 MiB, data.bin MaxDataSize, and
// index.bin, which is read whole, the file size limit of ctx (see
// declcfg.WithMaxFileSize). ctx also cancels the hashing. Every mismatch
// is a *CacheMismatchError; no cache (no meta.json) is an error wrapping
// fs.ErrNotExist.
func OpenCache(ctx context.Context, dir string, want CacheMeta) (c *Cache, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	c = &Cache{}
	if c.meta, err = readMeta(root); err != nil {
		return nil, err
	}
	m := &c.meta
	switch {
	case m.Format != want.Format:
		return nil, mismatch("cache format %q, this opm writes %q", m.Format, want.Format)
	case m.OpmVersion != want.OpmVersion:
		return nil, mismatch("cache built by opm %s, this is opm %s", m.OpmVersion, want.OpmVersion)
	case m.Seal != m.seal():
		return nil, mismatch("%s was modified after the cache was built (its seal does not match its content)", cacheFile("meta.json"))
	case want.HTTP && !m.HTTP:
		return nil, mismatch("the cache has no data for the HTTP API")
	}

	f, size, err := safefs.OpenRegular(root, cacheFile("data.bin"))
	if err != nil {
		return nil, mismatch("%v", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if size > MaxDataSize {
		return nil, mismatch("%s: %v", cacheFile("data.bin"), &safefs.TooLargeError{Size: size, Limit: MaxDataSize, For: "a serve cache's data file"})
	}
	if size != m.DataSize {
		return nil, mismatch("%s has %d bytes, the cache's meta.json says %d", cacheFile("data.bin"), size, m.DataSize)
	}
	idx, idxSum, err := readIndexFile(ctx, root)
	if err != nil {
		return nil, err
	}
	if idxSum != m.Index {
		return nil, mismatch("%s does not match the cache's meta.json (digest %s, recorded %s)", cacheFile("index.bin"), idxSum, m.Index)
	}
	dataSum, err := hashReaderAt(ctx, f, size)
	if err != nil {
		return nil, fmt.Errorf("hashing %s: %w", cacheFile("data.bin"), err)
	}
	if dataSum != m.Data {
		return nil, mismatch("%s does not match the cache's meta.json (digest %s, recorded %s)", cacheFile("data.bin"), dataSum, m.Data)
	}
	c.index, c.data, c.size = idx, f, size
	return c, nil
}

// ReadCacheMeta reads the meta.json of the cache in dir, unchecked (see
// OpenCache): what the cache says of itself. No cache is an error wrapping
// fs.ErrNotExist; an unreadable one a *CacheMismatchError.
func ReadCacheMeta(dir string) (CacheMeta, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return CacheMeta{}, err
	}
	defer root.Close()
	return readMeta(root)
}

func readMeta(root *os.Root) (CacheMeta, error) {
	var m CacheMeta
	data, err := safefs.ReadRegular(root, cacheFile("meta.json"), maxMetaSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
		return m, mismatch("%v", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, mismatch("reading the cache's meta.json: %v", err)
	}
	return m, nil
}

// Meta returns the cache's meta.json.
func (c *Cache) Meta() CacheMeta { return c.meta }

// Check compares the digest of the catalog (see Digest) with the one the
// cache was built from: a *CacheMismatchError with upstream's wording when
// they differ.
func (c *Cache) Check(digest string) error {
	if c.meta.Digest != digest {
		return &CacheMismatchError{Have: c.meta.Digest, Want: digest}
	}
	return nil
}

// Load decodes the cache's index, which then owns the data file (Close
// the index, not the cache). A corrupt index is a *CacheMismatchError.
func (c *Cache) Load() (*Index, error) {
	x, err := UnmarshalIndex(c.index, c.data, c.size)
	if err != nil {
		return nil, mismatch("%v", err)
	}
	if x.http != nil {
		x.http.modTime = c.meta.Created
	}
	x.closer, c.data, c.index = c.data, nil, nil
	return x, nil
}

// Close releases the cache's data file unless Load handed it to an index.
func (c *Cache) Close() error {
	if c == nil || c.data == nil {
		return nil
	}
	err := c.data.Close()
	c.data = nil
	return err
}

// readIndexFile reads index.bin within the file size limit of ctx,
// hashing it as it goes.
func readIndexFile(ctx context.Context, root *os.Root) ([]byte, string, error) {
	name := cacheFile("index.bin")
	limit := safefs.LimitsFrom(ctx).MaxFileSize
	if limit <= 0 {
		limit = 1 << 40
	}
	f, size, err := safefs.OpenRegular(root, name)
	if err != nil {
		return nil, "", mismatch("%v", err)
	}
	defer f.Close()
	if size > limit {
		return nil, "", &fs.PathError{Op: "read", Path: name, Err: &safefs.TooLargeError{Size: size, Limit: limit}}
	}
	h := xxhash.New()
	buf, err := safefs.ReadAll(io.TeeReader(safefs.Reader(ctx, io.LimitReader(f, limit+1)), h), int(size))
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(buf)) > limit {
		return nil, "", &fs.PathError{Op: "read", Path: name, Err: &safefs.TooLargeError{Size: -1, Limit: limit}}
	}
	return buf, contentDigest(h), nil
}

// hashReaderAt returns the content digest of the first size bytes of r,
// stopping when ctx is done.
func hashReaderAt(ctx context.Context, r io.ReaderAt, size int64) (string, error) {
	h := xxhash.New()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		h.Write(buf[:n])
		off += int64(n)
		if err == io.EOF && off < size {
			return "", io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return "", err
		}
	}
	return contentDigest(h), nil
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
	dataHash := xxhash.New()
	x, dataSize, err := buildInto(ctx, fsys, tmp, opts, dataHash)
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
	meta.Index = contentDigestOf(idx)
	meta.Data = contentDigest(dataHash)
	meta.DataSize = dataSize
	if meta.Created.IsZero() {
		meta.Created = time.Now().UTC()
	}
	if x.http != nil {
		x.http.modTime = meta.Created
	}
	meta = meta.Sealed()
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
	x, _, err := buildInto(ctx, fsys, dir, opts, nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	x.cleanup = dir
	return x, dir, nil
}

// buildInto builds with the data file in dir. With a hash (a cache), the
// data file is hashed as it is written and synced to disk; its size is
// returned.
func buildInto(ctx context.Context, fsys fs.FS, dir string, opts BuildOptions, h *xxhash.Digest) (*Index, int64, error) {
	f, err := os.OpenFile(filepath.Join(dir, "data.bin"), os.O_RDWR|os.O_CREATE|os.O_EXCL, cacheFileMode)
	if err != nil {
		return nil, 0, err
	}
	cw := &countingWriter{w: f}
	opts.Data, opts.DataReader = cw, f
	if h != nil {
		cw.w = io.MultiWriter(f, h)
	}
	x, err := Build(ctx, fsys, opts)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if h != nil {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	x.closer = f
	return x, cw.n, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
