// Package registrytest starts container registries for tests, and builds
// and pushes small images from files and directories.
//
// [New] serves go-containerregistry's in-process registry on 127.0.0.1,
// counting blob downloads and letting a test inject faults. [Distribution]
// starts the real distribution registry (/usr/bin/docker-registry, Debian's
// docker-registry package) with TLS from a CA the test makes and htpasswd
// basic auth, and skips the test when the binary is absent.
package registrytest

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Server is an in-process registry on 127.0.0.1.
type Server struct {
	// Host is "127.0.0.1:PORT", to prefix repositories with.
	Host string
	// URL is the server's base URL.
	URL string

	blobGets     atomic.Int64
	manifestGets atomic.Int64
	fault        atomic.Pointer[func(http.ResponseWriter, *http.Request) bool]
	srv          *httptest.Server
	reg          http.Handler
}

// New starts an in-process registry, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{}
	reg := registry.New(registry.Logger(discardLogger()))
	s.reg = reg
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := s.fault.Load(); f != nil && (*f)(w, r) {
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			s.blobGets.Add(1)
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
			s.manifestGets.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	s.Host = strings.TrimPrefix(s.srv.URL, "http://")
	return s
}

// Registry returns the well-behaved registry behind the faults (for a
// fault that passes some requests through).
func (s *Server) Registry() http.Handler { return s.reg }

// Close stops the server (to test a registry that is down).
func (s *Server) Close() { s.srv.Close() }

// BlobGets returns how many blob GET requests the server answered.
func (s *Server) BlobGets() int64 { return s.blobGets.Load() }

// ManifestGets returns how many manifest GET requests the server answered.
func (s *Server) ManifestGets() int64 { return s.manifestGets.Load() }

// Fault makes f see every request first; when it returns true the request
// is answered. nil removes the fault.
func (s *Server) Fault(f func(w http.ResponseWriter, r *http.Request) bool) {
	if f == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&f)
}

// Entry is one tar entry of a test layer.
type Entry struct {
	Name     string
	Type     byte // tar.TypeReg when 0
	Body     string
	Linkname string
}

// Layer builds a gzip layer from entries, in the order given.
func Layer(entries ...Entry) (v1.Layer, error) {
	return CompressedLayer(compression.GZip, entries...)
}

// CompressedLayer builds a layer compressed with comp (gzip, zstd or none).
func CompressedLayer(comp compression.Compression, entries ...Entry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Linkname, Mode: 0o644}
		switch e.Type {
		case 0, tar.TypeReg:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
		case tar.TypeDir:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.WriteString(tw, e.Body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if comp == compression.None {
		return static.NewLayer(b, types.OCIUncompressedLayer), nil
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithCompression(comp))
}

// DirEntries returns entries for every directory and regular file under
// dir, named prefix/relative-path, in lexical order. Symlinks are followed.
func DirEntries(dir, prefix string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		n := strings.Trim(prefix+"/"+filepath.ToSlash(rel), "/")
		if rel == "." {
			n = strings.Trim(prefix, "/")
			if n == "" {
				return nil
			}
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			out = append(out, Entry{Name: n + "/", Type: tar.TypeDir})
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, Entry{Name: n, Body: string(b)})
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Image builds an image with the given labels and layers.
func Image(labels map[string]string, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = labels
	return mutate.ConfigFile(img, cf)
}

// Layout writes img to a new OCI layout in a test temporary directory and
// returns the layout's directory (an "oci:" reference without the prefix).
func Layout(t testing.TB, img v1.Image) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	return dir
}

// DirImage builds a one-layer image holding dir under prefix.
func DirImage(dir, prefix string, labels map[string]string) (v1.Image, error) {
	entries, err := DirEntries(dir, prefix)
	if err != nil {
		return nil, err
	}
	l, err := Layer(entries...)
	if err != nil {
		return nil, err
	}
	return Image(labels, l)
}

// Push writes img to ref.
func Push(ctx context.Context, ref string, img v1.Image, opts ...remote.Option) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.Write(r, img, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
}

// Labels for catalog and bundle images.
const (
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	PackageLabel = "operators.operatorframework.io.bundle.package.v1"
)

// PushIndex writes idx to ref.
func PushIndex(ctx context.Context, ref string, idx v1.ImageIndex, opts ...remote.Option) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.WriteIndex(r, idx, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
}
