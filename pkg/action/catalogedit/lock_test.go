package catalogedit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	ce "github.com/opmkit/opm/pkg/catalogedit"
)

// TestConcurrentEditsLoseNothing races editors on one catalog: each adds
// its own channel, and every edit must succeed and be in the result (issue
// 30 item 7: about 1 round in 6 lost an update, both editors exiting 0).
func TestConcurrentEditsLoseNothing(t *testing.T) {
	const rounds, editors = 2, 5
	for _, kind := range []string{"dir", "file"} {
		for r := range rounds {
			dir, p := write(t, catalog)
			cat := dir
			if kind == "file" {
				cat = p
			}
			var wg sync.WaitGroup
			errs := make([]error, editors)
			start := make(chan struct{})
			for i := range editors {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					_, errs[i] = Promote(ctx, PromoteOptions{
						Common:  Common{Catalog: cat},
						Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{fmt.Sprintf("ch-%d", i)}, Create: true,
					})
				}()
			}
			close(start)
			wg.Wait()
			got := read(t, p)
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s round %d: editor %d: %v", kind, r, i, err)
				}
				if !strings.Contains(got, fmt.Sprintf("name: ch-%d\n", i)) {
					t.Errorf("%s round %d: editor %d's channel lost", kind, r, i)
				}
			}
			if t.Failed() {
				t.Fatalf("catalog:\n%s", got)
			}
		}
	}
}

// TestLockedCatalog: a second editor waits the time it is given, then
// fails naming the catalog and the holder; a dry run waits too (it reads
// under a shared lock).
func TestLockedCatalog(t *testing.T) {
	dir, p := write(t, catalog)
	unlock, err := ce.Lock(context.Background(), dir, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		start := time.Now()
		_, err = Promote(context.Background(), PromoteOptions{
			Common:  Common{Catalog: dir, DryRun: dry, LockWait: 200 * time.Millisecond},
			Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{"fast"}, Create: true,
		})
		var le *ce.LockedError
		if !errors.As(err, &le) || le.Catalog != dir {
			t.Fatalf("dry run %v: got %v", dry, err)
		}
		if el := time.Since(start); el < 200*time.Millisecond || el > 10*time.Second {
			t.Errorf("waited %s", el)
		}
		want := "catalog " + dir + " is being edited by another process"
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "gave up after waiting 200ms") {
			t.Errorf("got %q", err)
		}
		if runtime.GOOS == "linux" && !strings.Contains(err.Error(), fmt.Sprintf("(pid %d: this process)", os.Getpid())) {
			t.Errorf("holder not named: %q", err)
		}
	}
	// A file catalog is guarded by its directory's lock.
	if _, err := Promote(context.Background(), PromoteOptions{
		Common:  Common{Catalog: p, LockWait: -1},
		Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{"fast"}, Create: true,
	}); !errors.As(err, new(*ce.LockedError)) {
		t.Fatalf("file catalog: got %v", err)
	}
	// A canceled wait stops at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SetDefaultChannel(ctx, SetDefaultChannelOptions{Common: Common{Catalog: dir}, Package: "foo", Channel: "stable"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: got %v", err)
	}
	unlock()
	if _, err := Promote(context.Background(), PromoteOptions{
		Common:  Common{Catalog: dir, LockWait: -1},
		Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{"fast"}, Create: true,
	}); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Fatalf("the lock left files: %v %v", entries, err)
	}
}
