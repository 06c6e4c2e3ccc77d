// Package depcheck_test checks the layering of the module, as
// go-containerregistry's depcheck_test.go does: which packages may depend
// on what, transitively, and which calls stay inside one package.
package depcheck_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/opmkit/opm"

// deps returns every package of the module matching pattern with its
// transitive dependencies (tests excluded).
func deps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, pattern)
	cmd.Dir = repoRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pattern, err, stderr.String())
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list %s: no packages", pattern)
	}
	return m
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", dir)
	}
	return dir
}

// forbidden lists the import-path prefixes a package (or every package
// under a prefix ending in "/...") must not depend on, and why.
var forbidden = []struct {
	pkg    string
	not    []string
	reason string
}{
	{module + "/pkg/...", []string{"github.com/spf13/cobra", "github.com/spf13/pflag", module + "/cmd/"},
		"pkg/ is libraries: commands, flags and exit codes live in cmd/opm"},
	{module + "/pkg/declcfg", []string{"cuelang.org/", "github.com/google/go-containerregistry"},
		"the catalog types load and write files; schemas and images are other packages' business"},
	{module + "/pkg/property", []string{"cuelang.org/", "github.com/google/go-containerregistry"},
		"typed properties are plain data"},
	{module + "/pkg/model", []string{"cuelang.org/", "github.com/google/go-containerregistry"},
		"the validated model is plain data and upstream's rules"},
	{module + "/pkg/graph", []string{"cuelang.org/", "github.com/google/go-containerregistry"},
		"upgrade graphs are computed from loaded catalogs"},
	{module + "/pkg/validate", []string{"github.com/google/go-containerregistry", module + "/pkg/image", module + "/pkg/render"},
		"validation checks a loaded catalog; loading images is pkg/action/validate's job"},
}

func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func TestForbiddenDependencies(t *testing.T) {
	all := deps(t, "./pkg/...")
	for _, rule := range forbidden {
		n := 0
		for pkg, ds := range all {
			if !matches(rule.pkg, pkg) {
				continue
			}
			n++
			for _, d := range ds {
				for _, bad := range rule.not {
					if d == bad || strings.HasPrefix(d, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(d, bad)) {
						t.Errorf("%s depends on %s: %s", pkg, d, rule.reason)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("rule for %s matches no package", rule.pkg)
		}
	}
}

// confined lists calls that only one package may make, so that one
// mechanism does one job.
var confined = []struct {
	importPath string
	funcs      []string
	only       string // directory, relative to the repository root
	reason     string
}{
	{"github.com/blang/semver/v4", []string{"ParseRange"}, "pkg/versionrange",
		"skipRange and dependency ranges are parsed by pkg/versionrange"},
	{"github.com/Masterminds/semver/v3", []string{"NewConstraint"}, "pkg/versionrange",
		"OLM v1 ranges are parsed by pkg/versionrange"},
}

func TestConfinedCalls(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, rule := range confined {
			if filepath.ToSlash(filepath.Dir(rel)) == rule.only {
				continue
			}
			name := importName(f, rule.importPath)
			if name == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
					for _, fn := range rule.funcs {
						if sel.Sel.Name == fn {
							t.Errorf("%s: %s.%s: %s", fset.Position(sel.Pos()), rule.importPath, fn, rule.reason)
						}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// importName returns the name f uses for importPath, or "".
func importName(f *ast.File, importPath string) string {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != importPath {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		// The last element that is not a major-version suffix.
		parts := strings.Split(p, "/")
		last := parts[len(parts)-1]
		if len(parts) > 1 && strings.HasPrefix(last, "v") && strings.Trim(last[1:], "0123456789") == "" {
			last = parts[len(parts)-2]
		}
		return last
	}
	return ""
}
