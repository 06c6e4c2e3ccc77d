package build

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/action/dockerfile"
	serveaction "github.com/opmkit/opm/pkg/action/serve"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/imagebuild"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// opmBase writes a base image into an OCI layout, labelled as an opm image
// whose serve cache identity is id ("" for none), and returns its
// reference.
func opmBase(t *testing.T, id string) string {
	t.Helper()
	img := testBase(t, v1.Platform{OS: "linux", Architecture: "amd64"})
	if id != "" {
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.Config.Labels[imagebuild.LabelServeCache] = id
		var err error
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
	}
	return "oci:" + registrytest.Layout(t, img)
}

// layoutImage returns the image tagged tag in the OCI layout dir.
func layoutImage(t *testing.T, dir, tag string) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == tag {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("%s: no image tagged %s", dir, tag)
	return nil
}

// layoutConfig returns the config of the image tagged in an OCI layout
// (oci:DIR:TAG).
func layoutConfig(t *testing.T, ref string) *v1.ConfigFile {
	t.Helper()
	dir, tag, _ := strings.Cut(strings.TrimPrefix(ref, "oci:"), ":")
	cf, err := layoutImage(t, dir, tag).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// extractImage unpacks an image's root filesystem, keeping modes.
func extractImage(t *testing.T, ref string) string {
	t.Helper()
	ctx := context.Background()
	img, err := image.Open(ctx, ref, image.WithFileModes(), image.WithCacheDir("-"))
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	dst := t.TempDir()
	if err := img.Extract(ctx, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestServeCache(t *testing.T) {
	ctx := context.Background()
	cat := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, cat)
	out := t.TempDir()
	var warnings []string
	build := func(base string, cache *bool, tag string) *Result {
		t.Helper()
		res, err := RunCatalog(ctx, CatalogOptions{
			Options:    Options{Dir: cat, Tags: []string{"oci:" + filepath.Join(out, "layout") + ":" + tag}, SourceDateEpoch: "1700000000", Registry: render.RegistryOptions{CacheDir: "-"}},
			BaseImage:  base,
			ServeCache: cache,
			Warn:       func(s string) { warnings = append(warnings, s) },
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ref := func(tag string) string { return "oci:" + filepath.Join(out, "layout") + ":" + tag }

	// On this opm's own image: both caches, loaded by this opm as they
	// are, and upstream's digest valid in the image.
	ours := opmBase(t, serveaction.CacheIdentity())
	res := build(ours, nil, "ours")
	if res.ServeCache == nil || !res.ServeCache.OpmServe || res.ServeCache.Dir != CacheDir || len(res.ServeCache.JSONDigest) != 16 {
		t.Fatalf("serve cache %+v", res.ServeCache)
	}
	if again := build(ours, nil, "ours-again"); again.Digest != res.Digest {
		t.Errorf("two builds: %s and %s", res.Digest, again.Digest)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	cf := layoutConfig(t, ref("ours"))
	if want := []string{"serve", "/configs", "--cache-dir=/var/cache/opm"}; !reflect.DeepEqual(cf.Config.Cmd, want) {
		t.Errorf("cmd %q, want %q", cf.Config.Cmd, want)
	}
	root := extractImage(t, ref("ours"))
	cache := filepath.Join(root, "var/cache/opm")
	for _, f := range []string{"opm-serve/meta.json", "opm-serve/index.bin", "opm-serve/data.bin", "cache/packages.json", "digest"} {
		if _, err := os.Stat(filepath.Join(cache, f)); err != nil {
			t.Error(err)
		}
	}
	if err := jsoncache.Check(ctx, filepath.Join(root, "configs"), cache); err != nil {
		t.Errorf("upstream's integrity check in the image: %v", err)
	}
	// This opm serves from it as it is, integrity enforced: a cache hit.
	sr, err := serveaction.Run(ctx, serveaction.Options{Ref: filepath.Join(root, "configs"), CacheDir: cache, CacheOnly: true, EnforceIntegrity: true})
	if err != nil || sr.Cache != "cache hit" {
		t.Fatalf("serving the image's cache: %+v, %v", sr, err)
	}

	// Another opm's image: upstream's cache only, and a warning.
	other := build(opmBase(t, "opm-serve-cache/1 v0.0.1+other"), nil, "other")
	if other.ServeCache == nil || other.ServeCache.OpmServe || len(warnings) != 1 || !strings.Contains(warnings[0], "upstream's JSON cache only") {
		t.Errorf("another opm's base: %+v, warnings %q", other.ServeCache, warnings)
	}
	if _, err := os.Stat(filepath.Join(extractImage(t, ref("other")), "var/cache/opm/opm-serve")); !os.IsNotExist(err) {
		t.Errorf("opm-serve on another opm's base: %v", err)
	}
	// Upstream's (no label): upstream's cache, no warning.
	if up := build(opmBase(t, ""), nil, "upstream"); up.ServeCache == nil || up.ServeCache.OpmServe || len(warnings) != 1 {
		t.Errorf("upstream's base: %+v, warnings %q", up.ServeCache, warnings)
	}

	// --serve-cache=false: the Dockerfile's image.
	no, yes := false, true
	if r := build(ours, &no, "none"); r.ServeCache != nil {
		t.Errorf("--serve-cache=false: %+v", r.ServeCache)
	}
	if cf := layoutConfig(t, ref("none")); !reflect.DeepEqual(cf.Config.Cmd, dockerfile.Cmd()) {
		t.Errorf("--serve-cache=false: cmd %q", cf.Config.Cmd)
	}
	// scratch: none unless asked; then upstream's cache only (OLM's own
	// opm serves it, in extractContent mode).
	if r := build("scratch", nil, "scratch"); r.ServeCache != nil {
		t.Errorf("scratch: %+v", r.ServeCache)
	}
	if r := build("scratch", &yes, "scratch-cache"); r.ServeCache == nil || r.ServeCache.OpmServe {
		t.Errorf("scratch with the cache: %+v", r.ServeCache)
	}
	root = extractImage(t, ref("scratch-cache"))
	if err := jsoncache.Check(ctx, filepath.Join(root, "configs"), filepath.Join(root, "var/cache/opm")); err != nil {
		t.Errorf("scratch: upstream's integrity check: %v", err)
	}
}

// TestServeCacheRefusesInvalid: a catalog the server would refuse gets no
// image, even with --skip-validate, while the cache is built.
func TestServeCacheRefusesInvalid(t *testing.T) {
	cat := t.TempDir()
	if err := os.WriteFile(filepath.Join(cat, "c.json"), []byte(`{"schema":"example.com/x","name":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := RunCatalog(context.Background(), CatalogOptions{
		Options:   Options{Dir: cat, Tags: []string{"oci:" + filepath.Join(t.TempDir(), "l")}, Registry: render.RegistryOptions{CacheDir: "-"}},
		BaseImage: opmBase(t, ""),
	})
	if err == nil || !strings.Contains(err.Error(), "pre-building the serve cache") || !strings.Contains(err.Error(), "--serve-cache=false") {
		t.Fatalf("err %v", err)
	}
}

func TestManifests(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	cat := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, cat)
	dir := filepath.Join(t.TempDir(), "deploy")
	opts := CatalogOptions{
		Options:   Options{Dir: cat, Tags: []string{"oci:" + filepath.Join(t.TempDir(), "l"), reg.Host + "/team/my-catalog:v1"}, Registry: render.RegistryOptions{CacheDir: t.TempDir()}},
		BaseImage: "scratch",
		Manifests: dir,
	}
	res, err := RunCatalog(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Manifests) != 2 {
		t.Fatalf("manifests %q", res.Manifests)
	}
	cs, _ := os.ReadFile(filepath.Join(dir, "catalogsource.yaml"))
	cc, _ := os.ReadFile(filepath.Join(dir, "clustercatalog.yaml"))
	img := reg.Host + "/team/my-catalog@" + res.Digest
	for _, want := range []string{"image: " + img, "name: my-catalog", "extractContent:\n      catalogDir: /configs\n"} {
		if !strings.Contains(string(cs), want) {
			t.Errorf("catalogsource.yaml lacks %q:\n%s", want, cs)
		}
	}
	if strings.Contains(string(cs), "cacheDir") {
		t.Errorf("a scratch image without a cache: cacheDir in\n%s", cs)
	}
	if !strings.Contains(string(cc), "ref: "+img) {
		t.Errorf("clustercatalog.yaml:\n%s", cc)
	}
	// Not replaced unless asked.
	if _, err := RunCatalog(ctx, opts); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("again: %v", err)
	}
	opts.Overwrite = true
	if _, err := RunCatalog(ctx, opts); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	// A registry destination is needed.
	opts.Tags = opts.Tags[:1]
	if _, err := RunCatalog(ctx, opts); err == nil || !strings.Contains(err.Error(), "needs a registry destination") {
		t.Errorf("no registry destination: %v", err)
	}
}
