package image

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Errors wrapped by extraction failures.
var (
	ErrUnsafePath = errors.New("unsafe path")
	// ErrTooLarge is matched (errors.Is) by every error for input over
	// one of the [Limits].
	ErrTooLarge = errors.New("limit exceeded")
)

// limitError is an error for input over a limit; its text names the
// limit, and it matches ErrTooLarge.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrTooLarge }

// tooLarge returns a *limitError.
func tooLarge(format string, a ...any) error { return &limitError{fmt.Sprintf(format, a...)} }

// maxLinkHops bounds the symbolic links followed resolving one path, as
// Linux does (MAXSYMLINKS).
const maxLinkHops = 40

// extractor applies layers to a destination directory, keeping only the
// wanted paths. All writes go through an os.Root, so nothing can land
// outside the destination even through links, and at the end every
// symbolic link written is resolved inside the destination (physically,
// following the links it meets) and must stay in it.
type extractor struct {
	root    *os.Root
	wants   []string // cleaned, relative; nil = everything
	limits  Limits
	written int64 // bytes written, counted in blocks (see charge)
	read    int64 // tar bytes read
	entries int
	created map[string]bool // paths written by the current layer
	links   map[string]bool // symbolic links written
	before  map[string]bool // top-level names dst held before
	// modes, when not nil, collects the modes of the files and
	// directories written, applied by applyModes (WithFileModes).
	modes map[string]fs.FileMode
}

func newExtractor(dst string, paths []string, limits Limits) (*extractor, error) {
	x := &extractor{limits: limits.withDefaults(), links: map[string]bool{}, before: map[string]bool{}}
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
	names, err := x.readDirNames(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	for _, n := range names {
		x.before[n] = true
	}
	return x, nil
}

func (x *extractor) close() { x.root.Close() }

// clean removes what the extraction created at the top of dst.
func (x *extractor) clean() {
	names, _ := x.readDirNames(".")
	for _, n := range names {
		if !x.before[n] {
			x.root.RemoveAll(n)
		}
	}
}

func (x *extractor) readDirNames(dir string) ([]string, error) {
	f, err := x.root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

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

// applyLayer applies layer l. When anything fails, the rest of the raw
// layer is read so that a layer that does not match its digest is
// reported as such (a corrupted cache entry, say, rather than the gzip or
// tar error it causes).
func (x *extractor) applyLayer(ctx context.Context, l layer) (err error) {
	rc, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(ctxReader{ctx, rc}, 1<<16)
	defer func() {
		if err != nil && ctx.Err() == nil {
			if _, verr := io.Copy(io.Discard, br); errors.Is(verr, ErrDigest) {
				err = verr
			}
		}
	}()
	dec, err := decompress(br)
	if err != nil {
		return fmt.Errorf("decompressing: %w", err)
	}
	defer dec.Close()
	var diff hash.Hash
	var tarStream io.Reader = dec
	if l.diffID.Hex != "" {
		diff = sha256.New()
		tarStream = io.TeeReader(dec, diff)
	}
	cr := &countingReader{r: tarStream, n: &x.read, max: x.limits.Uncompressed}
	x.created = map[string]bool{}
	tr := tar.NewReader(cr)
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
		if x.entries > x.limits.Entries {
			return tooLarge("more than %d entries (the entries limit)", x.limits.Entries)
		}
		if err := x.entry(tr, h); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
	}
	// Read to the end so that verifying readers check the digests.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return fmt.Errorf("reading layer: %w", err)
	}
	if diff != nil {
		if got := hex.EncodeToString(diff.Sum(nil)); got != l.diffID.Hex {
			return fmt.Errorf("the uncompressed layer hashes to sha256:%s, not %s (its diff_id in the image config): %w", got, l.diffID, ErrDigest)
		}
	}
	return nil
}

// countingReader counts the bytes read into *n and fails beyond max.
type countingReader struct {
	r   io.Reader
	n   *int64
	max int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	if c.max > 0 && *c.n > c.max {
		return n, tooLarge("more than %s of uncompressed layers (the uncompressed limit)", humanSize(c.max))
	}
	return n, err
}

// checkLinks resolves every symbolic link written, following the links
// met on the way inside the destination, and fails for one that leads out
// of it (or through too many links). Entries are never written through
// links, so a link's meaning can only change through later entries: the
// check runs once the last layer is applied.
func (x *extractor) checkLinks() error {
	links := make([]string, 0, len(x.links))
	for l := range x.links {
		links = append(links, l)
	}
	sort.Strings(links)
	for _, l := range links {
		fi, err := x.root.Lstat(l)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue // removed or replaced by a later entry
		}
		if err := x.resolve(l); err != nil {
			t, _ := x.root.Readlink(l)
			return fmt.Errorf("symbolic link %q -> %q: %w", l, t, err)
		}
	}
	return nil
}

// resolve follows p inside the destination as the kernel would, and fails
// when it climbs out. Components that do not exist are taken as written.
func (x *extractor) resolve(p string) error {
	var done []string
	todo := strings.Split(p, "/")
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return fmt.Errorf("leads out of the image: %w", ErrUnsafePath)
			}
			done = done[:len(done)-1]
			continue
		}
		done = append(done, c)
		if len(done) > x.limits.PathDepth {
			return fmt.Errorf("resolves deeper than %d components: %w", x.limits.PathDepth, ErrUnsafePath)
		}
		cur := strings.Join(done, "/")
		fi, err := x.root.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if hops++; hops > maxLinkHops {
			return fmt.Errorf("more than %d symbolic links to follow: %w", maxLinkHops, ErrUnsafePath)
		}
		t, err := x.root.Readlink(cur)
		if err != nil {
			return err
		}
		if strings.HasPrefix(t, "/") {
			return fmt.Errorf("absolute link %q on the way: %w", cur, ErrUnsafePath)
		}
		done = done[:len(done)-1]
		todo = append(strings.Split(t, "/"), todo...)
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
		switch target := base[len(".wh."):]; target {
		case "", ".", "..":
			what := map[string]string{"": "no file", ".": "its own directory", "..": "its parent directory"}[target]
			return fmt.Errorf("a whiteout is .wh. followed by the name of the file it removes; this one names %s", what)
		default:
			return x.whiteout(path.Join(dir, target))
		}
	}
	if !x.relevant(p) {
		return nil
	}
	if abs {
		return fmt.Errorf("absolute path: %w", ErrUnsafePath)
	}
	if d := strings.Count(p, "/") + 1; d > x.limits.PathDepth {
		return tooLarge("path deeper than %d components (the depth limit)", x.limits.PathDepth)
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
		if err := x.charge(p, 0); err != nil {
			return err
		}
		if err := x.root.MkdirAll(p, 0o700); err != nil {
			return err
		}
	case tar.TypeReg:
		if err := x.prepare(p); err != nil {
			return err
		}
		if err := x.charge(p, h.Size); err != nil {
			return err
		}
		f, err := x.root.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, tr, h.Size)
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
		if err := x.charge(p, 0); err != nil {
			return err
		}
		if err := x.root.Symlink(t, p); err != nil {
			return err
		}
		x.links[p] = true
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
		if err := x.charge(p, 0); err != nil {
			return err
		}
		if err := x.root.Link(t, p); err != nil {
			return err
		}
	default:
		return nil // devices, fifos: not needed to render
	}
	if x.modes != nil && (h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeReg) {
		m := fs.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			m |= fs.ModeSticky
		}
		x.modes[p] = m
	}
	for c := p; c != "." && !x.created[c]; c = path.Dir(c) {
		x.created[c] = true
	}
	return nil
}

// blockSize is what the extract limit counts at least for each entry
// written, and each directory created for one: a file system gives each
// file, directory and link an inode and (for most) a block, so 300,000
// one-byte files take about 1.2 GB of disk, not 300 KB.
const blockSize = 4 << 10

// charge counts the entry p, of size bytes (a regular file; 0 for others),
// against the extract limit: its size rounded up to whole blocks, at
// least one block, plus a block for each of its parent directories not yet
// created by this layer. Over the limit, nothing is counted.
func (x *extractor) charge(p string, size int64) error {
	if size > x.limits.Extract {
		size = x.limits.Extract + 1 // over the limit, without overflowing below
	}
	cost := max((size+blockSize-1)/blockSize, 1) * blockSize
	for c := path.Dir(p); c != "." && !x.created[c]; c = path.Dir(c) {
		cost += blockSize
	}
	if x.written+cost > x.limits.Extract {
		return tooLarge("more than %d bytes written (the extract limit; each entry counts as at least one 4 KiB block)", x.limits.Extract)
	}
	x.written += cost
	return nil
}

// applyModes gives the entries written their modes, deepest first (so
// that a directory made read-only does not stop its entries' change).
// Entries removed by a later layer, or replaced by a link, are skipped.
func (x *extractor) applyModes() error {
	paths := make([]string, 0, len(x.modes))
	for p := range x.modes {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di > dj
		}
		return paths[i] < paths[j]
	})
	for _, p := range paths {
		fi, err := x.root.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		if err := x.root.Chmod(p, x.modes[p]); err != nil {
			return err
		}
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
	if err != nil {
		return fmt.Errorf("removing %q, as the whiteout says: %w", p, err)
	}
	return nil
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
			return fmt.Errorf("removing %q, as the opaque whiteout of %q says: %w", c, dir, err)
		}
	}
	return nil
}
