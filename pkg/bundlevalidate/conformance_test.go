package bundlevalidate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// TestConformance runs the validators on the bundles of the shared
// conformance suite (../shared/conformance/bundle beside the repository)
// with the options of each recorded operator-sdk run, and compares the
// results as the suite's README says (see SameAlpha1). The CLI is checked
// against the same runs by internal/conformance.
func TestConformance(t *testing.T) {
	suite := filepath.Join("..", "..", "..", "shared", "conformance", "bundle")
	if d := os.Getenv("OPM_CONFORMANCE_DIR"); d != "" {
		suite = filepath.Join(d, "bundle")
	}
	cases, _ := filepath.Glob(filepath.Join(suite, "*", "bundle-validate*.args"))
	if len(cases) == 0 {
		t.Skipf("conformance suite not found at %s (it lives in ../shared beside the repository); skipping", suite)
	}
	passed := 0
	for _, a := range cases {
		dir := filepath.Dir(a)
		run := strings.TrimSuffix(filepath.Base(a), ".args")
		t.Run(filepath.Base(dir)+"/"+run, func(t *testing.T) {
			args, _ := os.ReadFile(a)
			opts := Options{Dir: "input", Values: map[string]string{}}
			lines := strings.Split(strings.TrimSpace(string(args)), "\n")
			for i, l := range lines {
				switch {
				case l == "--select-optional" && i+1 < len(lines):
					sel, err := ParseSelector(lines[i+1])
					if err != nil {
						t.Fatal(err)
					}
					opts.Selector = sel
				case strings.HasPrefix(l, "--optional-values="):
					k, v, _ := strings.Cut(strings.TrimPrefix(l, "--optional-values="), "=")
					opts.Values[k] = v
				}
			}
			b, err := manifest.LoadDir(context.Background(), filepath.Join(dir, "input"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Validate(context.Background(), b, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteAlpha1(&got, []*Report{rep}); err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(filepath.Join(dir, run+".stdout"))
			if d := SameAlpha1(got.Bytes(), want); d != "" {
				t.Errorf("%s", d)
				return
			}
			passed++
		})
	}
	t.Logf("%d of %d runs reproduced", passed, len(cases))
}

var pointerValue = regexp.MustCompile(`Value 0x[0-9a-f]+:`)

// normAlpha1 normalises a json-alpha1 message as the suite compares them:
// runs of whitespace as one space, a pointer's address as any, the
// deprecated APIs and the bundle format errors (printed in map order) as
// sets.
func normAlpha1(m string) string {
	m = pointerValue.ReplaceAllString(strings.Join(strings.Fields(m), " "), "Value 0x:")
	if head, tail, ok := strings.Cut(m, "Migrate the API(s) for "); ok {
		parts := regexp.MustCompile(`\]\),`).Split(tail, -1)
		for i := range parts[:len(parts)-1] {
			parts[i] += "]),"
		}
		var keep []string
		for _, p := range parts {
			if p != "" {
				keep = append(keep, strings.TrimSuffix(p, ","))
			}
		}
		sort.Strings(keep)
		m = head + "Migrate the API(s) for " + strings.Join(keep, ",")
	}
	if head, tail, ok := strings.Cut(m, "Bundle validation errors: "); ok {
		parts := regexp.MustCompile(`,([A-Z])`).ReplaceAllString(tail, "\x00$1")
		list := strings.Split(parts, "\x00")
		sort.Strings(list)
		m = head + "Bundle validation errors: " + strings.Join(list, ",")
	}
	return m
}

// SameAlpha1 compares two json-alpha1 results as the conformance suite
// does: the same passed, and the same (type, message) pairs counted with
// repeats in any order, messages normalised (normAlpha1). It returns what
// differs, or "".
func SameAlpha1(got, want []byte) string {
	var g, w Alpha1
	if err := json.Unmarshal(got, &g); err != nil {
		return "output is not a json-alpha1 result: " + err.Error()
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return "expected output is not a json-alpha1 result: " + err.Error()
	}
	pairs := func(r Alpha1) []string {
		var out []string
		for _, o := range r.Outputs {
			out = append(out, o.Type+"\x00"+normAlpha1(o.Message))
		}
		sort.Strings(out)
		return out
	}
	gp, wp := pairs(g), pairs(w)
	var diff []string
	if g.Passed != w.Passed {
		diff = append(diff, "passed differs")
	}
	for _, x := range wp {
		if i := slices.Index(gp, x); i >= 0 {
			gp = slices.Delete(gp, i, i+1)
			continue
		}
		diff = append(diff, "missing: "+strings.ReplaceAll(x, "\x00", " "))
	}
	for _, x := range gp {
		diff = append(diff, "extra:   "+strings.ReplaceAll(x, "\x00", " "))
	}
	return strings.Join(diff, "\n")
}
