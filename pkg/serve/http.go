package serve

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"
)

// catalogd's HTTP API (OLM v1).
//
// catalogd stores every blob of a catalog as one line of normalised JSON
// (catalog.jsonl, in walk order) and an index from each schema, package and
// name to the lines that carry it, and serves /api/v1/all (the whole file)
// and /api/v1/metas?schema=&package=&name= (the matching lines, in catalog
// order), wrapped in gzhttp's compression. The index here is the same, and
// the lines live in the data file.

// httpIndex locates the JSON lines in the data file. Each file's lines are
// one section of the data file (segs, in file order); spans in the maps
// are offsets in the virtual concatenation of those sections, i.e. in
// catalogd's catalog.jsonl.
type httpIndex struct {
	segs    []segment
	size    int64 // of the concatenation
	schema  map[string][]span
	pkg     map[string][]span
	name    map[string][]span
	modTime time.Time
}

// segment maps the virtual range [virt, virt+Len) to the data file's
// [Off, Off+Len).
type segment struct {
	span
	virt int64
}

// newHTTPIndex assembles the HTTP index from the parsed files, in order.
func newHTTPIndex(results []fileResult) *httpIndex {
	h := &httpIndex{schema: map[string][]span{}, pkg: map[string][]span{}, name: map[string][]span{}, modTime: time.Now()}
	for _, r := range results {
		if r.linesAt.Len == 0 {
			continue
		}
		base := h.size
		h.segs = append(h.segs, segment{span: r.linesAt, virt: base})
		h.size += r.linesAt.Len
		for _, l := range r.lines {
			s := span{Off: base + l.at.Off, Len: l.at.Len}
			h.schema[l.schema] = append(h.schema[l.schema], s)
			if l.pkg != "" {
				h.pkg[l.pkg] = append(h.pkg[l.pkg], s)
			}
			if l.name != "" {
				h.name[l.name] = append(h.name[l.name], s)
			}
		}
	}
	return h
}

// catalogReader reads the virtual catalog.jsonl.
type catalogReader struct {
	data io.ReaderAt
	h    *httpIndex
	off  int64
}

func (c *catalogReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for len(p) > 0 {
		if off >= c.h.size {
			return n, io.EOF
		}
		i := sort.Search(len(c.h.segs), func(i int) bool { return c.h.segs[i].virt+c.h.segs[i].Len > off })
		seg := c.h.segs[i]
		within := off - seg.virt
		chunk := p[:min(int64(len(p)), seg.Len-within)]
		m, err := c.data.ReadAt(chunk, seg.Off+within)
		n += m
		off += int64(m)
		p = p[m:]
		if err != nil && !(err == io.EOF && m == len(chunk)) {
			return n, err
		}
	}
	return n, nil
}

func (c *catalogReader) Read(p []byte) (int, error) {
	n, err := c.ReadAt(p, c.off)
	c.off += int64(n)
	return n, err
}

func (c *catalogReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += c.off
	case io.SeekEnd:
		offset += c.h.size
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative position")
	}
	c.off = offset
	return offset, nil
}

// Limits of the HTTP API's server (NewHTTPServer).
const (
	// HTTPReadHeaderTimeout bounds the time a client takes to send a
	// request's headers (a new connection's first request included).
	HTTPReadHeaderTimeout = 10 * time.Second
	// HTTPIdleTimeout closes a keep-alive connection that has had no
	// request for that long.
	HTTPIdleTimeout = 2 * time.Minute
	// HTTPMaxHeaderBytes bounds a request's header block (net/http's
	// default is 1 MiB).
	HTTPMaxHeaderBytes = 64 << 10
)

// NewHTTPServer returns the server of the HTTP API over x (see
// HTTPHandler), with the limits above. l, when not nil, is the capped
// listener it will serve: it is told which connections are idle.
func NewHTTPServer(x *Index, l *CapListener) *http.Server {
	srv := &http.Server{
		Handler:           x.HTTPHandler(),
		ReadHeaderTimeout: HTTPReadHeaderTimeout,
		IdleTimeout:       HTTPIdleTimeout,
		MaxHeaderBytes:    HTTPMaxHeaderBytes,
	}
	if l != nil {
		srv.ConnState = l.ConnState
	}
	return srv
}

// HasHTTP reports whether the index holds the HTTP API's data.
func (x *Index) HasHTTP() bool { return x.http != nil }

// HTTPHandler returns catalogd's HTTP API over the index: GET and HEAD of
// /api/v1/all and /api/v1/metas, compressed as catalogd compresses. It
// returns nil when the index was built without HTTP data.
func (x *Index) HTTPHandler() http.Handler {
	if x.http == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/all", x.serveAll)
	mux.HandleFunc("/api/v1/metas", x.serveMetas)
	return gzhttp.GzipHandler(mux)
}

func allowed(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	return false
}

// catalog returns a reader of the whole catalog.jsonl.
func (x *Index) catalog() *catalogReader { return &catalogReader{data: x.data, h: x.http} }

// line returns a reader of the lines at the virtual span s.
func (x *Index) line(s span) *io.SectionReader {
	return io.NewSectionReader(x.catalog(), s.Off, s.Len)
}

func (x *Index) serveAll(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/jsonl")
	http.ServeContent(w, r, "", x.http.modTime, x.catalog())
}

func (x *Index) serveMetas(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "400 Bad Request", http.StatusBadRequest)
		return
	}
	for k := range q {
		if k != "schema" && k != "package" && k != "name" {
			http.Error(w, "400 Bad Request", http.StatusBadRequest)
			return
		}
	}
	h := x.http
	w.Header().Set("Last-Modified", h.modTime.UTC().Format(http.TimeFormat))
	if done := checkPreconditions(w, r, h.modTime); done {
		return
	}
	w.Header().Set("Content-Type", "application/jsonl")
	schema, pkg, name := q.Get("schema"), q.Get("package"), q.Get("name")
	if schema == "" && pkg == "" && name == "" {
		if r.Method == http.MethodHead {
			return
		}
		_, _ = io.Copy(w, x.catalog())
		return
	}
	var sets [][]span
	if schema != "" {
		sets = append(sets, h.schema[schema])
	}
	if pkg != "" {
		sets = append(sets, h.pkg[pkg])
	}
	if name != "" {
		sets = append(sets, h.name[name])
	}
	if r.Method == http.MethodHead {
		return
	}
	for _, s := range intersect(sets) {
		if _, err := io.Copy(w, x.line(s)); err != nil {
			return
		}
	}
}

// intersect returns the spans present in every set (each sorted by offset),
// in offset order.
func intersect(sets [][]span) []span {
	if len(sets) == 0 {
		return nil
	}
	slices.SortFunc(sets, func(a, b []span) int { return len(a) - len(b) })
	out := slices.Clone(sets[0])
	for _, set := range sets[1:] {
		kept := out[:0]
		for _, s := range out {
			if _, ok := slices.BinarySearchFunc(set, s.Off, func(e span, off int64) int {
				switch {
				case e.Off < off:
					return -1
				case e.Off > off:
					return 1
				}
				return 0
			}); ok {
				kept = append(kept, s)
			}
		}
		out = kept
	}
	return out
}

// checkPreconditions evaluates the conditional request headers against
// modTime as net/http's ServeContent does (there is no ETag), writing the
// 304 or 412 answer when one applies. It reports whether it answered.
func checkPreconditions(w http.ResponseWriter, r *http.Request, modTime time.Time) bool {
	// If-Match: no ETag can match anything but "*".
	if im := r.Header.Get("If-Match"); im != "" {
		if strings.TrimSpace(im) != "*" {
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}
	} else if ius := r.Header.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && modTime.Truncate(time.Second).After(t) {
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if strings.TrimSpace(inm) == "*" {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				writeNotModified(w)
				return true
			}
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false
	}
	if !modTime.Truncate(time.Second).After(t) {
		writeNotModified(w)
		return true
	}
	return false
}

func writeNotModified(w http.ResponseWriter) {
	h := w.Header()
	delete(h, "Content-Type")
	delete(h, "Content-Length")
	delete(h, "Content-Encoding")
	w.WriteHeader(http.StatusNotModified)
}
