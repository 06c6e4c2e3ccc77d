// Package safefs reads trees of untrusted files (catalog directories,
// bundle directories, extracted images) within bounds:
//
//   - a directory opened with [OpenDir] resolves every name, symbolic links
//     included, inside it (os.Root): a link that leads outside is an error
//     naming the file, never a read of what it points to. Only an explicit
//     opt-in (Limits.FollowExternalLinks, opm's --follow-external-symlinks)
//     follows such links, as upstream opm does; everything else below
//     still holds then;
//   - only regular files and directories are opened: a FIFO, a device or a
//     socket is refused before anything blocks on it;
//   - no file is read past a size limit (the limit travels in the context,
//     see [WithLimits]);
//   - reads stop as soon as the context is done.
//
// Errors are *fs.PathError values naming the file, wrapping [ErrEscapes],
// [ErrNotRegular] or a *[TooLargeError] (errors.Is(err, [ErrTooLarge])).
package safefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultMaxFileSize is the default limit on the size of one file.
const DefaultMaxFileSize int64 = 256 << 20

// DefaultMaxStdinSize is the default limit on the whole of standard input
// (a stream read to its end): 64 MiB, as a template. The largest public
// catalogs render to about 21 MB.
const DefaultMaxStdinSize int64 = 64 << 20

var (
	// ErrEscapes is the error of a name that resolves outside the
	// directory being read (through a symbolic link, or an absolute link).
	ErrEscapes = errors.New("a symbolic link leads outside the directory being read, or is absolute (refused unless --follow-external-symlinks is given)")
	// ErrNotRegular is the error of a FIFO, device or socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is matched by every *TooLargeError.
	ErrTooLarge = errors.New("file too large")
)

// TooLargeError is the error of a file over the size limit.
type TooLargeError struct {
	Size  int64 // the file's size, or -1 when it is not known (a stream)
	Limit int64
	// Document is set when the limit was hit by one document or value of
	// a stream, rather than by a file.
	Document bool
	// Stdin is set when the limit was the one on the whole of standard
	// input (Limits.MaxStdinSize), rather than on one file.
	Stdin bool
	// For names what a fixed limit applies to ("registries.conf files"):
	// set, the limit is not the one on catalog and bundle files that the
	// context carries (and --max-file-size sets). ReadRegular's limits
	// are fixed; see [LimitFor].
	For string
}

func (e *TooLargeError) Error() string {
	if e.For != "" {
		if e.Size < 0 {
			return fmt.Sprintf("larger than the limit of %s for %s", FormatSize(e.Limit), e.For)
		}
		return fmt.Sprintf("file size %s is over the limit of %s for %s", FormatSize(e.Size), FormatSize(e.Limit), e.For)
	}
	if e.Stdin {
		return fmt.Sprintf("standard input is larger than its limit of %s (set with --max-stdin-size)", FormatSize(e.Limit))
	}
	if e.Document {
		return fmt.Sprintf("a document or value larger than the limit of %s on a single file", FormatSize(e.Limit))
	}
	if e.Size < 0 {
		return fmt.Sprintf("larger than the limit of %s on a single file", FormatSize(e.Limit))
	}
	return fmt.Sprintf("file size %s is over the limit of %s on a single file", FormatSize(e.Size), FormatSize(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// IsFileSizeLimit reports whether err is over the limit on catalog and
// bundle files that the context carries (--max-file-size), rather than
// over a fixed limit.
func IsFileSizeLimit(err error) bool {
	var te *TooLargeError
	return errors.As(err, &te) && te.For == "" && !te.Stdin
}

// LimitFor names, in err's *TooLargeError (if it has one), what the fixed
// limit it hit applies to, e.g. "registries.conf files (a fixed limit)".
// It returns err.
func LimitFor(err error, what string) error {
	var te *TooLargeError
	if errors.As(err, &te) {
		te.For = what
	}
	return err
}

// FormatSize writes n bytes in the largest binary unit that keeps it
// readable: "256 MiB", "1.5 GiB", "999 bytes".
func FormatSize(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	f, u := float64(n)/1024, 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// Limits bound what reading one file may cost.
type Limits struct {
	// MaxFileSize is the largest file read, in bytes; 0 or less means no
	// limit.
	MaxFileSize int64
	// MaxStdinSize is the most read of standard input (see StdinReader),
	// in bytes; 0 or less means no limit.
	MaxStdinSize int64
	// FollowExternalLinks makes OpenDir follow symbolic links that lead
	// outside the directory (or are absolute), as upstream opm does. Off by
	// default: a catalog from a pull request must not read the host's
	// files. Files are still regular only and size-capped.
	FollowExternalLinks bool
}

type limitsKey struct{}

// WithLimits returns a context under which readers of this package apply
// l.
func WithLimits(ctx context.Context, l Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

// LimitsFrom returns the limits of ctx: those set by WithLimits, or the
// defaults.
func LimitsFrom(ctx context.Context) Limits {
	if l, ok := ctx.Value(limitsKey{}).(Limits); ok {
		return l
	}
	return Limits{MaxFileSize: DefaultMaxFileSize, MaxStdinSize: DefaultMaxStdinSize}
}

// FS is a bounded view of a filesystem. It implements fs.FS, fs.StatFS,
// fs.ReadDirFS and fs.ReadFileFS, so fs.WalkDir, fs.ReadDir and
// fs.ReadFile go through its checks.
type FS struct {
	ctx   context.Context
	fsys  fs.FS
	root  *os.Root // set by OpenDir
	dir   string   // set by OpenDir when it follows external links
	limit int64
}

// New returns fsys seen through the checks of this package, with the
// limits of ctx. Names are resolved by fsys itself: only a filesystem from
// [OpenDir] (or os.Root.FS) keeps symbolic links inside it.
func New(ctx context.Context, fsys fs.FS) *FS {
	return &FS{ctx: ctx, fsys: fsys, limit: LimitsFrom(ctx).MaxFileSize}
}

// OpenDir opens the directory dir as an os.Root: every name is resolved
// inside it. Close it when done.
//
// With Limits.FollowExternalLinks under ctx, names are resolved as the
// operating system does, links leading outside dir included.
func OpenDir(ctx context.Context, dir string) (*FS, error) {
	if LimitsFrom(ctx).FollowExternalLinks {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
		}
		f := New(ctx, os.DirFS(dir))
		f.dir = dir
		return f, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f := New(ctx, root.FS())
	f.root = root
	return f, nil
}

// Close releases the directory opened by OpenDir (a no-op otherwise).
func (f *FS) Close() error {
	if f.root == nil {
		return nil
	}
	return f.root.Close()
}

// Open opens name. Directories and regular files are opened; regular files
// are read within the size limit and the context.
func (f *FS) Open(name string) (fs.File, error) {
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	// Look before opening: opening a FIFO blocks until a writer comes, and
	// opening a device can have effects of its own.
	st, err := fs.Stat(f.fsys, name)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	if st.IsDir() {
		file, err := f.fsys.Open(name)
		if err != nil {
			return nil, pathError("open", name, err)
		}
		return file, nil
	}
	if err := f.check(name, st); err != nil {
		return nil, err
	}
	var file fs.File
	switch {
	case f.root != nil:
		// O_NONBLOCK: should the file have been swapped for a FIFO since
		// the Stat, opening it still does not block (it is refused below).
		file, err = f.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	case f.dir != "":
		file, err = os.OpenFile(filepath.Join(f.dir, filepath.FromSlash(name)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	default:
		file, err = f.fsys.Open(name)
	}
	if err != nil {
		return nil, pathError("open", name, err)
	}
	st, err = file.Stat()
	if err == nil && !st.IsDir() {
		err = f.check(name, st)
	}
	if err != nil {
		file.Close()
		return nil, err
	}
	return &boundedFile{File: file, fs: f, name: name, left: f.limit}, nil
}

// check refuses anything but a regular file within the limit.
func (f *FS) check(name string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(st.Mode()))}
	}
	if f.limit > 0 && st.Size() > f.limit {
		return &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{Size: st.Size(), Limit: f.limit}}
	}
	return nil
}

// OpenRegular opens name for reading, through root when it is not nil
// (links resolved inside it). It refuses anything but a regular file
// without blocking: a FIFO or device is seen by Stat (or by fstat after a
// non-blocking open, should it have been swapped in since), never read.
// It returns the file and its size.
func OpenRegular(root *os.Root, name string) (*os.File, int64, error) {
	var (
		fi  fs.FileInfo
		err error
	)
	if root != nil {
		fi, err = root.Stat(name)
	} else {
		fi, err = os.Stat(name)
	}
	if err != nil {
		if isEscape(err) {
			return nil, 0, &fs.PathError{Op: "open", Path: name, Err: ErrEscapes}
		}
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))}
	}
	var f *os.File
	if root != nil {
		f, err = root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		f, err = os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		if isEscape(err) {
			return nil, 0, &fs.PathError{Op: "open", Path: name, Err: ErrEscapes}
		}
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(fi, st) {
		f.Close()
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s, or replaced while opening)", ErrNotRegular, Kind(st.Mode()))}
	}
	return f, st.Size(), nil
}

// ReadRegular reads the regular file name, through root when it is not
// nil (see OpenRegular), refusing one of more than limit bytes with a
// *TooLargeError; it never reads more than limit+1 bytes, whatever the
// size said when the file was opened. The limit is the caller's, a fixed
// one: the error says it is for "this kind of file" unless the caller
// names it (LimitFor).
func ReadRegular(root *os.Root, name string, limit int64) ([]byte, error) {
	f, size, err := OpenRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{Size: size, Limit: limit, For: fixedLimit}}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{Size: -1, Limit: limit, For: fixedLimit}}
	}
	return data, nil
}

// IsRefusal reports whether err is one of this package's refusals of a
// file: a link out of the directory, a file that is not regular, one over
// the limit.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrTooLarge) || errors.Is(err, ErrEscapes) || errors.Is(err, ErrNotRegular)
}

// Refusal returns the reason of one of this package's refusals of a file
// (a link out of the directory, a file that is not regular, one over the
// limit) without the *fs.PathError that names the file, when file already
// names it (file is the name, or ends with "/"+the name): the caller
// prints the name itself, once. Anything else is returned as it is.
func Refusal(err error, file string) error {
	pe, ok := err.(*fs.PathError)
	if !ok || !IsRefusal(pe.Err) {
		return err
	}
	f, p := filepath.ToSlash(file), filepath.ToSlash(pe.Path)
	if f == p || strings.HasSuffix(f, "/"+p) {
		return pe.Err
	}
	return err
}

// fixedLimit is what ReadRegular's limits apply to, unless the caller
// says more.
const fixedLimit = "this kind of file (a fixed limit)"

// Kind names a file mode's type for error messages ("a named pipe").
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "mode " + m.String()
}

// pathError names name in err, turning os.Root's escape error into
// ErrEscapes.
func pathError(op, name string, err error) error {
	if isEscape(err) {
		return &fs.PathError{Op: op, Path: name, Err: ErrEscapes}
	}
	return &fs.PathError{Op: op, Path: name, Err: UnwrapPath(err)}
}

// UnwrapPath drops the *fs.PathError around err, whose path (relative to
// a root) the caller names itself.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isEscape recognises os.Root's error for a name that leaves the root
// (os does not export it; TestEscapeErrorText pins the text).
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// Stat returns the FileInfo of name (symbolic links followed).
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	st, err := fs.Stat(f.fsys, name)
	if err != nil {
		return nil, pathError("stat", name, err)
	}
	return st, nil
}

// ReadDir lists the directory name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	// Look before opening, as Open does: a FIFO named like a directory
	// must not block.
	st, err := fs.Stat(f.fsys, name)
	if err != nil {
		return nil, pathError("readdir", name, err)
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := fs.ReadDir(f.fsys, name)
	if err != nil {
		return nil, pathError("readdir", name, err)
	}
	return entries, nil
}

// ReadFile reads the regular file name whole.
func (f *FS) ReadFile(name string) ([]byte, error) {
	file, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	size := 0
	if st, err := file.Stat(); err == nil {
		size = int(st.Size())
	}
	return ReadAll(file, size)
}

// ReadAll reads r to its end into a buffer sized for sizeHint bytes.
func ReadAll(r io.Reader, sizeHint int) ([]byte, error) {
	buf := make([]byte, 0, sizeHint+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readChunk bounds one Read, so that the context is looked at between
// chunks of a large file.
const readChunk = 4 << 20

// boundedFile is an open regular file read within the limit and the context.
type boundedFile struct {
	fs.File
	fs   *FS
	name string
	left int64 // bytes that may still be read; unlimited when fs.limit <= 0
}

func (f *boundedFile) Read(p []byte) (int, error) {
	if err := f.fs.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > readChunk {
		p = p[:readChunk]
	}
	limited := f.fs.limit > 0
	if limited && int64(len(p)) > f.left+1 {
		p = p[:f.left+1]
	}
	n, err := f.File.Read(p)
	if limited {
		f.left -= int64(n)
		if f.left < 0 {
			// The file grew past the limit after it was opened.
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: &TooLargeError{Size: -1, Limit: f.fs.limit}}
		}
	}
	if err != nil && err != io.EOF {
		return n, pathError("read", f.name, err)
	}
	return n, err
}

// ReadAt reads len(p) bytes at offset off, within the size limit and the
// context, when the file underneath supports it (an *os.File does).
func (f *boundedFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.ctx.Err(); err != nil {
		return 0, err
	}
	ra, ok := f.File.(io.ReaderAt)
	if !ok {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: errors.ErrUnsupported}
	}
	if f.fs.limit > 0 && off+int64(len(p)) > f.fs.limit {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: &TooLargeError{Size: -1, Limit: f.fs.limit}}
	}
	n, err := ra.ReadAt(p, off)
	if err != nil && err != io.EOF {
		return n, pathError("read", f.name, err)
	}
	return n, err
}

// Reader returns r read under ctx: a Read waiting on r (a terminal, a
// pipe) returns as soon as ctx is done. A stream has no size limit here:
// its readers bound what they hold of it.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

// StdinReader is Reader for standard input read to its end, which also
// refuses more than the limit of ctx on the whole of it (MaxStdinSize)
// with a *TooLargeError: an endless stream of small documents, each within
// the limit on one file, must not grow until memory runs out.
func StdinReader(ctx context.Context, r io.Reader) io.Reader {
	cr := Reader(ctx, r)
	limit := LimitsFrom(ctx).MaxStdinSize
	if limit <= 0 {
		return cr
	}
	return &cappedReader{r: cr, left: limit, limit: limit}
}

type cappedReader struct {
	r     io.Reader
	left  int64 // bytes that may still be read
	limit int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, &TooLargeError{Size: -1, Limit: c.limit, Stdin: true}
	}
	return n, err
}

type ctxReader struct {
	ctx       context.Context
	r         io.Reader
	buf       []byte // owned by the reading goroutine while a Read runs
	abandoned bool   // a Read was left running when ctx was done
}

// streamChunk is the most one Read of a stream asks for.
const streamChunk = 1 << 20

type readResult struct {
	n   int
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if c.abandoned {
		return 0, errors.New("read after cancellation")
	}
	if c.buf == nil {
		c.buf = make([]byte, streamChunk)
	}
	// The Read runs in its own goroutine, into the reader's own buffer:
	// when ctx is done first, it is abandoned (with the buffer) and never
	// touches p.
	ch := make(chan readResult, 1)
	buf := c.buf[:min(len(p), len(c.buf))]
	go func() {
		n, err := c.r.Read(buf)
		ch <- readResult{n, err}
	}()
	select {
	case res := <-ch:
		return copy(p, buf[:res.n]), res.err
	case <-c.ctx.Done():
		c.abandoned = true
		c.buf = nil
		return 0, c.ctx.Err()
	}
}
