package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/internal/servebench"
)

// TestConcurrentCalls runs the OLM resolver's call mix from many clients
// at once (bounded: 16 clients x 25 calls), under the race detector in
// `make test`: answers share read-only parts, which must be safe to
// marshal concurrently.
func TestConcurrentCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn := startGRPC(t, buildTest(t, testCatalog(), false))
	p, err := servebench.NewPlan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	rep := servebench.Load(ctx, conn, p, servebench.LoadOptions{Clients: 16, CallsPerClient: 25, Timeout: time.Minute, Seed: 2})
	if rep.Errors > 0 || rep.Err != nil || rep.Calls != 16*25 {
		t.Fatalf("%d calls, %d errors: %v", rep.Calls, rep.Errors, rep.Err)
	}
}

// benchSize is the synthetic catalog's size: 20 packages x 10 bundles, or
// $OPM_BENCH_SIZE (e.g. 200x20, about 190 MB).
func benchSize(b *testing.B) (packages, bundles int) {
	s := os.Getenv("OPM_BENCH_SIZE")
	if s == "" {
		return 20, 10
	}
	ps, bs, ok := strings.Cut(s, "x")
	np, err1 := strconv.Atoi(ps)
	nb, err2 := strconv.Atoi(bs)
	if !ok || err1 != nil || err2 != nil || np < 1 || nb < 1 {
		b.Fatalf("invalid OPM_BENCH_SIZE %q: want PACKAGESxBUNDLES, e.g. 200x20", s)
	}
	return np, nb
}

func genCatalog(b *testing.B) (string, int64) {
	b.Helper()
	np, nb := benchSize(b)
	dir := filepath.Join(b.TempDir(), "catalog")
	st, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{Packages: np, Bundles: nb, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return dir, st.Bytes
}

// BenchmarkBuild indexes a synthetic catalog (parse, validate, index).
func BenchmarkBuild(b *testing.B) {
	dir, size := genCatalog(b)
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		x, _, err := BuildTemp(context.Background(), root.FS(), b.TempDir(), BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
}

// BenchmarkResolverMix serves a synthetic catalog on 127.0.0.1 and runs the
// OLM resolver's call mix from 50 concurrent clients (40 calls each per
// iteration), reporting the latency percentiles of all calls.
func BenchmarkResolverMix(b *testing.B) {
	dir, _ := genCatalog(b)
	conn := serveDir(b, dir)
	ctx := context.Background()
	p, err := servebench.NewPlan(ctx, conn)
	if err != nil {
		b.Fatal(err)
	}
	var last *servebench.Report
	for b.Loop() {
		last = servebench.Load(ctx, conn, p, servebench.LoadOptions{Clients: 50, CallsPerClient: 40, Timeout: 5 * time.Minute, Seed: 1})
		if last.Errors > 0 || last.Err != nil {
			b.Fatalf("%d errors: %v", last.Errors, last.Err)
		}
	}
	b.ReportMetric(float64(last.All.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(last.All.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(last.Calls)/last.Duration.Seconds(), "calls/s")
	b.Logf("\n%s", last)
}

// BenchmarkOLMPattern serves a catalog on 127.0.0.1 and makes OLM's whole
// call pattern against it (servebench.OLMPattern: the catalog operator's
// sync, the package server's concurrent refresh, the provider look-ups,
// GetBundle for every bundle). The catalog is $OPM_BENCH_CATALOG (a
// directory, e.g. ../shared/conformance/catalog/community-operators-prod-v4.20/input)
// or the synthetic one of OPM_BENCH_SIZE. Run with -memprofile to see what
// the answers allocate; hack/bench-serve.sh measures the server's RSS.
func BenchmarkOLMPattern(b *testing.B) {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		dir, _ = genCatalog(b)
	}
	conn := serveDir(b, dir)
	ctx := context.Background()
	b.ReportAllocs()
	var n servebench.OLMCalls
	var err error
	for b.Loop() {
		if n, err = servebench.OLMPattern(ctx, conn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n.Calls), "calls/op")
}

// serveDir indexes the catalog in dir and serves it on 127.0.0.1 for the
// benchmark's duration.
func serveDir(b *testing.B, dir string) *grpc.ClientConn {
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	x, _, err := BuildTemp(context.Background(), root.FS(), b.TempDir(), BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	return startGRPC(b, x)
}
