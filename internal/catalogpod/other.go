//go:build !linux

// Package catalogpod runs catalog images as a kubelet would; only on Linux
// (see catalogpod.go). Elsewhere Supported says so and nothing runs.
package catalogpod

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
)

var errUnsupported = errors.New("running a catalog pod needs Linux namespaces")

// Mount is a bind mount of a host directory into the container.
type Mount struct {
	Source, Target string
	ReadOnly       bool
}

// Container describes one container of a pod.
type Container struct {
	RootFS                 string
	Args, Env              []string
	UID, GID               int
	WorkDir                string
	ReadOnlyRoot, TmpfsTmp bool
	Mounts                 []Mount
	Stdout, Stderr         io.Writer
}

// Process is a running container (never, here).
type Process struct{}

// Main does nothing here.
func Main() {}

// Supported says why containers cannot run here.
func Supported() error { return errUnsupported }

// Start fails here.
func Start(Container) (*Process, error) { return nil, errUnsupported }

// Copy fails here.
func Copy(Container, ...[2]string) error { return errUnsupported }

func (*Process) Pid() int                                       { return 0 }
func (*Process) Signal(os.Signal) error                         { return errUnsupported }
func (*Process) Exited() <-chan struct{}                        { return nil }
func (*Process) Wait() error                                    { return errUnsupported }
func (*Process) ExitCode() int                                  { return -1 }
func (*Process) Kill()                                          {}
func (*Process) Output() string                                 { return "" }
func (*Process) Dial(context.Context, string) (net.Conn, error) { return nil, errUnsupported }
