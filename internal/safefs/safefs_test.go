package safefs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

const secret = "TOPSECRET-do-not-print"

// tree makes dir/root with the given files and links, and a secret file
// beside root, and returns root.
func tree(t *testing.T, files map[string]string, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	return root
}

func TestEscapingLinksAreRefused(t *testing.T) {
	root := tree(t, map[string]string{"ok.json": "{}", "sub/x": "x"}, map[string]string{
		"up.json":      "../secret",
		"sub/d":        "..",
		"chained.json": "sub/d/sub/d/sub/d/../secret",
		"inside.json":  "sub/x",
		"subdir":       "sub",
	})
	secretAbs := filepath.Join(filepath.Dir(root), "secret")
	if err := os.Symlink(secretAbs, filepath.Join(root, "abs.json")); err != nil {
		t.Fatal(err)
	}
	fsys, err := OpenDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for _, name := range []string{"up.json", "chained.json", "abs.json"} {
		data, err := fs.ReadFile(fsys, name)
		if !errors.Is(err, ErrEscapes) {
			t.Errorf("%s: got %q, %v; want ErrEscapes", name, data, err)
		}
		if err != nil && (strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), name)) {
			t.Errorf("%s: error %q", name, err)
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s: the secret was read", name)
		}
	}
	if data, err := fs.ReadFile(fsys, "inside.json"); err != nil || string(data) != "x" {
		t.Errorf("a link inside the root: %q, %v", data, err)
	}
	if entries, err := fs.ReadDir(fsys, "subdir"); err != nil || len(entries) != 2 {
		t.Errorf("a link to a directory inside the root: %v, %v", entries, err)
	}
}

func TestEscapeErrorText(t *testing.T) {
	// os does not export its escape error; isEscape matches its text.
	root := tree(t, nil, map[string]string{"up": "../secret"})
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Open("up")
	if !isEscape(err) {
		t.Fatalf("os.Root's escape error is now %q: update isEscape", err)
	}
}

func TestSpecialFilesAreRefused(t *testing.T) {
	root := tree(t, map[string]string{"ok": "x"}, map[string]string{"zero": "/dev/zero"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("fifo", filepath.Join(root, "tofifo")); err != nil {
		t.Fatal(err)
	}
	fsys, err := OpenDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, name := range []string{"fifo", "tofifo"} {
			if _, err := fs.ReadFile(fsys, name); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), name+": not a regular file (a named pipe)") {
				t.Errorf("%s: %v", name, err)
			}
		}
		// /dev/zero through a link is outside the root.
		if _, err := fs.ReadFile(fsys, "zero"); !errors.Is(err, ErrEscapes) {
			t.Errorf("zero: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	// Any fs.FS: the same checks (here os.DirFS, which follows links
	// lexically: the device is reached, and refused).
	if _, err := fs.ReadFile(New(context.Background(), os.DirFS(root)), "zero"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("zero via os.DirFS: %v", err)
	}
}

func TestSizeLimit(t *testing.T) {
	fsys := fstest.MapFS{"big": {Data: make([]byte, 1001)}, "ok": {Data: make([]byte, 1000)}}
	ctx := WithLimits(context.Background(), Limits{MaxFileSize: 1000})
	s := New(ctx, fsys)
	if _, err := fs.ReadFile(s, "ok"); err != nil {
		t.Error(err)
	}
	_, err := fs.ReadFile(s, "big")
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Size != 1001 || tl.Limit != 1000 {
		t.Fatalf("got %v", err)
	}
	if want := "read big: file size 1001 bytes is over the limit of 1000 bytes on a single file"; err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	// No limit.
	if _, err := fs.ReadFile(New(WithLimits(context.Background(), Limits{}), fsys), "big"); err != nil {
		t.Error(err)
	}
	if LimitsFrom(context.Background()).MaxFileSize != DefaultMaxFileSize {
		t.Error("no default")
	}
}

// growing is a file whose Stat says it is small and that reads forever.
type growing struct{ fs.File }

func (growing) Read(p []byte) (int, error) { return len(p), nil }

func TestGrowingFileIsCut(t *testing.T) {
	ctx := WithLimits(context.Background(), Limits{MaxFileSize: 1 << 20})
	s := New(ctx, fstest.MapFS{"f": {Data: []byte("x")}})
	f, err := s.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	f.(*boundedFile).File = growing{f.(*boundedFile).File}
	_, err = io.ReadAll(f)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := New(ctx, fstest.MapFS{"f": {Data: []byte("x")}})
	f, err := s.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(f); !errors.Is(err, context.Canceled) {
		t.Errorf("read: %v", err)
	}
	if _, err := s.Open("f"); !errors.Is(err, context.Canceled) {
		t.Errorf("open: %v", err)
	}
}

func TestReaderHonoursContext(t *testing.T) {
	pr, pw := io.Pipe() // nothing is ever written: a Read blocks
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, pr)
	errc := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked read ignored the cancellation")
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReadRegular(t *testing.T) {
	root := tree(t, map[string]string{"ok": "hello", "big": strings.Repeat("x", 100)}, map[string]string{"out": "/etc/hostname"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if b, err := ReadRegular(r, "ok", 10); err != nil || string(b) != "hello" {
			t.Errorf("ok: %q, %v", b, err)
		}
		if _, err := ReadRegular(nil, filepath.Join(root, "ok"), 10); err != nil {
			t.Errorf("ok without a root: %v", err)
		}
		if _, err := ReadRegular(r, "big", 99); !errors.Is(err, ErrTooLarge) {
			t.Errorf("big: %v", err)
		}
		for _, rt := range []*os.Root{r, nil} {
			name := "fifo"
			if rt == nil {
				name = filepath.Join(root, "fifo")
			}
			if _, err := ReadRegular(rt, name, 10); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "(a named pipe)") {
				t.Errorf("fifo (root %v): %v", rt != nil, err)
			}
		}
		if _, err := ReadRegular(r, "out", 1<<20); err == nil {
			t.Error("a link out of the root was followed")
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ReadRegular blocked")
	}
}

func TestStdinReaderLimit(t *testing.T) {
	ctx := WithLimits(context.Background(), Limits{MaxStdinSize: 10})
	got, err := io.ReadAll(StdinReader(ctx, strings.NewReader("0123456789")))
	if err != nil || string(got) != "0123456789" {
		t.Fatalf("at the limit: %q %v", got, err)
	}
	_, err = io.ReadAll(StdinReader(ctx, strings.NewReader("0123456789x")))
	var te *TooLargeError
	if !errors.As(err, &te) || !te.Stdin || te.Limit != 10 || IsFileSizeLimit(err) {
		t.Fatalf("over the limit: %v", err)
	}
	// 0: no limit.
	ctx = WithLimits(context.Background(), Limits{})
	if got, err := io.ReadAll(StdinReader(ctx, strings.NewReader(strings.Repeat("x", 1000)))); err != nil || len(got) != 1000 {
		t.Fatalf("no limit: %d %v", len(got), err)
	}
	if LimitsFrom(context.Background()).MaxStdinSize != DefaultMaxStdinSize {
		t.Fatal("default")
	}
}
