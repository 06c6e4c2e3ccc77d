package declcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/opmkit/opm/internal/safefs"
)

// Catalog indexes: one package at a time.
//
// Loading a catalog whole holds every blob at once, about 1.5 bytes of
// memory per catalog byte. Commands whose output can be produced one
// package at a time (render writes packages in name order; validate checks
// each package on its own) index the catalog instead: a first pass decodes
// every file exactly as the loader does (same checks, same errors, same
// parallelism) but keeps only where each blob is and which package it
// belongs to; then each package's blobs are decoded again from just their
// byte ranges, used, and dropped. Memory then grows with the largest
// package, not with the catalog.

// spanFunc receives the byte range [start, end) of the blob the decoder is
// about to hand to its docFunc, and whether it was read as YAML.
type spanFunc func(start, end int, yaml bool)

// BlobKind is the kind of an indexed blob.
type BlobKind uint8

// Blob kinds.
const (
	KindOther       BlobKind = iota // a blob of any other schema (a Meta)
	KindPackage                     // olm.package
	KindChannel                     // olm.channel
	KindBundle                      // olm.bundle
	KindDeprecation                 // olm.deprecations
)

// IndexedBlob is where one blob is and which package it belongs to.
type IndexedBlob struct {
	// File is the index of the blob's file (see Index.FileName).
	File int32
	// Line and Column are the blob's position, as the loader gives it.
	Line, Column int32
	// Start and End delimit the blob's bytes in its file: a JSON value, or
	// a YAML document with the separator lines after it.
	Start, End int64
	// YAML reports whether the blob was read as a YAML document.
	YAML bool
	Kind BlobKind
	// Group is the package the blob belongs to: an olm.package blob's
	// name, any other blob's package ("" for none).
	Group string
	// Seq is the blob's rank among the blobs of its kind in load order:
	// its index in the matching slice of the whole catalog loaded at once
	// (Packages, Channels, Bundles, Deprecations or Others).
	Seq int32
}

// Index locates every blob of a catalog. It keeps the catalog's directory
// (or data) open until Close, to read packages back with LoadGroup.
type Index struct {
	files  []indexFile
	blobs  []IndexedBlob
	groups map[string][]int32
	byName map[string]int32
	sfs    *safefs.FS // files are read from here, or
	data   []byte     // the single in-memory file
	owned  bool       // Close closes sfs
}

type indexFile struct {
	path    string // in sfs
	name    string // in positions
	size    int64
	modTime time.Time
	first   int32 // index of the file's first blob
}

// ErrChanged is matched (errors.Is) by the error of LoadGroup when a file
// no longer holds what the index found in it.
var ErrChanged = errors.New("file changed while the catalog was read")

// IndexDir indexes the FBC rooted at dir, as LoadDir loads it: the same
// files, checks and errors. Close the index when done.
func IndexDir(ctx context.Context, dir string, opts ...LoadOption) (*Index, error) {
	fsys, err := openCatalogDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	opts = append([]LoadOption{WithPathPrefix(filepath.ToSlash(filepath.Clean(dir)))}, opts...)
	ix, err := indexFS(ctx, fsys, opts...)
	if err != nil {
		fsys.Close()
		return nil, err
	}
	ix.owned = true
	return ix, nil
}

// IndexFS indexes fsys as LoadFS loads it. fsys must stay readable until
// the index is closed.
func IndexFS(ctx context.Context, fsys fs.FS, opts ...LoadOption) (*Index, error) {
	if fsys == nil {
		return nil, errors.New("no filesystem to load")
	}
	return indexFS(ctx, safeFS(ctx, fsys), opts...)
}

// IndexPath indexes the single file at path as LoadPath loads it.
func IndexPath(ctx context.Context, path string) (*Index, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	sfs, err := safefs.OpenDir(ctx, filepath.Dir(real))
	if err != nil {
		return nil, err
	}
	ix := &Index{sfs: sfs, owned: true}
	f, err := indexOne(sfs, filepath.Base(real), path)
	if err != nil {
		sfs.Close()
		return nil, err
	}
	ix.add([]fileResult{f})
	return ix, nil
}

// IndexReader reads r (standard input, for one) to its end and indexes
// it as LoadReaderContext loads it; name is used in positions. The stream
// is kept in memory, within the limit on standard input (WithMaxStdinSize).
func IndexReader(ctx context.Context, r io.Reader, name string) (*Index, error) {
	data, err := safefs.ReadAll(safefs.StdinReader(ctx, r), 0)
	if err != nil {
		return nil, &LoadError{Pos: Position{File: name}, Err: err}
	}
	return IndexBytes(ctx, data, name)
}

// IndexBytes indexes data, one stream named name in positions, as
// LoadReaderContext would load it. The index keeps data.
func IndexBytes(ctx context.Context, data []byte, name string) (*Index, error) {
	x := &fileIndexer{name: name}
	err := decodeReaderSpan(bytes.NewReader(data), -1, safefs.LimitsFrom(ctx).MaxFileSize, name, x.blob, x.span)
	if err != nil {
		return nil, err
	}
	ix := &Index{data: data}
	ix.add([]fileResult{{path: name, name: name, size: int64(len(data)), blobs: x.blobs}})
	return ix, nil
}

// openCatalogDir opens dir as LoadDir does.
func openCatalogDir(ctx context.Context, dir string) (*safefs.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	if err := NotOCILayout(dir); err != nil {
		return nil, err
	}
	return safefs.OpenDir(ctx, dir)
}

func indexFS(ctx context.Context, sfs *safefs.FS, opts ...LoadOption) (*Index, error) {
	o := loadOptions{concurrency: runtime.NumCPU()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.concurrency < 1 {
		o.concurrency = 1
	}
	files, err := listFiles(ctx, sfs, o)
	if err != nil {
		return nil, err
	}
	results := make([]fileResult, len(files))
	err = eachFile(ctx, len(files), o.concurrency, func(i int) error {
		r, err := indexOne(sfs, files[i], o.name(files[i]))
		results[i] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	ix := &Index{sfs: sfs}
	ix.add(results)
	return ix, nil
}

// fileResult is what the first pass found in one file.
type fileResult struct {
	path, name string
	size       int64
	modTime    time.Time
	blobs      []IndexedBlob
}

// indexOne decodes the file p of sfs as loadFile does, keeping only where
// each blob is.
func indexOne(sfs *safefs.FS, p, name string) (fileResult, error) {
	res := fileResult{path: p, name: name, size: -1}
	f, size, err := openDecode(sfs, p, name)
	if err != nil {
		return res, err
	}
	defer f.Close()
	if size >= 0 {
		res.size = size
		if st, err := f.Stat(); err == nil {
			res.modTime = st.ModTime()
		}
	}
	x := &fileIndexer{name: name}
	if err := decodeReaderSpan(f, res.size, 0, name, x.blob, x.span); err != nil {
		return res, err
	}
	res.blobs = x.blobs
	return res, nil
}

// fileIndexer is the first pass over one file.
type fileIndexer struct {
	name    string
	blobs   []IndexedBlob
	next    IndexedBlob // the span of the blob about to be decoded
	scratch DeclarativeConfig
}

func (x *fileIndexer) span(start, end int, yaml bool) {
	x.next = IndexedBlob{Start: int64(start), End: int64(end), YAML: yaml}
}

// blob types the blob as the loader does, for the same errors, and keeps
// its kind and package.
func (x *fileIndexer) blob(n normalized, line, col int) error {
	pos := Position{File: x.name, Line: line, Column: col}
	c := &x.scratch
	if err := c.addBlob(n, pos); err != nil {
		return &LoadError{Pos: pos, Err: err}
	}
	b := x.next
	x.next = IndexedBlob{}
	b.Line, b.Column = int32(line), int32(col)
	switch {
	case len(c.Packages) > 0:
		b.Kind, b.Group = KindPackage, c.Packages[0].Name
	case len(c.Channels) > 0:
		b.Kind, b.Group = KindChannel, c.Channels[0].Package
	case len(c.Bundles) > 0:
		b.Kind, b.Group = KindBundle, c.Bundles[0].Package
	case len(c.Deprecations) > 0:
		b.Kind, b.Group = KindDeprecation, c.Deprecations[0].Package
	case len(c.Others) > 0:
		b.Kind, b.Group = KindOther, c.Others[0].Package
	}
	clear(c.Packages)
	clear(c.Channels)
	clear(c.Bundles)
	clear(c.Deprecations)
	clear(c.Others)
	c.Packages, c.Channels, c.Bundles, c.Deprecations, c.Others = c.Packages[:0], c.Channels[:0], c.Bundles[:0], c.Deprecations[:0], c.Others[:0]
	x.blobs = append(x.blobs, b)
	return nil
}

// add appends the files' blobs in order, numbering them as a whole load
// would.
func (ix *Index) add(results []fileResult) {
	if ix.groups == nil {
		ix.groups = map[string][]int32{}
		ix.byName = map[string]int32{}
	}
	intern := map[string]string{}
	var seq [KindDeprecation + 1]int32
	for _, b := range ix.blobs {
		seq[b.Kind]++
	}
	for _, r := range results {
		fi := int32(len(ix.files))
		ix.files = append(ix.files, indexFile{path: r.path, name: r.name, size: r.size, modTime: r.modTime, first: int32(len(ix.blobs))})
		ix.byName[r.name] = fi
		for _, b := range r.blobs {
			g, ok := intern[b.Group]
			if !ok {
				g = string(append([]byte(nil), b.Group...))
				intern[g] = g
			}
			b.Group, b.File = g, fi
			b.Seq = seq[b.Kind]
			seq[b.Kind]++
			ix.groups[g] = append(ix.groups[g], int32(len(ix.blobs)))
			ix.blobs = append(ix.blobs, b)
		}
	}
}

// Close releases the catalog directory.
func (ix *Index) Close() error {
	if ix.owned && ix.sfs != nil {
		return ix.sfs.Close()
	}
	return nil
}

// Len returns the number of blobs.
func (ix *Index) Len() int { return len(ix.blobs) }

// Blob returns the i-th blob in load order.
func (ix *Index) Blob(i int) IndexedBlob { return ix.blobs[i] }

// FileName returns the name of the i-th file, as positions give it.
func (ix *Index) FileName(i int) string { return ix.files[i].name }

// Pos returns the position of the i-th blob.
func (ix *Index) Pos(i int) Position {
	b := ix.blobs[i]
	return Position{File: ix.files[b.File].name, Line: int(b.Line), Column: int(b.Column)}
}

// Groups returns the names of the packages that blobs belong to, sorted;
// "" (blobs that belong to no package) comes first when there are any.
func (ix *Index) Groups() []string {
	out := make([]string, 0, len(ix.groups))
	for g := range ix.groups {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// GroupBlobs returns the indices of the blobs of group, in load order.
func (ix *Index) GroupBlobs(group string) []int {
	idx := ix.groups[group]
	out := make([]int, len(idx))
	for i, x := range idx {
		out[i] = int(x)
	}
	return out
}

// Find returns the index of the blob at pos.
func (ix *Index) Find(pos Position) (int, bool) {
	fi, ok := ix.byName[pos.File]
	if !ok {
		return 0, false
	}
	lo := int(ix.files[fi].first)
	hi := len(ix.blobs)
	if int(fi)+1 < len(ix.files) {
		hi = int(ix.files[fi+1].first)
	}
	i := lo + sort.Search(hi-lo, func(k int) bool {
		b := ix.blobs[lo+k]
		return int(b.Line) > pos.Line || (int(b.Line) == pos.Line && int(b.Column) >= pos.Column)
	})
	if i < hi && int(ix.blobs[i].Line) == pos.Line && int(ix.blobs[i].Column) == pos.Column {
		return i, true
	}
	return 0, false
}

// ReadBlob returns the bytes of the i-th blob (see IndexedBlob.Start).
func (ix *Index) ReadBlob(ctx context.Context, i int) ([]byte, error) {
	b := ix.blobs[i]
	r, err := ix.open(ctx, b.File)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.read(b.Start, b.End)
}

// LoadGroup decodes the blobs of group, as the loader decodes them, into a
// config that lists them in load order.
func (ix *Index) LoadGroup(ctx context.Context, group string) (*DeclarativeConfig, error) {
	idx := ix.groups[group]
	cfg := &DeclarativeConfig{}
	var r *rangeReader
	bp := rangePool.Get().(*[]byte)
	defer func() {
		if r != nil {
			r.close()
		}
		if cap(*bp) <= maxPooledRange {
			rangePool.Put(bp)
		}
	}()
	for i := 0; i < len(idx); {
		first := ix.blobs[idx[i]]
		// A run of blobs next to each other in one file, read the same way.
		j := i + 1
		for j < len(idx) && idx[j] == idx[j-1]+1 && ix.blobs[idx[j]].File == first.File && ix.blobs[idx[j]].YAML == first.YAML {
			j++
		}
		last := ix.blobs[idx[j-1]]
		if r == nil || r.file != first.File {
			if r != nil {
				r.close()
			}
			var err error
			if r, err = ix.open(ctx, first.File); err != nil {
				return nil, err
			}
		}
		// The decoded blobs do not alias what they are decoded from, so
		// one buffer serves every run.
		data, err := r.readInto(bp, first.Start, last.End)
		if err != nil {
			return nil, err
		}
		name := ix.files[first.File].name
		k := i
		err = decodeRange(data, first.YAML, name, int(first.Line), int(first.Column), func(n normalized, line, col int) error {
			if k >= j || int(ix.blobs[idx[k]].Line) != line || int(ix.blobs[idx[k]].Column) != col {
				return fmt.Errorf("%s: %w", name, ErrChanged)
			}
			k++
			pos := Position{File: name, Line: line, Column: col}
			if err := cfg.addBlob(n, pos); err != nil {
				return &LoadError{Pos: pos, Err: err}
			}
			return nil
		})
		if err == nil && k != j {
			err = fmt.Errorf("%s: %w", name, ErrChanged)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !errors.Is(err, ErrChanged) {
				err = fmt.Errorf("%s: %w: %w", name, ErrChanged, err)
			}
			return nil, err
		}
		i = j
	}
	return cfg, nil
}

// decodeRange decodes data, the bytes of whole blobs starting at line and
// column of file, read as YAML documents or JSON values as the first pass
// read them.
func decodeRange(data []byte, yaml bool, file string, line, col int, fn docFunc) error {
	w := &window{buf: data[:len(data):len(data)], eof: true, size: int64(len(data))}
	w.lines.w = w
	w.lines.baseLine = line - 1
	w.lines.lineStart = -(col - 1)
	d := decoder{w: w, file: file, fn: fn}
	if yaml {
		return d.yamlStream(0, nil)
	}
	return d.jsonStream()
}

// rangeReader reads byte ranges of one file of an index.
type rangeReader struct {
	file int32
	f    fs.File
	data []byte
	name string
}

func (ix *Index) open(ctx context.Context, fi int32) (*rangeReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file := &ix.files[fi]
	r := &rangeReader{file: fi, name: file.name}
	if ix.sfs == nil {
		r.data = ix.data
		return r, nil
	}
	f, err := ix.sfs.Open(file.path)
	if err != nil {
		return nil, &LoadError{Pos: Position{File: file.name}, Err: err}
	}
	st, err := f.Stat()
	if err != nil || st.Size() != file.size || !st.ModTime().Equal(file.modTime) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", file.name, ErrChanged)
	}
	r.f = f
	return r, nil
}

// Range buffers are kept for reuse up to this size.
const maxPooledRange = 64 << 20

var rangePool = sync.Pool{New: func() any { return new([]byte) }}

// readInto reads [start, end) into *buf (grown as needed) and returns it;
// in-memory data is returned as it is.
func (r *rangeReader) readInto(buf *[]byte, start, end int64) ([]byte, error) {
	if r.f == nil {
		return r.read(start, end)
	}
	if int64(cap(*buf)) < end-start {
		*buf = make([]byte, end-start)
	}
	return r.readAt((*buf)[:end-start], start)
}

func (r *rangeReader) read(start, end int64) ([]byte, error) {
	if r.f == nil {
		if start < 0 || end > int64(len(r.data)) || start > end {
			return nil, fmt.Errorf("%s: %w", r.name, ErrChanged)
		}
		return r.data[start:end:end], nil
	}
	return r.readAt(make([]byte, end-start), start)
}

// readAt fills buf from offset start of the file.
func (r *rangeReader) readAt(buf []byte, start int64) ([]byte, error) {
	end := start + int64(len(buf))
	if ra, ok := r.f.(io.ReaderAt); ok {
		n, err := ra.ReadAt(buf, start)
		if n == len(buf) {
			return buf, nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			if err == nil || err == io.EOF {
				err = ErrChanged
			}
			return nil, &LoadError{Pos: Position{File: r.name}, Err: err}
		}
	}
	// A file system whose files cannot be read at an offset: read the
	// file whole, once.
	data, err := safefs.ReadAll(r.f, int(end))
	r.f.Close()
	r.f = nil
	if err != nil {
		return nil, &LoadError{Pos: Position{File: r.name}, Err: err}
	}
	r.data = data
	return r.read(start, end)
}

func (r *rangeReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}
