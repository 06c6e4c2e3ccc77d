package main

// Issue 30 (hostile input, round three), item 10: connection floods
// against `opm serve`, run as its own process, on 127.0.0.1 only. Each
// flood is bounded (a fixed number of connections or bytes, and a
// deadline) and stops by itself; the server's open file descriptors, RSS
// and health answers are checked while it lasts.

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/pkg/serve"
)

// procStatus returns a field of /proc/PID/status in MiB (VmRSS, VmHWM).
func procStatus(t *testing.T, pid int, field string) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// openFDs counts the open file descriptors of process pid.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// healthy asks the server at addr for its health on a new connection.
func healthy(addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if r.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		return fmt.Errorf("status %v", r.Status)
	}
	return nil
}

// h2Preface is what an HTTP/2 client sends first: the preface and an
// empty SETTINGS frame.
var h2Preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// h2Frame appends an HTTP/2 frame.
func h2Frame(b []byte, typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

// hpackInt appends an HPACK integer with a prefix of n bits (the other
// bits of the first byte zero).
func hpackInt(b []byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, byte(v))
	}
	b = append(b, byte(limit))
	for v -= limit; v >= 128; v >>= 7 {
		b = append(b, byte(v%128+128))
	}
	return append(b, byte(v))
}

// hpackLiteral appends a header field literal without indexing, with a
// new name.
func hpackLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = hpackInt(b, 7, len(name))
	b = append(b, name...)
	b = hpackInt(b, 7, len(value))
	return append(b, value...)
}

// TestServeConnectionFlood: 15,000 idle HTTP/2 connections to the gRPC
// port and 2,000 idle keep-alive connections to the HTTP API. The server
// keeps at most --max-connections of each (the idle ones longest unused
// are closed to make room), its RSS stays within 40 MiB of what it was
// (it took 31 -> 352 MB before), it answers every health check asked on
// a new connection meanwhile, and SIGTERM still ends it within a second.
func TestServeConnectionFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 17,000 connections")
	}
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"cat/foo.json": smallCatalog})
	addr, httpAddr := freeAddr(t), freeAddr(t)
	p := startBin(t, plainOpm(t), work, "serve", "cat", "-p", addr, "--http-addr", httpAddr, "-t", "")
	waitServing(t, p, addr, time.Minute)
	pid := p.cmd.Process.Pid
	baseRSS, baseFDs := procStatus(t, pid, "VmRSS"), openFDs(t, pid)

	// flood opens n connections to target, each sending hello, with 8
	// workers; a health check on a new connection follows every 500.
	var healthFailures atomic.Int32
	var conns []net.Conn
	var mu sync.Mutex
	flood := func(target string, n int, hello []byte) (dialErrs int) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var next, failed atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := net.Dialer{Timeout: 5 * time.Second}
				for ctx.Err() == nil {
					i := int(next.Add(1))
					if i > n {
						return
					}
					c, err := d.DialContext(ctx, "tcp", target)
					if err != nil {
						failed.Add(1)
						continue
					}
					_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
					_, _ = c.Write(hello)
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
					if i%500 == 0 {
						if err := healthy(addr); err != nil {
							t.Logf("health check after %d connections: %v", i, err)
							healthFailures.Add(1)
						}
					}
				}
			}()
		}
		wg.Wait()
		return int(failed.Load())
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	start := time.Now()
	dialErrs := flood(addr, 15000, h2Preface)
	time.Sleep(500 * time.Millisecond) // let the server settle
	rss, fds := procStatus(t, pid, "VmRSS"), openFDs(t, pid)
	t.Logf("gRPC: 15,000 connections in %v (%d dials failed): RSS %.1f -> %.1f MiB, open files %d -> %d",
		time.Since(start).Round(time.Millisecond), dialErrs, baseRSS, rss, baseFDs, fds)
	if fds > baseFDs+serve.DefaultMaxConnections {
		t.Errorf("the server holds %d files, %d more than when idle (the limit is %d connections)", fds, fds-baseFDs, serve.DefaultMaxConnections)
	}
	if rss > baseRSS+40 {
		t.Errorf("RSS %.1f MiB under 15,000 idle connections, %.1f MiB more than when idle", rss, rss-baseRSS)
	}
	if err := healthy(addr); err != nil {
		t.Errorf("health check after the gRPC flood: %v", err)
	}

	// The HTTP API: keep-alive connections that asked once and stay.
	get := []byte("GET /api/v1/metas?schema=olm.package HTTP/1.1\r\nHost: catalog\r\n\r\n")
	dialErrs = flood(httpAddr, 2000, get)
	time.Sleep(500 * time.Millisecond)
	fds2 := openFDs(t, pid)
	t.Logf("HTTP: 2,000 keep-alive connections (%d dials failed): open files %d", dialErrs, fds2)
	if fds2 > baseFDs+2*serve.DefaultMaxConnections {
		t.Errorf("the server holds %d files after the HTTP flood", fds2)
	}
	c, err := net.DialTimeout("tcp", httpAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(get); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the HTTP API after the flood: %v %v", resp, err)
	}
	if n := healthFailures.Load(); n > 0 {
		t.Errorf("%d health checks failed during the floods", n)
	}
	if code := p.terminate(); code != 0 {
		t.Errorf("exit code %d after SIGTERM: %s", code, p.output())
	}
}

// TestServeHeaderFlood: 40 connections each send a request whose header
// block never ends, 16 MiB of it in CONTINUATION frames. The server
// refuses header blocks over 32 KiB, so its peak RSS stays within 40 MiB
// of what it was (40 such blocks held 1.4 GB before), and it answers
// health checks meanwhile.
func TestServeHeaderFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 640 MiB of headers")
	}
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"cat/foo.json": smallCatalog})
	addr := freeAddr(t)
	p := startBin(t, plainOpm(t), work, "serve", "cat", "-p", addr, "-t", "")
	waitServing(t, p, addr, time.Minute)
	base := procStatus(t, p.cmd.Process.Pid, "VmHWM")

	// A header block fragment of 16,000 bytes per frame: literal fields
	// of 8,000-byte values.
	var frag []byte
	for i := 0; len(frag) < 16000-8100; i++ {
		frag = hpackLiteral(frag, fmt.Sprintf("x-pad-%d", i), strings.Repeat("a", 8000))
	}
	first := h2Frame(append([]byte(nil), h2Preface...), 0x1, 0, 1, hpackLiteral(hpackLiteral(nil, ":method", "POST"), ":path", "/grpc.health.v1.Health/Check"))
	cont := h2Frame(nil, 0x9, 0, 1, frag)
	const perConn = 16 << 20

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			go func() { // drain what the server says (settings, GOAWAY)
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
			_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write(first); err != nil {
				return
			}
			for n := 0; n < perConn && ctx.Err() == nil; n += len(cont) {
				if _, err := c.Write(cont); err != nil {
					return
				}
				sent.Add(int64(len(cont)))
			}
		}()
	}
	healthErrs := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		case <-time.After(200 * time.Millisecond):
			if err := healthy(addr); err != nil {
				t.Logf("health check during the flood: %v", err)
				healthErrs++
			}
		}
	}
	peak := procStatus(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("40 connections sent %.1f MiB of header blocks; peak RSS %.1f -> %.1f MiB", float64(sent.Load())/(1<<20), base, peak)
	if peak > base+40 {
		t.Errorf("peak RSS %.1f MiB, %.1f MiB more than when idle", peak, peak-base)
	}
	if healthErrs > 0 {
		t.Errorf("%d health checks failed during the flood", healthErrs)
	}
	if err := healthy(addr); err != nil {
		t.Errorf("health check after the flood: %v", err)
	}
	if code := p.terminate(); code != 0 {
		t.Errorf("exit code %d after SIGTERM: %s", code, p.output())
	}
}
