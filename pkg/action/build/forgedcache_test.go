package build

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/registrytest"
	serveaction "github.com/opmkit/opm/pkg/action/serve"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/imagebuild"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/serve"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// TestForgedImageCache (issue 30, item 9): a catalog image re-packed with
// one more layer holding the caches of another catalog, their digests and
// seal recomputed for the image's /configs, serves that other catalog:
// opm validate --check-cache (CheckImageCache) finds both caches out, and
// this opm's server refuses it under --cache-enforce-integrity.
func TestForgedImageCache(t *testing.T) {
	ctx := context.Background()
	good := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, good)
	evil := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, evil)
	f := filepath.Join(evil, "foo", "catalog.yaml")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(b), "image: quay.io/example/foo-bundle:v0.1.0", "image: evil.example.com/foo-bundle:v0.1.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "layout")
	base := opmBase(t, serveaction.CacheIdentity())
	for dir, tag := range map[string]string{good: "good", evil: "evil"} {
		if _, err := RunCatalog(ctx, CatalogOptions{
			Options:   Options{Dir: dir, Tags: []string{"oci:" + out + ":" + tag}, Registry: render.RegistryOptions{CacheDir: "-"}},
			BaseImage: base,
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(ref string) []serveaction.CacheFinding {
		t.Helper()
		found, err := serveaction.CheckImageCache(ctx, ref, "", render.RegistryOptions{CacheDir: "-"}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if found := check("oci:" + out + ":good"); len(found) != 0 {
		t.Errorf("the image as built: %+v", found)
	}

	// The forger's layer: evil's caches, made to match good's /configs.
	goodRoot := extractImage(t, "oci:"+out+":good")
	configs := filepath.Join(goodRoot, "configs")
	cache := filepath.Join(extractImage(t, "oci:"+out+":evil"), "var", "cache", "opm")
	files, err := declcfg.ListFiles(ctx, os.DirFS(configs))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := serve.Digest(ctx, os.DirFS(configs), files)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := serve.ReadCacheMeta(cache)
	if err != nil {
		t.Fatal(err)
	}
	meta.Digest = digest
	j, _ := json.Marshal(meta.Sealed())
	if err := os.WriteFile(filepath.Join(cache, serve.CacheSubdir, "meta.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
	jd, err := jsoncache.Digest(ctx, configs, cache, imagebuild.LayerMode)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, jsoncache.DigestFile), []byte(jd), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := imagebuild.BuildLayer(ctx, cache, []imagebuild.Tree{{Src: ".", Dst: CacheDir}}, imagebuild.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	forged, err := mutate.Append(layoutImage(t, out, "good"), mutate.Addendum{Layer: l})
	if err != nil {
		t.Fatal(err)
	}
	ref := "oci:" + registrytest.Layout(t, forged)

	// What the forgery achieves: both servers accept it as it is.
	root := extractImage(t, ref)
	if err := jsoncache.Check(ctx, filepath.Join(root, "configs"), filepath.Join(root, "var/cache/opm")); err != nil {
		t.Fatalf("upstream's check of the forged cache: %v", err)
	}
	if sr, err := serveaction.Run(ctx, serveaction.Options{Ref: filepath.Join(root, "configs"), CacheDir: filepath.Join(root, "var/cache/opm"), CacheOnly: true}); err != nil || sr.Cache != "cache hit" {
		t.Fatalf("serving the forged cache, not enforced: %+v %v", sr, err)
	}
	// Under --cache-enforce-integrity this opm refuses it.
	_, err = serveaction.Run(ctx, serveaction.Options{Ref: filepath.Join(root, "configs"), CacheDir: filepath.Join(root, "var/cache/opm"), CacheOnly: true, EnforceIntegrity: true, TempDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `image: the cache has "evil.example.com/foo-bundle:v0.1.0", the catalog "quay.io/example/foo-bundle:v0.1.0"`) {
		t.Errorf("enforced: %v", err)
	}

	var msgs []string
	for _, f := range check(ref) {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`/var/cache/opm/opm-serve does not hold what the catalog does: package "foo", bundle "foo.v0.1.0": image: the cache has "evil.example.com/foo-bundle:v0.1.0", the catalog "quay.io/example/foo-bundle:v0.1.0"`,
		`/var/cache/opm/cache (upstream's JSON cache) does not hold what the catalog does: foo_stable_foo.v0.1.0.json: its content differs from a cache built from the catalog`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings:\n%s\nwant %s", all, want)
		}
	}
}
