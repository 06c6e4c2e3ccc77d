package declcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/safefs"
)

const secret = "TOPSECRET-catalog-do-not-print"

// catalogDir writes files into dir/catalog beside dir/secret.json and
// returns dir/catalog.
func catalogDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.json"), []byte(`{"schema":"olm.package","name":"`+secret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "catalog")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symlinks: %v", err)
	}
}

// loadBounded loads dir, failing the test should that take over 20s.
func loadBounded(t *testing.T, ctx context.Context, dir string) (*DeclarativeConfig, error) {
	t.Helper()
	type result struct {
		cfg *DeclarativeConfig
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cfg, err := LoadDir(ctx, dir)
		ch <- result{cfg, err}
	}()
	select {
	case r := <-ch:
		return r.cfg, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("LoadDir hung")
		return nil, nil
	}
}

func TestLoadDirHostile(t *testing.T) {
	pkg := map[string]string{"p.yaml": "schema: olm.package\nname: p\n"}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, root string)
		ctx     func() context.Context
		wantErr string
		is      error
	}{
		{
			name:    "LinkOut",
			setup:   func(t *testing.T, root string) { link(t, "../secret.json", filepath.Join(root, "x.json")) },
			wantErr: "/catalog/x.json: a symbolic link leads outside the directory being read, or is absolute",
		},
		{
			// The lexical check of issue 10: each link looks harmless.
			name: "LinkChainOut",
			setup: func(t *testing.T, root string) {
				link(t, "..", filepath.Join(root, "sub/d"))
				link(t, "sub/d/sub/d/sub/d/../secret.json", filepath.Join(root, "x.json"))
				if err := os.WriteFile(filepath.Join(root, ".indexignore"), []byte("sub\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "/catalog/x.json: a symbolic link leads outside",
		},
		{
			name: "AbsoluteLink",
			setup: func(t *testing.T, root string) {
				link(t, filepath.Join(filepath.Dir(root), "secret.json"), filepath.Join(root, "x.json"))
			},
			wantErr: "/catalog/x.json: a symbolic link leads outside",
		},
		{
			name:    "DirectoryLinkOut",
			setup:   func(t *testing.T, root string) { link(t, "..", filepath.Join(root, "up")) },
			wantErr: "/catalog/up: a symbolic link leads outside",
		},
		{
			name:    "IndexIgnoreLinkOut",
			setup:   func(t *testing.T, root string) { link(t, "../secret.json", filepath.Join(root, ".indexignore")) },
			wantErr: "reading ignore file .indexignore: a symbolic link leads outside",
		},
		{
			name: "FIFO",
			setup: func(t *testing.T, root string) {
				if err := syscall.Mkfifo(filepath.Join(root, "z.fifo"), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			},
			wantErr: "/catalog/z.fifo: not a regular file (a named pipe)",
		},
		{
			name:    "DeviceLink",
			setup:   func(t *testing.T, root string) { link(t, "/dev/zero", filepath.Join(root, "zero.json")) },
			wantErr: "/catalog/zero.json: a symbolic link leads outside",
		},
		{
			name: "OverTheLimit",
			setup: func(t *testing.T, root string) {
				if err := os.WriteFile(filepath.Join(root, "big.json"), bytes.Repeat([]byte(" "), 2048), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			ctx:     func() context.Context { return WithMaxFileSize(context.Background(), 1024) },
			wantErr: "/catalog/big.json: file size 2 KiB is over the limit of 1 KiB on a single file",
			is:      ErrFileTooLarge,
		},
		{
			name:    "Cancelled",
			setup:   func(t *testing.T, root string) {},
			ctx:     func() context.Context { ctx, cancel := context.WithCancel(context.Background()); cancel(); return ctx },
			wantErr: "context canceled",
			is:      context.Canceled,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := catalogDir(t, pkg)
			tc.setup(t, root)
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			cfg, err := loadBounded(t, ctx, root)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, %v\nwant %q", cfg, err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the secret leaked: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}

// TestLoadDirFollowExternalLinks: the opt-in follows links out of the
// directory (as upstream does), and still refuses what is not a regular
// file and what is over the size limit.
func TestLoadDirFollowExternalLinks(t *testing.T) {
	pkg := map[string]string{"p.yaml": "schema: olm.package\nname: p\n"}
	follow := WithFollowExternalSymlinks(context.Background(), true)

	root := catalogDir(t, pkg)
	link(t, "../secret.json", filepath.Join(root, "x.json"))
	cfg, err := loadBounded(t, follow, root)
	if err != nil || len(cfg.Packages) != 2 || cfg.Packages[1].Name != secret {
		t.Fatalf("got %+v, %v; want the linked package", cfg, err)
	}
	if _, err := loadBounded(t, context.Background(), root); !errors.Is(err, ErrEscapes) || !strings.Contains(err.Error(), "--follow-external-symlinks") {
		t.Errorf("without the opt-in: %v", err)
	}

	root = catalogDir(t, pkg)
	link(t, "/dev/zero", filepath.Join(root, "zero.json"))
	if _, err := loadBounded(t, follow, root); err == nil || !strings.HasSuffix(err.Error(), "/catalog/zero.json: not a regular file (a character device)") {
		t.Errorf("device through a link: %v", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.json"), bytes.Repeat([]byte(" "), 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	root = catalogDir(t, pkg)
	link(t, filepath.Join(dir, "big.json"), filepath.Join(root, "big.json"))
	if _, err := loadBounded(t, WithMaxFileSize(follow, 1024), root); !errors.Is(err, ErrFileTooLarge) {
		t.Errorf("over the limit through a link: %v", err)
	}
	// The opt-in survives a later size limit, and the other way round.
	if l := safefs.LimitsFrom(WithMaxFileSize(follow, 1024)); !l.FollowExternalLinks || l.MaxFileSize != 1024 {
		t.Errorf("limits = %+v", l)
	}
}

// TestLoadDirDeepNesting: 10 MB of nesting in a catalog file is an error
// naming the file and line (or line and column, for JSON), quickly and
// without a crash.
func TestLoadDirDeepNesting(t *testing.T) {
	brackets := strings.Repeat("[", 10<<20)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"YAML", brackets, "/catalog/c.json:1: error converting YAML to JSON: yaml: exceeded max depth of 10000"},
		{"JSON", `{"schema":"x","a":` + brackets, "/catalog/c.json:1:10018: invalid character '[' exceeded max depth"},
		{"JSONObjects", `{"schema":"x","a":` + strings.Repeat(`{"a":`, 20000), "/catalog/c.json:1:50014: invalid character '{' exceeded max depth"},
		{"SecondValue", "{\"schema\":\"a\"}\n{\"schema\":\"x\",\"a\":" + brackets, "/catalog/c.json:2:10018: invalid character '[' exceeded max depth"},
		{"ThirdValue", "{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n{\"schema\":\"x\",\"a\":" + brackets, "/catalog/c.json:3:10018: invalid character '[' exceeded max depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := loadBounded(t, context.Background(), catalogDir(t, map[string]string{"c.json": tc.data}))
			if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant ...%s", err, tc.want)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	// Up to the limit, as upstream.
	ok := `{"schema":"x","a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + "}"
	if _, err := loadBounded(t, context.Background(), catalogDir(t, map[string]string{"c.json": ok})); err != nil {
		t.Fatal(err)
	}
}

// TestStreamMemoryIsBounded decodes a 96 MiB stream of small values (made
// on the fly) and checks that the live heap never holds the stream: what is
// held is the window and the value being decoded.
func TestStreamMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("96 MiB")
	}
	const total = 96 << 20
	r := &blobStream{left: total}
	var peak uint64
	var ms runtime.MemStats
	n := 0
	err := decodeReader(r, total, 0, "big.json", func(normalized, int, int) error {
		if n++; n%4096 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 90000 {
		t.Fatalf("only %d values", n)
	}
	if peak > 24<<20 {
		t.Errorf("the live heap reached %d MiB decoding a %d MiB stream", peak>>20, total>>20)
	}
}

// blobStream is a stream of ~1 KB JSON objects on one line, left bytes
// long (give or take one object).
type blobStream struct {
	left int
	buf  []byte
	i    int
}

func (s *blobStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			if s.left <= 0 {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			s.buf = fmt.Appendf(nil, `{"schema":"custom","name":"n%d","data":"%s"}`, s.i, strings.Repeat("x", 1000))
			s.i++
			s.left -= len(s.buf)
		}
		k := copy(p[n:], s.buf)
		s.buf = s.buf[k:]
		n += k
	}
	return n, nil
}
