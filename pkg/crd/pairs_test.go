package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/opmkit/opm/pkg/crd"
)

// The per-rule pairs live in cmd/opm's crd_diff_*.txtar scripts, which
// run them through `opm crd diff` and compare its output, positions
// included. This test runs each pair through pkg/crd directly and checks
// the rules the script's expected output names, and that every rule has
// an unsafe pair and a safe counterpart (NAME and NAME-safe).

var ruleLine = regexp.MustCompile(`^(?:[^ ]+:\d+:\d+: )?([a-z-]+)(?: \(warning\))?: `)

func loadPair(t *testing.T, files map[string][]byte, dir string) (old, new *crd.Bundle) {
	t.Helper()
	load := func(name string) *crd.Bundle {
		docs, err := crd.SplitDocuments(name, files[name])
		if err != nil {
			t.Fatal(err)
		}
		b, err := crd.NewBundle(context.Background(), name, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return load(dir + "/old.yaml"), load(dir + "/new.yaml")
}

func TestRulePairs(t *testing.T) {
	scripts, err := filepath.Glob("../../cmd/opm/testdata/script/crd_diff_*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no crd_diff scripts: %v", err)
	}
	unsafeIn := map[string][]string{} // rule -> pairs that report it
	pairs := map[string]bool{}
	for _, s := range scripts {
		ar, err := txtar.ParseFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range ar.Files {
			files[f.Name] = f.Data
		}
		for name := range files {
			dir, ok := strings.CutSuffix(name, "/old.yaml")
			if !ok {
				continue
			}
			pairs[dir] = true
			t.Run(filepath.Base(s)+"/"+dir, func(t *testing.T) {
				old, new := loadPair(t, files, dir)
				r, err := crd.CompareBundles(context.Background(), old, new)
				if err != nil {
					t.Fatal(err)
				}
				var got, want []string
				for _, c := range r.Changes {
					got = append(got, c.Rule)
				}
				for _, l := range strings.Split(string(files[dir+"/stdout"]), "\n") {
					if m := ruleLine.FindStringSubmatch(l); m != nil {
						want = append(want, m[1])
					}
				}
				sort.Strings(got)
				sort.Strings(want)
				if !slices.Equal(got, want) && !strings.Contains(string(files[dir+"/stdout"]), "(safe)") {
					// unsafe pairs print only unsafe changes
					got = got[:0]
					for _, c := range r.Unsafe() {
						got = append(got, c.Rule)
					}
					sort.Strings(got)
				}
				if !slices.Equal(got, want) {
					t.Errorf("rules = %q, the script expects %q", got, want)
				}
				for _, c := range r.Unsafe() {
					unsafeIn[c.Rule] = append(unsafeIn[c.Rule], dir)
				}
			})
		}
	}
	covered := 0
	for _, rule := range crd.UnsafeRules() {
		switch {
		case rule == crd.RuleCRDRemoved:
			continue // needs two bundles: crd_diff_inputs.txtar
		case len(unsafeIn[rule]) == 0:
			t.Errorf("rule %s: no pair reports it", rule)
			continue
		}
		if !pairs[rule] || !slices.Contains(unsafeIn[rule], rule) {
			t.Errorf("rule %s: no pair named %s reports it", rule, rule)
		}
		if !pairs[rule+"-safe"] {
			t.Errorf("rule %s: no safe counterpart %s-safe", rule, rule)
		} else if slices.Contains(unsafeIn[rule], rule+"-safe") {
			t.Errorf("rule %s: its safe counterpart reports it", rule)
		}
		covered++
	}
	t.Logf("%d pairs, %d unsafe rules covered with an unsafe and a safe pair", len(pairs), covered)
}

// conformance is the shared conformance suite beside the repository.
func conformance(t testing.TB) string {
	dir, _ := filepath.Abs("../../../shared/conformance/bundle")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no conformance suite at %s: the real-pair tests need it", dir)
	}
	return dir
}

// TestRealPairs checks consecutive versions of real bundles, as OLM v1's
// preflight judges them.
func TestRealPairs(t *testing.T) {
	dir := conformance(t)
	tests := []struct {
		old, new string
		// unsafe are the rules of the unsafe changes (sorted); safe the
		// rules of some safe changes expected too.
		unsafe, safe []string
	}{
		// controller-gen v0.12 -> v0.14 rewrapped every description: safe
		{"node-healthcheck-operator@0.7.0", "node-healthcheck-operator@0.8.0", nil, []string{crd.RuleDescriptionChanged}},
		// three v1beta1 CRDs, unchanged
		{"upstream-etcd.0.9.0", "upstream-etcd.0.9.2", nil, nil},
		{"upstream-prometheus.0.14.0", "upstream-prometheus.0.15.0", nil, nil},
		{"upstream-prometheus.0.15.0", "upstream-prometheus.0.22.2", nil, nil},
		// a version added beside an unserved one, with no schema
		{"upstream-foo-bundle-v0.2.0", "upstream-foo-bundle-v0.3.0", nil, []string{crd.RuleVersionAdded}},
		{"upstream-foo-bundle-v0.3.0", "upstream-foo-bundle-v0.3.1", nil, nil},
		{"upstream-bar-bundle-v0.2.0", "upstream-bar-bundle-v1.0.0", nil, []string{crd.RuleVersionAdded}},
		{"upstream-baz-bundle-v1.0.0", "upstream-baz-bundle-v1.0.1", nil, nil},
		{"upstream-baz-bundle-v1.0.1", "upstream-baz-bundle-v1.1.0", nil, nil},
		// and backwards: the version dropped is the storage one, and
		// v1alpha1 is no longer served (served unset)
		{"upstream-bar-bundle-v1.0.0", "upstream-bar-bundle-v0.2.0", []string{crd.RuleServedVersionRemoved, crd.RuleStoredVersionRemoved}, nil},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.old+"->"+tt.new, func(t *testing.T) {
			old, err := crd.FromBundleDir(ctx, filepath.Join(dir, tt.old, "input"))
			if err != nil {
				t.Fatal(err)
			}
			new, err := crd.FromBundleDir(ctx, filepath.Join(dir, tt.new, "input"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := crd.CompareBundles(ctx, old, new)
			if err != nil {
				t.Fatal(err)
			}
			var unsafe []string
			safe := map[string]bool{}
			for _, c := range r.Changes {
				if c.Safe {
					safe[c.Rule] = true
				} else if !slices.Contains(unsafe, c.Rule) {
					unsafe = append(unsafe, c.Rule)
				}
			}
			sort.Strings(unsafe)
			if !slices.Equal(unsafe, tt.unsafe) {
				t.Errorf("unsafe rules = %q, want %q", unsafe, tt.unsafe)
			}
			for _, s := range tt.safe {
				if !safe[s] {
					t.Errorf("no %s change", s)
				}
			}
		})
	}
}
