package olmv1

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/want")

// gateCases are the feature gate states the bundles are checked under,
// each with its suffix in testdata/want.
var gateCases = []struct {
	suffix string
	gates  []string
}{
	{"default", nil},
	{"single-own-namespace", []string{GateSingleOwnNamespace + "=true"}},
	{"no-cert-provider", []string{GateCertManager + "=false," + GateServiceCA + "=false"}},
}

// describeVerdict is the golden form of a verdict: the verdict, then each
// issue with its position in the bundle directory.
func describeVerdict(b *Bundle, v *Verdict) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "installable: %v\n", v.Installable)
	if v.Modes {
		fmt.Fprintf(&sb, "install modes: %s; watchNamespace: %s\n", describeModes(v.InstallModes), v.Watch.Describe())
	}
	fmt.Fprintf(&sb, "webhooks: %d\n", v.Webhooks)
	for _, is := range v.Issues {
		pos := "-"
		if s, ok := b.Position(is); ok {
			pos = s.File
			if s.Line > 0 {
				pos += fmt.Sprintf(":%d:%d", s.Line, s.Column)
			}
		}
		fmt.Fprintf(&sb, "%s %s %s\n    %s\n", is.Level(), is.Code, pos, is.Message)
		if is.Upstream != "" {
			fmt.Fprintf(&sb, "    OLM v1: %s\n", is.Upstream)
		}
	}
	return sb.String()
}

// TestBundles checks the real bundles of testdata/bundles (README.md there
// names where each comes from and what was edited) under each feature gate
// state, against the golden verdicts of testdata/want.
func TestBundles(t *testing.T) {
	dirs, err := filepath.Glob("testdata/bundles/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no bundles: %v", err)
	}
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		b, err := LoadDir(context.Background(), dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, gc := range gateCases {
			t.Run(name+"/"+gc.suffix, func(t *testing.T) {
				g, err := ParseGates(gc.gates)
				if err != nil {
					t.Fatal(err)
				}
				got := describeVerdict(b, Check(b, g))
				golden := filepath.Join("testdata", "want", name+"@"+gc.suffix+".txt")
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to write it)", err)
				}
				if got != string(want) {
					t.Errorf("verdict differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
				}
			})
		}
	}
}
