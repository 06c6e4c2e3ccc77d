package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

var catalogLabels = map[string]string{registrytest.ConfigsLabel: "/configs"}

func mustLayer(t testing.TB, entries ...registrytest.Entry) v1.Layer {
	t.Helper()
	l, err := registrytest.Layer(entries...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustImage(t testing.TB, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := registrytest.Image(labels, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func push(t testing.TB, ref string, img v1.Image) {
	t.Helper()
	if err := registrytest.Push(context.Background(), ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

// opts are the options of every test: a private cache, no slow retries.
func opts(t testing.TB, more ...image.Option) []image.Option {
	return append([]image.Option{image.WithCacheDir(t.TempDir()), image.WithRetries(0, time.Millisecond)}, more...)
}

// tree lists dst as "path mode [content]" lines.
func tree(t testing.TB, dst string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dst {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		line := fmt.Sprintf("%s %v", filepath.ToSlash(rel), fi.Mode())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			line += " -> " + l
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func equal(t testing.TB, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func openExtract(t testing.TB, ref string, paths []string, o ...image.Option) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	img, err := image.Open(ctx, ref, o...)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	dst := t.TempDir()
	if err := img.Extract(ctx, dst, paths...); err != nil {
		return nil, err
	}
	return tree(t, dst), nil
}

func TestOpenRemote(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/catalog:v1"
	push(t, ref, mustImage(t, catalogLabels,
		mustLayer(t,
			registrytest.Entry{Name: "etc/passwd", Body: "root"},
			registrytest.Entry{Name: "configs/", Type: tar.TypeDir},
			registrytest.Entry{Name: "configs/foo/catalog.json", Body: "{}"},
			registrytest.Entry{Name: "configs/link.json", Type: tar.TypeSymlink, Linkname: "foo/catalog.json"},
			registrytest.Entry{Name: "configs/hard.json", Type: tar.TypeLink, Linkname: "configs/foo/catalog.json"},
			registrytest.Entry{Name: "configsx/nope", Body: "no"},
		)))
	img, err := image.Open(context.Background(), ref, opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if got := img.Labels()[registrytest.ConfigsLabel]; got != "/configs" {
		t.Errorf("label = %q", got)
	}
	if img.Ref() != ref || !strings.HasPrefix(img.Digest(), "sha256:") {
		t.Errorf("ref %q digest %q", img.Ref(), img.Digest())
	}
	dst := t.TempDir()
	if err := img.Extract(context.Background(), dst, "/configs"); err != nil {
		t.Fatal(err)
	}
	equal(t, tree(t, dst), []string{
		"configs drwx------",
		"configs/foo drwx------",
		"configs/foo/catalog.json -rw------- {}",
		"configs/hard.json -rw------- {}",
		"configs/link.json Lrwxrwxrwx -> foo/catalog.json",
	})
}

func TestWhiteouts(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/wh:v1"
	push(t, ref, mustImage(t, catalogLabels,
		mustLayer(t,
			registrytest.Entry{Name: "configs/a.json", Body: "a"},
			registrytest.Entry{Name: "configs/b.json", Body: "b"},
			registrytest.Entry{Name: "configs/sub/c.json", Body: "c"},
			registrytest.Entry{Name: "configs/opq/old.json", Body: "old"},
			registrytest.Entry{Name: "configs/dir/x", Body: "x"},
			registrytest.Entry{Name: "other/keep", Body: "k"},
		),
		mustLayer(t,
			registrytest.Entry{Name: "configs/.wh.a.json"},
			registrytest.Entry{Name: "configs/sub/.wh..wh..opq"},
			registrytest.Entry{Name: "configs/sub/d.json", Body: "d"},
			registrytest.Entry{Name: "configs/opq/new/n.json", Body: "n"},
			registrytest.Entry{Name: "configs/opq/.wh..wh..opq"},
			registrytest.Entry{Name: "configs/dir", Body: "now a file"},
			registrytest.Entry{Name: "configs/b.json", Body: "b2"},
		),
	))
	got, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, []string{
		"configs drwx------",
		"configs/b.json -rw------- b2",
		"configs/dir -rw------- now a file",
		"configs/opq drwx------",
		"configs/opq/new drwx------",
		"configs/opq/new/n.json -rw------- n",
		"configs/sub drwx------",
		"configs/sub/d.json -rw------- d",
	})

	// A whiteout of an ancestor of the wanted path removes it.
	ref2 := reg.Host + "/wh:v2"
	push(t, ref2, mustImage(t, catalogLabels,
		mustLayer(t, registrytest.Entry{Name: "a/b/c", Body: "c"}),
		mustLayer(t, registrytest.Entry{Name: ".wh.a"}),
		mustLayer(t, registrytest.Entry{Name: "a/b/d", Body: "d"}),
	))
	got, err = openExtract(t, ref2, []string{"a/b"}, opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, []string{"a drwx------", "a/b drwx------", "a/b/d -rw------- d"})
}

func TestPlatforms(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/multi:v1"
	amd := mustImage(t, map[string]string{"arch": "amd64"})
	arm := mustImage(t, map[string]string{"arch": "arm64"})
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
	)
	r, _ := name.ParseReference(ref)
	if err := registrytest.PushIndex(context.Background(), r.String(), idx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, platform, want, err string }{
		{name: "Success/Arm64", platform: "linux/arm64", want: "arm64"},
		{name: "Success/Amd64", platform: "linux/amd64", want: "amd64"},
		{name: "Error/Missing", platform: "linux/s390x", err: "no image for platform linux/s390x in the index (it has linux/amd64, linux/arm64/v8)"},
		{name: "Error/Invalid", platform: "linux", err: `invalid platform "linux"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := image.Open(context.Background(), ref, opts(t, image.WithPlatform(tc.platform))...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), ref) {
					t.Fatalf("err = %v, want %q naming %s", err, tc.err, ref)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer img.Close()
			if got := img.Labels()["arch"]; got != tc.want {
				t.Errorf("arch = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCache(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/cached:v1"
	push(t, ref, mustImage(t, catalogLabels,
		mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"}),
		mustLayer(t, registrytest.Entry{Name: "configs/b.json", Body: "b"})))
	cache := t.TempDir()
	o := []image.Option{image.WithCacheDir(cache)}
	before := reg.BlobGets()
	cold, err := openExtract(t, ref, []string{"configs"}, o...)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.BlobGets() - before; n != 3 {
		t.Errorf("cold run: %d blob GETs, want 3 (config and 2 layers)", n)
	}
	before = reg.BlobGets()
	warm, err := openExtract(t, ref, []string{"configs"}, o...)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.BlobGets() - before; n != 0 {
		t.Errorf("warm run: %d blob GETs, want 0", n)
	}
	equal(t, warm, cold)

	// A corrupted cache entry is detected and downloaded again.
	var blobs []string
	filepath.Walk(filepath.Join(cache, "blobs"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			blobs = append(blobs, p)
		}
		return err
	})
	if len(blobs) != 3 {
		t.Fatalf("cache holds %v", blobs)
	}
	for _, b := range blobs {
		os.WriteFile(b, []byte("garbage"), 0o600)
	}
	before = reg.BlobGets()
	again, err := openExtract(t, ref, []string{"configs"}, o...)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.BlobGets() - before; n != 3 {
		t.Errorf("after corruption: %d blob GETs, want 3", n)
	}
	equal(t, again, cold)
}

func TestProgress(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/progress:v1"
	push(t, ref, mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"})))
	var buf bytes.Buffer
	if _, err := openExtract(t, ref, []string{"configs"}, opts(t, image.WithProgress(&buf))...); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), ref+": downloaded layer sha256:") {
		t.Errorf("progress = %q", buf.String())
	}
}

func TestLocal(t *testing.T) {
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"}))
	other := mustImage(t, map[string]string{"x": "y"})
	dir := t.TempDir()
	lp, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1"})); err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(other, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v2"})); err != nil {
		t.Fatal(err)
	}
	single, _ := layout.Write(filepath.Join(dir, "single"), empty.Index)
	single.AppendImage(img)
	d, _ := img.Digest()
	archive := filepath.Join(dir, "layout.tar")
	tarDir(t, filepath.Join(dir, "layout"), archive)
	dockerTar := filepath.Join(dir, "docker.tar")
	tag, _ := name.NewTag("example.com/cat:v1")
	if err := tarball.WriteToFile(dockerTar, tag, img); err != nil {
		t.Fatal(err)
	}
	want := []string{"configs drwx------", "configs/a.json -rw------- a"}
	for _, tc := range []struct{ name, ref, err string }{
		{name: "Success/LayoutTag", ref: "oci:" + dir + "/layout:v1"},
		{name: "Success/LayoutDigest", ref: "oci:" + dir + "/layout@" + d.String()},
		{name: "Success/LayoutSingle", ref: "oci:" + dir + "/single"},
		{name: "Success/OCIArchiveTag", ref: "oci-archive:" + archive + ":v1"},
		{name: "Success/DockerArchive", ref: "docker-archive:" + dockerTar},
		{name: "Success/DockerArchiveTag", ref: "docker-archive:" + dockerTar + ":example.com/cat:v1"},
		{name: "Error/LayoutAmbiguous", ref: "oci:" + dir + "/layout", err: "the layout holds 2 images: name one with :TAG or @DIGEST (tags: v1, v2)"},
		{name: "Error/LayoutNoTag", ref: "oci:" + dir + "/layout:v3", err: `no image tagged "v3" in the layout (tags: v1, v2)`},
		{name: "Error/LayoutMissing", ref: "oci:" + dir + "/nope", err: dir + "/nope does not exist"},
		{name: "Error/NotALayout", ref: "oci:" + dir, err: "not an OCI image layout"},
		{name: "Error/DockerArchiveTag", ref: "docker-archive:" + dockerTar + ":other:v1", err: `no image tagged "other:v1" in the archive`},
		{name: "Error/DockerArchiveNotArchive", ref: "docker-archive:" + archive, err: "not a docker archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := openExtract(t, tc.ref, []string{"configs"}, opts(t)...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			equal(t, got, want)
		})
	}
}

// tarDir writes dir as an uncompressed tar archive.
func tarDir(t testing.TB, dir, file string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestParseReference(t *testing.T) {
	for _, tc := range []struct{ name, ref, want, err string }{
		{name: "Success/Tag", ref: "quay.io/org/cat:v1", want: "quay.io/org/cat:v1"},
		{name: "Success/DefaultTag", ref: "quay.io/org/cat", want: "quay.io/org/cat:latest"},
		{name: "Success/Digest", ref: "quay.io/org/cat@sha256:" + strings.Repeat("a", 64), want: "quay.io/org/cat@sha256:" + strings.Repeat("a", 64)},
		{name: "Success/Port", ref: "localhost:5000/cat:v1", want: "localhost:5000/cat:v1"},
		{name: "Success/Localhost", ref: "localhost/cat", want: "localhost/cat:latest"},
		{name: "Success/DockerTransport", ref: "docker://docker.io/library/busybox", want: "docker.io/library/busybox:latest"},
		{name: "Error/NotCanonical", ref: "busybox", err: `invalid image reference "busybox": repository name must be canonical`},
		{name: "Error/NotCanonicalPath", ref: "catalog/foo", err: "repository name must be canonical"},
		{name: "Error/BadTag", ref: "quay.io/org/cat:v 1", err: `invalid image reference "quay.io/org/cat:v 1"`},
		{name: "Error/Uppercase", ref: "quay.io/Org/cat", err: "invalid image reference"},
		{name: "Error/EmptyOCI", ref: "oci:", err: "missing path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := image.ParseReference(tc.ref, false)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Name.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := image.ParseReference("busybox", false); !errors.Is(err, image.ErrNotCanonical) {
		t.Errorf("err %v does not wrap ErrNotCanonical", err)
	}
}

// faultCase pushes layers (or sets a fault) and expects an error holding
// every string of want.
func TestFaults(t *testing.T) {
	reg := registrytest.New(t)
	good := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: strings.Repeat("a", 4096)}))
	goodRef := reg.Host + "/good:v1"
	push(t, goodRef, good)
	layers, _ := good.Layers()
	ld, _ := layers[0].Digest()

	evil := func(repo string, entries ...registrytest.Entry) string {
		ref := reg.Host + "/" + repo + ":v1"
		push(t, ref, mustImage(t, catalogLabels, mustLayer(t, entries...)))
		return ref
	}
	dotdot := evil("dotdot", registrytest.Entry{Name: "configs/../../evil", Body: "x"})
	abs := evil("abs", registrytest.Entry{Name: "/configs/evil", Body: "x"})
	link := evil("link", registrytest.Entry{Name: "configs/l", Type: tar.TypeSymlink, Linkname: "../../etc/passwd"})
	absLink := evil("abslink", registrytest.Entry{Name: "configs/l", Type: tar.TypeSymlink, Linkname: "/etc/passwd"})
	hard := evil("hard", registrytest.Entry{Name: "configs/l", Type: tar.TypeLink, Linkname: "../etc/passwd"})
	hardOut := evil("hardout", registrytest.Entry{Name: "etc/passwd", Body: "x"}, registrytest.Entry{Name: "configs/l", Type: tar.TypeLink, Linkname: "etc/passwd"})
	// A link inside the root that a later entry tries to write through.
	through := evil("through",
		registrytest.Entry{Name: "configs/up", Type: tar.TypeSymlink, Linkname: ".."},
		registrytest.Entry{Name: "configs/up/up2", Type: tar.TypeSymlink, Linkname: "../x"},
		registrytest.Entry{Name: "configs/up/up2/evil", Body: "x"})
	big := evil("big", registrytest.Entry{Name: "configs/big", Body: strings.Repeat("b", 2048)})
	many := evil("many", registrytest.Entry{Name: "a"}, registrytest.Entry{Name: "b"}, registrytest.Entry{Name: "c"})

	down := registrytest.New(t)
	downRef := down.Host + "/gone:v1"
	down.Close()

	for _, tc := range []struct {
		name  string
		ref   string
		fault func(w http.ResponseWriter, r *http.Request) bool
		opts  []image.Option
		want  []string
	}{
		{name: "Error/RegistryDown", ref: downRef, want: []string{"pulling " + downRef, "connection refused"}},
		{name: "Error/Unauthorized", ref: goodRef, fault: func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return true
		}, want: []string{"pulling " + goodRef, "401", "credential"}},
		{name: "Error/MissingManifest", ref: reg.Host + "/good:nope", want: []string{"pulling " + reg.Host + "/good:nope", "MANIFEST_UNKNOWN"}},
		{name: "Error/MissingRepo", ref: reg.Host + "/nothing:v1", want: []string{"pulling " + reg.Host + "/nothing:v1", "NAME_UNKNOWN"}},
		{name: "Error/CorruptedBlob", ref: goodRef, fault: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ld.String()) {
				io.WriteString(w, "this is not the layer you are looking for")
				return true
			}
			return false
		}, want: []string{"pulling " + goodRef, "layer " + ld.String(), "checksum"}},
		{name: "Error/TruncatedBlob", ref: goodRef, fault: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ld.String()) {
				w.Header().Set("Content-Length", "100000")
				io.WriteString(w, "short")
				return true
			}
			return false
		}, want: []string{"pulling " + goodRef, "layer " + ld.String()}},
		{name: "Error/DotDot", ref: dotdot, want: []string{"extracting " + dotdot, "layer sha256:", `entry "configs/../../evil": path escapes the root`}},
		{name: "Error/AbsolutePath", ref: abs, want: []string{"extracting " + abs, `entry "/configs/evil": absolute path`}},
		{name: "Error/EscapingSymlink", ref: link, want: []string{"extracting " + link, `entry "configs/l": link target "../../etc/passwd" escapes the root`}},
		{name: "Error/AbsoluteSymlink", ref: absLink, want: []string{"extracting " + absLink, `absolute link target "/etc/passwd"`}},
		{name: "Error/EscapingHardlink", ref: hard, want: []string{"extracting " + hard, `hard link target "../etc/passwd" escapes the root`}},
		{name: "Error/HardlinkOutside", ref: hardOut, want: []string{"extracting " + hardOut, `hard link target "etc/passwd" is outside the extracted paths`}},
		{name: "Error/WriteThroughLink", ref: through, want: []string{"extracting " + through, `entry "configs/up/up2": parent "configs/up" is a symbolic link: unsafe path`}},
		{name: "Error/TooLarge", ref: big, opts: []image.Option{image.WithLimits(image.Limits{Extract: 1024, Entries: 10})}, want: []string{"extracting " + big, "more than 1024 bytes written (the extract limit; each entry counts as at least one 4 KiB block)"}},
		{name: "Error/TooManyEntries", ref: many, opts: []image.Option{image.WithLimits(image.Limits{Entries: 2})}, want: []string{"extracting " + many, "more than 2 entries (the entries limit)"}},
		{name: "Success/WithinLimits", ref: many, opts: []image.Option{image.WithLimits(image.Limits{Extract: 10, Entries: 3})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.Fault(tc.fault)
			defer reg.Fault(nil)
			cache := t.TempDir()
			o := append(opts(t), image.WithCacheDir(cache))
			_, err := openExtract(t, tc.ref, []string{"configs"}, append(o, tc.opts...)...)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
			// No partial blob is left in the cache.
			filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
				if err == nil && strings.HasPrefix(fi.Name(), ".tmp-") {
					t.Errorf("left %s", p)
				}
				return nil
			})
		})
	}
}

func TestExtractCancel(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/cancel:v1"
	push(t, ref, mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"})))
	img, err := image.Open(context.Background(), ref, opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := img.Extract(ctx, t.TempDir(), "configs"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCAFile(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct{ name, file, err string }{
		{name: "Error/Missing", file: filepath.Join(t.TempDir(), "nope.pem"), err: "reading CA file: open "},
		{name: "Error/NotPEM", file: notPEM, err: "CA file " + notPEM + ": no PEM certificate found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.Open(context.Background(), "127.0.0.1:1/x:v1", opts(t, image.WithCAFile(tc.file))...)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestCacheDisabled(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/nocache:v1"
	push(t, ref, mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"})))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for i := 0; i < 2; i++ {
		before := reg.BlobGets()
		got, err := openExtract(t, ref, []string{"configs"}, image.WithCacheDir("-"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, got, []string{"configs drwx------", "configs/a.json -rw------- a"})
		if n := reg.BlobGets() - before; n != 2 {
			t.Errorf("run %d: %d blob GETs, want 2 (no cache)", i, n)
		}
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "opm-blobs-") {
			t.Errorf("left %s", e.Name())
		}
	}
}

func TestCompression(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/compressed:v1"
	var layers []v1.Layer
	for _, c := range []compression.Compression{compression.GZip, compression.ZStd, compression.None} {
		l, err := registrytest.CompressedLayer(c, registrytest.Entry{Name: "configs/" + string(c), Body: string(c)})
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	push(t, ref, mustImage(t, catalogLabels, layers...))
	got, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, got, []string{"configs drwx------", "configs/gzip -rw------- gzip", "configs/none -rw------- none", "configs/zstd -rw------- zstd"})
}

func TestSession(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/session:v1"
	push(t, ref, mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"})))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := image.NewSession(image.WithCacheDir("-"))
	ctx := context.Background()
	beforeM, beforeB := reg.ManifestGets(), reg.BlobGets()
	for i := 0; i < 3; i++ {
		img, err := s.Open(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(tmp, fmt.Sprint("dst", i))
		os.Mkdir(dst, 0o700)
		if err := img.Extract(ctx, dst, "configs"); err != nil {
			t.Fatal(err)
		}
		img.Close()
	}
	if n := reg.ManifestGets() - beforeM; n != 1 {
		t.Errorf("%d manifest GETs, want 1 (the session remembers)", n)
	}
	if n := reg.BlobGets() - beforeB; n != 2 {
		t.Errorf("%d blob GETs, want 2", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "opm-blobs-") {
			t.Errorf("session left %s", e.Name())
		}
	}
}
