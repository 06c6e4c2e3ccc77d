package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/internal/registrytest"
)

// TestCatalogEditScript runs testdata/catalogedit/*.txtar: `opm catalog`
// edits on real catalogs from ../shared/conformance, copied into $WORK at
// run time, with commands that check which bytes an edit changed:
//
//	conformance PATH DIR        copy ../shared/conformance/PATH to DIR
//	                            (scripts start with [!conformance] skip)
//	snapshot DIR NAME           remember every file under DIR
//	unchanged NAME [FILE...]    fail if a file of snapshot NAME changed,
//	                            appeared or vanished, FILEs excepted
//	patched NAME FILE DIFF      fail unless FILE is its snapshot NAME
//	                            version with the unified diff DIFF applied
//	expand FILE...              replace $VAR and ${VAR} in FILEs by their
//	                            values (e.g. $REGISTRY in a template)
//
// plus the image commands of registrytest.ScriptCmds.
func TestCatalogEditScript(t *testing.T) {
	cmds := registrytest.ScriptCmds()
	cmds["conformance"] = cmdConformance
	cmds["snapshot"] = cmdSnapshot
	cmds["unchanged"] = cmdUnchanged
	cmds["patched"] = cmdPatched
	cmds["expand"] = cmdExpand
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/catalogedit",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("OPM_UPDATE") == "1",
		Cmds:                cmds,
		Condition: func(cond string) (bool, error) {
			if cond != "conformance" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := os.Stat(filepath.Join(conformanceSuite(), "catalog"))
			return err == nil, nil
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/home/.cache")
			env.Setenv("TMPDIR", env.WorkDir+"/tmp")
			return os.MkdirAll(env.WorkDir+"/tmp", 0o700)
		},
	})
}

// conformanceSuite is ../shared/conformance beside the repository.
func conformanceSuite() string {
	if d := os.Getenv("OPM_CONFORMANCE_DIR"); d != "" {
		return d
	}
	wd, _ := os.Getwd() // cmd/opm
	return filepath.Join(wd, "..", "..", "..", "shared", "conformance")
}

func cmdConformance(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: conformance PATH DIR")
	}
	src := filepath.Join(conformanceSuite(), filepath.FromSlash(args[0]))
	if _, err := os.Stat(src); err != nil {
		ts.Fatalf("conformance case not found (start the script with [!conformance] skip): %v", err)
	}
	dst := ts.MkAbs(args[1])
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	ts.Check(err)
}

var snapshots sync.Map // *testscript.TestScript + name -> *snapshotData

type snapshotData struct {
	dir   string
	files map[string][]byte // by path relative to the script's $WORK
}

func snapKey(ts *testscript.TestScript, name string) string {
	return ts.Getenv("WORK") + "\x00" + name
}

func readTree(ts *testscript.TestScript, dir string) map[string][]byte {
	work := ts.Getenv("WORK")
	out := map[string][]byte{}
	err := filepath.WalkDir(ts.MkAbs(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(work, p)
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	ts.Check(err)
	return out
}

func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: snapshot DIR NAME")
	}
	snapshots.Store(snapKey(ts, args[1]), &snapshotData{dir: args[0], files: readTree(ts, args[0])})
}

func getSnapshot(ts *testscript.TestScript, name string) *snapshotData {
	v, ok := snapshots.Load(snapKey(ts, name))
	if !ok {
		ts.Fatalf("no snapshot %q", name)
	}
	return v.(*snapshotData)
}

func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: unchanged NAME [FILE...]")
	}
	s := getSnapshot(ts, args[0])
	except := map[string]bool{}
	for _, f := range args[1:] {
		except[filepath.ToSlash(f)] = true
	}
	now := readTree(ts, s.dir)
	var bad []string
	for f, data := range s.files {
		if except[f] {
			continue
		}
		cur, ok := now[f]
		switch {
		case !ok:
			bad = append(bad, f+" (removed)")
		case !bytes.Equal(cur, data):
			bad = append(bad, f+" (changed)")
		}
	}
	for f := range now {
		if _, ok := s.files[f]; !ok && !except[f] {
			bad = append(bad, f+" (new)")
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		ts.Fatalf("files differ from snapshot %s: %s", args[0], strings.Join(bad, ", "))
	}
}

func cmdPatched(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: patched NAME FILE DIFF")
	}
	s := getSnapshot(ts, args[0])
	old := s.files[filepath.ToSlash(args[1])]
	cur, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	diff := ts.ReadFile(args[2])
	want, err := applyUnified(string(old), diff)
	if err != nil {
		ts.Fatalf("apply %s: %v", args[2], err)
	}
	if want != string(cur) {
		ts.Fatalf("%s is not its snapshot with %s applied", args[1], args[2])
	}
}

func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	for _, f := range args {
		data := os.Expand(ts.ReadFile(f), ts.Getenv)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(data), 0o644))
	}
}

// applyUnified applies a one-file unified diff (context lines checked).
func applyUnified(old, diff string) (string, error) {
	lines := splitKeep(diff)
	src := splitKeep(old)
	var out []string
	pos := 0
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
		i++
	}
	for i < len(lines) {
		f := strings.Fields(lines[i])
		if len(f) < 3 || f[0] != "@@" {
			return "", fmt.Errorf("bad hunk header %q", lines[i])
		}
		o := strings.SplitN(strings.TrimPrefix(f[1], "-"), ",", 2)
		start, _ := strconv.Atoi(o[0])
		count := 1
		if len(o) == 2 {
			count, _ = strconv.Atoi(o[1])
		}
		if count > 0 {
			start--
		}
		if start < pos || start > len(src) {
			return "", fmt.Errorf("hunk %q out of order", lines[i])
		}
		out = append(out, src[pos:start]...)
		pos = start
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d does not match %q", pos+1, text)
				}
				if l[0] == ' ' {
					out = append(out, text)
				}
				pos++
			case '+':
				out = append(out, text)
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func splitKeep(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
