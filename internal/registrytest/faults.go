package registrytest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Faults for [Server.Fault]: registries that misbehave on purpose. Each
// counts the bytes it sends in *sent (when not nil), so that a test can
// check how much the client read.

// isBlobGet reports whether r fetches a blob (digest "" = any blob).
func isBlobGet(r *http.Request, digest string) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") &&
		(digest == "" || strings.HasSuffix(r.URL.Path, "/"+digest))
}

// isManifestGet reports whether r fetches a manifest.
func isManifestGet(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/")
}

// stream writes chunk to w until n bytes are sent (n < 0: until the client
// goes away), flushing each time.
func stream(w http.ResponseWriter, r *http.Request, chunk []byte, n int64, sent *atomic.Int64) {
	f, _ := w.(http.Flusher)
	for n < 0 || n > 0 {
		c := chunk
		if n >= 0 && int64(len(c)) > n {
			c = c[:n]
		}
		k, err := w.Write(c)
		if sent != nil {
			sent.Add(int64(k))
		}
		if n >= 0 {
			n -= int64(k)
		}
		if err != nil || r.Context().Err() != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// EndlessBlob answers GETs of blob digest ("" = every layer blob: a body
// that is not an image config) with bytes that never end and no
// Content-Length.
func EndlessBlob(digest string, next http.Handler, sent *atomic.Int64) func(http.ResponseWriter, *http.Request) bool {
	chunk := bytes.Repeat([]byte("endless "), 4096)
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !isBlobGet(r, digest) {
			return false
		}
		if digest == "" && next != nil {
			// Pass configs through: only layers are endless.
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if bytes.Contains(rec.Body.Bytes(), []byte(`"rootfs"`)) {
				copyResponse(w, rec)
				return true
			}
		}
		w.WriteHeader(http.StatusOK)
		stream(w, r, chunk, -1, sent)
		return true
	}
}

// HugeManifest answers manifest GETs with an OCI manifest padded to n
// bytes with spaces (declared in Content-Length), or, for n < 0, one that
// never ends (no Content-Length).
func HugeManifest(n int64, sent *atomic.Int64) func(http.ResponseWriter, *http.Request) bool {
	head := []byte(`{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json"`)
	pad := bytes.Repeat([]byte(" "), 32<<10)
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !isManifestGet(r) {
			return false
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		if n >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		w.WriteHeader(http.StatusOK)
		k, _ := w.Write(head)
		if sent != nil {
			sent.Add(int64(k))
		}
		if n < 0 {
			stream(w, r, pad, -1, sent)
			return true
		}
		stream(w, r, pad, n-int64(len(head)), sent)
		return true
	}
}

// SlowBlobs delays every blob GET by d (to make concurrent fetches
// overlap), then lets the registry answer.
func SlowBlobs(d time.Duration) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if isBlobGet(r, "") {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
			}
		}
		return false
	}
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// RedirectLoop answers the requests match selects with a redirect to the
// same URL (302, or 307 for a request with a body, so that it is sent
// again), forever, counting them in *n (when not nil).
func RedirectLoop(match func(*http.Request) bool, n *atomic.Int64) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if !match(r) {
			return false
		}
		if n != nil {
			n.Add(1)
		}
		code := http.StatusFound
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, r.URL.String(), code)
		return true
	}
}

// IsBlobGet reports whether r fetches a blob (any blob).
func IsBlobGet(r *http.Request) bool { return isBlobGet(r, "") }

// IsManifestGet reports whether r fetches a manifest.
func IsManifestGet(r *http.Request) bool { return isManifestGet(r) }
