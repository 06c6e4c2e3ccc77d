package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
)

// cmdBounded is the testscript command
//
//	bounded [-time D] [-rss SIZE] [-term-after D | -term-on-output N]
//	        [-term-within D] CODE PROGRAM [ARGS...]
//
// which runs PROGRAM (looked up in the script's PATH, in its environment
// and directory) and fails unless it exits with status CODE within -time
// (wall clock, default 60s) with a peak resident set (the child's
// getrusage Maxrss) under -rss (default: no bound). Its stdout (first 4 KiB
// only; the rest is counted and dropped, so that gigabytes of output can
// be checked for their memory) and stderr are then checked as after exec.
//
// -term-after D sends SIGTERM D after the start, -term-on-output N once N
// bytes of stdout have arrived; the program must still be running then
// (else the script does not test what it means to) and must exit within
// -term-within (default 1s).
//
// Under the race detector, the time and memory bounds are multiplied by
// raceScale: the checks stay meaningful (orders of magnitude apart from the
// failures they guard against) without failing on instrumentation.
func cmdBounded(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! bounded")
	}
	fs := flag.NewFlagSet("bounded", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	wall := fs.Duration("time", 60*time.Second, "")
	var rss int64
	fs.Var(cmdutil.SizeValue{N: &rss}, "rss", "")
	termAfter := fs.Duration("term-after", 0, "")
	termOnOutput := fs.Int64("term-on-output", 0, "")
	termWithin := fs.Duration("term-within", time.Second, "")
	if err := fs.Parse(args); err != nil || fs.NArg() < 2 {
		ts.Fatalf("usage: bounded [-time D] [-rss SIZE] [-term-after D | -term-on-output N] [-term-within D] CODE PROGRAM [ARGS...] (%v)", err)
	}
	want, err := strconv.Atoi(fs.Arg(0))
	if err != nil {
		ts.Fatalf("bounded: bad CODE %q", fs.Arg(0))
	}
	if raceEnabled {
		*wall *= raceScale
		*termWithin *= raceScale
		rss *= raceScale
	}
	prog, err := exec.LookPath(fs.Arg(1))
	if p := lookPath(ts, fs.Arg(1)); p != "" {
		prog, err = p, nil
	}
	if err != nil {
		ts.Fatalf("bounded: %v", err)
	}
	cmd := exec.Command(prog, fs.Args()[2:]...)
	cmd.Args[0] = fs.Arg(1)
	cmd.Dir = ts.Getenv("PWD")
	if cmd.Dir == "" {
		cmd.Dir = ts.MkAbs(".")
	}
	cmd.Env = scriptEnv(ts)
	out := &countingBuffer{keep: 4 << 10, reached: make(chan struct{}), at: termOnOutput}
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		ts.Fatalf("bounded: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var termAt <-chan time.Time
	if *termAfter > 0 {
		termAt = time.After(*termAfter)
	}
	var onOutput <-chan struct{}
	if *termOnOutput > 0 {
		onOutput = out.reached
	}
	deadline := time.After(*wall)
	var termSent time.Time
	var werr error
wait:
	for {
		select {
		case werr = <-done:
			break wait
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			ts.Fatalf("%s ran longer than %v (killed)", fs.Arg(1), *wall)
		case <-termAt:
		case <-onOutput:
		}
		if termAt == nil && onOutput == nil {
			continue
		}
		termAt, onOutput = nil, nil
		termSent = time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			ts.Fatalf("SIGTERM: %v", err)
		}
		select {
		case werr = <-done:
			break wait
		case <-time.After(*termWithin):
			_ = cmd.Process.Kill()
			<-done
			ts.Fatalf("%s still ran %v after SIGTERM (killed)", fs.Arg(1), *termWithin)
		}
	}
	elapsed := time.Since(start)
	got := 0
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			ts.Fatalf("bounded: %v", werr)
		}
		got = ee.ExitCode()
	}
	peak := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // KiB on Linux
	}
	ts.Logf("%s: exit %d in %v, peak RSS %.1f MiB, %d bytes of stdout", fs.Arg(1), got, elapsed.Round(time.Millisecond), float64(peak)/(1<<20), out.n)
	_, _ = ts.Stdout().Write(out.buf.Bytes())
	_, _ = ts.Stderr().Write(errOut.Bytes())
	if !termSent.IsZero() {
		ts.Logf("exited %v after SIGTERM", time.Since(termSent).Round(time.Millisecond))
	} else if *termAfter > 0 || *termOnOutput > 0 {
		ts.Fatalf("%s exited before SIGTERM was sent: the script does not test a phase that runs long enough", fs.Arg(1))
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d\n%s", fs.Arg(1), got, want, tail(errOut.String()))
	}
	if rss > 0 && peak > rss {
		ts.Fatalf("%s peaked at %.1f MiB of RSS, over the bound of %.1f MiB", fs.Arg(1), float64(peak)/(1<<20), float64(rss)/(1<<20))
	}
}

// raceScale is how much the race detector may slow a program down and
// grow its memory in `bounded`.
const raceScale = 4

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// lookPath finds prog in the script's PATH.
func lookPath(ts *testscript.TestScript, prog string) string {
	if strings.Contains(prog, "/") {
		return ts.MkAbs(prog)
	}
	for _, dir := range strings.Split(ts.Getenv("PATH"), string(os.PathListSeparator)) {
		p := dir + "/" + prog
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// scriptEnv is the script's environment, as far as opm reads it.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"WORK", "PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "GOTRACEBACK", "GOCOVERDIR", "GORACE", "CONTAINERS_REGISTRIES_CONF", "HELP_ALPHA", "NO_COLOR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// countingBuffer keeps the first keep bytes written, counts the rest, and
// closes reached once at bytes have been written.
type countingBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	keep    int
	n       int64
	at      *int64
	reached chan struct{}
	closed  bool
}

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.keep - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	c.n += int64(len(p))
	if !c.closed && *c.at > 0 && c.n >= *c.at {
		c.closed = true
		close(c.reached)
	}
	return len(p), nil
}
