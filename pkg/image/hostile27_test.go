package image_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

// TestRedirectCap (issue 27, item 3): a registry that answers with a
// redirect to the same URL, forever. go-containerregistry's clients check
// redirects for SSRF but have no cap of their own, so every client of a
// session goes through the session's transport, which stops after
// image.MaxRedirects: pulls (manifests, configs, layers) and pushes
// (blob checks, uploads, manifests) fail at once with a clear error,
// after a bounded number of requests and allocations.
func TestRedirectCap(t *testing.T) {
	reg := registrytest.New(t)
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "{}"}))
	ref := reg.Host + "/redirects:v1"
	push(t, ref, img)
	cfg, _ := img.ConfigName()
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()

	isBlob := func(d string) func(*http.Request) bool {
		return func(r *http.Request) bool { return registrytest.IsBlobGet(r) && strings.HasSuffix(r.URL.Path, "/"+d) }
	}
	var n atomic.Int64
	for _, tc := range []struct {
		name  string
		match func(*http.Request) bool
		push  bool
		want  []string
	}{
		{name: "Layer", match: isBlob(ld.String()), want: []string{"pulling " + ref, "layer " + ld.String()}},
		{name: "Config", match: isBlob(cfg.String()), want: []string{"pulling " + ref, "config " + cfg.String()}},
		{name: "Manifest", match: registrytest.IsManifestGet, want: []string{"pulling " + ref}},
		{name: "PushBlobCheck", push: true, match: func(r *http.Request) bool {
			return r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/")
		}, want: []string{"writing " + reg.Host + "/pushed:v1"}},
		{name: "PushManifest", push: true, match: func(r *http.Request) bool {
			return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
		}, want: []string{"writing " + reg.Host + "/pushed:v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n.Store(0)
			reg.Fault(registrytest.RedirectLoop(tc.match, &n))
			defer reg.Fault(nil)
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			start := time.Now()
			var err error
			if tc.push {
				s := image.NewSession(opts(t)...)
				defer s.Close()
				dst, perr := image.ParseDestination(reg.Host+"/pushed:v1", false)
				if perr != nil {
					t.Fatal(perr)
				}
				err = s.Write(context.Background(), dst, img, image.WriteOptions{})
			} else {
				_, err = openExtract(t, ref, []string{"configs"}, opts(t)...)
			}
			took := time.Since(start)
			runtime.ReadMemStats(&ms1)
			wantErr(t, err, append(tc.want, "\"http://"+reg.Host+"/v2/", "stopped after 10 redirects (each to the same URL)")...)
			if !errors.Is(err, image.ErrTooManyRedirects) {
				t.Errorf("%v does not wrap ErrTooManyRedirects", err)
			}
			alloc := ms1.TotalAlloc - ms0.TotalAlloc
			t.Logf("%v; %d redirects, %d bytes allocated, %v", err, n.Load(), alloc, took)
			// 10 redirects are followed per request; go-containerregistry
			// may try a request a few times (a manifest GET by digest,
			// then by tag), the blob cache once more.
			if got := n.Load(); got < image.MaxRedirects || got > 4*(image.MaxRedirects+1) {
				t.Errorf("%d redirected requests", got)
			}
			if alloc > 32<<20 {
				t.Errorf("allocated %d bytes", alloc)
			}
			if took > 10*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}

	// Redirects to ever new URLs (a signed query, say) are capped too;
	// the error names where they started, without the query.
	t.Run("ChangingURL", func(t *testing.T) {
		n.Store(0)
		reg.Fault(func(w http.ResponseWriter, r *http.Request) bool {
			if !isBlob(ld.String())(r) {
				return false
			}
			n.Add(1)
			http.Redirect(w, r, r.URL.Path+"?token=secret-"+strconv.FormatInt(n.Load(), 10), http.StatusFound)
			return true
		})
		defer reg.Fault(nil)
		_, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
		wantErr(t, err, "stopped after 10 redirects, starting from http://"+reg.Host+"/v2/redirects/blobs/"+ld.String())
		if strings.Contains(strings.SplitN(err.Error(), "stopped after", 2)[1], "secret") {
			t.Errorf("the error shows the query: %v", err)
		}
	})

	// A few redirects (to blob storage, say) are followed as before.
	t.Run("FewRedirects", func(t *testing.T) {
		var hops atomic.Int64
		reg.Fault(func(w http.ResponseWriter, r *http.Request) bool {
			if !registrytest.IsBlobGet(r) || hops.Add(1) > 3 {
				return false
			}
			http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
			return true
		})
		defer reg.Fault(nil)
		if _, err := openExtract(t, ref, []string{"configs"}, opts(t)...); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWhiteoutNames (issue 27, item 11): a whiteout that names no file
// (".wh."), its own directory (".wh..") or its parent is an error that
// says so, naming the layer and the entry, rather than
// "RemoveAll .: invalid argument".
func TestWhiteoutNames(t *testing.T) {
	reg := registrytest.New(t)
	for i, tc := range []struct{ entry, want string }{
		{".wh.", "names no file"},
		{"configs/.wh.", "names no file"},
		{"configs/.wh..", "names its own directory"},
		{"configs/.wh...", "names its parent directory"},
	} {
		ref := reg.Host + "/whiteout:v" + strconv.Itoa(i)
		lower := mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "{}"})
		upper := mustLayer(t, registrytest.Entry{Name: tc.entry})
		push(t, ref, mustImage(t, catalogLabels, lower, upper))
		ud, _ := upper.Digest()
		_, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
		wantErr(t, err, "extracting "+ref, "layer "+ud.String(), `entry "`+tc.entry+`": a whiteout is .wh. followed by the name of the file it removes; this one `+tc.want)
		if err != nil && strings.Contains(err.Error(), "RemoveAll") {
			t.Errorf("%s: %v", tc.entry, err)
		}
	}
}
