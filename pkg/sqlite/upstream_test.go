package sqlite_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/action/migrate"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/sqlite"
)

// TestUpstream renders every test database as the recordings in
// testdata/upstream-v1.73.0 say upstream opm v1.73.0 did (see the README
// there), and compares: stdout byte for byte, the exit status, and the
// trees `opm migrate` wrote. Error wording is upstream's own and is not
// compared.
func TestUpstream(t *testing.T) {
	dir := filepath.Join("testdata", "upstream-v1.73.0")
	exits, err := filepath.Glob(filepath.Join(dir, "*.exit"))
	if err != nil || len(exits) == 0 {
		t.Fatalf("no recordings in %s", dir)
	}
	for _, exit := range exits {
		run := strings.TrimSuffix(filepath.Base(exit), ".exit")
		db, kind, _ := strings.Cut(run, ".")
		t.Run(run, func(t *testing.T) {
			t.Parallel()
			path := dbFile(t, db)
			wantExit := strings.TrimSpace(string(readFile(t, exit)))
			ctx := context.Background()
			var (
				out  bytes.Buffer
				rerr error
			)
			switch kind {
			case "render-json", "render-yaml", "render-csvmetadata":
				opts := render.Options{Refs: []string{path}}
				format := declcfg.FormatJSON
				if kind == "render-yaml" {
					format = declcfg.FormatYAML
				}
				if kind == "render-csvmetadata" {
					opts.MigrationLevel = migrations.LevelBundleObjectToCSVMetadata
				}
				rerr = render.Write(ctx, opts, &out, format)
			case "migrate":
				outDir := filepath.Join(t.TempDir(), "out")
				rerr = migrate.Run(ctx, migrate.Options{CatalogRef: path, OutputDir: outDir})
				if rerr == nil {
					compareTrees(t, filepath.Join(dir, run), outDir)
				}
			default:
				t.Fatalf("unknown run kind %q", kind)
			}
			gotExit := "0"
			if rerr != nil {
				gotExit = "1"
			}
			if gotExit != wantExit {
				t.Fatalf("exit %s, upstream %s; error: %v", gotExit, wantExit, rerr)
			}
			want := readFile(t, filepath.Join(dir, run+".stdout"))
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("stdout differs from upstream's (%d bytes, upstream %d)", out.Len(), len(want))
			}
		})
	}
}

// dbFile writes the gzipped test database NAME to a temporary file.
func dbFile(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "schema", name+".db.gz")
	if _, err := os.Stat(src); err != nil {
		src = filepath.Join("testdata", "real", name+".db.gz")
	}
	path := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(path, readFile(t, src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readFile reads path, or path.gz decompressed when only that exists; a
// .gz path is decompressed.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	if !strings.HasSuffix(path, ".gz") {
		if b, err := os.ReadFile(path); err == nil {
			return b
		}
		path += ".gz"
	}
	return sqlite.ReadGz(t, path)
}

// compareTrees compares the files of two directories.
func compareTrees(t *testing.T, want, got string) {
	t.Helper()
	files := func(root string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	w, g := files(want), files(got)
	for name, wb := range w {
		if gb, ok := g[name]; !ok {
			t.Errorf("migrate did not write %s", name)
		} else if !bytes.Equal(gb, wb) {
			t.Errorf("%s differs from upstream's", name)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("migrate wrote %s, upstream did not", name)
		}
	}
}
