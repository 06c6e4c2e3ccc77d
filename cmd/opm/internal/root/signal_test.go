package root

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
)

// stuckReader is a standard input that never delivers: Read blocks until
// the test ends. reading is closed at the first Read.
type stuckReader struct {
	once    sync.Once
	reading chan struct{}
	release chan struct{}
}

func (r *stuckReader) Read([]byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	<-r.release
	return 0, os.ErrClosed
}

// TestSignalStopsAWaitingRead: Ctrl-C (SIGINT) and SIGTERM end a command
// that waits on its input, with an error and exit 1, instead of being
// swallowed.
func TestSignalStopsAWaitingRead(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			in := &stuckReader{reading: make(chan struct{}), release: make(chan struct{})}
			defer close(in.release)
			var stdout, stderr bytes.Buffer
			code := make(chan int, 1)
			go func() {
				code <- Run([]string{"validate", "-"}, &cmdutil.IOStreams{In: in, Out: &stdout, ErrOut: &stderr})
			}()
			select {
			case <-in.reading: // Run has registered its signal handler by now
			case <-time.After(20 * time.Second):
				t.Fatal("validate - never read its input")
			}
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-code:
				if c != cmdutil.ExitFailure && c != cmdutil.ExitUsage {
					t.Errorf("exit code %d", c)
				}
				if !strings.Contains(stderr.String(), "context canceled") {
					t.Errorf("stderr %q", stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%v was ignored", sig)
			}
		})
	}
}
