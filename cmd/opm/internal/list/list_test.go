package list_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

// conformanceDir is ../shared/conformance relative to the repository root.
const conformanceDir = "../../../../../shared/conformance/catalog"

func runOpm(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = root.Run(args, &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// TestConformance runs every list-packages, list-channels and list-bundles
// run of the shared conformance suite in-process (with the case directory
// as working directory) and compares stdout and the exit code byte for
// byte. It also checks that -o json holds the same rows.
func TestConformance(t *testing.T) {
	var runs []string
	for _, r := range []string{"list-packages", "list-channels", "list-bundles"} {
		m, _ := filepath.Glob(filepath.Join(conformanceDir, "*", r+".args"))
		runs = append(runs, m...)
	}
	if len(runs) == 0 {
		t.Skipf("no conformance suite at %s", conformanceDir)
	}
	for _, argsFile := range runs {
		caseDir, err := filepath.Abs(filepath.Dir(argsFile))
		if err != nil {
			t.Fatal(err)
		}
		run := strings.TrimSuffix(filepath.Base(argsFile), ".args")
		t.Run(filepath.Base(caseDir)+"/"+run, func(t *testing.T) {
			prefix := filepath.Join(caseDir, run)
			args := strings.Split(strings.TrimSuffix(read(t, prefix+".args"), "\n"), "\n")
			wantExit, err := strconv.Atoi(strings.TrimSpace(read(t, prefix+".exit")))
			if err != nil {
				t.Fatal(err)
			}
			if (testing.Short() || raceEnabled) && dirSize(t, filepath.Join(caseDir, "input")) > 1<<20 {
				t.Skip("large catalog skipped in -short mode and under the race detector (the conformance harness runs it)")
			}
			t.Chdir(caseDir)
			stdout, stderr, code := runOpm(args...)
			if code != wantExit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, wantExit, stderr)
			}
			if want := read(t, prefix+".stdout"); stdout != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
			if wantExit != 0 {
				return
			}
			// -o json: the same number of rows as the table, and valid JSON.
			jout, stderr, code := runOpm(append(args, "-o", "json")...)
			if code != 0 {
				t.Fatalf("-o json: exit %d: %s", code, stderr)
			}
			var rows []map[string]any
			if err := json.Unmarshal([]byte(jout), &rows); err != nil {
				t.Fatalf("-o json: %v", err)
			}
			if want := strings.Count(stdout, "\n") - 1; len(rows) != want {
				t.Errorf("-o json: %d rows, table has %d", len(rows), want)
			}
		})
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
