package declcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/internal/yamlorjson"
)

// Stream decoding.
//
// Every catalog file is decoded the way upstream's k8s YAMLOrJSONDecoder
// does it (internal/yamlorjson): if the first non-space byte of the first
// 4096 is '{' the file is a stream of concatenated JSON values; should the
// first or second value fail, the rest of the file (from the end of the
// last good value) is read as YAML instead. Otherwise the file is YAML,
// split on lines starting with "---". Each document becomes one normalised
// blob.
//
// Files are read through a window: small files are read whole, larger ones
// a window at a time, so that the bytes of a file are held only as long as
// the value or document being decoded needs them.

// docFunc receives each decoded blob with the 1-based line and column
// where it starts.
type docFunc func(n normalized, line, col int) error

// catalogSplitter splits catalog YAML as upstream's loader sees it: bare
// "---" lines hold no document.
var catalogSplitter = yamlorjson.Splitter{}

// Window sizes: a file up to maxWholeRead bytes is read in one go; larger
// ones and streams through a window that starts at windowSize and grows
// only as much as one value or document needs. (Variables for tests.)
var (
	maxWholeRead = 16 << 20
	windowSize   = 4 << 20
)

// maxPooledWindow bounds the window buffers kept for reuse.
const maxPooledWindow = 16<<20 + 1

var windowPool = sync.Pool{New: func() any { return new([]byte) }}

// decodeReader decodes r, calling fn for each blob. sizeHint is the size of
// the stream when known (-1 otherwise). maxWindow, when positive, bounds
// the bytes held at once (so the size of one value or document). Errors
// are *LoadError positioned in file.
func decodeReader(r io.Reader, sizeHint, maxWindow int64, file string, fn docFunc) error {
	return decodeReaderSpan(r, sizeHint, maxWindow, file, fn, nil)
}

// decodeReaderSpan is decodeReader that also tells span (when not nil)
// the byte range of each blob.
func decodeReaderSpan(r io.Reader, sizeHint, maxWindow int64, file string, fn docFunc, span spanFunc) error {
	size := windowSize
	if sizeHint >= 0 && sizeHint < int64(maxWholeRead) {
		size = int(sizeHint) + 1 // +1: EOF is seen without a second read
	}
	// A pooled buffer is used up to size: the window is that large until
	// a value needs more.
	bp := windowPool.Get().(*[]byte)
	pooled := *bp
	buf := pooled[:0:min(size, cap(pooled))]
	if cap(pooled) < size {
		buf = make([]byte, 0, size)
	}
	w := &window{r: r, buf: buf, limit: maxWindow, size: sizeHint}
	w.lines.w = w
	defer func() {
		keep := pooled
		if c := cap(w.buf); c > cap(pooled) && c <= maxPooledWindow {
			keep = w.buf[:0] // a new, larger buffer
		}
		*bp = keep[:0]
		windowPool.Put(bp)
	}()
	d := decoder{w: w, file: file, fn: fn, span: span}
	return d.run()
}

// decodeStream decodes data, a whole file or stream already in memory,
// calling fn for each blob. Errors are *LoadError positioned in file.
func decodeStream(data []byte, file string, fn docFunc) error {
	w := &window{buf: data[:len(data):len(data)], eof: true, size: int64(len(data))}
	w.lines.w = w
	d := decoder{w: w, file: file, fn: fn}
	return d.run()
}

type decoder struct {
	w    *window
	file string
	fn   docFunc
	// span, when set, is told the byte range of each blob just before fn
	// is called (see index.go).
	span spanFunc
}

func (d *decoder) run() error {
	// Sniff: the first 4096 bytes, or the whole stream if shorter (or what
	// the window may hold, should it be smaller).
	for len(d.w.buf) < yamlorjson.CatalogSniffLen && !d.w.eof && (d.w.limit <= 0 || int64(len(d.w.buf)) <= d.w.limit) {
		if err := d.w.more(); err != nil {
			return d.readErr(err)
		}
	}
	if !yamlorjson.IsJSON(d.w.buf, yamlorjson.CatalogSniffLen) {
		return d.yamlStream(0, nil)
	}
	return d.jsonStream()
}

func (d *decoder) readErr(err error) error {
	return &LoadError{Pos: Position{File: d.file}, Err: err}
}

func (d *decoder) errAt(off int, err error) error {
	line, col := d.w.lines.pos(off)
	return &LoadError{Pos: Position{File: d.file, Line: line, Column: col}, Err: err}
}

// jsonStream decodes concatenated JSON values; after a failure of the first
// or second value it goes on as YAML from the end of the last good value.
func (d *decoder) jsonStream() error {
	w := d.w
	count := 0
	consumed := 0 // end of the last value decoded (absolute offset)
	off := 0
	big := false // the value being decoded did not fit in the window
	for {
		for {
			b := w.from(off)
			i := 0
			for i < len(b) && isJSONSpace(b[i]) {
				i++
			}
			off += i
			if i < len(b) || w.eof {
				break
			}
			if count > 1 {
				w.release(off)
			} // else the YAML fallback may need the spaces from consumed
			if err := w.more(); err != nil {
				return d.readErr(err)
			}
		}
		if off >= w.end() {
			return nil
		}
		n, end, errOff, err := decodeJSONValue(w.from(off), w.eof, big)
		if err == errShort {
			big = true
			w.release(consumed)
			if err := w.more(); err != nil {
				return d.readErr(err)
			}
			continue
		}
		if err != nil {
			jerr := d.errAt(off+errOff, err)
			if count > 1 {
				return jerr
			}
			// Upstream reads the rest as YAML. Should that fail at once,
			// the JSON error is what the author needs to see.
			return d.yamlStream(consumed, jerr)
		}
		line, col := w.lines.pos(off)
		if d.span != nil {
			d.span(off, off+end, false)
		}
		if err := d.fn(n, line, col); err != nil {
			return err
		}
		count++
		off += end
		consumed = off
		big = false
		w.release(consumed)
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// errShort means the window ends inside the value: read more and retry.
var errShort = errors.New("short")

// maxDepth is how deeply JSON and YAML values may nest: the limit of
// encoding/json and of the YAML parsers, which upstream's decoding runs
// into (and refuses with an error) too.
const maxDepth = 10000

// decodeJSONValue normalises the JSON value at the start of data. end is
// the offset just past it. Errors carry upstream's text, and errOff is the
// offset they point at. When the value might continue past data and final
// is false, the error is errShort. big says the value may fill data: its
// output buffer is then made that size at once (the blob keeps it) rather
// than grown.
func decodeJSONValue(data []byte, final, big bool) (n normalized, end, errOff int, err error) {
	p := fastParser{src: data}
	if data[0] == '{' {
		buf := scratchPool.Get().(*[]byte)
		out := (*buf)[:0]
		if big && cap(out) < len(data) && len(data) > maxPooledScratch {
			out = make([]byte, 0, len(data))
		}
		out, top, err := p.object(out, true)
		ok := false
		if err == nil {
			n, ok = metaFromMembers(out, top)
		}
		if ok {
			if cap(out) > maxPooledScratch && len(out) >= cap(out)-cap(out)/4 {
				// A large blob that (nearly) fills its buffer keeps it.
				n.blob, out = out[:len(out):len(out)], nil
			} else {
				// Built in a reused buffer, the blob is copied out once,
				// at its final size.
				n.blob = bytes.Clone(out)
			}
		}
		if out != nil && cap(out) <= maxPooledScratch {
			*buf = out[:0] // keep the grown buffer for the next blob
		}
		scratchPool.Put(buf)
		if ok {
			return n, p.i, 0, nil
		}
		if p.short && !final {
			return normalized{}, 0, 0, errShort
		}
	}
	// Slow path: encoding/json delimits the value (and words syntax
	// errors), upstream's Meta.UnmarshalJSON does the rest.
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if !final {
				return normalized{}, 0, 0, errShort
			}
			return normalized{}, 0, len(bytes.TrimRight(data, " \t\r\n")), io.ErrUnexpectedEOF
		}
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset > 0 {
			errOff = int(se.Offset) - 1
		}
		return normalized{}, 0, errOff, err
	}
	end = int(dec.InputOffset())
	if !final && end >= len(data) {
		// A number may go on past the window.
		return normalized{}, 0, 0, errShort
	}
	n, err = normalizeSlow(raw)
	return n, end, 0, err
}

// maxPooledScratch bounds the buffers kept for reuse.
const maxPooledScratch = 8 << 20

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// yamlStream decodes the stream from off as YAML documents. jsonErr, when
// set, is the error that sent a JSON stream here: it is returned instead of
// any error of the first document.
func (d *decoder) yamlStream(off int, jsonErr error) error {
	w := d.w
	first := true
	fail := func(err error) error {
		if first && jsonErr != nil {
			return jsonErr
		}
		return err
	}
	for {
		doc, adv, more, err := catalogSplitter.Split(w.from(off), w.eof)
		if err != nil {
			var se *yamlorjson.SeparatorError
			if errors.As(err, &se) {
				line, _ := w.lines.pos(off + se.Offset)
				return fail(&LoadError{Pos: Position{File: d.file, Line: line}, Err: err})
			}
			return fail(d.errAt(off, err))
		}
		if more {
			w.release(off)
			if err := w.more(); err != nil {
				return d.readErr(err)
			}
			continue
		}
		if doc.Data == nil {
			return nil
		}
		line, _ := w.lines.pos(off + doc.Start)
		n, err := decodeYAMLDoc(doc.Data)
		if err != nil {
			le := &LoadError{Pos: Position{File: d.file, Line: line}, Err: err}
			if yl, rest := yamlErrLine(err); yl > 0 {
				le.Pos.Line += yl - 1
				le.text = rest
			}
			return fail(le)
		}
		if d.span != nil {
			d.span(off+doc.Start, off+adv, true)
		}
		if err := d.fn(n, line, 1); err != nil {
			return fail(err)
		}
		first = false
		off += adv
		w.release(off)
	}
}

// decodeYAMLDoc converts one YAML document as sigs.k8s.io/yaml.Unmarshal
// into upstream's Meta does, with the same error wrapping: through the
// fast path (yamlfast.go) when the document is in its subset, else
// through decodeYAMLSlow.
func decodeYAMLDoc(doc []byte) (normalized, error) {
	if n, ok := decodeYAMLFast(doc); ok {
		return n, nil
	}
	return decodeYAMLSlow(doc)
}

// decodeYAMLSlow is upstream's conversion: sigs.k8s.io/yaml's YAMLToJSON
// (yaml.v2 into interface{}, then encoding/json), then Meta.UnmarshalJSON.
func decodeYAMLSlow(doc []byte) (normalized, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return normalized{}, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	if string(j) == "null" {
		// Decoding null into a Meta leaves it empty.
		return normalized{}, nil
	}
	n, err := normalizeValue(j)
	if err != nil {
		return normalized{}, fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)
	}
	return n, nil
}

var yamlLineRE = regexp.MustCompile(`^(.*yaml: )line (\d+): `)

// yamlErrLine extracts the document-relative line of a yaml.v2 error, and
// returns the error's text without it (the position gives the file's line).
func yamlErrLine(err error) (int, string) {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatchIndex(msg)
	if m == nil {
		return 0, ""
	}
	n, _ := strconv.Atoi(msg[m[4]:m[5]])
	return n, msg[m[2]:m[3]] + msg[m[1]:]
}

// window holds the part of a stream being decoded: buf holds the bytes at
// absolute offsets [base, base+len(buf)).
type window struct {
	r     io.Reader
	buf   []byte
	base  int
	keep  int // bytes before this absolute offset may be dropped
	eof   bool
	limit int64 // most bytes held at once, when positive
	size  int64 // the stream's size when known, or -1
	lines lineIndex
}

// from returns the bytes from absolute offset off to the end of the window.
func (w *window) from(off int) []byte { return w.buf[off-w.base:] }

// end is the absolute offset just past the window.
func (w *window) end() int { return w.base + len(w.buf) }

// release lets the window drop the bytes before absolute offset off.
func (w *window) release(off int) {
	if off > w.keep {
		w.keep = off
	}
}

// more reads more of the stream: it drops released bytes, grows the buffer
// if it is still full, and reads until the buffer is full or the stream
// ends.
func (w *window) more() error {
	if w.eof {
		return nil
	}
	full := cap(w.buf)
	if w.limit > 0 && int64(full) > w.limit+1 {
		full = int(w.limit) + 1
	}
	if drop := w.keep - w.base; drop > 0 && len(w.buf) >= full {
		w.lines.advance(w.keep)
		n := copy(w.buf, w.buf[drop:])
		w.buf = w.buf[:n]
		w.base = w.keep
	}
	if len(w.buf) >= full {
		// One value or document fills the window: grow it, to the rest of
		// the file at once when its size is known (a value that large is
		// read whole, and parsed once).
		full = max(2*len(w.buf), windowSize)
		if w.size >= 0 {
			if rest := w.size - int64(w.base) + 1; rest > int64(len(w.buf)) && rest < 1<<40 {
				full = int(rest)
			}
		}
		if w.limit > 0 && int64(full) > w.limit+1 {
			if int64(len(w.buf)) > w.limit {
				return &safefs.TooLargeError{Size: -1, Limit: w.limit, Document: true}
			}
			full = int(w.limit) + 1
		}
		if full > cap(w.buf) {
			grown := make([]byte, len(w.buf), full)
			copy(grown, w.buf)
			w.buf = grown
		}
	}
	for len(w.buf) < full {
		n, err := w.r.Read(w.buf[len(w.buf):full])
		w.buf = w.buf[:len(w.buf)+n]
		if err == io.EOF {
			w.eof = true
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lineIndex maps absolute offsets of a window to 1-based lines and
// columns, lazily. Offsets asked for must not be before the window.
type lineIndex struct {
	w         *window
	baseLine  int   // line at the window's start, minus 1
	lineStart int   // absolute offset where the line holding the window's start begins
	starts    []int // absolute offsets of the line starts after the window's start, scanned so far
	upto      int   // absolute offset scanned up to
}

func (l *lineIndex) scan(off int) {
	if off > l.w.end() {
		off = l.w.end()
	}
	for l.upto < off {
		b := l.w.buf[l.upto-l.w.base : off-l.w.base]
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.upto = off
			break
		}
		l.upto += i + 1
		l.starts = append(l.starts, l.upto)
	}
}

func (l *lineIndex) pos(off int) (line, col int) {
	l.scan(off)
	// The last line start <= off.
	lo, hi := 0, len(l.starts)
	for lo < hi {
		mid := (lo + hi) / 2
		if l.starts[mid] <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return l.baseLine + 1, off - l.lineStart + 1
	}
	return l.baseLine + lo + 1, off - l.starts[lo-1] + 1
}

// advance forgets the lines before absolute offset off, the window's new
// start.
func (l *lineIndex) advance(off int) {
	l.scan(off)
	k := 0
	for k < len(l.starts) && l.starts[k] <= off {
		k++
	}
	if k > 0 {
		l.baseLine += k
		l.lineStart = l.starts[k-1]
		l.starts = append(l.starts[:0], l.starts[k:]...)
	}
}
