package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/opmkit/opm/pkg/declcfg"
)

// conformanceBundleDir is the shared corpus of bundle directories, relative
// to this package.
const conformanceBundleDir = "../../../shared/conformance/bundle"

// writeConfig writes cfg with the declcfg writers, as `opm render` does.
func writeConfig(t testing.TB, cfg *declcfg.DeclarativeConfig, format string) []byte {
	t.Helper()
	var out bytes.Buffer
	write := declcfg.WriteJSON
	if format == "yaml" {
		write = declcfg.WriteYAML
	}
	if err := write(*cfg, &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// renderOptionsFromArgs maps a conformance run's `opm render` arguments.
func renderOptionsFromArgs(t testing.TB, args []string) (Options, string) {
	t.Helper()
	var opts Options
	format := "json"
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "--output":
			i++
			format = args[i]
		case strings.HasPrefix(a, "--alpha-image-ref-template="):
			tmpl, err := template.New("image").Parse(strings.TrimPrefix(a, "--alpha-image-ref-template="))
			if err != nil {
				t.Fatal(err)
			}
			opts.ImageRefTemplate = tmpl
		case strings.HasPrefix(a, "--migrate-level="):
			opts.MigrationLevel = strings.TrimPrefix(a, "--migrate-level=")
		case a == "--migrate":
			opts.MigrationLevel = "all"
		case strings.HasPrefix(a, "-"):
			t.Fatalf("unhandled flag %q", a)
		default:
			opts.Refs = append(opts.Refs, a)
		}
	}
	return opts, format
}

// TestBundleConformance renders every bundle case of the shared corpus and
// compares with upstream's bytes.
func TestBundleConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 159 conformance runs; skipped with -short")
	}
	cases, err := os.ReadDir(conformanceBundleDir)
	if err != nil {
		t.Skipf("conformance corpus not available (%v)", err)
	}
	for _, c := range cases {
		dir := filepath.Join(conformanceBundleDir, c.Name())
		for _, run := range []string{"render-json", "render-yaml", "render-migrated"} {
			argData, err := os.ReadFile(filepath.Join(dir, run+".args"))
			if err != nil {
				continue
			}
			t.Run(c.Name()+"/"+run, func(t *testing.T) {
				args := strings.Split(strings.TrimRight(string(argData), "\n"), "\n")
				opts, format := renderOptionsFromArgs(t, args)
				for i, r := range opts.Refs {
					opts.Refs[i] = filepath.Join(dir, r)
				}
				want, err := os.ReadFile(filepath.Join(dir, run+".stdout"))
				if err != nil {
					t.Fatal(err)
				}
				exit, _ := os.ReadFile(filepath.Join(dir, run+".exit"))
				cfg, err := Render(context.Background(), opts)
				if strings.TrimSpace(string(exit)) != "0" {
					if err == nil {
						t.Fatalf("want failure (exit %s), got success", exit)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got := writeConfig(t, cfg, format)
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from upstream:\n%s", firstDiff(got, want))
				}
			})
		}
	}
}

// firstDiff shows the first differing line of got and want.
func firstDiff(got, want []byte) string {
	g := strings.Split(string(got), "\n")
	w := strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			trim := func(s string) string {
				if len(s) > 300 {
					return s[:300] + "..."
				}
				return s
			}
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, trim(gl), trim(wl))
		}
	}
	return "(same lines)"
}
