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
	"unicode"

	"sigs.k8s.io/yaml"
)

// Stream decoding.
//
// Every catalog file is decoded the way upstream's k8s YAMLOrJSONDecoder
// does it: if the first non-space byte of the first 4096 is '{' the file
// is a stream of concatenated JSON values; should the first or second value
// fail, the rest of the file (from the end of the last good value) is read
// as YAML instead. Otherwise the file is YAML, split on lines starting with
// "---". Each document becomes one normalised blob.

const jsonSniffLen = 4096

// docFunc receives each decoded blob with the 1-based line and column
// where it starts.
type docFunc func(n normalized, line, col int) error

// decodeStream decodes data, calling fn for each blob. Errors are
// *LoadError positioned in file.
func decodeStream(data []byte, file string, fn docFunc) error {
	lines := newLineIndex(data)
	if looksLikeJSON(data) {
		rest, err := decodeJSONStream(data, file, lines, fn)
		if err != nil || rest < 0 {
			return err
		}
		return decodeYAMLStream(data, rest, file, lines, fn)
	}
	return decodeYAMLStream(data, 0, file, lines, fn)
}

func looksLikeJSON(data []byte) bool {
	head := data
	if len(head) > jsonSniffLen {
		head = head[:jsonSniffLen]
	}
	return bytes.HasPrefix(bytes.TrimLeftFunc(head, unicode.IsSpace), []byte("{"))
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// decodeJSONStream decodes concatenated JSON values. It returns the offset
// from which the file must be read as YAML instead, or -1 when done.
func decodeJSONStream(data []byte, file string, lines *lineIndex, fn docFunc) (int, error) {
	count := 0
	consumed := 0 // end of the last value decoded
	off := 0
	for {
		for off < len(data) && isJSONSpace(data[off]) {
			off++
		}
		if off >= len(data) {
			return -1, nil
		}
		n, end, err := decodeJSONValue(data, off)
		if err != nil {
			if count > 1 {
				errOff := off
				var se *json.SyntaxError
				if errors.As(err, &se) && se.Offset > 0 {
					errOff = off + int(se.Offset) - 1
				}
				line, col := lines.pos(errOff)
				return -1, &LoadError{Pos: Position{File: file, Line: line, Column: col}, Err: err}
			}
			return consumed, nil
		}
		line, col := lines.pos(off)
		if err := fn(n, line, col); err != nil {
			return -1, err
		}
		count++
		consumed = end
		off = end
	}
}

// decodeJSONValue normalises the JSON value starting at data[off]; end is
// the offset just past it. Errors carry upstream's text.
func decodeJSONValue(data []byte, off int) (normalized, int, error) {
	p := fastParser{src: data, i: off}
	if data[off] == '{' {
		buf := scratchPool.Get().(*[]byte)
		out, top, err := p.object((*buf)[:0], true)
		if cap(out) <= maxPooledScratch {
			*buf = out[:0] // keep the grown buffer for the next blob
		}
		var n normalized
		ok := false
		if err == nil {
			// Built in a reused buffer, the blob is copied out once, at its
			// final size.
			n, ok = metaFromMembers(bytes.Clone(out), top)
		}
		scratchPool.Put(buf)
		if ok {
			return n, p.i, nil
		}
	}
	// Slow path: encoding/json delimits the value (and words syntax
	// errors), upstream's Meta.UnmarshalJSON does the rest.
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return normalized{}, 0, err
	}
	end := off + int(dec.InputOffset())
	n, err := normalizeSlow(raw)
	return n, end, err
}

// maxPooledScratch bounds the buffers kept for reuse.
const maxPooledScratch = 8 << 20

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// decodeYAMLStream decodes data[from:] as YAML documents.
func decodeYAMLStream(data []byte, from int, file string, lines *lineIndex, fn docFunc) error {
	r := yamlDocReader{data: data, off: from}
	for {
		doc, start, err := r.next()
		if err != nil {
			line, _ := lines.pos(start)
			return &LoadError{Pos: Position{File: file, Line: line}, Err: err}
		}
		if doc == nil {
			return nil
		}
		line, _ := lines.pos(start)
		n, err := decodeYAMLDoc(doc)
		if err != nil {
			if yl := yamlErrLine(err); yl > 0 {
				line += yl - 1
			}
			return &LoadError{Pos: Position{File: file, Line: line}, Err: err}
		}
		if err := fn(n, line, 1); err != nil {
			return err
		}
	}
}

// decodeYAMLDoc converts one YAML document as sigs.k8s.io/yaml.Unmarshal
// into upstream's Meta does, with the same error wrapping.
func decodeYAMLDoc(doc []byte) (normalized, error) {
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

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+):`)

// yamlErrLine extracts the document-relative line of a yaml.v2 error.
func yamlErrLine(err error) int {
	var target error = err
	for u := errors.Unwrap(target); u != nil; u = errors.Unwrap(target) {
		target = u
	}
	m := yamlLineRE.FindStringSubmatch(target.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// yamlDocReader splits YAML documents exactly as k8s' YAMLReader over a
// LineReader: lines lose their "\r\n"/"\n" and gain "\n"; a line starting
// with "---" ends a document and may be followed only by a comment.
type yamlDocReader struct {
	data []byte
	off  int
}

// next returns the next non-empty document and the offset of its first
// line, or nil at the end.
func (r *yamlDocReader) next() ([]byte, int, error) {
	var buf []byte
	docStart := -1
	for r.off < len(r.data) {
		lineStart := r.off
		nl := bytes.IndexByte(r.data[r.off:], '\n')
		var line []byte
		if nl < 0 {
			line = r.data[r.off:]
			r.off = len(r.data)
		} else {
			line = r.data[r.off : r.off+nl]
			r.off += nl + 1
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := bytes.TrimSpace(line[3:])
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, lineStart, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if len(buf) > 0 {
				return buf, docStart, nil
			}
			continue
		}
		if docStart < 0 {
			docStart = lineStart
		}
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	if len(buf) > 0 {
		return buf, docStart, nil
	}
	return nil, 0, nil
}

// lineIndex maps byte offsets to 1-based line and column, lazily.
type lineIndex struct {
	data   []byte
	starts []int // offsets of line starts scanned so far
	upto   int   // data[:upto] has been scanned
}

func newLineIndex(data []byte) *lineIndex {
	return &lineIndex{data: data, starts: []int{0}}
}

func (l *lineIndex) pos(off int) (line, col int) {
	if off > len(l.data) {
		off = len(l.data)
	}
	for l.upto < off {
		i := bytes.IndexByte(l.data[l.upto:off], '\n')
		if i < 0 {
			l.upto = off
			break
		}
		l.upto += i + 1
		l.starts = append(l.starts, l.upto)
	}
	// binary search the last start <= off
	lo, hi := 0, len(l.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1, off - l.starts[lo] + 1
}
