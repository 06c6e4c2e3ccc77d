package render

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/template"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
)

func renderJSON(t testing.TB, opts Options) ([]byte, error) {
	t.Helper()
	cfg, err := Render(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), nil
}

func mustPush(t testing.TB, ref string, img v1.Image, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := registrytest.Push(context.Background(), ref, img); err != nil {
		t.Fatal(err)
	}
}

// literal returns a template that always yields s.
func literal(t testing.TB, s string) *template.Template {
	tmpl, err := template.New("ref").Parse(strings.ReplaceAll(s, "{{", `{{"{{"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// privateTemp points TMPDIR at a fresh directory and fails the test if
// anything is left in it when the test ends.
func privateTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			t.Errorf("left in the temporary directory: %s", e.Name())
		}
	})
}

func TestRenderImage(t *testing.T) {
	reg := registrytest.New(t)
	catalogDir := filepath.Join("testdata", "image", "catalog")
	bundleDir := filepath.Join("testdata", "image", "bundle")

	catRef := reg.Host + "/catalog:v1"
	img, err := registrytest.DirImage(catalogDir, "configs", map[string]string{ConfigsLabel: "/configs"})
	mustPush(t, catRef, img, err)
	nestedRef := reg.Host + "/catalog:nested"
	img, err = registrytest.DirImage(catalogDir, "srv/fbc", map[string]string{ConfigsLabel: "/srv/fbc/", "a": "b"})
	mustPush(t, nestedRef, img, err)
	bundleRef := reg.Host + "/bundle:v1.0.0"
	img, err = registrytest.DirImage(bundleDir, "", map[string]string{BundlePackageLabel: "tiny"})
	mustPush(t, bundleRef, img, err)
	sqliteRef := reg.Host + "/sqlite:v1"
	img, err = registrytest.Image(map[string]string{DatabaseLabel: "/database/index.db", ConfigsLabel + "x": "y"})
	mustPush(t, sqliteRef, img, err)
	bareRef := reg.Host + "/bare:v1"
	img, err = registrytest.Image(nil)
	mustPush(t, bareRef, img, err)
	otherRef := reg.Host + "/other:v1"
	img, err = registrytest.Image(map[string]string{"z": "1", "maintainer": "me", "a.b": "x=y"})
	mustPush(t, otherRef, img, err)
	missingRef := reg.Host + "/catalog:missing"
	img, err = registrytest.DirImage(catalogDir, "configs", map[string]string{ConfigsLabel: "/elsewhere"})
	mustPush(t, missingRef, img, err)
	badRef := reg.Host + "/catalog:bad"
	img, err = registrytest.DirImage(filepath.Join("testdata", "image", "badcatalog"), "configs", map[string]string{ConfigsLabel: "/configs"})
	mustPush(t, badRef, img, err)
	evilRef := reg.Host + "/catalog:evil"
	l, err := registrytest.Layer(registrytest.Entry{Name: "configs/../../../escape", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	img, err = registrytest.Image(map[string]string{ConfigsLabel: "/configs"}, l)
	mustPush(t, evilRef, img, err)

	cache := t.TempDir()
	reg0 := RegistryOptions{CacheDir: cache}
	dirJSON, err := renderJSON(t, Options{Refs: []string{catalogDir}})
	if err != nil {
		t.Fatal(err)
	}
	bundleJSON, err := renderJSON(t, Options{Refs: []string{bundleDir}, ImageRefTemplate: literal(t, bundleRef)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bundleJSON, []byte(`"image": "`+bundleRef+`"`)) {
		t.Fatalf("bundle directory render lacks the image:\n%s", bundleJSON)
	}

	for _, tc := range []struct {
		name string
		opts Options
		want []byte
		err  string
		is   error
	}{
		{name: "Success/Catalog", opts: Options{Refs: []string{catRef}}, want: dirJSON},
		{name: "Success/CatalogNestedLabel", opts: Options{Refs: []string{nestedRef}}, want: dirJSON},
		{name: "Success/Bundle", opts: Options{Refs: []string{bundleRef}}, want: bundleJSON},
		{name: "Success/Both", opts: Options{Refs: []string{catRef, bundleRef}}, want: append(append([]byte{}, dirJSON...), bundleJSON...)},
		{name: "Success/CatalogMask", opts: Options{Refs: []string{catRef}, AllowedRefMask: RefDCImage | RefDCDir}, want: dirJSON},
		{name: "Error/CatalogNotAllowed", opts: Options{Refs: []string{catRef}, AllowedRefMask: RefBundleImage},
			err: `render reference "` + catRef + `": cannot render declarative config image: not allowed`, is: ErrNotAllowed},
		{name: "Error/BundleNotAllowed", opts: Options{Refs: []string{bundleRef}, AllowedRefMask: RefDCImage | RefDCDir},
			err: `render reference "` + bundleRef + `": cannot render bundle image: not allowed`, is: ErrNotAllowed},
		{name: "Error/SqliteNoFile", opts: Options{Refs: []string{sqliteRef}},
			err: `render reference "` + sqliteRef + `": render "` + sqliteRef + `": the image has no file /database/index.db (label ` + DatabaseLabel + `)`},
		{name: "Error/SqliteMask", opts: Options{Refs: []string{sqliteRef}, AllowedRefMask: RefDCImage},
			err: `render reference "` + sqliteRef + `": cannot render sqlite image: not allowed`, is: ErrNotAllowed},
		{name: "Error/NoLabels", opts: Options{Refs: []string{bareRef}},
			err: `render reference "` + bareRef + `": render "` + bareRef + `": image type could not be determined: image has no labels`},
		{name: "Error/OtherLabels", opts: Options{Refs: []string{otherRef}},
			err: `render reference "` + otherRef + `": render "` + otherRef + "\": image type could not be determined, found labels\n  a.b=x=y\n  maintainer=me\n  z=1"},
		{name: "Error/ConfigsMissing", opts: Options{Refs: []string{missingRef}},
			err: `render reference "` + missingRef + `": render "` + missingRef + `": the image has no directory /elsewhere (label ` + ConfigsLabel + `)`},
		{name: "Error/BadCatalog", opts: Options{Refs: []string{badRef}},
			err: `render reference "` + badRef + `": ` + badRef + `:/configs/catalog.json:2:`},
		{name: "Error/Escape", opts: Options{Refs: []string{evilRef}},
			err: `render reference "` + evilRef + `": extracting ` + evilRef + `: layer sha256:`, is: image.ErrUnsafePath},
		{name: "Error/NotCanonical", opts: Options{Refs: []string{"no-such-dir/catalog"}},
			err: `render reference "no-such-dir/catalog": invalid image reference "no-such-dir/catalog": repository name must be canonical`, is: image.ErrNotCanonical},
	} {
		t.Run(tc.name, func(t *testing.T) {
			privateTemp(t)
			tc.opts.Registry = reg0
			got, err := renderJSON(t, tc.opts)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v\nwant prefix %s", err, tc.err)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("err does not wrap %v", tc.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestPrefetchImages(t *testing.T) {
	reg := registrytest.New(t)
	bundleDir := filepath.Join("testdata", "image", "bundle")
	var refs []string
	for _, tag := range []string{"a", "b", "c"} {
		ref := reg.Host + "/bundle:" + tag
		img, err := registrytest.DirImage(bundleDir, "", map[string]string{BundlePackageLabel: "tiny", "tag": tag})
		mustPush(t, ref, img, err)
		refs = append(refs, ref)
	}
	bareRef := reg.Host + "/bare:v1"
	img, err := registrytest.Image(nil)
	mustPush(t, bareRef, img, err)
	ctx := context.Background()

	for _, cache := range []string{"", "-"} {
		t.Run("Success/Cache"+cache, func(t *testing.T) {
			privateTemp(t)
			if cache == "" {
				cache = t.TempDir()
			}
			// A directory and a repeated image among the refs.
			opts := Options{Refs: append([]string{bundleDir, refs[0]}, refs...), Registry: RegistryOptions{CacheDir: cache}}
			want, err := renderJSON(t, opts)
			if err != nil {
				t.Fatal(err)
			}
			beforeB, beforeM := reg.BlobGets(), reg.ManifestGets()
			pre := prefetchImages(ctx, opts)
			defer pre.close()
			// 3 manifests, 3 configs and their 1 shared layer, once each.
			if n := reg.ManifestGets() - beforeM; n != 3 {
				t.Errorf("prefetch: %d manifest GETs, want 3", n)
			}
			if cache == "-" {
				if n := reg.BlobGets() - beforeB; n != 4 {
					t.Errorf("prefetch: %d blob GETs, want 4", n)
				}
			}
			beforeB, beforeM = reg.BlobGets(), reg.ManifestGets()
			cfg, err := renderPrefetched(ctx, opts, prefetched{images: pre})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			declcfg.WriteJSON(*cfg, &got)
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("prefetched render differs:\n%s\nwant:\n%s", got.Bytes(), want)
			}
			// The repeated ref was rendered again, through the session.
			if n := reg.ManifestGets() - beforeM; n != 0 {
				t.Errorf("render after prefetch: %d manifest GETs, want 0", n)
			}
			if n := reg.BlobGets() - beforeB; n != 0 {
				t.Errorf("render after prefetch: %d blob GETs, want 0", n)
			}
		})
	}
	t.Run("Error/FirstInOrder", func(t *testing.T) {
		privateTemp(t)
		opts := Options{Refs: []string{refs[0], bareRef, "no-such-dir/x"}, Registry: RegistryOptions{CacheDir: t.TempDir()}}
		pre := prefetchImages(ctx, opts)
		defer pre.close()
		_, err := renderPrefetched(ctx, opts, prefetched{images: pre})
		if err == nil || !strings.HasPrefix(err.Error(), `render reference "`+bareRef+`": render "`+bareRef+`": image type could not be determined`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Success/MaskWithoutImages", func(t *testing.T) {
		opts := Options{Refs: refs, AllowedRefMask: RefDCDir}
		if pre := prefetchImages(ctx, opts); pre != nil {
			t.Error("prefetched images the mask rejects")
		}
	})
}

// TestRenderImageInterrupt cancels a render while a layer downloads: the
// render stops with the context's error and leaves no temporary files.
func TestRenderImageInterrupt(t *testing.T) {
	reg := registrytest.New(t)
	ref := reg.Host + "/catalog:v1"
	img, err := registrytest.DirImage(filepath.Join("testdata", "image", "catalog"), "configs", map[string]string{ConfigsLabel: "/configs"})
	mustPush(t, ref, img, err)
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()
	started := make(chan struct{})
	var once sync.Once
	reg.Fault(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, ld.String()) {
			return false
		}
		once.Do(func() { close(started) })
		<-r.Context().Done()
		return true
	})
	privateTemp(t)
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err = Render(ctx, Options{Refs: []string{ref}, Registry: RegistryOptions{CacheDir: cache}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasPrefix(fi.Name(), ".tmp-") {
			t.Errorf("left %s", p)
		}
		return nil
	})
}
