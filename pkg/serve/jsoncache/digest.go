package jsoncache

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opmkit/opm/internal/safefs"
)

// DigestFile and CacheSubdir are the names upstream's JSON backend looks
// for in its cache directory.
const (
	DigestFile  = "digest"
	CacheSubdir = "cache"
)

// ModeFunc returns the mode an entry will have where the server reads it,
// given its mode here (an image layer normalises modes; see
// imagebuild.LayerMode). nil means the mode on disk.
type ModeFunc func(fs.FileMode) fs.FileMode

// ErrMismatch is matched by Check's error when the digest differs.
var ErrMismatch = errors.New("cache requires rebuild")

// Digest computes upstream's integrity digest of the catalog directory and
// the cache directory dir (which holds cache/): FNV-1a 64 over a tar
// stream of the catalog, then one of dir/cache, as 16 lowercase hex
// digits.
func Digest(ctx context.Context, catalogDir, dir string, mode ModeFunc) (string, error) {
	h := fnv.New64a()
	for _, root := range []string{catalogDir, filepath.Join(dir, CacheSubdir)} {
		if err := tarTree(ctx, h, root, mode); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%016x", h.Sum64()), nil
}

// Check recomputes the digest of the catalog directory and the cache in dir
// (their modes as they are on disk) and compares it with dir/digest, as
// upstream does before it serves with --cache-dir: the error matches
// ErrMismatch, with upstream's wording, when they differ.
func Check(ctx context.Context, catalogDir, dir string) error {
	data, err := safefs.ReadRegular(nil, filepath.Join(dir, DigestFile), 1<<10)
	if err != nil {
		return fmt.Errorf("read existing cache digest: %w", err)
	}
	have := strings.TrimSpace(string(data))
	want, err := Digest(ctx, catalogDir, dir, nil)
	if err != nil {
		return err
	}
	if have != want {
		return fmt.Errorf("%w: cache reports digest as %q, but computed digest is %q", ErrMismatch, have, want)
	}
	return nil
}

// tarTree writes root as upstream hashes it: fs.WalkDir order (root first,
// named "."), symbolic links below the root skipped, directories as header
// blocks, regular files as header and data; names relative, without a
// trailing slash; owner 0:0 with no names and time 0; Go's tar writer
// picks USTAR, or PAX for names USTAR cannot hold. The stream ends with the
// two zero blocks.
func tarTree(ctx context.Context, w io.Writer, dir string, mode ModeFunc) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tw := tar.NewWriter(w)
	fsys := root.FS()
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t := d.Type()
		switch {
		case t&fs.ModeSymlink != 0:
			return nil
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return tw.WriteHeader(header(p, tar.TypeDir, fi.Mode(), 0, mode))
		case t.IsRegular():
			return tarFile(root, tw, p, mode)
		default:
			return fmt.Errorf("%s: %s: cannot be hashed for upstream's cache digest", filepath.Join(dir, p), safefs.Kind(t))
		}
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// tarFile writes the regular file p, which must keep its size while it is
// read.
func tarFile(root *os.Root, tw *tar.Writer, p string, mode ModeFunc) error {
	f, size, err := safefs.OpenRegular(root, p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(header(p, tar.TypeReg, fi.Mode(), size, mode)); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, size))
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if n != size {
		return fmt.Errorf("%s: %d bytes read of %d: the file changed while it was hashed", p, n, size)
	}
	return nil
}

func header(name string, typ byte, m fs.FileMode, size int64, mode ModeFunc) *tar.Header {
	if mode != nil {
		m = mode(m)
	}
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Mode:     tarMode(m),
		Size:     size,
		ModTime:  time.Unix(0, 0),
	}
}

// tarMode is the tar mode field of m: the permission bits, plus 04000,
// 02000 and 01000 for setuid, setgid and sticky.
func tarMode(m fs.FileMode) int64 {
	v := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// fnvHex is the name upstream gives a meta file: FNV-1a 64 of its content
// in lowercase hex without leading zeros.
func fnvHex(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%x", h.Sum64())
}
