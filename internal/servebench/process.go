package servebench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// MeasureOptions describe one measured start of `opm serve`.
type MeasureOptions struct {
	Bin     string   // the opm binary
	Catalog string   // the catalog directory
	Args    []string // more flags, e.g. --cache-dir
	Timeout time.Duration
	// Load, when not nil, also runs the call mix once the server is up.
	Load *LoadOptions
	// OLM also runs OLM's call pattern ([OLMPattern]) after the
	// ListBundles.
	OLM bool
}

// Measurement is what one start showed. Memory is in KiB (VmHWM, the
// peak resident set size so far).
type Measurement struct {
	Healthy     time.Duration // from spawning to the first SERVING answer
	CPU         time.Duration // user+system CPU time used by then
	HWMHealthy  int64
	ListBundles time.Duration
	Records     int
	HWMListed   int64 // after a full ListBundles
	Load        *Report
	HWMLoaded   int64 // after the load run
	OLM         OLMCalls
	OLMTime     time.Duration
	HWMOLM      int64 // after OLM's call pattern
	ExitCode    int   // after SIGTERM
}

// Measure starts the server on a free loopback port, waits for health,
// lists every bundle, optionally runs the load, and stops it with SIGTERM.
func Measure(ctx context.Context, o MeasureOptions) (*Measurement, error) {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "servebench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"serve", o.Catalog, "-p", addr, "--pprof-addr", "", "-t", filepath.Join(tmp, "termination-log")}, o.Args...)
	cmd := exec.Command(o.Bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() int {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		return cmd.ProcessState.ExitCode()
	}
	fail := func(err error) (*Measurement, error) {
		stop()
		return nil, fmt.Errorf("%w; server log: %s", err, lastLine(logs.String()))
	}

	m := &Measurement{}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	hc := grpc_health_v1.NewHealthClient(conn)
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the server exited (%v) before answering health; log: %s", err, lastLine(logs.String()))
		case <-ctx.Done():
			return fail(ctx.Err())
		default:
		}
		// As upstream's figures were taken: poll a TCP connect every
		// 20 ms, then ask for health.
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		c.Close()
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := hc.Check(hctx, &grpc_health_v1.HealthCheckRequest{})
		hcancel()
		if err == nil && resp.Status == grpc_health_v1.HealthCheckResponse_SERVING {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.Healthy = time.Since(start)
	pid := cmd.Process.Pid
	if m.CPU, err = cpuTime(pid); err != nil {
		return fail(err)
	}
	if m.HWMHealthy, err = peakRSS(pid); err != nil {
		return fail(err)
	}
	t0 := time.Now()
	if m.Records, err = ListBundles(ctx, conn, nil); err != nil {
		return fail(fmt.Errorf("ListBundles: %w", err))
	}
	m.ListBundles = time.Since(t0)
	if m.HWMListed, err = peakRSS(pid); err != nil {
		return fail(err)
	}
	if o.OLM {
		t0 := time.Now()
		if m.OLM, err = OLMPattern(ctx, conn); err != nil {
			return fail(fmt.Errorf("OLM's call pattern: %w", err))
		}
		m.OLMTime = time.Since(t0)
		if m.HWMOLM, err = peakRSS(pid); err != nil {
			return fail(err)
		}
	}
	if o.Load != nil {
		p, err := NewPlan(ctx, conn)
		if err != nil {
			return fail(err)
		}
		m.Load = Load(ctx, conn, p, *o.Load)
		if m.HWMLoaded, err = peakRSS(pid); err != nil {
			return fail(err)
		}
	}
	m.ExitCode = stop()
	return m, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cpuTime reads the user+system time of pid from /proc (in USER_HZ ticks,
// 100 a second on Linux).
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// peakRSS reads VmHWM (KiB) of pid.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/PID/status")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// LoadAddr runs the call mix against the server at addr.
func LoadAddr(ctx context.Context, addr string, o LoadOptions) (*Report, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	p, err := NewPlan(ctx, conn)
	if err != nil {
		return nil, err
	}
	return Load(ctx, conn, p, o), nil
}
