package image_test

// Issue 10: hostile and broken images. Every test builds its images with
// go-containerregistry, in the test, and checks the error (naming the
// image and the blob or entry), that nothing outside the test's roots is
// read or written, and that time and memory stay bounded.

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

const secret = "TOP-SECRET-host-file-content"

// sandbox returns a directory holding a secret file (outside every root a
// test uses) and a private TMPDIR under it, checked empty at the end.
func sandbox(t *testing.T) (base, secretFile string) {
	t.Helper()
	base = t.TempDir()
	secretFile = filepath.Join(base, "secret")
	if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			t.Errorf("left in TMPDIR: %s", e.Name())
		}
	})
	return base, secretFile
}

// noSecret fails when s shows the secret.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, secret) {
		t.Errorf("%s shows the secret file: %s", what, s)
	}
}

// everyTransport writes img as a registry image, an OCI layout, an OCI
// archive and a docker archive, and returns their references.
func everyTransport(t *testing.T, reg *registrytest.Server, repo string, img v1.Image) map[string]string {
	t.Helper()
	ref := reg.Host + "/" + repo + ":v1"
	push(t, ref, img)
	dir := t.TempDir()
	lp, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	tarDir(t, filepath.Join(dir, "layout"), filepath.Join(dir, "layout.tar"))
	tag, _ := name.NewTag("example.com/" + repo + ":v1")
	if err := tarball.WriteToFile(filepath.Join(dir, "docker.tar"), tag, img); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"registry":       ref,
		"oci":            "oci:" + filepath.Join(dir, "layout"),
		"oci-archive":    "oci-archive:" + filepath.Join(dir, "layout.tar"),
		"docker-archive": "docker-archive:" + filepath.Join(dir, "docker.tar"),
	}
}

func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not hold %q", err, w)
		}
	}
}

// TestSymlinkChain: links that are harmless lexically but lead out of the
// extraction root once resolved (issue 10, item 1), in one layer in either
// order or across layers, through every transport.
func TestSymlinkChain(t *testing.T) {
	reg := registrytest.New(t)
	d := registrytest.Entry{Name: "configs/sub/d", Type: tar.TypeSymlink, Linkname: ".."}
	// From dst/configs: sub/d is configs, so ../.. is dst's parent.
	x := registrytest.Entry{Name: "configs/x.json", Type: tar.TypeSymlink, Linkname: "sub/d/sub/d/../../secret"}
	dir := registrytest.Entry{Name: "configs/sub/", Type: tar.TypeDir}
	cases := map[string][]v1.Layer{
		"LinkFirst":    {mustLayer(t, dir, d, x)},
		"LinkLast":     {mustLayer(t, x, dir, d)},
		"AcrossLayers": {mustLayer(t, x), mustLayer(t, dir, d)},
		// A directory replaced by a link in a later layer.
		"DirBecomesLink": {
			mustLayer(t, registrytest.Entry{Name: "configs/sub/d/", Type: tar.TypeDir}, registrytest.Entry{Name: "configs/y.json", Type: tar.TypeSymlink, Linkname: "sub/d/../../secret"}),
			mustLayer(t, registrytest.Entry{Name: "configs/sub/d", Type: tar.TypeSymlink, Linkname: "../.."}),
		},
	}
	for cname, layers := range cases {
		refs := everyTransport(t, reg, "chain-"+strings.ToLower(cname), mustImage(t, catalogLabels, layers...))
		for tname, ref := range refs {
			t.Run(cname+"/"+tname, func(t *testing.T) {
				base, _ := sandbox(t)
				dst := filepath.Join(base, "dst")
				os.Mkdir(dst, 0o700)
				ctx := context.Background()
				img, err := image.Open(ctx, ref, opts(t)...)
				if err != nil {
					t.Fatal(err)
				}
				defer img.Close()
				err = img.Extract(ctx, dst, "configs")
				wantErr(t, err, "extracting "+ref, "leads out of the image")
				if !errors.Is(err, image.ErrUnsafePath) {
					t.Errorf("err does not wrap ErrUnsafePath")
				}
				noSecret(t, "error", err.Error())
				// A failed extraction leaves nothing behind.
				if ents, _ := os.ReadDir(dst); len(ents) != 0 {
					t.Errorf("dst holds %d entries after the failure", len(ents))
				}
			})
		}
	}

	// Links that stay inside, however chained, are fine.
	t.Run("Success/Inside", func(t *testing.T) {
		sandbox(t)
		ref := reg.Host + "/chain-inside:v1"
		push(t, ref, mustImage(t, catalogLabels, mustLayer(t, dir, d,
			registrytest.Entry{Name: "configs/a.json", Body: "a"},
			registrytest.Entry{Name: "configs/x.json", Type: tar.TypeSymlink, Linkname: "sub/d/sub/d/a.json"},
			registrytest.Entry{Name: "configs/loop", Type: tar.TypeSymlink, Linkname: "loop"},
		)))
		got, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
		if err == nil || !strings.Contains(err.Error(), `symbolic link "configs/loop"`) || !strings.Contains(err.Error(), "more than 40 symbolic links") {
			t.Fatalf("a link loop: err = %v, got %v", err, got)
		}
		ref2 := reg.Host + "/chain-inside:v2"
		push(t, ref2, mustImage(t, catalogLabels, mustLayer(t, dir, d,
			registrytest.Entry{Name: "configs/a.json", Body: "a"},
			registrytest.Entry{Name: "configs/x.json", Type: tar.TypeSymlink, Linkname: "sub/d/sub/d/a.json"},
		)))
		if _, err := openExtract(t, ref2, []string{"configs"}, opts(t)...); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRegistryBounds: a registry that streams forever or sends oversized
// manifests and configs (issue 10, item 3).
func TestRegistryBounds(t *testing.T) {
	reg := registrytest.New(t)
	body := strings.Repeat("a", 4096)
	good := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: body}))
	ref := reg.Host + "/bounds:v1"
	push(t, ref, good)
	layers, _ := good.Layers()
	ld, _ := layers[0].Digest()
	lsize, _ := layers[0].Size()
	bigCfg := mustImage(t, map[string]string{registrytest.ConfigsLabel: "/configs", "big": strings.Repeat("x", 5<<20)})
	bigRef := reg.Host + "/bigconfig:v1"
	push(t, bigRef, bigCfg)
	cfgDigest, _ := bigCfg.ConfigName()

	var sent atomic.Int64
	for _, tc := range []struct {
		name     string
		ref      string
		fault    func(http.ResponseWriter, *http.Request) bool
		limits   image.Limits
		want     []string
		maxSent  int64 // bytes the registry may send at most
		maxAlloc uint64
		maxGets  int64 // blob GETs
	}{
		{name: "EndlessLayer", ref: ref, fault: registrytest.EndlessBlob(ld.String(), nil, &sent),
			want: []string{"pulling " + ref, "layer " + ld.String(), "bytes declared hash to"}, maxSent: 32 << 20, maxAlloc: 64 << 20, maxGets: 2},
		{name: "OversizedManifest", ref: ref, fault: registrytest.HugeManifest(5<<20, &sent),
			want: []string{"pulling " + ref, "manifest v1: 5242880 bytes declared, over the 4 MiB manifest limit"}, maxSent: 16 << 20, maxAlloc: 32 << 20},
		{name: "EndlessManifest", ref: ref, fault: registrytest.HugeManifest(-1, &sent),
			want: []string{"pulling " + ref, "manifest v1: over the 4 MiB manifest limit"}, maxSent: 32 << 20, maxAlloc: 64 << 20},
		{name: "OversizedConfig", ref: bigRef,
			want: []string{"pulling " + bigRef, "config " + cfgDigest.String() + ": ", "bytes declared, over the 4 MiB config limit"}, maxAlloc: 64 << 20},
		{name: "LayerOverBlobLimit", ref: ref, limits: image.Limits{Blob: 64},
			want: []string{"pulling " + ref, "layer " + ld.String() + ": ", "bytes declared, over the 64 B blob limit"}},
		{name: "WrongDigest", ref: ref, fault: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ld.String()) {
				w.Write(bytes.Repeat([]byte{'z'}, int(lsize)))
				return true
			}
			return false
		}, want: []string{"pulling " + ref, "layer " + ld.String(), "checksum"}, maxGets: 2},
		{name: "Truncated", ref: ref, fault: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ld.String()) {
				w.Write([]byte("short"))
				return true
			}
			return false
		}, want: []string{"pulling " + ref, "layer " + ld.String()}, maxGets: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandbox(t)
			sent.Store(0)
			reg.Fault(tc.fault)
			defer reg.Fault(nil)
			cache := t.TempDir()
			before := reg.BlobGets()
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			start := time.Now()
			_, err := openExtract(t, tc.ref, []string{"configs"}, opts(t, image.WithCacheDir(cache), image.WithLimits(tc.limits))...)
			took := time.Since(start)
			runtime.ReadMemStats(&ms1)
			wantErr(t, err, tc.want...)
			alloc := ms1.TotalAlloc - ms0.TotalAlloc
			t.Logf("%v; registry sent %d bytes, client allocated %d bytes, %v", err, sent.Load(), alloc, took)
			if took > 20*time.Second {
				t.Errorf("took %v", took)
			}
			if tc.maxSent > 0 && sent.Load() > tc.maxSent {
				t.Errorf("the registry sent %d bytes, want at most %d", sent.Load(), tc.maxSent)
			}
			if tc.maxAlloc > 0 && alloc > tc.maxAlloc {
				t.Errorf("allocated %d bytes, want at most %d", alloc, tc.maxAlloc)
			}
			if n := reg.BlobGets() - before; n > tc.maxGets {
				t.Errorf("%d blob GETs, want at most %d (nothing downloaded past a refused descriptor)", n, tc.maxGets)
			}
			// Nothing but verified blobs (here: at most the config) in the
			// cache, and no temporary file.
			var cached int64
			filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					cached += fi.Size()
					if strings.HasPrefix(fi.Name(), ".tmp-") {
						t.Errorf("left %s", p)
					}
				}
				return nil
			})
			if cached > 8<<10 {
				t.Errorf("the cache holds %d bytes", cached)
			}
		})
	}
}

// blobFiles lists the cache's blob entries.
func blobFiles(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(cache, "blobs"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.HasPrefix(fi.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestCacheHostile: bad, swapped and special-file cache entries are misses
// (issue 10, item 7).
func TestCacheHostile(t *testing.T) {
	reg := registrytest.New(t)
	body := strings.Repeat("good ", 1000)
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: body}))
	ref := reg.Host + "/cachehostile:v1"
	push(t, ref, img)
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()
	cfgName, _ := img.ConfigName()
	want := []string{"configs drwx------", "configs/a.json -rw------- " + body}

	evil := func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		l, _ := registrytest.Layer(registrytest.Entry{Name: "configs/a.json", Body: "EVIL"})
		rc, _ := l.Compressed()
		var b bytes.Buffer
		b.ReadFrom(rc)
		out := make([]byte, fi.Size()) // same size: only the content differs
		copy(out, b.Bytes())
		return os.WriteFile(p, out, 0o600)
	}
	for _, tc := range []struct {
		name   string
		digest v1.Hash
		spoil  func(p string) error
	}{
		{name: "SwappedLayer", digest: ld, spoil: evil},
		{name: "SwappedByRename", digest: ld, spoil: func(p string) error {
			tmp := p + ".evil"
			os.WriteFile(tmp, []byte("garbage"), 0o600)
			return os.Rename(tmp, p)
		}},
		{name: "FIFOLayer", digest: ld, spoil: func(p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o600) }},
		{name: "FIFOConfig", digest: cfgName, spoil: func(p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o600) }},
		{name: "DirectoryLayer", digest: ld, spoil: func(p string) error { os.Remove(p); return os.MkdirAll(p+"/x", 0o700) }},
		{name: "SymlinkToDevZero", digest: ld, spoil: func(p string) error { os.Remove(p); return os.Symlink("/dev/zero", p) }},
		{name: "SwappedConfig", digest: cfgName, spoil: func(p string) error {
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, bytes.Replace(b, []byte("/configs"), []byte("/evil!!!"), 1), 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandbox(t)
			cache := t.TempDir()
			o := opts(t, image.WithCacheDir(cache))
			if _, err := openExtract(t, ref, []string{"configs"}, o...); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(cache, "blobs", "sha256", tc.digest.Hex)
			if err := tc.spoil(p); err != nil {
				t.Fatal(err)
			}
			before := reg.BlobGets()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			img, err := image.Open(ctx, ref, o...)
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			if got := img.Labels()[registrytest.ConfigsLabel]; got != "/configs" {
				t.Fatalf("label %q: the spoiled config was used", got)
			}
			dst := t.TempDir()
			if err := img.Extract(ctx, dst, "configs"); err != nil {
				t.Fatal(err)
			}
			equal(t, tree(t, dst), want)
			if n := reg.BlobGets() - before; n != 1 {
				t.Errorf("%d blob GETs, want 1 (the spoiled entry, again)", n)
			}
			// The entry is whole again.
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("entry not restored: %v %v", fi, err)
			}
		})
	}

	// An entry swapped again and again while images are extracted: no
	// extraction ever shows the swapped content.
	t.Run("SwappedWhileReading", func(t *testing.T) {
		sandbox(t)
		cache := t.TempDir()
		o := opts(t, image.WithCacheDir(cache))
		if _, err := openExtract(t, ref, []string{"configs"}, o...); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(cache, "blobs", "sha256", ld.Hex)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				evil(p)
				time.Sleep(time.Millisecond)
			}
		}()
		ok, failed := 0, 0
		before := reg.BlobGets()
		for range 40 {
			got, err := openExtract(t, ref, []string{"configs"}, o...)
			if err != nil {
				if !errors.Is(err, image.ErrDigest) {
					t.Errorf("unexpected error: %v", err)
				}
				failed++
				continue
			}
			equal(t, got, want)
			ok++
		}
		close(stop)
		wg.Wait()
		t.Logf("%d clean extractions, %d refused, %d swapped entries downloaded again (never the swapped content)", ok, failed, reg.BlobGets()-before)
	})
}

// TestCacheShared: sessions (and processes) sharing a cache download each
// blob once.
func TestCacheShared(t *testing.T) {
	reg := registrytest.New(t)
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "shared"}))
	ref := reg.Host + "/shared:v1"
	push(t, ref, img)
	reg.Fault(registrytest.SlowBlobs(200 * time.Millisecond))
	defer reg.Fault(nil)
	cache := t.TempDir()
	before := reg.BlobGets()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each Open is its own session: only the cache is shared.
			got, err := openExtract(t, ref, []string{"configs"}, image.WithCacheDir(cache))
			if err != nil {
				t.Error(err)
				return
			}
			equal(t, got, []string{"configs drwx------", "configs/a.json -rw------- shared"})
		}()
	}
	wg.Wait()
	if n := reg.BlobGets() - before; n != 2 {
		t.Errorf("%d blob GETs for 6 sessions, want 2 (config and layer once)", n)
	}
	if left := blobFiles(t, cache); len(left) != 2 {
		t.Errorf("cache holds %v", left)
	}
}

// TestDownloadsOption: the bound on concurrent downloads is a session
// option, not a process-wide constant.
func TestDownloadsOption(t *testing.T) {
	reg := registrytest.New(t)
	var layers []v1.Layer
	for i := range 6 {
		layers = append(layers, mustLayer(t, registrytest.Entry{Name: "configs/" + string(rune('a'+i)), Body: strings.Repeat("x", i+1)}))
	}
	ref := reg.Host + "/downloads:v1"
	push(t, ref, mustImage(t, catalogLabels, layers...))
	var inflight, peak atomic.Int64
	slow := registrytest.SlowBlobs(100 * time.Millisecond)
	reg.Fault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
		}
		return slow(w, r)
	})
	defer reg.Fault(nil)
	for _, n := range []int{1, 3} {
		peak.Store(0)
		s := image.NewSession(image.WithCacheDir("-"), image.WithDownloads(n), image.WithJobs(6))
		img, err := s.Open(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := img.Prefetch(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if p := peak.Load(); p > int64(n) || p < 1 {
			t.Errorf("WithDownloads(%d): %d concurrent blob GETs", n, p)
		}
	}
}

// TestLimits: path depth, decompression bombs and limit parsing.
func TestLimits(t *testing.T) {
	reg := registrytest.New(t)
	deep := "configs/" + strings.Repeat("d/", 20) + "f"
	deepRef := reg.Host + "/deep:v1"
	push(t, deepRef, mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: deep, Body: "x"})))
	_, err := openExtract(t, deepRef, []string{"configs"}, opts(t, image.WithLimits(image.Limits{PathDepth: 10}))...)
	wantErr(t, err, "extracting "+deepRef, `entry "`+deep+`": path deeper than 10 components (the depth limit)`)
	if _, err := openExtract(t, deepRef, []string{"configs"}, opts(t)...); err != nil {
		t.Errorf("default depth: %v", err)
	}

	// 16 MiB of zeros compress to a few KiB; a skipped path still counts.
	bomb := mustLayer(t, registrytest.Entry{Name: "usr/zeros", Body: string(make([]byte, 16<<20))}, registrytest.Entry{Name: "configs/a.json", Body: "a"})
	bombRef := reg.Host + "/bomb:v1"
	push(t, bombRef, mustImage(t, catalogLabels, bomb))
	_, err = openExtract(t, bombRef, []string{"configs"}, opts(t, image.WithLimits(image.Limits{Uncompressed: 1 << 20}))...)
	wantErr(t, err, "extracting "+bombRef, "more than 1 MiB of uncompressed layers (the uncompressed limit)")

	for _, tc := range []struct{ in, err string }{
		{in: "manifest=8MiB,config=1m,blob=1GiB,extract=2G,uncompressed=3TiB,entries=10,depth=5"},
		{in: ""},
		{in: "manifest=0", err: "want a positive size"},
		{in: "bogus=1", err: `unknown key`},
		{in: "entries=x", err: "want a positive count"},
		{in: "manifest", err: "want KEY=VALUE"},
		{in: "blob=99999999999TiB", err: "want a positive size"},
	} {
		l, err := image.ParseLimits(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLimits(%q) = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLimits(%q): %v", tc.in, err)
		}
		if tc.in != "" && (l.Manifest != 8<<20 || l.Config != 1<<20 || l.Blob != 1<<30 || l.Extract != 2<<30 || l.Uncompressed != 3<<40 || l.Entries != 10 || l.PathDepth != 5) {
			t.Errorf("ParseLimits(%q) = %+v", tc.in, l)
		}
		if tc.in == "" && l != image.DefaultLimits() {
			t.Errorf("ParseLimits(\"\") = %+v", l)
		}
	}
}

// TestPathReferences: a reference written as a path is a path (issue 10,
// item 9): it fails at once, with no network.
func TestPathReferences(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	os.WriteFile(file, nil, 0o600)
	t.Chdir(dir)
	// No network: a transport that fails the test if used.
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("network access for %s", r.URL)
		return nil, errors.New("no network")
	})
	for _, tc := range []struct{ ref, err string }{
		{ref: "./catalgo", err: "./catalgo does not exist"},
		{ref: "../catalgo", err: "../catalgo does not exist"},
		{ref: "/no/such/catalog", err: "/no/such/catalog does not exist"},
		{ref: "~/catalog", err: `~/catalog does not exist ("~" is not expanded here`},
		{ref: ".", err: ". : a local file or directory, not an image reference"},
		{ref: "file.txt", err: "file.txt: a local file or directory, not an image reference"},
		{ref: file, err: file + ": a local file or directory"},
	} {
		_, err := image.Open(context.Background(), tc.ref, image.WithTransport(tr), image.WithCacheDir("-"))
		want := strings.Replace(tc.err, ". :", ".:", 1)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "docker.io") {
			t.Errorf("%s: err = %v, want %q", tc.ref, err, want)
		}
		var pe *image.PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s: not a *PathError", tc.ref)
		}
		if strings.HasSuffix(want, "does not exist") && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: does not wrap fs.ErrNotExist", tc.ref)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// jsonBytes marshals v.
func jsonBytes(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCacheSharedProcesses: processes sharing a cache download each blob
// once (the per-blob flock), and none sees a half-written blob.
func TestCacheSharedProcesses(t *testing.T) {
	if os.Getenv("OPM_IMAGE_HELPER_REF") != "" {
		t.Skip("helper process")
	}
	reg := registrytest.New(t)
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: strings.Repeat("p", 1<<20)}))
	ref := reg.Host + "/processes:v1"
	push(t, ref, img)
	reg.Fault(registrytest.SlowBlobs(300 * time.Millisecond))
	defer reg.Fault(nil)
	cache := t.TempDir()
	before := reg.BlobGets()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperExtract$", "-test.v")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Env = append(os.Environ(), "OPM_IMAGE_HELPER_REF="+ref, "OPM_IMAGE_HELPER_CACHE="+cache, "OPM_IMAGE_HELPER_DST="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outs[i])
		}
	}
	if n := reg.BlobGets() - before; n != 2 {
		t.Errorf("%d blob GETs for 4 processes, want 2 (config and layer once)", n)
	}
}

// TestHelperExtract is the process TestCacheSharedProcesses starts.
func TestHelperExtract(t *testing.T) {
	ref := os.Getenv("OPM_IMAGE_HELPER_REF")
	if ref == "" {
		t.Skip("run by TestCacheSharedProcesses")
	}
	ctx := context.Background()
	img, err := image.Open(ctx, ref, image.WithCacheDir(os.Getenv("OPM_IMAGE_HELPER_CACHE")))
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	dst := os.Getenv("OPM_IMAGE_HELPER_DST")
	if err := img.Extract(ctx, dst, "configs"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dst, "configs", "a.json"))
	if err != nil || len(b) != 1<<20 {
		t.Fatalf("extracted %d bytes, %v", len(b), err)
	}
}
