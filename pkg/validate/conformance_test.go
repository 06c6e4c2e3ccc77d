package validate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

const conformanceDir = "../../../shared/conformance"

// TestConformance validates every catalog under the shared conformance
// suite's catalog/ and invalid/ groups and compares the verdict and the set
// of message lines with upstream's recorded `validate -o json` output.
func TestConformance(t *testing.T) {
	if _, err := os.Stat(conformanceDir); err != nil {
		t.Skipf("conformance suite not found at %s: %v", conformanceDir, err)
	}
	schemas, err := LoadSchemas("")
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"catalog", "invalid"} {
		cases, _ := filepath.Glob(filepath.Join(conformanceDir, group, "*", "validate.stdout"))
		for _, stdout := range cases {
			dir := filepath.Dir(stdout)
			t.Run(group+"/"+filepath.Base(dir), func(t *testing.T) {
				data, err := os.ReadFile(stdout)
				if err != nil {
					t.Fatal(err)
				}
				var want struct {
					Passed bool `json:"passed"`
					Error  struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(data, &want); err != nil {
					t.Fatal(err)
				}
				var res *Result
				cfg, err := declcfg.LoadDir(context.Background(), filepath.Join(dir, "input"))
				if err != nil {
					res = LoadErrorResult(err)
				} else if res, err = Validate(context.Background(), cfg, Options{Schemas: schemas}); err != nil {
					t.Fatal(err)
				}
				if res.Passed != want.Passed {
					t.Errorf("passed = %v, want %v (message %q)", res.Passed, want.Passed, res.Message)
				}
				if got, w := lineSet(res.Message), lineSet(want.Error.Message); got != w {
					t.Errorf("message lines =\n%s\nwant\n%s", got, w)
				}
				for _, f := range res.Findings {
					if f.File == "" || f.Line == 0 {
						t.Errorf("finding without a position: %+v", f)
					}
					if f.Severity == SeverityWarning {
						t.Logf("%s:%d: warning [%s] %s", f.File, f.Line, f.Code, f.Message)
					}
				}
			})
		}
	}
}

func lineSet(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// BenchmarkValidateConformanceCatalog validates the largest real catalog
// of the conformance suite (loaded once).
func BenchmarkValidateConformanceCatalog(b *testing.B) {
	dir := filepath.Join(conformanceDir, "catalog", "certified-operators-v4.22", "input")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("conformance suite not found")
	}
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	schemas, err := LoadSchemas("")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Validate(context.Background(), cfg, Options{Schemas: schemas}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateSynthetic validates a catalog written by
// internal/gencatalog (OPM_BENCH_CATALOG=DIR; skipped when unset), loaded
// once: e.g. go run ./internal/gencatalog/cmd/gencatalog -packages 200
// -bundles 20 -o DIR.
func BenchmarkValidateSynthetic(b *testing.B) {
	dir := os.Getenv("OPM_BENCH_CATALOG")
	if dir == "" {
		b.Skip("OPM_BENCH_CATALOG not set")
	}
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	schemas, err := LoadSchemas("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Validate(context.Background(), cfg, Options{Schemas: schemas})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Passed {
			b.Fatal(res.Message)
		}
	}
}
