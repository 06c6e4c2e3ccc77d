package validate

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	pkgvalidate "github.com/opmkit/opm/pkg/validate"
)

const conformanceCatalogs = "../../../../shared/conformance/catalog"

// summaryLineRE matches a finding line of the text output and captures
// its rule code.
var summaryLineRE = regexp.MustCompile(`\[([a-z0-9-]+)\]( \(channels [^)]*\))?( \(and \d+ more; -v lists them\))?$`)

// newProblem is a package whose only problem is a warning (an API no
// bundle provides): upstream accepts it.
const newProblem = `schema: olm.package
name: opm-ci-new-problem
defaultChannel: stable
---
schema: olm.channel
package: opm-ci-new-problem
name: stable
entries:
  - name: opm-ci-new-problem.v1.0.0
---
schema: olm.bundle
package: opm-ci-new-problem
name: opm-ci-new-problem.v1.0.0
image: quay.io/example/opm-ci-new-problem:v1.0.0
properties:
  - type: olm.package
    value: {packageName: opm-ci-new-problem, version: 1.0.0}
  - type: olm.gvk.required
    value: {group: opm-ci.example.com, kind: Missing, version: v1}
`

// TestConformanceCI runs the CI recipe of docs/validate.md on every
// catalog of the shared conformance suite that upstream accepts: the
// default text output has at most one line per rule; --write-baseline and
// then --strict --baseline pass, also after edits that move every line;
// a new problem then fails, and passes once the configuration file
// ignores its rule.
func TestConformanceCI(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(conformanceCatalogs, "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", conformanceCatalogs)
	}
	ctx := context.Background()
	for _, in := range dirs {
		name := filepath.Base(filepath.Dir(in))
		exit, err := os.ReadFile(filepath.Join(filepath.Dir(in), "validate.exit"))
		if err != nil || strings.TrimSpace(string(exit)) != "0" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if raceEnabled && dirSize(t, in) > maxRaceCatalog {
				t.Skipf("larger than %d MB: run without -race (five validations take minutes under the race detector)", maxRaceCatalog>>20)
			}
			dir := filepath.Join(t.TempDir(), "catalog")
			if err := os.CopyFS(dir, os.DirFS(in)); err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, Options{Ref: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed {
				t.Fatalf("upstream accepts it, we do not: %s", res.Message)
			}
			var text bytes.Buffer
			if err := pkgvalidate.WriteText(&text, res.Result, false); err != nil {
				t.Fatal(err)
			}
			perRule := map[string]int{}
			for _, l := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
				if l == "" || strings.HasPrefix(l, " ") {
					continue
				}
				m := summaryLineRE.FindStringSubmatch(l)
				if m == nil {
					t.Errorf("not a finding line: %q", l)
					continue
				}
				if perRule[m[1]]++; perRule[m[1]] > 1 {
					t.Errorf("second line for rule %s: %q", m[1], l)
				}
			}
			t.Logf("%d findings, %d lines", len(res.Findings), len(perRule))

			baseline := filepath.Join(t.TempDir(), "baseline.json")
			res, err = Run(ctx, Options{Ref: dir, WriteBaseline: baseline})
			if err != nil || !res.Passed || len(res.Findings) != 0 {
				t.Fatalf("--write-baseline: %v, %+v", err, res)
			}
			strict := func() *Result {
				t.Helper()
				res, err := Run(ctx, Options{Ref: dir, Strict: true, Baseline: baseline})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := strict(); !res.Passed {
				t.Fatalf("--strict --baseline fails: %s", res.Message)
			}

			// Unrelated edits: every line of every file moves down.
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() == declcfg.IndexIgnoreFilename {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				// Blank lines before a JSON stream, or after the first
				// line of a YAML one (before a first "---" they would make
				// a document of their own).
				at := 0
				if t := bytes.TrimSpace(data); len(t) > 0 && t[0] != '{' {
					at = bytes.IndexByte(data, '\n') + 1
				}
				edited := append(append(slices.Clone(data[:at]), "\n\n\n"...), data[at:]...)
				return os.WriteFile(p, edited, 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			// and a new problem: it alone is reported, and fails.
			if err := os.WriteFile(filepath.Join(dir, "zz-opm-ci-new-problem.yaml"), []byte(newProblem), 0o644); err != nil {
				t.Fatal(err)
			}
			res = strict()
			if res.Passed || len(res.Findings) != 1 || res.Findings[0].Code != "gvk-required-unsatisfied" {
				t.Fatalf("lines moved and a new problem: passed %v, findings %+v", res.Passed, res.Findings)
			}

			// The configuration file, listed in .indexignore, ignores it.
			cfg := "ignore: [gvk-required-unsatisfied]\n"
			if err := os.WriteFile(filepath.Join(dir, pkgvalidate.ConfigFile), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			ii, _ := os.ReadFile(filepath.Join(dir, declcfg.IndexIgnoreFilename))
			ii = append(ii, "\n/"+pkgvalidate.ConfigFile+"\n"...)
			if err := os.WriteFile(filepath.Join(dir, declcfg.IndexIgnoreFilename), ii, 0o644); err != nil {
				t.Fatal(err)
			}
			if res := strict(); !res.Passed || res.Config == "" {
				t.Fatalf("with %s: passed %v, findings %+v", pkgvalidate.ConfigFile, res.Passed, res.Findings)
			}
		})
	}
}

// maxRaceCatalog is the largest catalog TestConformanceCI validates under
// the race detector.
const maxRaceCatalog = 8 << 20

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
