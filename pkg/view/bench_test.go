package view_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkPages measures the server's side of the pages on the hostile
// catalog: the first page of the 10,000-entry channel (HTML and JSON),
// its package page and a path across it.
func BenchmarkPages(b *testing.B) {
	s := newServer(b, nil, writeHostileB(b))
	for _, path := range []string{
		"/packages/big/channels/stable",
		"/api/packages/big/channels/stable",
		"/api/packages/big",
		"/api/packages/big/path?from=1.0.0&to=1.9999.0",
		"/",
	} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", path, rec.Code)
				}
				_, _ = io.Copy(io.Discard, rec.Body)
			}
		})
	}
}
