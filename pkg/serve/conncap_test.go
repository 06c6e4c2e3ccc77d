package serve

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/health/grpc_health_v1"
)

// capped serves x's gRPC API on a loopback listener capped at max.
func capped(t *testing.T, x *Index, max int, l Limits) (*CapListener, string) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := LimitListener(raw, max, nil)
	srv := NewGRPCServer(x, nil, WithLimits(l))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis, lis.Addr().String()
}

// idleConns opens n HTTP/2 connections that send their preface and
// settings, then nothing.
func idleConns(t *testing.T, addr string, n int) {
	t.Helper()
	hello := append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(hello); err != nil {
			t.Fatal(err)
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s after 10s", what)
		}
	}
}

func check(t *testing.T, addr string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := grpc_health_v1.NewHealthClient(dial(t, addr)).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	return err
}

// TestConnectionCap (issue 30, item 10): a capped listener keeps at most
// its cap of connections, closing the idle one unused longest to make
// room, so a health check on a new connection is answered whatever the
// flood of idle connections; a busy connection is closed only once it has
// been silent for BusySilence, else the newcomer is refused.
func TestConnectionCap(t *testing.T) {
	x := buildTest(t, testCatalog(), false)
	lis, addr := capped(t, x, 4, Limits{})
	idleConns(t, addr, 20)
	eventually(t, "at most 4 connections", func() bool { return lis.Open() <= 4 })
	if err := check(t, addr); err != nil {
		t.Fatalf("health check under the flood: %v", err)
	}
	if ev, ref := lis.Counts(); ev < 16 || ref != 0 {
		t.Errorf("closed %d, refused %d", ev, ref)
	}

	// Busy connections: a streaming call whose request never comes holds
	// its connection busy (the handler waits for it).
	old := busySilence
	busySilence = 500 * time.Millisecond
	defer func() { busySilence = old }()
	lis, addr = capped(t, x, 2, Limits{})
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Preface, settings, then HEADERS (END_HEADERS, no END_STREAM)
		// opening /api.Registry/ListBundles: the handler waits for the
		// request message.
		hdr := hpackLit(hpackLit(hpackLit(hpackLit(nil, ":method", "POST"), ":scheme", "http"), ":path", "/api.Registry/ListBundles"), ":authority", "catalog")
		hdr = hpackLit(hdr, "content-type", "application/grpc")
		hdr = hpackLit(hdr, "te", "trailers")
		b := append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)
		b = append(b, byte(len(hdr)>>16), byte(len(hdr)>>8), byte(len(hdr)), 1, 4, 0, 0, 0, 1)
		b = append(b, hdr...)
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, c) }()
	}
	eventually(t, "two busy connections", func() bool {
		lis.mu.Lock()
		defer lis.mu.Unlock()
		busy := 0
		for c := range lis.conns {
			if !c.idle() {
				busy++
			}
		}
		return busy == 2
	})
	// A newcomer at once: both are busy and live, so it is refused.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection beyond the cap of busy ones was not refused")
	}
	c.Close()
	// Once they have been silent for busySilence, one makes room.
	time.Sleep(busySilence)
	if err := check(t, addr); err != nil {
		t.Errorf("health check after busySilence: %v", err)
	}
	if ev, ref := lis.Counts(); ev < 1 || ref < 1 {
		t.Errorf("closed %d, refused %d", ev, ref)
	}
}

// hpackLit appends a header field literal without indexing, new name
// (names and values under 127 bytes).
func hpackLit(b []byte, name, value string) []byte {
	b = append(b, 0, byte(len(name)))
	b = append(b, name...)
	b = append(b, byte(len(value)))
	return append(b, value...)
}

// TestIdleConnections (issue 30, item 10): a gRPC connection without calls
// is closed after MaxConnectionIdle, and the HTTP API's server closes
// keep-alive connections after HTTPIdleTimeout and bounds headers.
func TestIdleConnections(t *testing.T) {
	x := buildTest(t, testCatalog(), true)
	lis, addr := capped(t, x, 10, Limits{MaxConnectionIdle: 300 * time.Millisecond})
	if err := check(t, addr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the idle connection closed", func() bool { return lis.Open() == 0 })

	srv := NewHTTPServer(x, LimitListener(nil, 1, nil))
	if srv.IdleTimeout != HTTPIdleTimeout || srv.ReadHeaderTimeout != HTTPReadHeaderTimeout || srv.MaxHeaderBytes != HTTPMaxHeaderBytes || srv.ConnState == nil {
		t.Errorf("HTTP server limits: idle %v, read header %v, header bytes %d", srv.IdleTimeout, srv.ReadHeaderTimeout, srv.MaxHeaderBytes)
	}
	if HTTPIdleTimeout <= 0 || HTTPIdleTimeout > 10*time.Minute {
		t.Errorf("HTTPIdleTimeout %v", HTTPIdleTimeout)
	}
}
