package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/sqlite"
)

// FuzzRender renders arbitrary files as index databases, with small
// limits: it must return (a rendering or an error) without panicking and
// within its time bound. Crashers found are kept in testdata/fuzz and run
// as regression tests by `go test`.
func FuzzRender(f *testing.F) {
	for _, name := range []string{"v05", "v08", "v13", "v13-deprecated"} {
		f.Add(readFile(f, filepath.Join("testdata", "schema", name+".db.gz")))
	}
	f.Add([]byte(sqlite.Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "index.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lim := sqlite.Limits{MaxFileSize: 1 << 20, MaxRows: 10_000, MaxValueSize: 1 << 20}
		cfg, err := sqlite.RenderFile(ctx, path, "fuzz.db", sqlite.Options{Limits: lim})
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("rendering took more than 5 s")
		}
		if err == nil && cfg == nil {
			t.Fatal("no rendering and no error")
		}
	})
}
