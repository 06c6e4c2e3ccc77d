package image_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

// catalogImage is a small catalog image.
func catalogImage(t testing.TB, body string) v1.Image {
	return mustImage(t, catalogLabels,
		mustLayer(t, registrytest.Entry{Name: "configs/", Type: '5'}, registrytest.Entry{Name: "configs/catalog.json", Body: body}))
}

// multiArch is an index of two catalog images and an attestation-like
// entry of platform unknown/unknown.
func multiArch(t testing.TB) v1.ImageIndex {
	amd, arm, att := catalogImage(t, `{"arch":"amd64"}`), catalogImage(t, `{"arch":"arm64"}`), mustImage(t, nil)
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
		mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}}},
	)
}

func dest(t testing.TB, ref string) image.Destination {
	t.Helper()
	d, err := image.ParseDestination(ref, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func digestOf(t testing.TB, a image.Artifact) string {
	t.Helper()
	d, err := a.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestWriteRoundTrip writes an image everywhere Write can and reads it
// back with Open: same digest (where the form keeps it), labels and files.
func TestWriteRoundTrip(t *testing.T) {
	reg := registrytest.New(t)
	img := catalogImage(t, `{"schema":"olm.package","name":"p"}`)
	want := digestOf(t, img)
	dir := t.TempDir()
	ctx := context.Background()
	s := image.NewSession(opts(t)...)
	defer s.Close()
	for _, tc := range []struct{ dst, read string }{
		{dst: reg.Host + "/cat:v1", read: reg.Host + "/cat:v1"},
		{dst: "docker://" + reg.Host + "/cat:v2", read: reg.Host + "/cat@" + want},
		{dst: "oci:" + filepath.Join(dir, "layout") + ":v1", read: "oci:" + filepath.Join(dir, "layout") + ":v1"},
		{dst: "oci:" + filepath.Join(dir, "untagged"), read: "oci:" + filepath.Join(dir, "untagged")},
		{dst: "oci-archive:" + filepath.Join(dir, "cat.tar") + ":v1", read: "oci-archive:" + filepath.Join(dir, "cat.tar") + ":v1"},
		{dst: "docker-archive:" + filepath.Join(dir, "cat-docker.tar") + ":example.com/cat:v1", read: "docker-archive:" + filepath.Join(dir, "cat-docker.tar") + ":example.com/cat:v1"},
		{dst: "docker-archive:" + filepath.Join(dir, "untagged.tar"), read: "docker-archive:" + filepath.Join(dir, "untagged.tar")},
	} {
		t.Run(tc.dst, func(t *testing.T) {
			if err := s.Write(ctx, dest(t, tc.dst), img, image.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := openExtract(t, tc.read, []string{"configs"}, opts(t)...)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, got, []string{"configs drwx------", `configs/catalog.json -rw------- {"schema":"olm.package","name":"p"}`})
			o, err := image.Open(ctx, tc.read, opts(t)...)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if o.Labels()[registrytest.ConfigsLabel] != "/configs" {
				t.Errorf("labels %v", o.Labels())
			}
			if !strings.HasPrefix(tc.dst, "docker-archive:") && o.Digest() != want {
				t.Errorf("digest %s, want %s", o.Digest(), want)
			}
		})
	}
}

// TestWriteIndex writes a multi-platform index to a registry, a layout and
// an OCI archive, and opens each as a base; a docker archive refuses it.
func TestWriteIndex(t *testing.T) {
	reg := registrytest.New(t)
	idx := multiArch(t)
	want := digestOf(t, idx)
	dir := t.TempDir()
	ctx := context.Background()
	s := image.NewSession(opts(t)...)
	defer s.Close()
	for _, ref := range []string{reg.Host + "/multi:v1", "oci:" + filepath.Join(dir, "layout") + ":v1", "oci-archive:" + filepath.Join(dir, "multi.tar") + ":v1"} {
		t.Run(ref, func(t *testing.T) {
			if err := s.Write(ctx, dest(t, ref), idx, image.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			b, err := s.OpenBase(ctx, ref, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.Digest.String() != want || !b.IsIndex || len(b.Images) != 2 {
				t.Fatalf("base %s index=%v with %d images", b.Digest, b.IsIndex, len(b.Images))
			}
			if b.Images[0].Platform.String() != "linux/amd64" || b.Images[1].Platform.String() != "linux/arm64/v8" {
				t.Errorf("platforms %s, %s", b.Images[0].Platform, b.Images[1].Platform)
			}
			// Every layer reads back with its digest.
			for _, bi := range b.Images {
				for _, l := range bi.Layers {
					rc, err := l.Compressed()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, rc); err != nil {
						t.Fatal(err)
					}
					rc.Close()
				}
			}
		})
	}
	err := s.Write(ctx, dest(t, "docker-archive:"+filepath.Join(dir, "d.tar")), idx, image.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "not an index") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.tar")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused archive was written")
	}
}

func TestOpenBase(t *testing.T) {
	reg := registrytest.New(t)
	ctx := context.Background()
	multi := reg.Host + "/multi:v1"
	if err := registrytest.PushIndex(ctx, multi, multiArch(t)); err != nil {
		t.Fatal(err)
	}
	single := reg.Host + "/single:v1"
	push(t, single, catalogImage(t, "{}"))
	s := image.NewSession(opts(t)...)
	defer s.Close()
	p := func(s string) v1.Platform {
		pl, err := v1.ParsePlatform(s)
		if err != nil {
			t.Fatal(err)
		}
		return *pl
	}
	for _, tc := range []struct {
		name, ref string
		plats     []v1.Platform
		want      string
		err       string
	}{
		{name: "Success/All", ref: multi, want: "linux/amd64 linux/arm64/v8"},
		{name: "Success/Narrow", ref: multi, plats: []v1.Platform{p("linux/arm64")}, want: "linux/arm64/v8"},
		{name: "Success/Single", ref: single, want: "linux/amd64"},
		{name: "Success/SingleMatches", ref: single, plats: []v1.Platform{p("linux/amd64")}, want: "linux/amd64"},
		{name: "Error/Missing", ref: multi, plats: []v1.Platform{p("linux/amd64"), p("linux/s390x")}, err: "no image for platform linux/s390x in the index (it has linux/amd64, linux/arm64/v8)"},
		{name: "Error/SingleOther", ref: single, plats: []v1.Platform{p("linux/arm64")}, err: "the image is for linux/amd64, not linux/arm64"},
		{name: "Error/NotFound", ref: reg.Host + "/nothing:v1", err: "pulling " + reg.Host + "/nothing:v1"},
		{name: "Error/DockerArchive", ref: "docker-archive:" + filepath.Join(t.TempDir(), "x.tar"), err: "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := s.OpenBase(ctx, tc.ref, tc.plats)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var got []string
			for _, bi := range b.Images {
				got = append(got, bi.Platform.String())
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("platforms %v, want %s", got, tc.want)
			}
			if b.Remote.String() == "" {
				t.Error("no remote repository")
			}
		})
	}
	// A docker archive is refused as a base, by name.
	tarFile := filepath.Join(t.TempDir(), "d.tar")
	if err := s.Write(ctx, dest(t, "docker-archive:"+tarFile), catalogImage(t, "{}"), image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenBase(ctx, "docker-archive:"+tarFile, nil); err == nil || !strings.Contains(err.Error(), "docker archives cannot be used as a base image") {
		t.Fatalf("err = %v", err)
	}
}

// TestBaseLayersLazy checks that opening a base downloads no layer, that
// pushing it to a registry that has its layers downloads none either, and
// that a corrupted layer fails the write that needs it.
func TestBaseLayersLazy(t *testing.T) {
	reg := registrytest.New(t)
	ctx := context.Background()
	ref := reg.Host + "/base:v1"
	push(t, ref, catalogImage(t, `{"big":"layer"}`))
	s := image.NewSession(opts(t)...)
	defer s.Close()
	before := reg.BlobGets()
	b, err := s.OpenBase(ctx, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := reg.BlobGets() - before; got != 1 {
		t.Errorf("opening the base made %d blob GETs, want 1 (the config)", got)
	}
	img := baseAsImage(t, b)
	before = reg.BlobGets()
	if err := s.Write(ctx, dest(t, reg.Host+"/other:v1"), img, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := reg.BlobGets() - before; got != 0 {
		t.Errorf("pushing to a registry that has the layers made %d blob GETs", got)
	}
	// A layout needs the bytes: a corrupted layer fails with a digest error.
	var corrupt atomic.Bool
	corrupt.Store(true)
	reg.Fault(func(w http.ResponseWriter, r *http.Request) bool {
		if corrupt.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			rec := &bytes.Buffer{}
			w.WriteHeader(http.StatusOK)
			rec.WriteString(strings.Repeat("x", 1<<10))
			w.Write(rec.Bytes())
			return true
		}
		return false
	})
	dir := filepath.Join(t.TempDir(), "layout")
	err = s.Write(ctx, dest(t, "oci:"+dir), img, image.WriteOptions{})
	if !errors.Is(err, image.ErrDigest) {
		t.Fatalf("err = %v, want a digest error", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the failed write left its new layout: %v", err)
	}
	corrupt.Store(false)
	if err := s.Write(ctx, dest(t, "oci:"+dir), img, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// baseAsImage turns a single-image base back into a v1.Image (its own
// manifest and config), to write it.
func baseAsImage(t testing.TB, b *image.Base) v1.Image {
	t.Helper()
	bi := b.Images[0]
	return &baseImg{bi}
}

type baseImg struct{ bi *image.BaseImage }

func (b *baseImg) Layers() ([]v1.Layer, error)         { return b.bi.Layers, nil }
func (b *baseImg) MediaType() (types.MediaType, error) { return b.bi.MediaType, nil }
func (b *baseImg) Size() (int64, error) {
	raw, _ := b.RawManifest()
	return int64(len(raw)), nil
}
func (b *baseImg) ConfigName() (v1.Hash, error)        { return b.bi.Manifest.Config.Digest, nil }
func (b *baseImg) ConfigFile() (*v1.ConfigFile, error) { return b.bi.Config, nil }
func (b *baseImg) RawConfigFile() ([]byte, error)      { return b.bi.RawConfig, nil }
func (b *baseImg) Digest() (v1.Hash, error)            { return b.bi.Digest, nil }
func (b *baseImg) Manifest() (*v1.Manifest, error)     { return b.bi.Manifest, nil }
func (b *baseImg) RawManifest() ([]byte, error)        { return b.bi.RawManifest, nil }
func (b *baseImg) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	if h == b.bi.Manifest.Config.Digest {
		return configBlob{b.bi}, nil
	}
	for i, d := range b.bi.Manifest.Layers {
		if d.Digest == h {
			return b.bi.Layers[i], nil
		}
	}
	return nil, errors.New("no such layer")
}
func (b *baseImg) LayerByDiffID(v1.Hash) (v1.Layer, error) { return nil, errors.New("unused") }

type configBlob struct{ bi *image.BaseImage }

func (c configBlob) Digest() (v1.Hash, error)            { return c.bi.Manifest.Config.Digest, nil }
func (c configBlob) DiffID() (v1.Hash, error)            { return c.bi.Manifest.Config.Digest, nil }
func (c configBlob) Size() (int64, error)                { return int64(len(c.bi.RawConfig)), nil }
func (c configBlob) MediaType() (types.MediaType, error) { return c.bi.Manifest.Config.MediaType, nil }
func (c configBlob) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(c.bi.RawConfig)), nil
}
func (c configBlob) Uncompressed() (io.ReadCloser, error) { return c.Compressed() }

// TestWriteLayoutUpdates checks how a layout is updated: a tag replaces its
// entry, others stay, blobs are shared; a directory that is not a layout
// is refused.
func TestWriteLayoutUpdates(t *testing.T) {
	ctx := context.Background()
	s := image.NewSession(opts(t)...)
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "layout")
	a, b := catalogImage(t, `"a"`), catalogImage(t, `"b"`)
	for _, w := range []struct {
		ref string
		img v1.Image
	}{{"oci:" + dir + ":v1", a}, {"oci:" + dir + ":v2", a}, {"oci:" + dir + ":v1", b}, {"oci:" + dir, a}, {"oci:" + dir, b}} {
		if err := s.Write(ctx, dest(t, w.ref), w.img, image.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	var got []string
	for _, d := range im.Manifests {
		name := d.Annotations["org.opencontainers.image.ref.name"]
		switch d.Digest.String() {
		case digestOf(t, a):
			got = append(got, name+"=a")
		case digestOf(t, b):
			got = append(got, name+"=b")
		}
	}
	if strings.Join(got, " ") != "v2=a v1=b =b" {
		t.Errorf("index entries %v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	// A tampered blob is rewritten.
	blobs, _ := filepath.Glob(filepath.Join(dir, "blobs", "sha256", "*"))
	for _, f := range blobs {
		fi, _ := os.Stat(f)
		os.WriteFile(f, bytes.Repeat([]byte("z"), int(fi.Size())), 0o644)
	}
	if err := s.Write(ctx, dest(t, "oci:"+dir+":v3"), a, image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := openExtract(t, "oci:"+dir+":v3", nil, opts(t)...); err != nil {
		t.Fatalf("the rewritten layout: %v", err)
	}
	// Not a layout.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "file"), nil, 0o644)
	err = s.Write(ctx, dest(t, "oci:"+other), a, image.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "is not an OCI image layout") {
		t.Fatalf("err = %v", err)
	}
}

// TestWriteArchives checks that archives are reproducible, never replace a
// file unless asked, and leave nothing behind on failure.
func TestWriteArchives(t *testing.T) {
	ctx := context.Background()
	s := image.NewSession(opts(t)...)
	defer s.Close()
	dir := t.TempDir()
	img := catalogImage(t, `{}`)
	mt := time.Unix(1700000000, 0)
	for _, kind := range []string{"oci-archive", "docker-archive"} {
		t.Run(kind, func(t *testing.T) {
			one, two := filepath.Join(dir, kind+"-1.tar"), filepath.Join(dir, kind+"-2.tar")
			for _, f := range []string{one, two} {
				if err := s.Write(ctx, dest(t, kind+":"+f), img, image.WriteOptions{ModTime: mt}); err != nil {
					t.Fatal(err)
				}
			}
			b1, _ := os.ReadFile(one)
			b2, _ := os.ReadFile(two)
			if !bytes.Equal(b1, b2) {
				t.Error("two writes of one image differ")
			}
			err := s.Write(ctx, dest(t, kind+":"+one), catalogImage(t, `"other"`), image.WriteOptions{})
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("err = %v, want fs.ErrExist", err)
			}
			if b, _ := os.ReadFile(one); !bytes.Equal(b, b1) {
				t.Error("the existing archive changed")
			}
			if err := s.Write(ctx, dest(t, kind+":"+one), catalogImage(t, `"other"`), image.WriteOptions{Overwrite: true}); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(one); bytes.Equal(b, b1) {
				t.Error("--overwrite did not replace the archive")
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
	// A cancelled write leaves nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f := filepath.Join(dir, "cancelled.tar")
	if err := s.Write(cctx, dest(t, "oci-archive:"+f), img, image.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a cancelled write left its archive")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestParseDestination(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "a:b")
	os.MkdirAll(existing, 0o755)
	for _, tc := range []struct {
		in                string
		transport         image.Transport
		path, tag, remote string
		err               string
	}{
		{in: "quay.io/x/y:v1", transport: image.Remote, remote: "quay.io/x/y:v1"},
		{in: "quay.io/x/y", transport: image.Remote, remote: "quay.io/x/y:latest"},
		{in: "docker://127.0.0.1:5000/x", transport: image.Remote, remote: "127.0.0.1:5000/x:latest"},
		{in: "oci:dir", transport: image.OCILayout, path: "dir"},
		{in: "oci:dir:v1", transport: image.OCILayout, path: "dir", tag: "v1"},
		{in: "oci:" + existing, transport: image.OCILayout, path: existing},
		{in: "oci-archive:x.tar:v1", transport: image.OCIArchive, path: "x.tar", tag: "v1"},
		{in: "docker-archive:x.tar:quay.io/x/y:v1", transport: image.DockerArchive, path: "x.tar", tag: "quay.io/x/y:v1"},
		{in: "docker-archive:x.tar:x/y", transport: image.DockerArchive, path: "x.tar", tag: "x/y:latest"},
		{in: "busybox", err: "repository name must be canonical"},
		{in: "quay.io/x/y@sha256:" + strings.Repeat("a", 64), err: "push to a tag, not a digest"},
		{in: "./layout", err: "a local path: write oci:PATH"},
		{in: "oci:", err: "missing path"},
		{in: "oci:dir:", err: "empty tag"},
		{in: "oci:dir:a b", err: "not a valid image name"},
		{in: "docker-archive:x.tar:UPPER:v1", err: "invalid destination"},
		{in: "docker-archive:x.tar:x/y@sha256:" + strings.Repeat("a", 64), err: "not by digest"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, err := image.ParseDestination(tc.in, false)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Transport != tc.transport || d.Path != tc.path || d.Tag != tc.tag {
				t.Errorf("got %+v", d)
			}
			if tc.remote != "" && d.Name.String() != tc.remote {
				t.Errorf("name %s, want %s", d.Name, tc.remote)
			}
		})
	}
}

func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"quay.io/x/y:v1", "oci:dir:v1", "oci-archive:x.tar", "docker-archive:x.tar:a/b:c", "./x", "docker://h:1/x", "oci::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := image.ParseDestination(s, false)
		if err != nil {
			return
		}
		switch d.Transport {
		case image.Remote:
			if d.Name == nil || strings.Contains(d.Name.String(), "@") {
				t.Fatalf("%q: remote %v", s, d.Name)
			}
		default:
			if d.Path == "" {
				t.Fatalf("%q: no path", s)
			}
		}
	})
}
