package view

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// exampleServer serves the repository's example catalog.
func exampleServer(t *testing.T) *Server {
	t.Helper()
	cfg, err := declcfg.LoadDir(context.Background(), "../../examples/catalog")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Catalogs: []*Catalog{NewCatalog("examples/catalog", cfg, g)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(s *Server, ctx context.Context, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil))
	return rec
}

// TestAnswersComputedOnce: the same page asked again, with parameters no
// page reads or in another order, is answered from the cache, byte for
// byte.
func TestAnswersComputedOnce(t *testing.T) {
	s := exampleServer(t)
	ctx := context.Background()
	paths := []string{
		"/api/packages/cache-operator/graph?channel=fast&semantics=v1",
		"/packages/cache-operator/channels/fast?semantics=v1",
		"/?q=cache",
	}
	first := map[string]string{}
	for i := 0; i < 200; i++ {
		for _, p := range paths {
			q := p
			if i%2 == 1 {
				q += "&junk=" + strings.Repeat("x", i) // a parameter no page reads
			}
			rec := serve(s, ctx, q)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", q, rec.Code, rec.Body)
			}
			if f, ok := first[p]; !ok {
				first[p] = rec.Body.String()
			} else if rec.Body.String() != f {
				t.Fatalf("GET %s: another answer than the first time", q)
			}
		}
	}
	if n := s.work.computed.Load(); n != int64(len(paths)) {
		t.Errorf("%d answers computed for %d distinct pages asked 200 times each", n, len(paths))
	}
}

// TestBusy: with every slot taken, a page that is not cached waits a
// bounded time, then gets 503 with Retry-After; a cached one is served.
func TestBusy(t *testing.T) {
	s := exampleServer(t)
	ctx := context.Background()
	serve(s, ctx, "/api/packages/cache-operator") // cached
	s.work = newWork(1, 50*time.Millisecond)
	if !s.work.acquire(httptest.NewRequest(http.MethodGet, "/", nil)) {
		t.Fatal("no slot")
	}
	for _, p := range []string{"/api/packages/cache-operator/channels/fast", "/packages/cache-operator/channels/fast"} {
		start := time.Now()
		rec := serve(s, ctx, p)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Errorf("GET %s while busy: %d, Retry-After %q; want 503 with Retry-After", p, rec.Code, rec.Header().Get("Retry-After"))
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("GET %s while busy took %s", p, d)
		}
	}
	if rec := serve(s, ctx, "/api/packages/cache-operator"); rec.Code != http.StatusOK {
		t.Errorf("a cached page while busy: %d", rec.Code)
	}
	s.work.release()
	if rec := serve(s, ctx, "/api/packages/cache-operator/channels/fast"); rec.Code != http.StatusOK {
		t.Errorf("after the slot is free: %d", rec.Code)
	}
	// The 503 was not kept.
	if rec := serve(s, ctx, "/packages/cache-operator/channels/fast"); rec.Code != http.StatusOK {
		t.Errorf("after the slot is free: %d", rec.Code)
	}
}

// TestClientGone: a request whose client has left gets nothing computed
// or kept.
func TestClientGone(t *testing.T) {
	s := exampleServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []string{"/api/packages/cache-operator/graph", "/packages/cache-operator/path?from=1.0.0", "/?q=cache"} {
		if rec := serve(s, ctx, p); rec.Body.Len() != 0 {
			t.Errorf("GET %s for a client that left: %d bytes written", p, rec.Body.Len())
		}
	}
	if n := s.work.computed.Load(); n != 0 {
		t.Errorf("%d answers computed for clients that left", n)
	}
	if rec := serve(s, context.Background(), "/api/packages/cache-operator/graph"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"nodes"`) {
		t.Errorf("the graph asked again: %d %s", rec.Code, rec.Body)
	}
}
