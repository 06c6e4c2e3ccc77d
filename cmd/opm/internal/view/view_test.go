package view_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestViewServesUntilSignalled: `opm view` prints its URL on 127.0.0.1,
// serves the pages there, and SIGTERM (as Ctrl-C) ends it within a second
// with exit status 0.
func TestViewServesUntilSignalled(t *testing.T) {
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- root.Run([]string{"view", "../../../../examples/catalog"}, &cmdutil.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
	}()
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/)`)
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
		select {
		case c := <-code:
			t.Fatalf("opm view exited %d: %s", c, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed: %q %q", stdout.String(), stderr.String())
		}
	}
	resp, err := http.Get(url + "packages/cache-operator/channels/fast")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("cache-operator")) {
		t.Errorf("GET the channel page: %s", resp.Status)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit status %d after SIGTERM: %s", c, stderr.String())
		}
	case <-time.After(time.Second):
		t.Fatal("SIGTERM did not end opm view within a second")
	}
}
