package image

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Errors wrapped by extraction failures.
var (
	ErrUnsafePath = errors.New("unsafe path")
	ErrTooLarge   = errors.New("extraction limit exceeded")
)

// extractor applies layers to a destination directory, keeping only the
// wanted paths. All writes go through an os.Root, so nothing can land
// outside the destination even through links.
type extractor struct {
	root       *os.Root
	wants      []string // cleaned, relative; nil = everything
	maxBytes   int64
	maxEntries int
	written    int64
	entries    int
	created    map[string]bool // paths written by the current layer
}

func newExtractor(dst string, paths []string, maxBytes int64, maxEntries int) (*extractor, error) {
	x := &extractor{maxBytes: maxBytes, maxEntries: maxEntries}
	for _, p := range paths {
		c := path.Clean("/" + p)[1:]
		if c == "" {
			x.wants = nil
			break
		}
		x.wants = append(x.wants, c)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return nil, err
	}
	x.root = root
	return x, nil
}

func (x *extractor) close() { x.root.Close() }

// relevant reports whether p is a wanted path or lies under one.
func (x *extractor) relevant(p string) bool {
	if x.wants == nil {
		return true
	}
	for _, w := range x.wants {
		if p == w || strings.HasPrefix(p, w+"/") {
			return true
		}
	}
	return false
}

// covers reports whether removing p affects a wanted path (p is relevant
// or an ancestor of a wanted path).
func (x *extractor) covers(p string) bool {
	if x.relevant(p) || p == "." {
		return true
	}
	for _, w := range x.wants {
		if strings.HasPrefix(w, p+"/") {
			return true
		}
	}
	return false
}

// decompress returns a reader of the uncompressed tar stream of r,
// detecting gzip and zstd by their magic numbers.
func decompress(r *bufio.Reader) (io.ReadCloser, error) {
	magic, _ := r.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		return gzip.NewReader(r)
	case len(magic) == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return io.NopCloser(r), nil
}

func (x *extractor) applyLayer(ctx context.Context, l layer) error {
	rc, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(ctxReader{ctx, rc}, 1<<16)
	dec, err := decompress(br)
	if err != nil {
		return fmt.Errorf("decompressing: %w", err)
	}
	defer dec.Close()
	x.created = map[string]bool{}
	tr := tar.NewReader(dec)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading tar: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		x.entries++
		if x.maxEntries > 0 && x.entries > x.maxEntries {
			return fmt.Errorf("more than %d entries: %w", x.maxEntries, ErrTooLarge)
		}
		if err := x.entry(tr, h); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
	}
	// Read to the end so that verifying readers check the digest.
	if _, err := io.Copy(io.Discard, dec); err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	return nil
}

func (x *extractor) entry(tr *tar.Reader, h *tar.Header) error {
	name := h.Name
	abs := strings.HasPrefix(name, "/")
	p := path.Clean(strings.TrimLeft(name, "/"))
	if p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("path escapes the root: %w", ErrUnsafePath)
	}
	if p == "." {
		return nil
	}
	dir, base := path.Split(p)
	dir = path.Clean(dir)
	if base == ".wh..wh..opq" {
		return x.opaque(dir)
	}
	if strings.HasPrefix(base, ".wh.") {
		return x.whiteout(path.Join(dir, base[len(".wh."):]))
	}
	if !x.relevant(p) {
		return nil
	}
	if abs {
		return fmt.Errorf("absolute path: %w", ErrUnsafePath)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := x.noLinkParents(p); err != nil {
			return err
		}
		if fi, err := x.root.Lstat(p); err == nil && !fi.IsDir() {
			if err := x.root.RemoveAll(p); err != nil {
				return err
			}
		}
		if err := x.root.MkdirAll(p, 0o700); err != nil {
			return err
		}
	case tar.TypeReg, tar.TypeRegA:
		if err := x.prepare(p); err != nil {
			return err
		}
		if x.maxBytes > 0 && x.written+h.Size > x.maxBytes {
			return fmt.Errorf("more than %d bytes: %w", x.maxBytes, ErrTooLarge)
		}
		f, err := x.root.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		n, err := io.CopyN(f, tr, h.Size)
		x.written += n
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		t := h.Linkname
		if strings.HasPrefix(t, "/") {
			return fmt.Errorf("absolute link target %q: %w", t, ErrUnsafePath)
		}
		if r := path.Join(path.Dir(p), t); r == ".." || strings.HasPrefix(r, "../") {
			return fmt.Errorf("link target %q escapes the root: %w", t, ErrUnsafePath)
		}
		if err := x.prepare(p); err != nil {
			return err
		}
		if err := x.root.Symlink(t, p); err != nil {
			return err
		}
	case tar.TypeLink:
		t := path.Clean(strings.TrimLeft(h.Linkname, "/"))
		if t == ".." || strings.HasPrefix(t, "../") {
			return fmt.Errorf("hard link target %q escapes the root: %w", h.Linkname, ErrUnsafePath)
		}
		if !x.relevant(t) {
			return fmt.Errorf("hard link target %q is outside the extracted paths", h.Linkname)
		}
		if fi, err := x.root.Lstat(t); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("hard link target %q is not an extracted regular file", h.Linkname)
		}
		if err := x.prepare(p); err != nil {
			return err
		}
		if err := x.root.Link(t, p); err != nil {
			return err
		}
	default:
		return nil // devices, fifos: not needed to render
	}
	for c := p; c != "." && !x.created[c]; c = path.Dir(c) {
		x.created[c] = true
	}
	return nil
}

// noLinkParents fails when a parent of p is a symbolic link: entries are
// never written through links, so a link's real place is where its name
// says and its target can be checked lexically.
func (x *extractor) noLinkParents(p string) error {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if fi, err := x.root.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("parent %q is a symbolic link: %w", d, ErrUnsafePath)
		}
	}
	return nil
}

// prepare creates p's parent directories and removes whatever p is now.
func (x *extractor) prepare(p string) error {
	if err := x.noLinkParents(p); err != nil {
		return err
	}
	if d := path.Dir(p); d != "." {
		if err := x.root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if _, err := x.root.Lstat(p); err == nil {
		return x.root.RemoveAll(p)
	}
	return nil
}

// whiteout removes p as left by lower layers.
func (x *extractor) whiteout(p string) error {
	if p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("whiteout escapes the root: %w", ErrUnsafePath)
	}
	if !x.covers(p) {
		return nil
	}
	err := x.root.RemoveAll(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// opaque removes the children of dir left by lower layers.
func (x *extractor) opaque(dir string) error {
	if !x.covers(dir) {
		return nil
	}
	f, err := x.root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil // not a directory: nothing to hide
	}
	for _, e := range ents {
		c := path.Join(dir, e.Name())
		if x.created[c] {
			continue
		}
		if err := x.root.RemoveAll(c); err != nil {
			return err
		}
	}
	return nil
}
