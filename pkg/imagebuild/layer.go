package imagebuild

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
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
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/image"
)

// Tree copies the directory Src (relative to the directory given to
// [BuildLayer]; "." is that directory) to Dst in the image ("configs"
// puts it at /configs).
type Tree struct {
	Src string
	Dst string
}

// LayerOptions tune [BuildLayer].
type LayerOptions struct {
	// ModTime is every entry's modification time (see [Epoch]); it is
	// truncated to whole seconds.
	ModTime time.Time
	// Limits bound the files read: Extract (the bytes of the files),
	// Entries (the entries written) and PathDepth (the components of a
	// path in the image). Zero fields take image.DefaultLimits.
	Limits image.Limits
	// TempDir holds the compressed layer while it is used ("" = the
	// system's temporary directory).
	TempDir string
}

// Layer is a built layer, kept in a temporary file until [Layer.Close].
// It is a v1.Layer (gzip, of OCI media type; see [Layer.WithMediaType]).
type Layer struct {
	file         string
	digest       v1.Hash
	diffID       v1.Hash
	size         int64
	uncompressed int64
	files        int64
	mediaType    types.MediaType
}

var _ v1.Layer = (*Layer)(nil)

func (l *Layer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *Layer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *Layer) Size() (int64, error)                { return l.size, nil }
func (l *Layer) MediaType() (types.MediaType, error) { return l.mediaType, nil }

// Compressed returns the layer's gzip bytes.
func (l *Layer) Compressed() (io.ReadCloser, error) { return os.Open(l.file) }

// Uncompressed returns the layer's tar stream.
func (l *Layer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.file)
	if err != nil {
		return nil, err
	}
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{z, func() error { return errors.Join(z.Close(), f.Close()) }}, nil
}

// UncompressedSize is the size of the tar stream.
func (l *Layer) UncompressedSize() int64 { return l.uncompressed }

// Files is the number of regular files the layer holds.
func (l *Layer) Files() int64 { return l.files }

// WithMediaType returns the same layer typed mt (the docker gzip layer
// type goes with docker manifests).
func (l *Layer) WithMediaType(mt types.MediaType) *Layer {
	c := *l
	c.mediaType = mt
	return &c
}

// Close removes the layer's temporary file.
func (l *Layer) Close() error {
	if l.file == "" {
		return nil
	}
	err := os.Remove(l.file)
	l.file = ""
	return err
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// BuildLayer writes a reproducible gzip layer holding the trees of dir
// (see the package documentation for what is normalised and refused).
// Errors name the file as dir/relative-path.
func BuildLayer(ctx context.Context, dir string, trees []Tree, o LayerOptions) (l *Layer, err error) {
	o.Limits = withDefaults(o.Limits)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	lw, err := newLayerWriter(o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lw.abort()
		}
	}()
	b := &layerBuilder{
		ctx:    ctx,
		srcDir: dir,
		tw:     lw.tw,
		mtime:  lw.mtime,
		lim:    o.Limits,
		dirs:   map[string]bool{},
	}
	for _, t := range trees {
		if err := b.tree(root, t); err != nil {
			return nil, err
		}
	}
	return lw.finish(b.files)
}

// layerWriter writes a tar stream through gzip to a temporary file,
// hashing both.
type layerWriter struct {
	f          *os.File
	compressed *hashWriter
	bw         *bufio.Writer
	zw         *gzip.Writer
	tarred     *hashWriter
	tw         *tar.Writer
	mtime      time.Time
}

func newLayerWriter(o LayerOptions) (*layerWriter, error) {
	f, err := os.CreateTemp(o.TempDir, "opm-layer-*.tar.gz")
	if err != nil {
		return nil, err
	}
	w := &layerWriter{f: f, compressed: &hashWriter{w: f, h: sha256.New()}, mtime: time.Unix(o.ModTime.Unix(), 0).UTC()}
	if o.ModTime.IsZero() {
		w.mtime = time.Unix(0, 0).UTC()
	}
	w.bw = bufio.NewWriterSize(w.compressed, 1<<16)
	if w.zw, err = gzip.NewWriterLevel(w.bw, gzip.DefaultCompression); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w.tarred = &hashWriter{w: w.zw, h: sha256.New()}
	w.tw = tar.NewWriter(w.tarred)
	return w, nil
}

// abort removes the temporary file.
func (w *layerWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// finish closes the streams and returns the layer; files is the number of
// regular files it holds.
func (w *layerWriter) finish(files int64) (*Layer, error) {
	for _, c := range []func() error{w.tw.Close, w.zw.Close, w.bw.Flush, w.f.Close} {
		if err := c(); err != nil {
			w.abort()
			return nil, err
		}
	}
	return &Layer{
		file:         w.f.Name(),
		digest:       w.compressed.sum(),
		diffID:       w.tarred.sum(),
		size:         w.compressed.n,
		uncompressed: w.tarred.n,
		files:        files,
		mediaType:    types.OCILayer,
	}, nil
}

// File is one entry of a layer built by [FilesLayer].
type File struct {
	// Path is where it goes in the image ("bin/opm").
	Path string
	// Mode is its type and permissions: fs.ModeDir for a directory (with
	// fs.ModeSticky for /tmp's 1777), none for a regular file.
	Mode fs.FileMode
	// A regular file's content is Data, or the file Src when Src is set.
	Data []byte
	Src  string
}

// FilesLayer writes a reproducible layer holding files, in the order
// given (parents before their contents), with their modes as given, owner
// 0:0 and the time o.ModTime. A Src file must be a regular file of at
// most o.Limits' Extract bytes, and keep its size while it is read.
func FilesLayer(ctx context.Context, files []File, o LayerOptions) (l *Layer, err error) {
	o.Limits = withDefaults(o.Limits)
	lw, err := newLayerWriter(o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lw.abort()
		}
	}()
	var n int64
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := strings.Trim(path.Clean("/"+f.Path), "/")
		if name == "" {
			return nil, fmt.Errorf("layer file %q: no name", f.Path)
		}
		h := &tar.Header{Name: name, Mode: int64(f.Mode.Perm()), ModTime: lw.mtime, Format: tar.FormatPAX}
		if f.Mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if f.Mode.IsDir() {
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
			if err := lw.tw.WriteHeader(h); err != nil {
				return nil, err
			}
			continue
		}
		h.Typeflag = tar.TypeReg
		if f.Src == "" {
			h.Size = int64(len(f.Data))
			if err := lw.tw.WriteHeader(h); err != nil {
				return nil, err
			}
			if _, err := lw.tw.Write(f.Data); err != nil {
				return nil, err
			}
			n++
			continue
		}
		if err := copyFile(ctx, lw.tw, h, f.Src, o.Limits.Extract); err != nil {
			return nil, err
		}
		n++
	}
	return lw.finish(n)
}

// copyFile writes h and the content of the regular file src.
func copyFile(ctx context.Context, tw *tar.Writer, h *tar.Header, src string, limit int64) error {
	f, size, err := safefs.OpenRegular(nil, src)
	if err != nil {
		return err
	}
	defer f.Close()
	if size > limit {
		return fmt.Errorf("%s: %d bytes: %w (the extract limit is %d)", src, size, ErrLimit, limit)
	}
	h.Size = size
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(ctxReader{ctx, f}, size))
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if n < size {
		return fmt.Errorf("%s: %d bytes read of %d: the file changed while it was read", src, n, size)
	}
	return nil
}

func withDefaults(l image.Limits) image.Limits {
	d := image.DefaultLimits()
	if l.Extract <= 0 {
		l.Extract = d.Extract
	}
	if l.Entries <= 0 {
		l.Entries = d.Entries
	}
	if l.PathDepth <= 0 {
		l.PathDepth = d.PathDepth
	}
	return l
}

// hashWriter hashes and counts what it writes.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

func (w *hashWriter) sum() v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(w.h.Sum(nil))}
}

// ErrLimit is matched (errors.Is) by errors for a directory over one of
// the limits; they also match image.ErrTooLarge.
var ErrLimit = image.ErrTooLarge

// ErrUnsupported is matched by errors for entries that cannot go into an
// image: special files, links that lead out of their tree or nowhere.
var ErrUnsupported = errors.New("cannot be copied into an image")

type layerBuilder struct {
	ctx     context.Context
	srcDir  string
	tw      *tar.Writer
	mtime   time.Time
	lim     image.Limits
	entries int
	bytes   int64
	files   int64
	dirs    map[string]bool
}

// tree copies t.Src of root to t.Dst.
func (b *layerBuilder) tree(root *os.Root, t Tree) error {
	src := path.Clean(filepath.ToSlash(t.Src))
	dst := strings.Trim(path.Clean("/"+filepath.ToSlash(t.Dst)), "/")
	if dst == "" {
		return fmt.Errorf("tree %s: the image root cannot be a destination", t.Src)
	}
	sub := root
	if src != "." {
		fi, err := root.Stat(src)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name(src), safefs.UnwrapPath(err))
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory", b.name(src))
		}
		if sub, err = root.OpenRoot(src); err != nil {
			return fmt.Errorf("%s: %w", b.name(src), safefs.UnwrapPath(err))
		}
		defer sub.Close()
	}
	// The destination and its parents.
	parts := strings.Split(dst, "/")
	for i := range parts {
		if err := b.dir(strings.Join(parts[:i+1], "/")); err != nil {
			return err
		}
	}
	return b.walk(sub, src, ".", dst)
}

// name is the path of rel (relative to the tree src) as the user knows it.
func (b *layerBuilder) name(rel string) string {
	return filepath.Join(b.srcDir, filepath.FromSlash(rel))
}

func (b *layerBuilder) count(p string) error {
	b.entries++
	if b.entries > b.lim.Entries {
		return fmt.Errorf("%s: more than %d entries: %w (the entries limit)", b.srcDir, b.lim.Entries, ErrLimit)
	}
	if d := strings.Count(p, "/") + 1; d > b.lim.PathDepth {
		return fmt.Errorf("%s: %d path components in the image: %w (the depth limit is %d)", p, d, ErrLimit, b.lim.PathDepth)
	}
	return nil
}

func (b *layerBuilder) header(h *tar.Header) error {
	h.ModTime = b.mtime
	h.Format = tar.FormatPAX
	return b.tw.WriteHeader(h)
}

// dir writes a directory entry once.
func (b *layerBuilder) dir(name string) error {
	if b.dirs[name] {
		return nil
	}
	b.dirs[name] = true
	if err := b.count(name); err != nil {
		return err
	}
	return b.header(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
}

// walk copies the directory rel of sub (whose own entry is written) to
// the image path dst.
func (b *layerBuilder) walk(sub *os.Root, src, rel, dst string) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	names, err := b.readDir(sub, src, rel)
	if err != nil {
		return err
	}
	for _, n := range names {
		p := path.Join(rel, n)
		userPath := path.Join(src, p)
		target := dst + "/" + p
		fi, err := sub.Lstat(p)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name(userPath), safefs.UnwrapPath(err))
		}
		switch m := fi.Mode(); {
		case m.IsDir():
			if err := b.dir(target); err != nil {
				return err
			}
			if err := b.walk(sub, src, p, dst); err != nil {
				return err
			}
		case m.IsRegular():
			if err := b.file(sub, p, userPath, target, fi); err != nil {
				return err
			}
		case m&fs.ModeSymlink != 0:
			if err := b.symlink(sub, p, userPath, target); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: %s: %w (only regular files, directories and symbolic links are)", b.name(userPath), safefs.Kind(m), ErrUnsupported)
		}
	}
	return nil
}

// readDir lists rel sorted, reading at most the entries limit.
func (b *layerBuilder) readDir(sub *os.Root, src, rel string) ([]string, error) {
	f, err := sub.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.name(path.Join(src, rel)), safefs.UnwrapPath(err))
	}
	defer f.Close()
	var names []string
	for {
		chunk, err := f.Readdirnames(1024)
		names = append(names, chunk...)
		if len(names)+b.entries > b.lim.Entries {
			return nil, fmt.Errorf("%s: more than %d entries: %w (the entries limit)", b.srcDir, b.lim.Entries, ErrLimit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name(path.Join(src, rel)), safefs.UnwrapPath(err))
		}
		if err := b.ctx.Err(); err != nil {
			return nil, err
		}
	}
	sort.Strings(names)
	return names, nil
}

// LayerMode is the mode an entry read from a directory gets in a layer
// built by [BuildLayer]: 0755 for directories and for files their owner
// may execute, 0644 for other files, and no setuid, setgid or sticky bit.
func LayerMode(m fs.FileMode) fs.FileMode {
	switch {
	case m.IsDir():
		return fs.ModeDir | 0o755
	case m&0o100 != 0:
		return 0o755
	}
	return 0o644
}

// file copies the regular file p, which must keep the size it had when it
// was listed.
func (b *layerBuilder) file(sub *os.Root, p, userPath, target string, fi fs.FileInfo) error {
	if err := b.count(target); err != nil {
		return err
	}
	size := fi.Size()
	if b.bytes+size > b.lim.Extract {
		return fmt.Errorf("%s: the files hold more than %d bytes: %w (the extract limit)", b.srcDir, b.lim.Extract, ErrLimit)
	}
	f, err := sub.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name(userPath), safefs.UnwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", b.name(userPath), safefs.UnwrapPath(err))
	}
	if !st.Mode().IsRegular() || !os.SameFile(fi, st) {
		return fmt.Errorf("%s: replaced while it was read: %w", b.name(userPath), ErrUnsupported)
	}
	if err := b.header(&tar.Header{Typeflag: tar.TypeReg, Name: target, Mode: int64(LayerMode(fi.Mode()).Perm()), Size: size}); err != nil {
		return err
	}
	n, err := io.Copy(b.tw, io.LimitReader(ctxReader{b.ctx, f}, size))
	if err != nil {
		return fmt.Errorf("%s: %w", b.name(userPath), safefs.UnwrapPath(err))
	}
	if n < size {
		return fmt.Errorf("%s: %d bytes read of %d: the file changed while it was read", b.name(userPath), n, size)
	}
	var one [1]byte
	if m, _ := f.Read(one[:]); m > 0 {
		return fmt.Errorf("%s: the file grew while it was read", b.name(userPath))
	}
	b.bytes += size
	b.files++
	return nil
}

// symlink copies the link p as a link. Its target must be relative and,
// followed inside the tree (os.Root resolves it as the kernel would, link
// by link), reach an existing entry.
func (b *layerBuilder) symlink(sub *os.Root, p, userPath, target string) error {
	if err := b.count(target); err != nil {
		return err
	}
	link, err := sub.Readlink(p)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name(userPath), safefs.UnwrapPath(err))
	}
	if filepath.IsAbs(link) || strings.HasPrefix(link, "/") {
		return fmt.Errorf("%s: symbolic link to the absolute path %q: %w (links must be relative and stay inside the directory)", b.name(userPath), link, ErrUnsupported)
	}
	if _, err := sub.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: symbolic link to %q, which does not exist: %w", b.name(userPath), link, ErrUnsupported)
		}
		return fmt.Errorf("%s: symbolic link to %q: %v: %w (links must stay inside the directory)", b.name(userPath), link, safefs.UnwrapPath(err), ErrUnsupported)
	}
	return b.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: target, Linkname: filepath.ToSlash(link), Mode: 0o777})
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
