package view_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

// TestViewServesUntilSignalled: `opm view` prints its URL on 127.0.0.1,
// serves the pages there, and SIGTERM (as Ctrl-C) ends it within a second
// with exit status 0.
func TestViewServesUntilSignalled(t *testing.T) {
	out, w := io.Pipe()
	var stderr bytes.Buffer // read once the command has returned
	code := make(chan int, 1)
	go func() {
		c := root.Run([]string{"view", "../../../../examples/catalog"}, &cmdutil.IOStreams{In: strings.NewReader(""), Out: w, ErrOut: &stderr})
		w.Close()
		code <- c
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case c := <-code:
		t.Fatalf("opm view exited %d: %s", c, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("no URL printed")
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
