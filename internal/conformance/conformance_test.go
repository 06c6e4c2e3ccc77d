// Package conformance runs the built opm binary on every run of the shared
// conformance suite (../shared/conformance beside the repository: real
// third-party inputs with upstream opm's exact outputs) and reports, per
// group and run name, how many runs are reproduced. Run kinds listed in
// required.txt must all pass; the others are reported, not hidden.
package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/opmkit/opm/internal/catalogpod"
)

var opmBin string

func TestMain(m *testing.M) {
	// When re-executed to run a catalog pod's process (pod_test.go), do
	// that and nothing else.
	catalogpod.Main()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "opm-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	opmBin = filepath.Join(tmp, "opm")
	// Static, as `make build` builds it: a catalog image built with
	// --base-image self carries this binary (pod_test.go).
	build := exec.Command("go", "build", "-o", opmBin, "./cmd/opm")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Dir = root
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building opm:", err)
		return 1
	}
	defer stopTemplateRegistry()
	return m.Run()
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// suiteDir returns the conformance directory: $OPM_CONFORMANCE_DIR or
// ../shared/conformance beside the repository.
func suiteDir() (string, error) {
	if d := os.Getenv("OPM_CONFORMANCE_DIR"); d != "" {
		return d, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "..", "shared", "conformance"), nil
}

// runSpec is one run of one case.
type runSpec struct {
	group   string // first path element under the suite, e.g. "catalog"
	caseDir string
	name    string // run name, e.g. "render-json"
}

func (r runSpec) kind() string { return r.group + "/" + r.name }

func (r runSpec) id() string {
	return r.group + "/" + filepath.Base(r.caseDir) + "/" + r.name
}

func collectRuns(suite string) ([]runSpec, error) {
	var runs []runSpec
	err := filepath.WalkDir(suite, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || d.Name() != "input" {
			return nil
		}
		caseDir := filepath.Dir(p)
		rel, err := filepath.Rel(suite, caseDir)
		if err != nil {
			return err
		}
		group := strings.Split(filepath.ToSlash(rel), "/")[0]
		argFiles, err := filepath.Glob(filepath.Join(caseDir, "*.args"))
		if err != nil {
			return err
		}
		for _, a := range argFiles {
			runs = append(runs, runSpec{group: group, caseDir: caseDir, name: strings.TrimSuffix(filepath.Base(a), ".args")})
		}
		return filepath.SkipDir
	})
	sort.Slice(runs, func(i, j int) bool { return runs[i].id() < runs[j].id() })
	return runs, err
}

func readRequired() (map[string]bool, error) {
	f, err := os.Open("required.txt")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	req := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		req[line] = true
	}
	return req, sc.Err()
}

func TestConformance(t *testing.T) {
	suite, err := suiteDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		t.Skipf("conformance suite not found at %s (it lives in ../shared beside the repository); skipping", suite)
	}
	required, err := readRequired()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := collectRuns(suite)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	passed := map[string]int{}
	total := map[string]int{}
	var failures []string
	t.Run("runs", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.id(), func(t *testing.T) {
				t.Parallel()
				diff := check(t, r)
				mu.Lock()
				total[r.kind()]++
				if diff == "" {
					passed[r.kind()]++
				} else {
					failures = append(failures, r.id())
				}
				mu.Unlock()
				if diff != "" {
					if required[r.kind()] {
						t.Errorf("%s: %s", r.id(), diff)
					} else {
						t.Logf("not reproduced (not required): %s: %s", r.id(), firstLine(diff))
					}
				}
			})
		}
	})

	kinds := make([]string, 0, len(total))
	for k := range total {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var summary strings.Builder
	for _, k := range kinds {
		mark := ""
		if required[k] {
			mark = " (required)"
		}
		fmt.Fprintf(&summary, "conformance %-26s %3d of %3d reproduced%s\n", k, passed[k], total[k], mark)
	}
	for k := range required {
		// serve/ kinds are TestConformanceServe's (serve_test.go).
		if total[k] == 0 && !strings.HasPrefix(k, "serve/") {
			t.Errorf("required run kind %q has no runs in the suite", k)
		}
	}
	t.Log("\n" + summary.String())
	if path := os.Getenv("OPM_CONFORMANCE_SUMMARY"); path != "" {
		slices.Sort(failures)
		_ = os.WriteFile(path, []byte(summary.String()+"\nnot reproduced:\n"+strings.Join(failures, "\n")+"\n"), 0o666)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// check runs r and returns "" when it reproduces upstream, else what differs.
func check(t *testing.T, r runSpec) string {
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(r.caseDir, "input"), filepath.Join(work, "input")); err != nil {
		t.Fatal(err)
	}
	given, _ := filepath.Glob(filepath.Join(r.caseDir, r.name+".given.*"))
	for _, g := range given {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Base(g), r.name+".given.")
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args, err := readLines(filepath.Join(r.caseDir, r.name+".args"))
	if err != nil {
		t.Fatal(err)
	}
	wantOut, err := os.ReadFile(filepath.Join(r.caseDir, r.name+".stdout"))
	if err != nil {
		t.Fatal(err)
	}
	wantExit, err := os.ReadFile(filepath.Join(r.caseDir, r.name+".exit"))
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(opmBin, args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+work)
	cmd.Env = append(cmd.Env, runEnv(t, r, work)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	exit := 0
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			t.Fatal(runErr)
		}
		exit = ee.ExitCode()
	}
	if got, want := fmt.Sprint(exit), strings.TrimSpace(string(wantExit)); got != want && !usageExit(got, want, stderr.String()) {
		return fmt.Sprintf("exit code %s, want %s; stderr: %s", got, want, stderr.String())
	}
	if isValidateJSON(args) {
		if d := compareValidateJSON(stdout.Bytes(), wantOut); d != "" {
			return d
		}
	} else if isAlpha1(args) {
		if d := compareAlpha1(stdout.Bytes(), wantOut); d != "" {
			return d
		}
	} else if !bytes.Equal(stdout.Bytes(), wantOut) {
		return fmt.Sprintf("stdout differs (%d bytes, want %d) at %s", stdout.Len(), len(wantOut), firstDiff(stdout.Bytes(), wantOut))
	}
	created, _ := filepath.Glob(filepath.Join(r.caseDir, r.name+".created.*"))
	for _, c := range created {
		want, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Base(c), r.name+".created.")
		got, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			return fmt.Sprintf("created file %s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Sprintf("created file %s differs at %s", name, firstDiff(got, want))
		}
	}
	return ""
}

// usageHint is the last line opm prints for a usage error.
var usageHint = regexp.MustCompile(`(?m)^Run 'opm [a-z -]+ --help' for usage\.\n?\z`)

// usageExit reports the one documented difference in exit codes: opm
// exits 2 for every usage error (README, "Exit status"), where upstream
// exits 1 for all errors. It applies only when upstream exited 1 and opm
// 2 and said it was a usage error; stdout is compared as always (empty on
// both sides).
func usageExit(got, want, stderr string) bool {
	return got == "2" && want == "1" && usageHint.MatchString(stderr)
}

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := bytes.Count(want[:i], []byte("\n")) + 1
	ctx := func(b []byte) string {
		end := min(i+60, len(b))
		start := max(0, i-20)
		if start > len(b) {
			return ""
		}
		return fmt.Sprintf("%q", b[start:end])
	}
	return fmt.Sprintf("byte %d (line %d): got %s, want %s", i, line, ctx(got), ctx(want))
}

func isValidateJSON(args []string) bool {
	if len(args) == 0 || args[0] != "validate" {
		return false
	}
	for i, a := range args {
		if a == "-o=json" || a == "--output=json" || ((a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

type validateResult struct {
	Passed *bool `json:"passed"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// compareValidateJSON compares `validate -o json` outputs as the suite's
// README says: same passed, same set of message lines, extra keys allowed.
func compareValidateJSON(got, want []byte) string {
	var g, w validateResult
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Sprintf("stdout is not JSON: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return fmt.Sprintf("expected stdout is not JSON: %v", err)
	}
	if g.Passed == nil || *g.Passed != *w.Passed {
		return fmt.Sprintf("passed differs: got %v, want %v", g.Passed, *w.Passed)
	}
	lines := func(r validateResult) []string {
		if r.Error == nil {
			return nil
		}
		l := strings.Split(r.Error.Message, "\n")
		for i := range l {
			l[i] = strings.TrimLeft(l[i], "│├└─ ")
		}
		slices.Sort(l)
		return l
	}
	gl, wl := lines(g), lines(w)
	if !slices.Equal(gl, wl) {
		return fmt.Sprintf("message lines differ:\ngot:  %q\nwant: %q", gl, wl)
	}
	return ""
}

func isAlpha1(args []string) bool {
	for i, a := range args {
		if a == "-o=json-alpha1" || a == "--output=json-alpha1" || ((a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json-alpha1") {
			return true
		}
	}
	return false
}

type alpha1Result struct {
	Passed  *bool `json:"passed"`
	Outputs []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"outputs"`
}

var (
	alpha1Pointer    = regexp.MustCompile(`Value 0x[0-9a-f]+:`)
	alpha1APIsSplit  = regexp.MustCompile(`\]\),`)
	alpha1ErrorSplit = regexp.MustCompile(`,([A-Z])`)
)

// normAlpha1 normalises an -o json-alpha1 message as the suite's README
// says: runs of whitespace as one space, a pointer's address as any, and
// the lists operator-sdk prints in map order (the APIs of a "Migrate the
// API(s) for" message, the errors of "Bundle validation errors:") as sets.
func normAlpha1(m string) string {
	m = alpha1Pointer.ReplaceAllString(strings.Join(strings.Fields(m), " "), "Value 0x:")
	if head, tail, ok := strings.Cut(m, "Migrate the API(s) for "); ok {
		var parts []string
		for _, p := range alpha1APIsSplit.Split(tail, -1) {
			if p = strings.TrimSuffix(p, ","); p != "" {
				parts = append(parts, strings.TrimSuffix(p, "])"))
			}
		}
		slices.Sort(parts)
		m = head + "Migrate the API(s) for " + strings.Join(parts, ",")
	}
	if head, tail, ok := strings.Cut(m, "Bundle validation errors: "); ok {
		parts := strings.Split(alpha1ErrorSplit.ReplaceAllString(tail, "\x00$1"), "\x00")
		slices.Sort(parts)
		m = head + "Bundle validation errors: " + strings.Join(parts, ",")
	}
	return m
}

// compareAlpha1 compares -o json-alpha1 outputs (operator-sdk's bundle
// validate result) as the suite's README says: the same passed, and the
// same (type, message) pairs counted with repeats, in any order, messages
// normalised (normAlpha1).
func compareAlpha1(got, want []byte) string {
	var g, w alpha1Result
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Sprintf("stdout is not a json-alpha1 result: %v", err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return fmt.Sprintf("expected stdout is not a json-alpha1 result: %v", err)
	}
	if g.Passed == nil || w.Passed == nil || *g.Passed != *w.Passed {
		return fmt.Sprintf("passed differs: got %v, want %v", g.Passed, w.Passed)
	}
	pairs := func(r alpha1Result) []string {
		var out []string
		for _, o := range r.Outputs {
			out = append(out, o.Type+": "+normAlpha1(o.Message))
		}
		slices.Sort(out)
		return out
	}
	gp, wp := pairs(g), pairs(w)
	var missing, extra []string
	for _, x := range wp {
		if i := slices.Index(gp, x); i >= 0 {
			gp = slices.Delete(gp, i, i+1)
		} else {
			missing = append(missing, x)
		}
	}
	extra = gp
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	return fmt.Sprintf("outputs differ:\nmissing: %q\nextra:   %q", missing, extra)
}
