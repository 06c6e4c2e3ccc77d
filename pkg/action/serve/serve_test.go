package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/api"
	"github.com/opmkit/opm/pkg/render"
)

// exampleCatalog copies the repository's example catalog into a temporary
// directory.
func exampleCatalog(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dst, os.DirFS("../../../examples/catalog")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveFor runs opts until check returns, then stops the server and
// returns Run's result and log.
func serveFor(t *testing.T, opts Options, check func(Ready)) (*Result, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := &syncBuffer{}
	opts.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	var checked bool
	opts.Ready = func(r Ready) {
		go func() {
			defer cancel()
			check(r)
			checked = true
		}()
	}
	res, err := Run(ctx, opts)
	if err == nil && !opts.CacheOnly && !checked {
		t.Errorf("Run returned before the check finished")
	}
	return res, logs.String(), err
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func checkServing(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := dial(t, addr)
	resp, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil || resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Errorf("health: %v %v", resp, err)
	}
	pkg, err := api.NewRegistryClient(conn).GetPackage(ctx, &api.GetPackageRequest{Name: "web-console"})
	if err != nil || pkg.DefaultChannelName != "stable" {
		t.Errorf("GetPackage: %v %v", pkg, err)
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	tmp := t.TempDir()
	res, logs, err := serveFor(t, Options{Ref: exampleCatalog(t), TempDir: tmp}, func(r Ready) {
		checkServing(t, r.GRPCAddr.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cache != "built" || res.Stats.Packages != 3 {
		t.Errorf("result %+v", res)
	}
	for _, want := range []string{`msg="serving registry"`, "configs=", "port=", `msg="shutting down server"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

func TestCacheDir(t *testing.T) {
	catalog := exampleCatalog(t)
	cache := filepath.Join(t.TempDir(), "cache")
	run := func(opts Options) (*Result, string, error) {
		opts.Ref, opts.CacheDir = catalog, cache
		if opts.CacheOnly {
			return serveFor(t, opts, nil)
		}
		return serveFor(t, opts, func(r Ready) { checkServing(t, r.GRPCAddr.String()) })
	}

	res, _, err := run(Options{CacheOnly: true})
	if err != nil || res.Cache != "cache built" {
		t.Fatalf("first --cache-only: %+v %v", res, err)
	}
	res, _, err = run(Options{EnforceIntegrity: true})
	if err != nil || res.Cache != "cache hit" {
		t.Fatalf("serving from the cache: %+v %v", res, err)
	}

	// The catalog changes: enforcing fails, otherwise it is rebuilt.
	f := filepath.Join(catalog, "web-console", "catalog.yaml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, append(data, "\n# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(Options{CacheOnly: true, EnforceIntegrity: true})
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "integrity check failed: cache requires rebuild: cache reports digest as") {
		t.Errorf("enforced integrity: %v", err)
	}
	res, logs, err := run(Options{})
	if err != nil || res.Cache != "cache rebuilt" || !strings.Contains(logs, `level=WARN msg="rebuilding the cache"`) {
		t.Errorf("rebuild: %+v %v\n%s", res, err, logs)
	}
	res, _, err = run(Options{HTTPAddr: "127.0.0.1:0"})
	if err != nil || res.Cache != "cache rebuilt" {
		t.Errorf("a cache without HTTP data is rebuilt when HTTP is wanted: %+v %v", res, err)
	}

	// A cache written by another opm.
	meta := filepath.Join(cache, "opm-serve", "meta.json")
	mj, _ := os.ReadFile(meta)
	mj = bytes.Replace(mj, []byte(`"opmVersion": "`), []byte(`"opmVersion": "other-`), 1)
	if err := os.WriteFile(meta, mj, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(Options{CacheOnly: true, EnforceIntegrity: true})
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "cache built by opm other-") {
		t.Errorf("other version, enforced: %v", err)
	}
	res, _, err = run(Options{CacheOnly: true})
	if err != nil || res.Cache != "cache rebuilt" {
		t.Errorf("other version: %+v %v", res, err)
	}
	if _, _, err := serveFor(t, Options{Ref: catalog, EnforceIntegrity: true, CacheOnly: true}, nil); err == nil || err.Error() != "--cache-dir must be specified with --cache-enforce-integrity" {
		t.Errorf("enforcing without a cache dir: %v", err)
	}
}

func TestUnusableCacheDir(t *testing.T) {
	catalog := exampleCatalog(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, logs, err := serveFor(t, Options{Ref: catalog, CacheDir: notDir}, func(r Ready) { checkServing(t, r.GRPCAddr.String()) })
	if err != nil || res.Cache != "built" || !strings.Contains(logs, "cannot write the cache") {
		t.Errorf("serving with an unusable cache dir: %+v %v\n%s", res, err, logs)
	}
	if _, _, err := serveFor(t, Options{Ref: catalog, CacheDir: notDir, CacheOnly: true}, nil); err == nil {
		t.Error("--cache-only with an unusable cache dir succeeded")
	}
}

func TestRefusedCatalog(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("schema: example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	_, _, err := serveFor(t, Options{Ref: dir, TempDir: tmp}, func(Ready) { t.Error("a refused catalog was served") })
	if err == nil || !strings.Contains(err.Error(), `invalid custom schema meta: invalid schema "example.com/x"`) {
		t.Errorf("error %v", err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	_, _, err = serveFor(t, Options{Ref: filepath.Join(dir, "missing")}, nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
	_, _, err = serveFor(t, Options{Ref: filepath.Join(dir, "c.yaml")}, nil)
	if err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file: %v", err)
	}
}

func TestHTTPAndPprof(t *testing.T) {
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, _, err := serveFor(t, Options{Ref: exampleCatalog(t), HTTPAddr: "127.0.0.1:0", PprofAddr: "127.0.0.1:0", CaptureProfiles: true}, func(r Ready) {
		code, body := get("http://" + r.HTTPAddr.String() + "/api/v1/metas?schema=olm.package&name=web-console")
		if code != 200 || !strings.HasPrefix(body, `{"defaultChannel":"stable"`) || strings.Count(body, "\n") != 1 {
			t.Errorf("HTTP metas: %d %q", code, body)
		}
		code, body = get("http://" + r.PprofAddr.String() + "/debug/pprof/startup/cpu")
		if code != 200 || len(body) == 0 {
			t.Errorf("startup profile: %d, %d bytes", code, len(body))
		}
		code, _ = get("http://" + r.PprofAddr.String() + "/debug/pprof/")
		if code != 200 {
			t.Errorf("pprof index: %d", code)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestServeImage(t *testing.T) {
	catalog := exampleCatalog(t)
	img, err := registrytest.DirImage(catalog, "configs", map[string]string{render.ConfigsLabel: "/configs"})
	if err != nil {
		t.Fatal(err)
	}
	dir := registrytest.Layout(t, img)
	tmp := t.TempDir()
	res, _, err := serveFor(t, Options{Ref: "oci:" + dir, TempDir: tmp}, func(r Ready) { checkServing(t, r.GRPCAddr.String()) })
	if err != nil || res.Stats.Packages != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left behind: %v", ents)
	}

	// An image that is not a catalog.
	plain, err := registrytest.DirImage(catalog, "configs", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir2 := registrytest.Layout(t, plain)
	_, _, err = serveFor(t, Options{Ref: "oci:" + dir2}, nil)
	if err == nil || !strings.Contains(err.Error(), "is not a file-based catalog image") {
		t.Errorf("not a catalog image: %v", err)
	}
}
