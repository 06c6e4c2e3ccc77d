package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/declcfg"
)

// expectedLines is catalogd's catalog.jsonl for fsys: every blob of every
// loaded file, in lexical file order.
func expectedLines(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".indexignore") {
			continue
		}
		err := declcfg.WalkFile(files[n], n, func(b declcfg.Blob) error {
			out = append(out, string(b.Meta.Blob)+"\n")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type httpCase struct {
	t      *testing.T
	url    string
	client *http.Client
}

func (h httpCase) do(method, path string, hdr ...string) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, string(body)
}

func TestHTTPAPI(t *testing.T) {
	fsys := testCatalog()
	x := buildTest(t, fsys, true)
	srv := httptest.NewServer(x.HTTPHandler())
	defer srv.Close()
	h := httpCase{t: t, url: srv.URL, client: &http.Client{Transport: &http.Transport{DisableCompression: true}}}
	files := map[string][]byte{}
	for n, f := range fsys {
		files[n] = f.Data
	}
	lines := expectedLines(t, files)
	all := strings.Join(lines, "")

	resp, body := h.do("GET", "/api/v1/all")
	if resp.StatusCode != 200 || body != all {
		t.Fatalf("GET /api/v1/all: %d\n%s\nwant\n%s", resp.StatusCode, body, all)
	}
	for k, want := range map[string]string{"Content-Type": "application/jsonl", "Accept-Ranges": "bytes", "Vary": "Accept-Encoding"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if resp.Header.Get("Last-Modified") == "" || resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") != "" {
		t.Errorf("caching headers: %v", resp.Header)
	}
	lastMod := resp.Header.Get("Last-Modified")

	resp, body = h.do("HEAD", "/api/v1/all")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != int64(len(all)) {
		t.Errorf("HEAD: %d %q %d", resp.StatusCode, body, resp.ContentLength)
	}
	resp, body = h.do("GET", "/api/v1/all", "Range", "bytes=0-9")
	if resp.StatusCode != http.StatusPartialContent || body != all[:10] {
		t.Errorf("Range: %d %q", resp.StatusCode, body)
	}
	resp, _ = h.do("GET", "/api/v1/all", "If-Modified-Since", lastMod)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d", resp.StatusCode)
	}
	resp, _ = h.do("GET", "/api/v1/all", "If-Match", `"x"`)
	if resp.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("If-Match: %d", resp.StatusCode)
	}

	resp, body = h.do("GET", "/api/v1/all", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(strings.NewReader(body)); err != nil {
		t.Error(err)
	} else if plain, _ := io.ReadAll(zr); string(plain) != all {
		t.Error("gzip body differs")
	}
	resp, _ = h.do("GET", "/api/v1/all", "Accept-Encoding", "gzip, zstd")
	if resp.Header.Get("Content-Encoding") != "zstd" {
		t.Errorf("zstd preferred: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}

	// filter keeps the lines whose top-level keys have the given values.
	filter := func(kv ...string) string {
		var b strings.Builder
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			keep := true
			for i := 0; i < len(kv); i += 2 {
				if m[kv[i]] != kv[i+1] {
					keep = false
				}
			}
			if keep {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	for q, want := range map[string]string{
		"":                                     all,
		"?package=foo":                         filter("package", "foo"),
		"?schema=olm.package&name=foo":         filter("schema", "olm.package", "name", "foo"),
		"?schema=olm.bundle&package=bar":       filter("schema", "olm.bundle", "package", "bar"),
		"?schema=example.custom":               filter("schema", "example.custom"),
		"?schema=nope":                         "",
		"?schema=olm.bundle&schema=nope":       filter("schema", "olm.bundle"),
		"?name=foo.v1.1.0&package=foo&schema=": filter("name", "foo.v1.1.0", "package", "foo"),
	} {
		resp, body := h.do("GET", "/api/v1/metas"+q)
		if resp.StatusCode != 200 || body != want {
			t.Errorf("metas%s: %d\n%s\nwant\n%s", q, resp.StatusCode, body, want)
		}
		if resp.Header.Get("Content-Type") != "application/jsonl" || resp.Header.Get("Last-Modified") == "" {
			t.Errorf("metas%s headers: %v", q, resp.Header)
		}
	}
	resp, _ = h.do("GET", "/api/v1/metas?package=foo", "If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("metas If-Modified-Since: %d", resp.StatusCode)
	}
	resp, body = h.do("HEAD", "/api/v1/metas?package=foo")
	if resp.StatusCode != 200 || body != "" {
		t.Errorf("metas HEAD: %d %q", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/api/v1/metas?bogus=1", 400, "400 Bad Request\n"},
		{"POST", "/api/v1/all", 405, "Method Not Allowed\n"},
		{"DELETE", "/api/v1/metas", 405, "Method Not Allowed\n"},
		{"GET", "/", 404, "404 page not found\n"},
		{"GET", "/api/v1", 404, "404 page not found\n"},
		{"GET", "/api/v1/graphql", 404, "404 page not found\n"},
	} {
		resp, body := h.do(tc.method, tc.path)
		if resp.StatusCode != tc.code || body != tc.body || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s %s: %d %q (Vary %q), want %d %q", tc.method, tc.path, resp.StatusCode, body, resp.Header.Get("Vary"), tc.code, tc.body)
		}
		if tc.code == 405 && resp.Header.Get("Allow") != "" {
			t.Errorf("%s %s: Allow header %q", tc.method, tc.path, resp.Header.Get("Allow"))
		}
	}
}

func TestHTTPNotBuilt(t *testing.T) {
	if h := buildTest(t, testCatalog(), false).HTTPHandler(); h != nil {
		t.Error("an index without HTTP data has a handler")
	}
}

func TestCatalogReaderSegments(t *testing.T) {
	data := []byte("xxAAAyyBBBBzz")
	h := &httpIndex{segs: []segment{{span{2, 3}, 0}, {span{7, 4}, 3}}, size: 7}
	r := &catalogReader{data: bytes.NewReader(data), h: h}
	all, err := io.ReadAll(r)
	if err != nil || string(all) != "AAABBBB" {
		t.Fatalf("%q %v", all, err)
	}
	buf := make([]byte, 3)
	if n, err := r.ReadAt(buf, 2); n != 3 || string(buf) != "ABB" || err != nil {
		t.Errorf("ReadAt across segments: %d %q %v", n, buf, err)
	}
	if n, err := r.ReadAt(buf, 6); n != 1 || err != io.EOF {
		t.Errorf("ReadAt at the end: %d %v", n, err)
	}
}
