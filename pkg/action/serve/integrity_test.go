package serve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/serve"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// resealFor rewrites the meta.json of the cache in dir as a hostile author
// would: the digest of another catalog, sealed again (the seal is a plain
// SHA-256 of the other fields).
func resealFor(t *testing.T, dir, catalog string) {
	t.Helper()
	ctx := context.Background()
	fsys, err := safefs.OpenDir(ctx, catalog)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	digest, err := catalogDigest(ctx, fsys, "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, serve.CacheSubdir, "meta.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m serve.CacheMeta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m.Digest = digest
	j, _ := json.Marshal(m.Sealed())
	if err := os.WriteFile(p, j, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEnforceIntegrityForgedCache (issue 30, item 9): a cache built from
// one catalog and resealed with the digest of another is refused under
// --cache-enforce-integrity, naming what differs; the honest cache of the
// same catalog passes.
func TestEnforceIntegrityForgedCache(t *testing.T) {
	ctx := context.Background()
	good, evil := exampleCatalog(t), evilCatalog(t)

	for _, http := range []bool{false, true} {
		cache := t.TempDir()
		opts := Options{Ref: evil, CacheDir: cache, CacheOnly: true, TempDir: t.TempDir()}
		if http {
			opts.HTTPAddr = "127.0.0.1:0"
		}
		if _, err := Run(ctx, opts); err != nil {
			t.Fatal(err)
		}
		resealFor(t, cache, good)

		opts.Ref, opts.EnforceIntegrity = good, true
		_, err := Run(ctx, opts)
		want := `cache requires rebuild: the cache does not hold what the catalog does (it was built from another catalog): package "web-console", bundle "web-console.v2.1.0": image: the cache has "evil.example.com/web-console-bundle:v2.1.0", the catalog "quay.io/example/web-console-bundle:v2.1.0"`
		if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), want) {
			t.Fatalf("http=%v: forged cache: %v\nwant %s", http, err, want)
		}

		// Without the flag the cache is trusted (its digests catch stale
		// caches and corruption, not forgery): a hit.
		opts.EnforceIntegrity = false
		if res, err := Run(ctx, opts); err != nil || res.Cache != "cache hit" {
			t.Fatalf("not enforced: %+v %v", res, err)
		}
		// The honest cache of the catalog is a hit, verified.
		if err := os.RemoveAll(filepath.Join(cache, serve.CacheSubdir)); err != nil {
			t.Fatal(err)
		}
		if res, err := Run(ctx, opts); err != nil || res.Cache != "cache built" {
			t.Fatalf("building: %+v %v", res, err)
		}
		opts.EnforceIntegrity = true
		if res, err := Run(ctx, opts); err != nil || res.Cache != "cache hit" {
			t.Fatalf("honest cache: %+v %v", res, err)
		}
	}
}

// TestEnforceIntegrityUpstreamCache: a directory holding only upstream's
// JSON cache is not served from (this opm never reads it); under
// --cache-enforce-integrity the error says what is there.
func TestEnforceIntegrityUpstreamCache(t *testing.T) {
	cache := t.TempDir()
	if err := os.Mkdir(filepath.Join(cache, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "digest"), []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{Ref: exampleCatalog(t), CacheDir: cache, CacheOnly: true, EnforceIntegrity: true, TempDir: t.TempDir()})
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "it holds upstream's JSON cache (cache/ and digest), which this opm never serves from") {
		t.Fatalf("err %v", err)
	}
}

// forgeCache writes into dir the caches of catalog evil, made to look
// like those of catalog good: opm-serve/meta.json resealed with good's
// digest, upstream's digest recomputed over good and evil's cache/.
func forgeCache(t *testing.T, dir, good, evil string) {
	t.Helper()
	ctx := context.Background()
	if _, err := BuildImageCache(ctx, ImageCacheOptions{Catalog: evil, Dir: dir, OpmServe: true}); err != nil {
		t.Fatal(err)
	}
	resealFor(t, dir, good)
	d, err := jsoncache.Digest(ctx, good, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, jsoncache.DigestFile), []byte(d), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckCache (issue 30, item 9): the caches of a catalog directory
// are built again from it and compared.
func TestCheckCache(t *testing.T) {
	ctx := context.Background()
	good, evil := exampleCatalog(t), evilCatalog(t)
	check := func(dir string) []CacheFinding {
		t.Helper()
		found, err := CheckCache(ctx, CheckCacheOptions{Catalog: good, CacheDir: dir, Name: "CACHE", TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}

	honest := filepath.Join(t.TempDir(), "cache")
	if _, err := BuildImageCache(ctx, ImageCacheOptions{Catalog: good, Dir: honest, OpmServe: true}); err != nil {
		t.Fatal(err)
	}
	if found := check(honest); len(found) != 0 {
		t.Errorf("honest cache: %+v", found)
	}

	// Upstream's server would accept the forged JSON cache, this opm's
	// the forged opm-serve/ cache: both are found out.
	forged := filepath.Join(t.TempDir(), "cache")
	forgeCache(t, forged, good, evil)
	if err := jsoncache.Check(ctx, good, forged); err != nil {
		t.Fatalf("the forged JSON cache's digest: %v", err)
	}
	var msgs []string
	for _, f := range check(forged) {
		if f.NotChecked {
			t.Errorf("not checked: %s", f.Message)
		}
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`CACHE/opm-serve does not hold what the catalog does: package "web-console", bundle "web-console.v2.1.0": image: the cache has "evil.example.com/web-console-bundle:v2.1.0", the catalog "quay.io/example/web-console-bundle:v2.1.0"`,
		`CACHE/cache (upstream's JSON cache) does not hold what the catalog does: web-console_stable_web-console.v2.1.0.json: its content differs from a cache built from the catalog (812 bytes, not 811)`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings:\n%s\nwant %s", all, want)
		}
	}

	// Another opm version's cache cannot be checked: it says so.
	m, err := serve.ReadCacheMeta(honest)
	if err != nil {
		t.Fatal(err)
	}
	m.OpmVersion = "v0.0.1"
	j, _ := json.Marshal(m.Sealed())
	if err := os.WriteFile(filepath.Join(honest, serve.CacheSubdir, "meta.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
	if found := check(honest); len(found) != 1 || !found[0].NotChecked || !strings.Contains(found[0].Message, "CACHE/opm-serve: written by opm v0.0.1") {
		t.Errorf("another version's cache: %+v", found)
	}
}

// evilCatalog is the example catalog with one bundle image changed.
func evilCatalog(t *testing.T) string {
	t.Helper()
	evil := exampleCatalog(t)
	f := filepath.Join(evil, "web-console", "catalog.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "image: quay.io/example/web-console-bundle:v2.1.0", "image: evil.example.com/web-console-bundle:v2.1.0", 1))
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return evil
}
