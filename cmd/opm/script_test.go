package main

import (
	"compress/gzip"
	"database/sql"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/cmd/opm/internal/root"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"opm": func() { os.Exit(root.Main()) },
	})
}

// TestScript runs every testdata/script/*.txtar. OPM_UPDATE=1 rewrites the
// expected files of `cmp` lines in place. Scripts that read the shared
// conformance suite (../shared/conformance beside the repository) find it
// at $CONFORMANCE and guard on the [conformance] condition.
func TestScript(t *testing.T) {
	conformance, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "conformance"))
	sqliteData, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "sqlite", "testdata"))
	if _, err := os.Stat(conformance); err != nil {
		conformance = ""
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("OPM_UPDATE") == "1",
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": cmdExits, "bounded": cmdBounded, "sqlitedb": cmdSQLiteDB, "sqlexec": cmdSQLExec},
		Condition: func(cond string) (bool, error) {
			if cond == "conformance" {
				return conformance != "", nil
			}
			return false, errors.New("unknown condition " + cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("CONFORMANCE", conformance)
			env.Setenv("SQLITE_TESTDATA", sqliteData)
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/home/.cache")
			return nil
		},
	})
}

// cmdSQLiteDB is `sqlitedb NAME FILE`: write the test database
// pkg/sqlite/testdata/NAME.db.gz (schema/v05, real/bundles, ...) to FILE.
// $SQLITE_TESTDATA is that directory, for upstream's recordings.
func cmdSQLiteDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlitedb NAME FILE")
	}
	f, err := os.Open(filepath.Join(ts.Getenv("SQLITE_TESTDATA"), args[0]+".db.gz"))
	ts.Check(err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	ts.Check(err)
	b, err := io.ReadAll(zr)
	ts.Check(err)
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, b, 0o644))
}

// cmdSQLExec is `sqlexec FILE STATEMENT...`: run the statements on the
// SQLite database FILE, as whoever crafted a hostile one would.
func cmdSQLExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sqlexec FILE STATEMENT...")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	for _, s := range args[1:] {
		if _, err := db.Exec(s); err != nil {
			ts.Fatalf("%s: %v", s, err)
		}
	}
}

// cmdExits is `exits CODE PROGRAM [ARGS...]`: exec PROGRAM (its stdout and
// stderr are then checked as after exec) and fail unless it exits with
// status CODE. `! exec` only tells success from failure; the usage (2) and
// failure (1) statuses need this.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad CODE %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
