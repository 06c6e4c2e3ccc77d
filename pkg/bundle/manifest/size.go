package manifest

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"io/fs"
	"path"
	"sync"

	"github.com/opmkit/opm/internal/safefs"
)

// Size is the size of a bundle's manifests as OLM stages them: the bytes
// of every file under manifests/ and the sum of their sizes once gzipped
// and base64 encoded, file by file (what operator-framework/api's loader
// measures against the limit of a ConfigMap).
type Size struct {
	Bytes      int64
	Compressed int64
}

// extraFile is a file under manifests/ that is not a manifest (in a
// subdirectory, or named with a leading dot): it counts in the size.
type extraFile struct {
	size       int64
	compressed int64
}

// Size returns the bundle's size, computed once. For a catalog bundle the
// files are its olm.bundle.object contents.
func (b *Bundle) Size() Size {
	b.sizeOnce.Do(func() {
		for _, m := range b.Manifests {
			b.size.Bytes += int64(len(m.Data))
			b.size.Compressed += compressedSize(m.Data)
		}
		for _, e := range b.extra {
			b.size.Bytes += e.size
			b.size.Compressed += e.compressed
		}
	})
	return b.size
}

// CompressedBound returns a bound the compressed size cannot exceed,
// without compressing anything: gzip stores incompressible data in blocks
// of at most 65535 bytes with 5 bytes of header each, plus 18 bytes of
// header and trailer per file, and base64 writes 4 bytes per 3.
func (b *Bundle) CompressedBound() int64 {
	var n int64
	for _, m := range b.Manifests {
		n += boundOf(int64(len(m.Data)))
	}
	for _, e := range b.extra {
		n += e.compressed
	}
	return n
}

func boundOf(n int64) int64 {
	z := n + 5*(n/65535+1) + 18
	return (z + 2) / 3 * 4
}

// compressedSize returns the length of data gzipped (default level) and
// base64 encoded. A tree of bundles repeats most of its files from one
// version to the next (half the bytes of community-operators' manifests),
// so sizes are kept by content digest: sha256 is over ten times as
// fast as deflate on a CRD.
func compressedSize(data []byte) int64 {
	key := sha256.Sum256(data)
	sizeCache.Lock()
	n, ok := sizeCache.m[key]
	sizeCache.Unlock()
	if ok {
		return n
	}
	n = gzipBase64Size(data)
	sizeCache.Lock()
	if len(sizeCache.m) >= maxSizeCache {
		clear(sizeCache.m)
	}
	sizeCache.m[key] = n
	sizeCache.Unlock()
	return n
}

// maxSizeCache bounds the sizes kept (40 bytes each): past it the cache
// starts over.
const maxSizeCache = 1 << 16

var sizeCache = struct {
	sync.Mutex
	m map[[sha256.Size]byte]int64
}{m: map[[sha256.Size]byte]int64{}}

func gzipBase64Size(data []byte) int64 {
	var c countWriter
	bw := base64.NewEncoder(base64.StdEncoding, &c)
	zw := gzip.NewWriter(bw)
	_, _ = zw.Write(data)
	_ = zw.Close()
	_ = bw.Close()
	return c.n
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// measureSkipped adds the files of the skipped entries of manifests/ to
// the size: their content is compressed now, and not kept.
func (b *Bundle) measureSkipped(ctx context.Context, fsys *safefs.FS) error {
	for _, s := range b.Skipped {
		err := fs.WalkDir(fsys, s.File, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: upstream's walk fails the load; the checks report the entry
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			f, err := fsys.Open(path.Clean(p))
			if err != nil {
				if safefs.IsRefusal(err) {
					return err
				}
				return nil
			}
			defer f.Close()
			var c countWriter
			bw := base64.NewEncoder(base64.StdEncoding, &c)
			zw := gzip.NewWriter(bw)
			n, err := io.Copy(zw, f)
			_ = zw.Close()
			_ = bw.Close()
			if err != nil && safefs.IsRefusal(err) {
				return err
			}
			b.extra = append(b.extra, extraFile{size: n, compressed: c.n})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
