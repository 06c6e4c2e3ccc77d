//go:build linux

// Package catalogpod runs an unpacked image's process the way a kubelet
// runs a catalog pod's container, without a container engine, for tests:
// in its own mount, PID and network namespaces, chrooted into the image's
// root filesystem (read-only when asked), with a fresh tmpfs at /tmp, a
// /dev holding termination-log, /proc, and the bind mounts given (OLM's
// emptyDir volumes), as a given uid and gid, the process being PID 1. The
// network namespace has only its loopback interface: what the process
// listens on (":50051", every interface) is reachable only through
// [Process.Dial], which, like the kubelet's probes, connects from inside
// the pod's network.
//
// It needs root (mount namespaces): [Supported] says whether it can run,
// and why not. Test binaries that use it must call [Main] first thing in
// their TestMain: the namespaces are set up by the test binary itself,
// re-executed as a helper, which then executes the container's process.
package catalogpod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Mount is a bind mount of a host directory into the container.
type Mount struct {
	Source   string // host directory
	Target   string // absolute path in the container
	ReadOnly bool
}

// Container describes one container of a pod.
type Container struct {
	// RootFS is the unpacked image root.
	RootFS string
	// Args is the process: the image's entrypoint and command (or a pod's
	// command and args), resolved in the container.
	Args []string
	Env  []string
	// UID and GID run the process (a pod's securityContext.runAsUser).
	UID, GID int
	// WorkDir is the process's directory ("" = /).
	WorkDir string
	// ReadOnlyRoot mounts the root filesystem read-only
	// (readOnlyRootFilesystem).
	ReadOnlyRoot bool
	// TmpfsTmp mounts a fresh, empty, writable tmpfs at /tmp (an emptyDir
	// volume there).
	TmpfsTmp bool
	// Mounts are the pod's other volumes.
	Mounts []Mount
	// Stdout and Stderr receive the process's output (nil: kept, see
	// Process.Output).
	Stdout, Stderr io.Writer `json:"-"`
}

// helperEnv carries the helper's job in the re-executed test binary.
const helperEnv = "OPM_CATALOGPOD_HELPER"

// job is what the helper does once the namespaces are set up: execute the
// container's process, or copy directories as OLM's copy-content utility.
type job struct {
	Container
	// Copy, when set, copies these from → to pairs inside the container
	// (as the process would) instead of executing Args.
	Copy [][2]string
	// Probe only checks that the namespaces can be set up.
	Probe bool
}

// Main runs the helper when the test binary was re-executed as one; it
// returns at once otherwise. Call it first in TestMain.
func Main() {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		return
	}
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fail("bad job: %v", err)
	}
	if j.Probe {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			fail("making mounts private: %v", err)
		}
		if err := bringUpLoopback(); err != nil {
			fail("%v", err)
		}
		os.Exit(0)
	}
	if err := j.run(); err != nil {
		fail("%v", err)
	}
	os.Exit(0)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "catalogpod helper: "+format+"\n", args...)
	os.Exit(125)
}

// Supported returns nil when containers can run here, else why not.
func Supported() error {
	if os.Geteuid() != 0 {
		return errors.New("running a catalog pod needs root (mount namespaces and chroot)")
	}
	p, err := start(job{Probe: true})
	if err == nil {
		err = p.Wait()
	}
	if err != nil {
		out := ""
		if p != nil {
			out = strings.TrimSpace(p.Output())
		}
		return fmt.Errorf("cannot create mount, PID and network namespaces here: %v %s", err, out)
	}
	return nil
}

// Process is a running container.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	out    syncBuffer
}

// Output returns what the process wrote to the streams it was given none
// for.
func (p *Process) Output() string { return p.out.String() }

// syncBuffer is a bytes.Buffer for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start starts the container's process.
func Start(c Container) (*Process, error) {
	return start(job{Container: c})
}

// Copy runs a container that copies each from → to pair (paths in the
// container) as OLM's copy-content utility does (otiai10/copy's defaults:
// permission bits re-applied with chmod, symbolic links recreated, times
// not kept), then exits; it returns the copy's error.
func Copy(c Container, pairs ...[2]string) error {
	p, err := start(job{Container: c, Copy: pairs})
	if err != nil {
		return err
	}
	return p.Wait()
}

func start(j job) (*Process, error) {
	spec, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = j.Stdout, j.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = &p.out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &p.out
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
		// Killed if this test process dies. The signal is tied to the
		// thread that starts it (go.dev/issue/27505): see below.
		Pdeathsig: syscall.SIGKILL,
	}
	started := make(chan error, 1)
	go func() {
		// The thread that starts the process stays until it exits, so
		// that Pdeathsig fires only when this process dies.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Pid is the process's id on the host.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Wait waits for the process to exit and returns its error.
func (p *Process) Wait() error {
	<-p.exited
	return p.err
}

// ExitCode is the exit status once the process exited (-1 if killed by a
// signal).
func (p *Process) ExitCode() int {
	<-p.exited
	return p.cmd.ProcessState.ExitCode()
}

// Kill kills the process and waits for it.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Dial connects to addr (host:port) in the pod's network namespace, as the
// kubelet's probes reach a pod.
func (p *Process) Dial(ctx context.Context, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread enters the pod's network namespace and is never
		// unlocked: the runtime ends it when this goroutine returns, so no
		// other goroutine runs in that namespace. The socket keeps it.
		runtime.LockOSThread()
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", p.Pid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{nil, fmt.Errorf("the pod's network namespace: %w", err)}
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("entering the pod's network namespace: %w", err)}
			return
		}
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// run sets the namespaces up and executes the process (or copies).
func (j *job) run() error {
	root, err := filepath.Abs(j.RootFS)
	if err != nil {
		return err
	}
	// Nothing mounted here propagates to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding the root: %w", err)
	}
	// Mount points the image may lack (the kubelet's runtime makes them
	// in the container's writable layer; here, in the unpacked root before
	// it is made read-only).
	points := []string{"proc", "dev"}
	if j.TmpfsTmp {
		points = append(points, "tmp")
	}
	for _, m := range j.Mounts {
		points = append(points, strings.TrimPrefix(filepath.Clean(m.Target), "/"))
	}
	for _, pt := range points {
		if err := os.MkdirAll(filepath.Join(root, pt), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(root, "dev"), "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, "dev", "termination-log"), nil, 0o666); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(root, "dev", "termination-log"), 0o666); err != nil {
		return err
	}
	if j.TmpfsTmp {
		if err := unix.Mount("tmpfs", filepath.Join(root, "tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=256m"); err != nil {
			return fmt.Errorf("mounting /tmp: %w", err)
		}
	}
	for _, m := range j.Mounts {
		target := filepath.Join(root, m.Target)
		if err := unix.Mount(m.Source, target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", m.Target, err)
			}
		}
	}
	if j.ReadOnlyRoot {
		if err := unix.Mount("", root, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making the root read-only: %w", err)
		}
	}
	if err := bringUpLoopback(); err != nil {
		return err
	}
	if err := unix.Chroot(root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	wd := j.WorkDir
	if wd == "" {
		wd = "/"
	}
	if err := os.Chdir(wd); err != nil {
		return err
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(j.GID); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(j.UID); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	if j.Copy != nil {
		for _, pair := range j.Copy {
			if err := copyTree(pair[0], pair[1]); err != nil {
				return fmt.Errorf("copy-content %s to %s: %w", pair[0], pair[1], err)
			}
		}
		return nil
	}
	if len(j.Args) == 0 {
		return errors.New("no process to run")
	}
	return syscall.Exec(j.Args[0], j.Args, j.Env)
}

// bringUpLoopback sets the new network namespace's lo up.
func bringUpLoopback() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("setting lo up: %w", err)
	}
	return nil
}

// copyTree copies src to dst as otiai10/copy does by default: directories
// and files created, their permission bits (setgid and sticky included)
// re-applied with chmod, symbolic links recreated as links, times not
// kept.
func copyTree(src, dst string) error {
	type dir struct {
		path string
		mode fs.FileMode
	}
	var dirs []dir
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		perm := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky | fs.ModeSetuid)
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case m.IsDir():
			// Writable while its entries are copied; its own mode last.
			dirs = append(dirs, dir{target, perm})
			return os.MkdirAll(target, 0o700)
		case m.IsRegular():
			if err := copyFile(p, target); err != nil {
				return err
			}
			return os.Chmod(target, perm)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].mode); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
