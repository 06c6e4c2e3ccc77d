package main

// Issue 27 (hostile input, round two), the serve and network part, end to
// end: `opm serve` runs as its own process (the test binary, which
// testscript.Main puts on PATH as opm; OPM_TEST_BINARY names another
// binary to compare with), so that each test can assert the exit code,
// the message, the time taken, the peak RSS of the server alone, and that
// SIGTERM ends it (within a second of CPU). Inputs are made by the tests; servers
// and clients use 127.0.0.1 only.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/api"
	"github.com/opmkit/opm/pkg/serve"
)

// opmProc is a running opm.
type opmProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	start  time.Time
	mu     sync.Mutex
	out    bytes.Buffer
	exited chan struct{}
	took   time.Duration // from start to exit
	hwm    float64       // highest VmHWM seen, MiB
}

type lockedWriter struct{ p *opmProc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

// startOpm starts opm with args in dir.
func startOpm(t *testing.T, dir string, args ...string) *opmProc {
	t.Helper()
	bin := os.Getenv("OPM_TEST_BINARY")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("opm"); err != nil {
			t.Fatal(err)
		}
	}
	return startBin(t, bin, dir, args...)
}

// plainOpm returns an opm binary built without the race detector, for
// tests whose time and memory bounds are the real binary's: the test
// binary itself when it is one, else one built into a test directory.
func plainOpm(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("OPM_TEST_BINARY"); bin != "" {
		return bin
	}
	if !raceEnabled {
		bin, err := exec.LookPath("opm")
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "opm")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startBin starts the opm binary bin with args in dir.
func startBin(t *testing.T, bin, dir string, args ...string) *opmProc {
	t.Helper()
	p := &opmProc{t: t, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "HOME="+t.TempDir())
	p.cmd.Stdout, p.cmd.Stderr = lockedWriter{p}, lockedWriter{p}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.took = time.Since(p.start)
		close(p.exited)
	}()
	go p.sampleRSS()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *opmProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// wait waits up to limit for the process to exit and returns its exit
// code; it fails the test if it is still running then.
func (p *opmProc) wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.t.Fatalf("still running after %v; output:\n%s", limit, p.output())
		return -1
	}
}

// peakRSS is the highest VmHWM (peak resident set size) seen, in MiB.
// It is sampled every 5 ms while the process runs: the rusage of an
// exited child is no use here, since Linux counts in it the memory of the
// process that forked it (the test) until the exec.
func (p *opmProc) peakRSS() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hwm
}

// sampleRSS records VmHWM until the process exits.
func (p *opmProc) sampleRSS() {
	path := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
					kb, _ := strconv.ParseFloat(f[1], 64)
					p.mu.Lock()
					p.hwm = max(p.hwm, kb/1024)
					p.mu.Unlock()
				}
			}
		}
		select {
		case <-p.exited:
			return
		case <-tick.C:
		}
	}
}

// terminate sends SIGTERM and fails the test unless the process exits
// having spent at most a second of CPU since; it returns the exit code.
// Wall time is only a hang guard (10 s): on a loaded CI machine a server
// that stops at once can still wait for a core.
func (p *opmProc) terminate() int {
	p.t.Helper()
	cpu0 := procCPU(p.cmd.Process.Pid)
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.exited:
		cpu := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime() - cpu0
		p.t.Logf("exited %v after SIGTERM, having used %v of CPU since", time.Since(sent).Round(time.Millisecond), cpu.Round(time.Millisecond))
		if cpu > time.Second {
			p.t.Errorf("used %v of CPU after SIGTERM", cpu.Round(time.Millisecond))
		}
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		p.t.Errorf("still running 10 s after SIGTERM; output:\n%s", p.output())
		_ = p.cmd.Process.Kill()
		<-p.exited
		return -1
	}
}

// procCPU is the CPU time process pid has used so far (clock ticks of
// /proc/PID/stat, assumed 100 per second).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// procHasOpen reports whether process pid holds open a file whose name
// is base (read from /proc/pid/fd).
func procHasOpen(pid int, base string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && filepath.Base(target) == base {
			return true
		}
	}
	return false
}

// checkRun waits for a run that must end by itself and checks its exit
// code, that its output matches every want, its time and its peak RSS.
func (p *opmProc) checkRun(code int, limit time.Duration, maxMiB float64, want ...string) string {
	p.t.Helper()
	got := p.wait(limit)
	out := p.output()
	if got != code {
		p.t.Errorf("exit code %d, want %d; output:\n%s", got, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			p.t.Errorf("output does not hold %q:\n%s", w, out)
		}
	}
	if rss := p.peakRSS(); rss > maxMiB {
		p.t.Errorf("peak RSS %.1f MiB, want at most %.0f", rss, maxMiB)
	}
	p.t.Logf("exit %d in %v, peak RSS %.1f MiB", got, p.took.Round(time.Millisecond), p.peakRSS())
	return out
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitServing waits until the server at addr answers SERVING.
func waitServing(t *testing.T, p *opmProc, addr string, limit time.Duration) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := grpc_health_v1.NewHealthClient(conn)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			t.Fatalf("exited: %s", p.output())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
		cancel()
		if err == nil && r.Status == grpc_health_v1.HealthCheckResponse_SERVING {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("not serving after %v: %s", limit, p.output())
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const smallCatalog = `{"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "foo", "name": "stable", "entries": [{"name": "foo.v1"}]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v1", "image": "quay.io/foo:v1", "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}}, {"type": "olm.csv.metadata", "value": {"displayName": "Foo", "description": "does things"}}]}
`

// TestServeCatalogHostile (issue 27, item 2): `opm serve DIR` reads the
// catalog as render and validate do. A FIFO and a character device are
// refused at once, naming them (with and without --cache-dir, whose digest
// reads every file too); --max-file-size is honoured.
func TestServeCatalogHostile(t *testing.T) {
	work := t.TempDir()
	writeFiles(t, work, map[string]string{"cat/foo.json": smallCatalog})
	addr := freeAddr(t)

	special := []struct {
		name, kind string
		make       func(p string) error
	}{
		{"zz.fifo", "a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		// /dev/zero's numbers: reading it never ends.
		{"zz.zero", "a character device", func(p string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o600, 1<<8|5) }},
	}
	for _, sp := range special {
		for _, cache := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cache=%v", sp.kind, cache), func(t *testing.T) {
				dir := filepath.Join(work, "cat")
				p := filepath.Join(dir, sp.name)
				if err := sp.make(p); err != nil {
					t.Skipf("cannot make %s: %v", sp.kind, err)
				}
				defer os.Remove(p)
				args := []string{"serve", "cat", "-p", addr, "-t", ""}
				if cache {
					args = append(args, "--cache-dir", t.TempDir())
				}
				startOpm(t, work, args...).checkRun(1, 10*time.Second, 120,
					"Error: serve cat: cat/"+sp.name+": not a regular file ("+sp.kind+")")
			})
		}
	}

	t.Run("max-file-size", func(t *testing.T) {
		writeFiles(t, work, map[string]string{"big/foo.json": smallCatalog + strings.Repeat(" ", 5<<10-len(smallCatalog))})
		startOpm(t, work, "serve", "big", "-p", addr, "-t", "", "--max-file-size", "2KiB").checkRun(1, 10*time.Second, 120,
			"Error: serve big: big/foo.json: file size 5 KiB is over the limit of 2 KiB on a single file\nThe limit is set with --max-file-size.")
		startOpm(t, work, "serve", "big", "-p", addr, "-t", "", "--max-file-size", "2KiB", "--cache-dir", t.TempDir()).checkRun(1, 10*time.Second, 120,
			"big/foo.json: file size 5 KiB is over the limit of 2 KiB")
	})

	// A FIFO in the catalog used to hang start-up for good, deaf to
	// SIGTERM: SIGTERM during the longest start-up phase (parsing a large
	// catalog) ends it within a second.
	t.Run("SIGTERM while parsing", func(t *testing.T) {
		dir := filepath.Join(work, "large")
		if _, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{Packages: 60, Bundles: 20, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		p := startOpm(t, work, "serve", "large", "-p", addr, "-t", "")
		time.Sleep(150 * time.Millisecond) // well inside the parse
		select {
		case <-p.exited:
			t.Skipf("start-up ended in %v, before SIGTERM", p.took)
		default:
		}
		if code := p.terminate(); code == 0 {
			t.Errorf("exit code 0 after SIGTERM during start-up: %s", p.output())
		}
	})
}

// buildCache runs `opm serve cat --cache-dir cache --cache-only` in work.
func buildCache(t *testing.T, work string) {
	t.Helper()
	startOpm(t, work, "serve", "cat", "--cache-dir", "cache", "--cache-only", "-t", "").checkRun(0, 30*time.Second, 200, `status="cache built"`)
}

// reseal rewrites meta.json as a hostile author would: edit, then seal
// again (sha256 of the JSON of the other fields).
func reseal(t *testing.T, sub string, edit func(m *serve.CacheMeta)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sub, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m serve.CacheMeta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	j, _ := json.Marshal(m.Sealed())
	if err := os.WriteFile(filepath.Join(sub, "meta.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServeCacheHostile (issue 27, item 1): the serve cache is read
// through safefs, and its own content is checked. With
// --cache-enforce-integrity a spoiled cache is refused with a clear error
// (exit 1); without, it is rebuilt with a warning.
func TestServeCacheHostile(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte(`{"schema":"TOP-SECRET host file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, sub string)
		want  string
	}{
		{"data.bin links to a host file", func(t *testing.T, sub string) {
			os.Remove(filepath.Join(sub, "data.bin"))
			if err := os.Symlink(secret, filepath.Join(sub, "data.bin")); err != nil {
				t.Fatal(err)
			}
		}, "open opm-serve/data.bin: a symbolic link leads outside the directory being read"},
		{"data.bin is a FIFO", func(t *testing.T, sub string) {
			os.Remove(filepath.Join(sub, "data.bin"))
			if err := syscall.Mkfifo(filepath.Join(sub, "data.bin"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "open opm-serve/data.bin: not a regular file (a named pipe)"},
		{"same-length edit of index.bin", func(t *testing.T, sub string) {
			p := filepath.Join(sub, "index.bin")
			b, _ := os.ReadFile(p)
			i := bytes.Index(b, []byte("quay.io/foo:v1"))
			if i < 0 {
				t.Fatal("no image in index.bin")
			}
			copy(b[i:], "evil.io/foo:v1")
			os.WriteFile(p, b, 0o644)
		}, "opm-serve/index.bin does not match the cache's meta.json"},
		{"swapped data.bin", func(t *testing.T, sub string) {
			p := filepath.Join(sub, "data.bin")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.ToUpper(b), 0o644)
		}, "opm-serve/data.bin does not match the cache's meta.json"},
		{"edited meta.json", func(t *testing.T, sub string) {
			p := filepath.Join(sub, "meta.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"packages": 1`), []byte(`"packages": 2`), 1), 0o644)
		}, "opm-serve/meta.json was modified after the cache was built"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			writeFiles(t, work, map[string]string{"cat/foo.json": smallCatalog})
			buildCache(t, work)
			sub := filepath.Join(work, "cache", serve.CacheSubdir)
			tc.spoil(t, sub)

			out := startOpm(t, work, "serve", "cat", "--cache-dir", "cache", "--cache-only", "--cache-enforce-integrity", "-t", "tlog").checkRun(1, 10*time.Second, 120,
				"Error: serve cat: integrity check failed: cache requires rebuild: "+tc.want)
			if strings.Contains(out, "TOP-SECRET") {
				t.Error("the host file shows")
			}
			if tl, _ := os.ReadFile(filepath.Join(work, "tlog")); !bytes.Contains(tl, []byte(tc.want)) {
				t.Errorf("termination log %q", tl)
			}

			// Without the flag: rebuilt, with a warning, then served as
			// built.
			startOpm(t, work, "serve", "cat", "--cache-dir", "cache", "--cache-only", "-t", "").checkRun(0, 10*time.Second, 120,
				`level=warning msg="rebuilding the cache" cache=cache reason="cache requires rebuild: `+strings.ReplaceAll(tc.want, `"`, `\"`),
				`status="cache rebuilt"`)
			startOpm(t, work, "serve", "cat", "--cache-dir", "cache", "--cache-only", "--cache-enforce-integrity", "-t", "").checkRun(0, 10*time.Second, 120, `status="cache hit"`)
			if fi, err := os.Lstat(filepath.Join(sub, "data.bin")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("data.bin after the rebuild: %v %v", fi, err)
			}
			if b, _ := os.ReadFile(secret); !bytes.Contains(b, []byte("TOP-SECRET")) {
				t.Error("the host file was changed")
			}
		})
	}

	// Hashing a large data.bin (here 4 GiB, sparse, with meta.json
	// resealed to match its size) is cancellable: SIGTERM ends it within a
	// second.
	t.Run("SIGTERM while hashing", func(t *testing.T) {
		work := t.TempDir()
		writeFiles(t, work, map[string]string{"cat/foo.json": smallCatalog})
		buildCache(t, work)
		sub := filepath.Join(work, "cache", serve.CacheSubdir)
		const size = 4 << 30
		if err := os.Truncate(filepath.Join(sub, "data.bin"), size); err != nil {
			t.Fatal(err)
		}
		reseal(t, sub, func(m *serve.CacheMeta) { m.DataSize = size })
		p := startOpm(t, work, "serve", "cat", "--cache-dir", "cache", "--cache-only", "--cache-enforce-integrity", "-t", "")
		// Hashing once data.bin is open and 50 ms of CPU went into it. A
		// fixed sleep or a CPU threshold from start could signal it before
		// its handler is installed: a race-built binary on a loaded machine
		// spent over 200 ms of CPU starting up.
		var opened time.Duration = -1
		for deadline := time.Now().Add(30 * time.Second); opened < 0 || procCPU(p.cmd.Process.Pid) < opened+50*time.Millisecond; {
			if opened < 0 && procHasOpen(p.cmd.Process.Pid, "data.bin") {
				opened = procCPU(p.cmd.Process.Pid)
			}
			select {
			case <-p.exited:
				t.Fatalf("ended before SIGTERM: %s", p.output())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("not hashing after 30 s")
			}
		}
		if code := p.terminate(); code != 1 || !strings.Contains(p.output(), "context canceled") {
			t.Errorf("exit code %d: %s", code, p.output())
		}
		if rss := p.peakRSS(); rss > 120 {
			t.Errorf("peak RSS %.1f MiB", rss)
		}
	})
}

// TestServeUnreadStreams (issue 27, item 8): 5 clients open 2,000
// ListBundles streams each and never read them. The server's memory stays
// bounded, a well-behaved client is served meanwhile, and SIGTERM still
// ends the server within a second.
func TestServeUnreadStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 10,000 streams")
	}
	work := t.TempDir()
	gen, err := gencatalog.New(gencatalog.Options{Packages: 40, Bundles: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(context.Background(), filepath.Join(work, "cat")); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := startBin(t, plainOpm(t), work, "serve", "cat", "-p", addr, "-t", "")
	waitServing(t, p, addr, time.Minute)
	base := p.peakRSS()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hostile, stopHostile := context.WithCancel(ctx)
	defer stopHostile()
	var wg sync.WaitGroup
	var opened sync.Map
	for c := range 5 {
		// Fixed flow control windows: no BDP estimation, which would let
		// streams take whole answers unread.
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rc := api.NewRegistryClient(conn)
		for i := range 2000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := rc.ListBundles(hostile, &api.ListBundlesRequest{}); err == nil {
					opened.Store(c*2000+i, true)
				}
				<-hostile.Done()
			}()
		}
	}
	time.Sleep(3 * time.Second) // let the streams pile up

	good, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	gc := api.NewRegistryClient(good)
	start := time.Now()
	for range 3 {
		s, err := gc.ListBundles(ctx, &api.ListBundlesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err := s.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("ListBundles: %v after %d bundles", err, n)
				}
				break
			}
			n++
		}
		if n == 0 {
			t.Fatal("ListBundles: no bundle")
		}
		if _, err := gc.GetPackage(ctx, &api.GetPackageRequest{Name: gen.PackageNames()[0]}); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	time.Sleep(time.Second)
	peak := p.peakRSS()
	count := 0
	opened.Range(func(any, any) bool { count++; return true })
	t.Logf("RSS %.1f MiB when serving, peak %.1f MiB with %d hostile streams opened; the good client's calls took %v", base, peak, count, took)
	if peak > base+150 {
		t.Errorf("peak RSS %.1f MiB, %.1f MiB more than when serving", peak, peak-base)
	}
	if took > 30*time.Second {
		t.Errorf("the well-behaved client waited %v", took)
	}
	if code := p.terminate(); code != 0 {
		t.Errorf("exit code %d after SIGTERM: %s", code, p.output())
	}
	stopHostile()
	wg.Wait()
}
