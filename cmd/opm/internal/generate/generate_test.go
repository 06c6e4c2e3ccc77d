package generate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

// conformanceDir is ../shared/conformance relative to the repository root.
const conformanceDir = "../../../../../shared/conformance/dockerfile"

// TestConformance runs every dockerfile/ case of the shared conformance suite
// in-process, in a scratch directory holding `input` and the given files, and
// compares stdout, the exit code and the created files byte for byte.
func TestConformance(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join(conformanceDir, "*", "*.args"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Skipf("no conformance suite at %s", conformanceDir)
	}
	for _, argsFile := range cases {
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
			work := t.TempDir()
			if err := os.Symlink(filepath.Join(caseDir, "input"), filepath.Join(work, "input")); err != nil {
				t.Fatal(err)
			}
			given, _ := filepath.Glob(prefix + ".given.*")
			for _, g := range given {
				name := strings.TrimPrefix(filepath.Base(g), run+".given.")
				if err := os.WriteFile(filepath.Join(work, name), []byte(read(t, g)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(work)

			var stdout, stderr bytes.Buffer
			code := root.Run(args, &cmdutil.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr})
			if code != wantExit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, wantExit, stderr.String())
			}
			if want := read(t, prefix+".stdout"); stdout.String() != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
			}
			created, _ := filepath.Glob(prefix + ".created.*")
			for _, c := range created {
				name := strings.TrimPrefix(filepath.Base(c), run+".created.")
				if got, want := read(t, filepath.Join(work, name)), read(t, c); got != want {
					t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
				}
			}
			for _, g := range given {
				name := strings.TrimPrefix(filepath.Base(g), run+".given.")
				if got, want := read(t, filepath.Join(work, name)), read(t, g); got != want {
					t.Errorf("given file %s changed:\n%s", name, got)
				}
			}
			// Nothing else may appear in the working directory.
			ents, err := os.ReadDir(work)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 1+len(created)+len(given) {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("working directory holds %v", names)
			}
		})
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
