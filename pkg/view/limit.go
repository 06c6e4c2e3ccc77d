package view

import (
	"bytes"
	"container/list"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Whoever can reach the server can ask it for work: every page is
// computed from the catalogs, which never change while it runs. So each
// answer is computed once and kept (a cache bounded in bytes), at most a
// few are computed at once (the others wait a bounded time, then get 503
// with Retry-After), queries are bounded in size, and a computation whose
// client has gone stops and is not kept.

// Limits on queries.
const (
	// maxRawQuery bounds a page's query string (the path form's fields
	// and the graph's options fit in far less).
	maxRawQuery = 4 << 10
	// maxSearch bounds the catalog page's search text.
	maxSearch = 256
)

// Defaults of the work limits.
const (
	defaultCacheBytes = 64 << 20
	// maxCachedAnswer is the largest answer kept; larger ones (a graph of
	// 1,000 nodes is about 400 KB) are computed again.
	maxCachedAnswer = 8 << 20
	defaultBusyWait = 10 * time.Second
	retryAfter      = "2"
)

// queryKeys are the query parameters some page reads; the others are
// dropped before a page sees the query, so they neither change an answer
// nor make a new one to compute.
var queryKeys = []string{"q", "semantics", "page", "limit", "cluster-version", "channel", "from", "from-bundle", "to", "version"}

// canonical returns r with only the known query parameters, in a fixed
// order, and the cache key of its answer; or an error for a query over
// the limits.
func canonical(r *http.Request) (*http.Request, string, error) {
	if len(r.URL.RawQuery) > maxRawQuery {
		return nil, "", &httpError{http.StatusRequestURITooLong, fmt.Sprintf("query of %d bytes: at most %d are read", len(r.URL.RawQuery), maxRawQuery)}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, "", &httpError{http.StatusBadRequest, "malformed query: " + err.Error()}
	}
	keep := url.Values{}
	for _, k := range queryKeys {
		if vs, ok := q[k]; ok {
			keep[k] = vs
		}
	}
	if s := keep.Get("q"); len(s) > maxSearch {
		return nil, "", &httpError{http.StatusBadRequest, fmt.Sprintf("search text of %d bytes: at most %d", len(s), maxSearch)}
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = keep.Encode()
	return r2, r.URL.EscapedPath() + "?" + r2.URL.RawQuery, nil
}

// answer is a computed response.
type answer struct {
	key    string
	status int
	header http.Header
	body   []byte
}

func (a *answer) write(w http.ResponseWriter) {
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// recorder captures what a page handler writes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

// answerCache keeps answers, least recently used out first, up to max
// bytes of bodies.
type answerCache struct {
	mu    sync.Mutex
	max   int
	bytes int
	order *list.List // of *answer, most recent first
	byKey map[string]*list.Element
}

func newAnswerCache(max int) *answerCache {
	return &answerCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *answerCache) get(key string) *answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byKey[key]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*answer)
}

func (c *answerCache) put(a *answer) {
	if len(a.body) > maxCachedAnswer || len(a.body) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[a.key]; ok {
		return
	}
	c.byKey[a.key] = c.order.PushFront(a)
	c.bytes += len(a.body)
	for c.bytes > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		oa := old.Value.(*answer)
		delete(c.byKey, oa.key)
		c.bytes -= len(oa.body)
	}
}

// work limits the computations running at once.
type work struct {
	slots chan struct{}
	wait  time.Duration
	// computed counts the answers computed (not taken from the cache).
	computed atomic.Int64
}

func newWork(n int, wait time.Duration) *work {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if wait <= 0 {
		wait = defaultBusyWait
	}
	return &work{slots: make(chan struct{}, n), wait: wait}
}

// acquire waits for a slot, at most w.wait and no longer than the
// request lives.
func (w *work) acquire(r *http.Request) bool {
	select {
	case w.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(w.wait)
	defer t.Stop()
	select {
	case w.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-r.Context().Done():
	}
	return false
}

func (w *work) release() { <-w.slots }

// computed wraps a page handler: the answer from the cache, or computed
// in a slot, kept, and written; nothing at all when the client left
// before it was done.
func (s *Server) computed(h func(http.ResponseWriter, *http.Request), errorOut func(http.ResponseWriter, *http.Request, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Err() != nil {
			return
		}
		r2, key, err := canonical(r)
		if err != nil {
			errorOut(w, r, err)
			return
		}
		if a := s.cache.get(key); a != nil {
			a.write(w)
			return
		}
		if !s.work.acquire(r) {
			if r.Context().Err() != nil {
				return
			}
			w.Header().Set("Retry-After", retryAfter)
			errorOut(w, r, &httpError{http.StatusServiceUnavailable, "busy: other pages are being computed; try again in a moment"})
			return
		}
		defer s.work.release()
		if a := s.cache.get(key); a != nil {
			a.write(w)
			return
		}
		rec := &recorder{header: http.Header{}}
		h(rec, r2)
		if r.Context().Err() != nil {
			return // the client left: what was computed may be partial
		}
		s.work.computed.Add(1)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		a := &answer{key: key, status: rec.status, header: rec.header, body: rec.body.Bytes()}
		if a.status != http.StatusServiceUnavailable {
			s.cache.put(a)
		}
		a.write(w)
	}
}
