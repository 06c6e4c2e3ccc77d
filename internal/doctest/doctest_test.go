// Package doctest_test runs the code blocks of README.md and docs/*.md, so
// that every example a reader copies works as written.
//
// The convention (see the README's "Docs" section):
//
//   - a ```sh (or ```bash) block is run by bash under `set -eo pipefail`,
//     from a scratch copy of the repository root (so examples/catalog is
//     there), with the freshly built opm first on PATH. The blocks of one
//     file run in order in the same scratch copy, as a reader would run
//     them. A command meant to fail is written so the block still succeeds
//     (`! opm validate broken/`);
//   - ```text holds output shown to the reader and is not run; neither are
//     blocks of other languages (yaml, json, cue, go, ...);
//   - `<!-- norun: reason -->` on the line just before a fence skips that
//     block; the reason is required (a cluster, a remote registry, ...);
//   - every fence names its language: a bare ``` is an error, so nothing
//     runnable slips through unlabelled.
//
// A failing block fails the test with the file and line of its fence.
package doctest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockTimeout bounds one block.
const blockTimeout = 2 * time.Minute

var (
	opmDir   string // holds the built opm
	repoRoot string
	goEnv    []string // GOCACHE and GOMODCACHE of the test's own go
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repository root:", err)
		return 1
	}
	repoRoot = root
	tmp, err := os.MkdirTemp("", "opm-doctest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	opmDir = filepath.Join(tmp, "bin")
	// Static, as `make build` builds it (docs/build.md builds on
	// --base-image self).
	build := exec.Command("go", "build", "-o", filepath.Join(opmDir, "opm"), "./cmd/opm")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Dir = root
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building opm:", err)
		return 1
	}
	// Blocks get a private HOME (so GOPATH, and what `make install`
	// writes, stay in the scratch copy) but share the build and module
	// caches, so a `make` in a block neither rebuilds the world nor goes
	// to the network.
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		return 1
	}
	if f := strings.Fields(string(out)); len(f) == 2 {
		goEnv = []string{"GOCACHE=" + f[0], "GOMODCACHE=" + f[1], "GOPROXY=off"}
	}
	return m.Run()
}

// block is one fenced code block.
type block struct {
	line  int // of the opening fence, 1-based
	lang  string
	norun string // the reason of a norun marker, if any
	code  string
}

var (
	fenceRE = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([^`\\s]*)")
	norunRE = regexp.MustCompile(`^\s*<!--\s*norun(?::\s*(.*?))?\s*-->\s*$`)
)

// parse returns the fenced blocks of a Markdown file, and problems with
// the convention (as file:line messages).
func parse(name string, data []byte) ([]block, []string) {
	var (
		blocks   []block
		problems []string
		cur      *block
		fence    string
		body     strings.Builder
		prev     string
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if strings.HasPrefix(strings.TrimSpace(line), fence) && strings.Trim(strings.TrimSpace(line), fence[:1]) == "" {
				cur.code = body.String()
				blocks = append(blocks, *cur)
				cur = nil
			} else {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			prev = line
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			cur = &block{line: n, lang: m[3]}
			fence = m[2]
			body.Reset()
			if cur.lang == "" {
				problems = append(problems, fmt.Sprintf("%s:%d: a fence without a language: write ```text for output, ```sh for commands", name, n))
			}
			if nm := norunRE.FindStringSubmatch(prev); nm != nil {
				cur.norun = strings.TrimSpace(nm[1])
				if cur.norun == "" {
					problems = append(problems, fmt.Sprintf("%s:%d: <!-- norun --> needs a reason: <!-- norun: why the test cannot run it -->", name, n))
				}
			}
		}
		prev = line
	}
	if cur != nil {
		problems = append(problems, fmt.Sprintf("%s:%d: the block is never closed", name, cur.line))
	}
	return blocks, problems
}

func runnable(lang string) bool {
	switch lang {
	case "sh", "bash", "shell":
		return true
	}
	return false
}

// docFiles returns README.md and docs/*.md, relative to the repository
// root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	m, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m {
		rel, _ := filepath.Rel(repoRoot, f)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

func TestDocs(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	for _, name := range docFiles(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			blocks, problems := parse(name, data)
			for _, p := range problems {
				t.Error(p)
			}
			var todo []block
			for _, b := range blocks {
				if runnable(b.lang) && b.norun == "" {
					todo = append(todo, b)
				}
			}
			if len(todo) == 0 {
				return
			}
			t.Parallel()
			work := scratchCopy(t)
			for _, b := range todo {
				if out, err := runBlock(work, b.code); err != nil {
					t.Errorf("%s:%d: the ```%s block failed (%v); it ran from a scratch copy of the repository root:\n%s\n--- output ---\n%s",
						name, b.line, b.lang, err, indent(b.code), indent(out))
				}
			}
		})
	}
}

// runBlock runs code under bash -eo pipefail in dir with opm first on PATH
// and a private HOME, and returns its combined output.
func runBlock(dir, code string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", code)
	cmd.Dir = dir
	home := filepath.Join(dir, ".doctest-home")
	cmd.Env = append(os.Environ(),
		"PATH="+opmDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"GOPATH="+filepath.Join(home, "go"),
		"GOBIN=",
		"HELP_ALPHA=",
	)
	cmd.Env = append(cmd.Env, goEnv...)
	cmd.Stdin = strings.NewReader("")
	// The block's own process group, killed whole on timeout, so nothing it
	// started outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", blockTimeout)
	}
	return string(out), err
}

// scratchCopy copies the repository root (without .git and bin) into a
// temporary directory and returns it.
func scratchCopy(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.IsDir() && (rel == ".git" || rel == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (none)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// TestParse checks the convention's parser on a small document.
func TestParse(t *testing.T) {
	doc := "# t\n\n```sh\necho hi\n```\n\n<!-- norun: needs a cluster -->\n```sh\nkubectl apply\n```\n\n<!-- norun -->\n```sh\nx\n```\n\n```\nbare\n```\n\n```text\nout\n```\n\n````sh\n```\nnested\n````\n"
	blocks, problems := parse("t.md", []byte(doc))
	want := []block{
		{line: 3, lang: "sh", code: "echo hi\n"},
		{line: 8, lang: "sh", norun: "needs a cluster", code: "kubectl apply\n"},
		{line: 13, lang: "sh", code: "x\n"},
		{line: 17, lang: "", code: "bare\n"},
		{line: 21, lang: "text", code: "out\n"},
		{line: 25, lang: "sh", code: "```\nnested\n"},
	}
	if fmt.Sprint(blocks) != fmt.Sprint(want) {
		t.Errorf("blocks:\n%v\nwant:\n%v", blocks, want)
	}
	wantProblems := []string{
		"t.md:13: <!-- norun --> needs a reason: <!-- norun: why the test cannot run it -->",
		"t.md:17: a fence without a language: write ```text for output, ```sh for commands",
	}
	if fmt.Sprint(problems) != fmt.Sprint(wantProblems) {
		t.Errorf("problems:\n%q\nwant:\n%q", problems, wantProblems)
	}
}
