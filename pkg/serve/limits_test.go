package serve

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/api"
)

// startLimited serves x with limits on a loopback port and returns its
// address.
func startLimited(t *testing.T, x *Index, l Limits) string {
	addr, _ := startLimitedServer(t, x, l)
	return addr
}

func startLimitedServer(t *testing.T, x *Index, l Limits) (string, *grpc.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewGRPCServer(x, nil, WithLimits(l))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), srv
}

// largeIndex is an index whose ListBundles answer is larger than what
// HTTP/2 flow control lets a client leave unread.
func largeIndex(t *testing.T) *Index {
	t.Helper()
	dir := t.TempDir()
	if _, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{Packages: 40, Bundles: 10, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	x, _, err := BuildTemp(context.Background(), os.DirFS(dir), t.TempDir(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// openUnread opens n ListBundles streams on each of conns connections with
// fixed flow control windows (no BDP estimation, which would let a stream
// take a whole answer unread) and reads none of them until release is
// closed; then it reads them to their end and counts the status codes.
func openUnread(t *testing.T, ctx context.Context, addr string, conns, n int, release <-chan struct{}) (wait func() map[codes.Code]int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[codes.Code]int{}
	for range conns {
		c := api.NewRegistryClient(dial(t, addr, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)))
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := c.ListBundles(ctx, &api.ListBundlesRequest{})
				if err == nil {
					<-release
					_, err = recvAll[api.Bundle](t, s)
				}
				mu.Lock()
				seen[status.Code(err)]++
				mu.Unlock()
			}()
		}
	}
	return func() map[codes.Code]int {
		wg.Wait()
		return seen
	}
}

// TestBufferedLimit: with turns to spare, clients that leave more than
// MaxBuffered bytes unread for StallGrace are disconnected, and a client
// that reads is served meanwhile.
func TestBufferedLimit(t *testing.T) {
	x := largeIndex(t)
	addr := startLimited(t, x, Limits{MaxBuffered: 256 << 10, StallTimeout: time.Minute, StallGrace: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release := make(chan struct{})
	wait := openUnread(t, ctx, addr, 3, 8, release)
	time.Sleep(time.Second)
	good := api.NewRegistryClient(dial(t, addr))
	s, err := good.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := recvAll[api.Bundle](t, s); err != nil || len(got) != len(x.records) {
		t.Fatalf("ListBundles: %d bundles, %v", len(got), err)
	}
	close(release)
	seen := wait()
	t.Logf("the unread streams ended with %v", seen)
	if seen[codes.Unavailable] == 0 {
		t.Errorf("no client was disconnected: %v", seen)
	}
}

// TestDrain: once Drain is called, clients that leave streams unread do
// not hold GracefulStop up.
func TestDrain(t *testing.T) {
	x := largeIndex(t)
	addr, srv := startLimitedServer(t, x, Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release := make(chan struct{})
	wait := openUnread(t, ctx, addr, 2, 20, release)
	time.Sleep(time.Second)
	start := time.Now()
	Drain(srv)
	srv.GracefulStop()
	if d := time.Since(start); d > time.Second {
		t.Errorf("GracefulStop took %v", d)
	}
	close(release)
	t.Logf("stopped in %v; the unread streams ended with %v", time.Since(start), wait())
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestStreamLimits (issue 27, item 8): clients that open ListBundles
// streams and never read them are disconnected once the server runs out
// of turns, so that a well-behaved client keeps being served meanwhile.
func TestStreamLimits(t *testing.T) {
	x := largeIndex(t)
	l := Limits{MaxStreamsPerConn: 8, MaxActiveStreams: 4, QueueTimeout: 20 * time.Second, StallTimeout: 3 * time.Second, StallGrace: 200 * time.Millisecond}
	addr := startLimited(t, x, l)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The hostile clients: 3 connections, 20 streams each, not read until
	// the well-behaved client is done.
	goodDone := make(chan struct{})
	wait := openUnread(t, ctx, addr, 3, 20, goodDone)
	time.Sleep(500 * time.Millisecond) // let them fill the server's turns

	// A well-behaved client is served meanwhile, streams and unary calls.
	good := api.NewRegistryClient(dial(t, addr))
	start := time.Now()
	for i := range 5 {
		s, err := good.ListBundles(ctx, &api.ListBundlesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := recvAll[api.Bundle](t, s)
		if err != nil || len(got) != len(x.records) {
			t.Fatalf("ListBundles %d: %d bundles, %v", i, len(got), err)
		}
		if _, err := good.GetPackage(ctx, &api.GetPackageRequest{Name: x.packages[0].Name}); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	close(goodDone)
	codesSeen := wait()
	t.Logf("the good client's 5 ListBundles took %v; the hostile streams ended with %v", took, codesSeen)
	if took > 30*time.Second {
		t.Errorf("the well-behaved client waited %v", took)
	}
	// The hostile clients stalled while others waited: they were
	// disconnected.
	if codesSeen[codes.Unavailable] == 0 {
		t.Errorf("no hostile client was disconnected: %v", codesSeen)
	}
}

// TestStreamQueueTimeout: with every turn taken by streams that do not
// stall (their client reads), a call waits QueueTimeout, then gets
// ResourceExhausted.
func TestStreamQueueTimeout(t *testing.T) {
	g := newGuard(Limits{MaxActiveStreams: 1, QueueTimeout: 100 * time.Millisecond}.withDefaults())
	if err := g.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := g.acquire(context.Background())
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "server busy: 1 streaming calls are running") {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.acquire(ctx); status.Code(err) != codes.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	g.mu.Lock()
	g.releaseLocked()
	g.mu.Unlock()
	if err := g.acquire(context.Background()); err != nil {
		t.Errorf("after a release: %v", err)
	}
}

// TestNameEcho (issue 27, item 11): a 4 MB name in a request is not sent
// back whole in the error: it is cut, and the error says how long it was.
func TestNameEcho(t *testing.T) {
	x := buildTest(t, testCatalog(), false)
	conn := dial(t, startLimited(t, x, Limits{}))
	c := api.NewRegistryClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	long := strings.Repeat("n", 4_000_000)
	check := func(what string, err error, quoted bool) {
		t.Helper()
		st := status.Convert(err)
		cut := strings.Repeat("n", maxEcho)
		if quoted {
			cut = `"` + cut + `"`
		}
		if len(st.Message()) > 1024 || !strings.Contains(st.Message(), cut+"... (4000000 bytes in all)") {
			t.Errorf("%s: %v %.300q (%d bytes)", what, st.Code(), st.Message(), len(st.Message()))
		}
	}
	_, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: long})
	check("GetPackage", err, true)
	_, err = c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "foo", ChannelName: "stable", CsvName: long})
	check("GetBundle", err, true)
	s, err := c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: long})
	if err == nil {
		_, err = recvAll[api.ChannelEntry](t, s)
	}
	check("GetChannelEntriesThatReplace", err, false)
	// Short names are quoted whole, as upstream does.
	_, err = c.GetPackage(ctx, &api.GetPackageRequest{Name: "nope"})
	wantStatus(t, err, codes.Unknown, `package "nope" not found`)
}
