// Package serve is the action of `opm serve`: it indexes a file-based
// catalog (a directory or a catalog image), optionally through a cache
// directory, and serves it over gRPC (OLM's registry API, health, server
// reflection) and, when asked, over catalogd's HTTP API, until its context
// is cancelled.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	runtimepprof "runtime/pprof"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/serve"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// Options configure Run.
type Options struct {
	// Ref is the catalog: a directory, or an image reference when no such
	// path exists.
	Ref string
	// Addr is the gRPC listen address, e.g. ":50051" or "127.0.0.1:0".
	Addr string
	// HTTPAddr, when not empty, also serves catalogd's HTTP API there.
	HTTPAddr string
	// PprofAddr, when not empty, serves net/http/pprof there.
	PprofAddr string
	// CaptureProfiles records a CPU profile from start-up until serving,
	// served at /debug/pprof/startup/cpu on PprofAddr.
	CaptureProfiles bool

	// CacheDir, when not empty, is where the index is cached and looked
	// for; otherwise it is built in a temporary directory removed on
	// return.
	CacheDir string
	// CacheOnly builds (or checks) the cache and returns without serving.
	CacheOnly bool
	// EnforceIntegrity makes a cache that does not match the catalog (or
	// comes from another opm version or cache format) an error instead of
	// being rebuilt. It needs CacheDir.
	EnforceIntegrity bool

	// Registry configures image pulls for image references.
	Registry render.RegistryOptions
	// TempDir is where temporary directories go ("" = the system's).
	TempDir string
	// Log receives the server's log (nil = discarded).
	Log *slog.Logger
	// Ready, when not nil, is called once the servers listen.
	Ready func(Ready)
	// GracePeriod bounds the graceful stop (default 10s); calls still
	// running then are cancelled.
	GracePeriod time.Duration
	// BuildGCPercent is the garbage collector's GOGC while the index is
	// built: the build allocates much more than it keeps, and a lower
	// value trades some CPU for a lower peak of memory. 0 means
	// DefaultBuildGCPercent; a negative value leaves the setting alone
	// (as does a GOGC environment variable).
	BuildGCPercent int
	// MaxConnections caps the connections each listener (gRPC, the HTTP
	// API) keeps open at once (0: serve.DefaultMaxConnections; at most
	// what the file descriptor limit leaves): beyond, the connection idle
	// longest is closed to make room (serve.LimitListener).
	MaxConnections int

	// MemoryLimit is the soft memory limit (debug.SetMemoryLimit) while
	// serving: bursts of calls (many ListBundles at once) allocate fast,
	// and the limit makes the collector keep up instead of letting the
	// heap balloon. 0 means max(MinMemoryLimit, 4 x the heap the index
	// uses); a
	// negative value sets none (as does a GOMEMLIMIT environment
	// variable).
	MemoryLimit int64
}

// MinMemoryLimit is the least soft memory limit serving runs with. OLM
// asks 50Mi for a catalog pod; about 21 MiB of it are the executable's own
// pages (which the Go runtime does not count), so the runtime's share is
// kept below 24 MiB: with at most serve.MaxMaterialising answers made at
// once, OLM's whole call pattern on the largest conformance catalog then
// peaks at about 44 MiB of RSS (docs/benchmarks.md).
const MinMemoryLimit = 24 << 20

// DefaultBuildGCPercent is the GOGC used while building the index.
const DefaultBuildGCPercent = 30

// Ready tells where the servers listen.
type Ready struct {
	GRPCAddr  net.Addr
	HTTPAddr  net.Addr // nil when the HTTP API is off
	PprofAddr net.Addr // nil when pprof is off
}

// Result describes a finished run.
type Result struct {
	// Cache says how the index was obtained: "built" (temporary), "cache
	// hit", "cache built" or "cache rebuilt".
	Cache string
	// CacheDir is the directory that held the index.
	CacheDir string
	Stats    serve.Stats
}

// ErrIntegrity is wrapped by errors for caches that fail
// --cache-enforce-integrity.
var ErrIntegrity = errors.New("integrity check failed")

// Run indexes the catalog and serves it until ctx is cancelled, then stops
// gracefully and returns. With CacheOnly it returns once the cache is
// ready.
func Run(ctx context.Context, opts Options) (*Result, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.EnforceIntegrity && opts.CacheDir == "" {
		return nil, errors.New("--cache-dir must be specified with --cache-enforce-integrity")
	}

	var prof *startupProfile
	if opts.PprofAddr != "" && !opts.CacheOnly {
		var err error
		prof, err = startPprof(opts.PprofAddr, opts.CaptureProfiles, log)
		if err != nil {
			return nil, err
		}
		defer prof.close()
	}

	dir, name, cleanup, err := resolveCatalog(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	restoreGC := buildGC(opts.BuildGCPercent)
	x, res, err := index(ctx, dir, name, opts, log)
	restoreGC()
	if err != nil {
		return nil, err
	}
	defer x.Close()
	res.Stats = x.Stats()
	if opts.CacheOnly {
		log.Info("cache ready", "cache", res.CacheDir, "status", res.Cache, "packages", res.Stats.Packages, "bundles", res.Stats.Bundles)
		return res, nil
	}
	// What the build allocated is garbage now; give it back before
	// serving.
	runtime.GC()
	debug.FreeOSMemory()
	if limit := servingMemoryLimit(opts.MemoryLimit); limit > 0 {
		old := debug.SetMemoryLimit(limit)
		defer debug.SetMemoryLimit(old)
		log.Debug("soft memory limit", "bytes", limit)
	}

	if err := serveIndex(ctx, x, opts, name, res, prof, log); err != nil {
		return nil, err
	}
	return res, nil
}

// buildGC applies the build's GOGC and returns the function that restores
// the previous one.
func buildGC(percent int) func() {
	if percent < 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	if percent == 0 {
		percent = DefaultBuildGCPercent
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}

// servingMemoryLimit returns the soft memory limit to serve with, or 0.
func servingMemoryLimit(limit int64) int64 {
	if limit < 0 || os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	if limit > 0 {
		return limit
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return max(MinMemoryLimit, 4*int64(ms.HeapAlloc))
}

// resolveCatalog returns the catalog directory for opts.Ref, pulling and
// extracting an image reference into a temporary directory.
func resolveCatalog(ctx context.Context, opts Options, log *slog.Logger) (dir, name string, cleanup func(), err error) {
	noop := func() {}
	st, statErr := os.Stat(opts.Ref)
	if statErr == nil {
		if !st.IsDir() {
			return "", "", noop, fmt.Errorf("%s is not a directory", opts.Ref)
		}
		if err := declcfg.NotOCILayout(opts.Ref); err != nil {
			return "", "", noop, err
		}
		return opts.Ref, filepath.ToSlash(filepath.Clean(opts.Ref)), noop, nil
	}
	if image.IsPath(opts.Ref) {
		return "", "", noop, statErr
	}
	log.Info("pulling catalog image", "image", opts.Ref)
	tmp, err := os.MkdirTemp(opts.TempDir, "opm-serve-image-")
	if err != nil {
		return "", "", noop, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	d, err := extractCatalogImage(ctx, opts.Ref, tmp, opts.Registry)
	if err != nil {
		cleanup()
		return "", "", noop, err
	}
	return d, opts.Ref, cleanup, nil
}

// extractCatalogImage pulls ref, checks that it is a catalog image and
// extracts its configs directory under tmp.
func extractCatalogImage(ctx context.Context, ref, tmp string, reg render.RegistryOptions) (string, error) {
	img, err := image.Open(ctx, ref, reg.ImageOptions()...)
	if err != nil {
		return "", err
	}
	defer img.Close()
	configs, ok := img.Labels()[render.ConfigsLabel]
	if !ok {
		return "", fmt.Errorf("image %q is not a file-based catalog image: it has no label %s", ref, render.ConfigsLabel)
	}
	if err := img.Extract(ctx, tmp, configs); err != nil {
		return "", fmt.Errorf("extracting %s from %q: %w", configs, ref, err)
	}
	rel := path.Clean("/" + configs)
	root := filepath.Join(tmp, filepath.FromSlash(rel))
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return "", fmt.Errorf("image %q has no directory %s (label %s)", ref, rel, render.ConfigsLabel)
	}
	return root, nil
}

// cacheMeta is what a cache of this build must say about itself.
func cacheMeta(digest string, http bool) serve.CacheMeta {
	return serve.CacheMeta{Format: serve.CacheFormat, OpmVersion: opmVersion(), Digest: digest, HTTP: http}
}

// opmVersion is how a cache names the opm that wrote it: the version, and
// the commit when known.
func opmVersion() string {
	bi := buildinfo.Get()
	return versionOf(bi.Version, bi.GitCommit)
}

func versionOf(version, commit string) string {
	if commit != "" {
		return version + "+" + commit
	}
	return version
}

// CacheIdentity names the serve caches this opm loads: its cache format
// and version. An opm image carries it in its imagebuild.LabelServeCache
// label, so that a catalog image built on it gets a cache its server
// loads only when the builder's identity is the same.
func CacheIdentity() string { return serve.CacheFormat + " " + opmVersion() }

// CacheIdentityOf is CacheIdentity for the opm of this source tree built
// with the given version and commit (as the Makefile stamps them).
func CacheIdentityOf(version, commit string) string {
	return serve.CacheFormat + " " + versionOf(version, commit)
}

// index builds the index of dir, or loads it from the cache.
func index(ctx context.Context, dir, name string, opts Options, log *slog.Logger) (*serve.Index, *Result, error) {
	// The catalog is read as render and validate read it: names resolved
	// inside dir (unless --follow-external-symlinks), regular files only,
	// within --max-file-size, cancellable.
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	defer fsys.Close()
	bopts := serve.BuildOptions{Name: name, HTTP: opts.HTTPAddr != ""}

	if opts.CacheDir == "" {
		start := time.Now()
		x, tmp, err := serve.BuildTemp(ctx, fsys, opts.TempDir, bopts)
		if err != nil {
			return nil, nil, err
		}
		log.Debug("index built", "duration", time.Since(start).Round(time.Millisecond))
		return x, &Result{Cache: "built", CacheDir: tmp}, nil
	}

	// The cache's own files are checked (hashed) while the catalog is
	// hashed.
	want := cacheMeta("", bopts.HTTP)
	type opened struct {
		c   *serve.Cache
		err error
	}
	cc := make(chan opened, 1)
	go func() {
		c, err := serve.OpenCache(ctx, opts.CacheDir, want)
		cc <- opened{c, err}
	}()
	digest, err := catalogDigest(ctx, fsys, name)
	oc := <-cc
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		oc.c.Close()
		return nil, nil, err
	}
	want.Digest = digest
	err = oc.err
	if err == nil {
		if err = oc.c.Check(digest); err == nil {
			x, lerr := oc.c.Load()
			if lerr == nil && opts.EnforceIntegrity {
				lerr = verifyCache(ctx, x, fsys, bopts, log)
				if lerr != nil {
					x.Close()
				}
			}
			if lerr == nil {
				return x, &Result{Cache: "cache hit", CacheDir: opts.CacheDir}, nil
			}
			var me *serve.CacheMismatchError
			if !errors.As(lerr, &me) {
				return nil, nil, lerr
			}
			err = lerr
		}
		oc.c.Close()
	}
	status := "cache built"
	if !errors.Is(err, fs.ErrNotExist) {
		if opts.EnforceIntegrity {
			return nil, nil, fmt.Errorf("%w: %w", ErrIntegrity, err)
		}
		log.Warn("rebuilding the cache", "cache", opts.CacheDir, "reason", err.Error())
		status = "cache rebuilt"
	} else if opts.EnforceIntegrity {
		if hasUpstreamCache(opts.CacheDir) {
			return nil, nil, fmt.Errorf("%w: no cache of this opm in %s: it holds upstream's JSON cache (%s/ and %s), which this opm never serves from (it serves its own %s/ cache, or indexes the catalog); run without --cache-enforce-integrity to build its own there",
				ErrIntegrity, opts.CacheDir, jsoncache.CacheSubdir, jsoncache.DigestFile, serve.CacheSubdir)
		}
		return nil, nil, fmt.Errorf("%w: no cache in %s", ErrIntegrity, opts.CacheDir)
	}
	x, err := serve.BuildCache(ctx, fsys, opts.CacheDir, want, bopts)
	if err == nil {
		return x, &Result{Cache: status, CacheDir: opts.CacheDir}, nil
	}
	var ie *serve.InvalidCatalogError
	if errors.As(err, &ie) || ctx.Err() != nil || opts.CacheOnly {
		return nil, nil, err
	}
	// The catalog is fine but the cache directory is not usable (read-only,
	// full, ...): serve from a temporary build rather than not at all.
	log.Warn("cannot write the cache, building a temporary index instead", "cache", opts.CacheDir, "error", err.Error())
	x, tmp, terr := serve.BuildTemp(ctx, fsys, opts.TempDir, bopts)
	if terr != nil {
		return nil, nil, terr
	}
	return x, &Result{Cache: "built", CacheDir: tmp}, nil
}

// verifyCache checks that the loaded cache x holds what the catalog does:
// the digests and seal a cache records say which catalog it claims to be
// built from, but anyone who can write a cache can write them too, so the
// index is built from the catalog again and compared with the cache's, as
// clients would see them. The data file of that index is only hashed
// (serve.BuildOptions.HashOnly): nothing is written, so a read-only root
// is fine. A difference is a *serve.CacheMismatchError naming it.
func verifyCache(ctx context.Context, x *serve.Index, fsys fs.FS, bopts serve.BuildOptions, log *slog.Logger) error {
	start := time.Now()
	bopts.HashOnly = true
	built, err := serve.Build(ctx, fsys, bopts)
	if err != nil {
		return fmt.Errorf("checking the cache against the catalog: %w", err)
	}
	d, err := serve.Compare(ctx, x, built)
	if err != nil {
		return fmt.Errorf("checking the cache against the catalog: %w", err)
	}
	if !d.Empty() {
		return &serve.CacheMismatchError{Reason: "the cache does not hold what the catalog does (it was built from another catalog): " + d.String()}
	}
	log.Debug("cache verified against the catalog", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// hasUpstreamCache reports whether dir holds upstream's JSON cache.
func hasUpstreamCache(dir string) bool {
	_, errC := os.Lstat(filepath.Join(dir, jsoncache.CacheSubdir))
	_, errD := os.Lstat(filepath.Join(dir, jsoncache.DigestFile))
	return errC == nil && errD == nil
}

// reservedFDs are the file descriptors kept for everything but client
// connections (the data file, the catalog's files, pprof, logs).
const reservedFDs = 64

// connectionCap returns the cap on each listener's connections: limit (or
// serve.DefaultMaxConnections), lowered so that the listeners' connections
// together leave reservedFDs of the process's file descriptor limit: a
// server out of descriptors can accept nothing, health probes included.
func connectionCap(limit, listeners int, log *slog.Logger) int {
	if limit <= 0 {
		limit = serve.DefaultMaxConnections
	}
	if fds := fdLimit(); fds > 0 {
		if budget := max((fds-reservedFDs)/int64(listeners), 1); budget < int64(limit) {
			log.Warn("the file descriptor limit is low: lowering the connection limit", "limit", fds, "max-connections", budget)
			limit = int(budget)
		}
	}
	return limit
}

// catalogDigest hashes the catalog's files (serve.Digest).
func catalogDigest(ctx context.Context, fsys fs.FS, name string) (string, error) {
	files, err := declcfg.ListFiles(ctx, fsys)
	if err != nil {
		return "", serve.NameErr(name, err)
	}
	digest, err := serve.Digest(ctx, fsys, files)
	if err != nil {
		return "", serve.NameErr(name, err)
	}
	return digest, nil
}

// serveIndex listens and serves until ctx is cancelled.
func serveIndex(ctx context.Context, x *serve.Index, opts Options, name string, res *Result, prof *startupProfile, log *slog.Logger) error {
	raw, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	listeners := 1
	if opts.HTTPAddr != "" {
		listeners++
	}
	maxConns := connectionCap(opts.MaxConnections, listeners, log)
	lis := serve.LimitListener(raw, maxConns, log)
	srv := serve.NewGRPCServer(x, log)
	var httpSrv *http.Server
	var httpLis *serve.CapListener
	if opts.HTTPAddr != "" {
		rawHTTP, err := net.Listen("tcp", opts.HTTPAddr)
		if err != nil {
			lis.Close()
			return err
		}
		httpLis = serve.LimitListener(rawHTTP, maxConns, log)
		httpSrv = serve.NewHTTPServer(x, httpLis)
	}

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	if httpSrv != nil {
		go func() {
			if err := httpSrv.Serve(httpLis); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	prof.ready()
	ready := Ready{GRPCAddr: lis.Addr()}
	attrs := []any{"configs", name, "cache", res.CacheDir, "port", portOf(lis.Addr()), "addr", lis.Addr().String(),
		"packages", res.Stats.Packages, "bundles", res.Stats.Bundles}
	if httpLis != nil {
		ready.HTTPAddr = httpLis.Addr()
		attrs = append(attrs, "http", httpLis.Addr().String())
	}
	if prof != nil {
		ready.PprofAddr = prof.addr
	}
	log.Info("serving registry", attrs...)
	if opts.Ready != nil {
		opts.Ready(ready)
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	log.Info("shutting down server")
	grace := opts.GracePeriod
	if grace <= 0 {
		grace = 10 * time.Second
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		done := make(chan struct{})
		serve.Drain(srv) // clients that do not read do not hold the stop up
		go func() { srv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(grace):
			srv.Stop()
			<-done
		}
	}()
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		_ = httpSrv.Shutdown(sctx)
		cancel()
	}
	wg.Wait()
	if serveErr != nil && !errors.Is(serveErr, grpc.ErrServerStopped) {
		return serveErr
	}
	return nil
}

func portOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return fmt.Sprint(ta.Port)
	}
	return a.String()
}

// startupProfile serves pprof and, when capturing, the CPU profile of the
// start-up.
type startupProfile struct {
	srv  *http.Server
	addr net.Addr

	mu      sync.Mutex
	capture bool
	done    bool
	buf     bytes.Buffer
}

func startPprof(addr string, capture bool, log *slog.Logger) (*startupProfile, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	p := &startupProfile{addr: lis.Addr(), capture: capture}
	if capture {
		if err := runtimepprof.StartCPUProfile(&p.buf); err != nil {
			log.Warn("cannot capture the start-up CPU profile", "error", err.Error())
			p.capture = false
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/startup/cpu", p.serveStartup)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(lis) }()
	log.Info("serving pprof", "addr", lis.Addr().String())
	return p, nil
}

func (p *startupProfile) ready() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capture && !p.done {
		runtimepprof.StopCPUProfile()
	}
	p.done = true
}

func (p *startupProfile) serveStartup(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		http.Error(w, "start-up is not finished", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="startup-cpu.pprof"`)
	_, _ = w.Write(p.buf.Bytes())
}

func (p *startupProfile) close() {
	if p == nil {
		return
	}
	p.ready()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
