package render

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

// hostSecret is what a file outside every root holds: a catalog blob and
// a Kubernetes object, so that it would render if it were ever read.
const hostSecret = `{"schema": "olm.package", "name": "TOP-SECRET-host-file"}
`

// secretSandbox makes base/secret and base/tmp (TMPDIR, checked empty at
// the end), so that dst/../.. of an extraction under TMPDIR is base.
func secretSandbox(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "secret"), []byte(hostSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o700)
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			t.Errorf("left in the temporary directory: %s", e.Name())
		}
	})
	return base
}

// transports writes img as a registry image, an OCI layout, an OCI archive
// and a docker archive, and returns their references.
func transports(t *testing.T, reg *registrytest.Server, repo string, img v1.Image) map[string]string {
	t.Helper()
	ref := reg.Host + "/" + repo + ":v1"
	mustPush(t, ref, img, nil)
	dir := t.TempDir()
	lp, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.AddFS(os.DirFS(filepath.Join(dir, "layout"))); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	os.WriteFile(filepath.Join(dir, "layout.tar"), buf.Bytes(), 0o600)
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

// TestRenderImageSymlinkChain: links that look harmless lexically but lead
// to a host file once resolved (issue 10, item 1) fail the render, for
// catalog and bundle images, through every transport; the host file never
// shows in the output or the error.
func TestRenderImageSymlinkChain(t *testing.T) {
	reg := registrytest.New(t)
	bundleEntries, err := registrytest.DirEntries(filepath.Join("testdata", "image", "bundle"), "")
	if err != nil {
		t.Fatal(err)
	}
	chain := func(dir, file string) []registrytest.Entry {
		return []registrytest.Entry{
			{Name: dir + "/sub/", Type: tar.TypeDir},
			{Name: dir + "/sub/d", Type: tar.TypeSymlink, Linkname: ".."},
			// From TMPDIR/opm-render-*/DIR: sub/d is DIR, ../../.. is base.
			{Name: dir + "/" + file, Type: tar.TypeSymlink, Linkname: "sub/d/sub/d/../../../secret"},
		}
	}
	catLayer, _ := registrytest.Layer(append([]registrytest.Entry{{Name: "configs/a.json", Body: `{"schema": "olm.package", "name": "a"}`}}, chain("configs", "x.json")...)...)
	catalog, _ := registrytest.Image(map[string]string{ConfigsLabel: "/configs"}, catLayer)
	bunLayer, _ := registrytest.Layer(append(bundleEntries, chain("manifests", "x.yaml")...)...)
	bundle, _ := registrytest.Image(map[string]string{BundlePackageLabel: "tiny"}, bunLayer)

	for kind, img := range map[string]v1.Image{"catalog": catalog, "bundle": bundle} {
		for tr, ref := range transports(t, reg, "chain-"+kind, img) {
			t.Run(kind+"/"+tr, func(t *testing.T) {
				secretSandbox(t)
				got, err := renderJSON(t, Options{Refs: []string{ref}, Registry: RegistryOptions{CacheDir: t.TempDir()}})
				if err == nil || !strings.Contains(err.Error(), "leads out of the image") || !errors.Is(err, image.ErrUnsafePath) {
					t.Fatalf("err = %v, output %s", err, got)
				}
				if strings.Contains(err.Error(), "TOP-SECRET") || strings.Contains(string(got), "TOP-SECRET") {
					t.Errorf("the host file shows: %v %s", err, got)
				}
			})
		}
	}
}

// TestLoadExtractedConfined: whatever extraction lets through, reading the
// extracted content never follows a link out of it.
func TestLoadExtractedConfined(t *testing.T) {
	base := secretSandbox(t)
	secretFile := filepath.Join(base, "secret")
	for _, tc := range []struct {
		name   string
		bundle bool
		links  map[string]string
	}{
		{name: "CatalogAbsolute", links: map[string]string{"configs/x.json": secretFile}},
		{name: "CatalogRelative", links: map[string]string{"configs/x.json": "../../secret"}},
		{name: "CatalogDir", links: map[string]string{"configs/pkg": "../.."}},
		{name: "CatalogRoot", links: map[string]string{"configs": ".."}},
		{name: "BundleManifest", bundle: true, links: map[string]string{"manifests/x.yaml": secretFile}},
		{name: "BundleMetadata", bundle: true, links: map[string]string{"metadata": "../.."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, "x-"+tc.name)
			src := filepath.Join("testdata", "image", "bundle")
			if tc.bundle {
				os.CopyFS(dir, os.DirFS(src))
			} else {
				os.MkdirAll(filepath.Join(dir, "configs"), 0o700)
				os.WriteFile(filepath.Join(dir, "configs", "a.json"), []byte(`{"schema": "olm.package", "name": "a"}`), 0o600)
			}
			for l, target := range tc.links {
				os.RemoveAll(filepath.Join(dir, l))
				os.MkdirAll(filepath.Dir(filepath.Join(dir, l)), 0o700)
				if err := os.Symlink(target, filepath.Join(dir, l)); err != nil {
					t.Fatal(err)
				}
			}
			// Either an error or a render without the host file.
			r, err := loadExtracted(context.Background(), dir, "example.com/x:v1", "/configs", tc.bundle, Options{AllowedRefMask: RefAll})
			if err == nil {
				cfg := r.cfg
				for _, p := range cfg.Packages {
					if strings.Contains(p.Name, "TOP-SECRET") {
						t.Fatalf("read the host file: %+v", p)
					}
				}
				for _, b := range cfg.Bundles {
					for _, p := range b.Properties {
						if strings.Contains(string(p.Value), "VE9QLVNFQ1JFV") || strings.Contains(string(p.Value), "TOP-SECRET") {
							t.Fatalf("read the host file into %s", p.Type)
						}
					}
				}
				return // the link was skipped, not followed
			}
			if strings.Contains(err.Error(), "TOP-SECRET") {
				t.Errorf("the host file shows in %v", err)
			}
			t.Log(err)
		})
	}
}
