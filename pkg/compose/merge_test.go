package compose

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

func TestMerge(t *testing.T) {
	a := testCatalog("a", "stable", map[string][]string{"stable": {"a.v1.0.0"}})
	a.Others = []declcfg.Meta{{Schema: "my.catalog", Blob: []byte(`{"schema":"my.catalog"}`)}}
	b := testCatalog("b", "stable", map[string][]string{"stable": {"b.v1.0.0"}})
	b.Others = []declcfg.Meta{{Schema: "my.catalog", Blob: []byte(`{"schema":"my.catalog"}`)}, {Schema: "my.other", Blob: []byte(`{"schema":"my.other"}`)}}
	res, err := Merge([]Input{{Source: "A", Config: a}, {Source: "B", Config: b}}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Packages != 2 || len(res.Config.Bundles) != 2 || len(res.Config.Others) != 2 || len(res.Preferred) != 0 {
		t.Errorf("result %+v", res)
	}

	a2 := testCatalog("a", "fast", map[string][]string{"fast": {"a.v2.0.0"}})
	a2.Packages[0].Pos = declcfg.Position{File: "c/a/catalog.yaml", Line: 1, Column: 1}
	a.Packages[0].Pos = declcfg.Position{File: "a/a/catalog.json", Line: 3, Column: 1}
	_, err = Merge([]Input{{Source: "A", Config: a}, {Source: "B", Config: b}, {Source: "C", Config: a2}}, MergeOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v", err)
	}
	if want := `package "a" is in more than one input: A (a/a/catalog.json:3:1) and C (c/a/catalog.yaml:1:1)`; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	for prefer, want := range map[Prefer]string{PreferFirst: "a.v1.0.0", PreferLast: "a.v2.0.0"} {
		res, err := Merge([]Input{{Source: "A", Config: a}, {Source: "B", Config: b}, {Source: "C", Config: a2}}, MergeOptions{Prefer: prefer})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, bu := range res.Config.Bundles {
			names = append(names, bu.Name)
		}
		if strings.Join(names, " ") != want+" b.v1.0.0" && strings.Join(names, " ") != "b.v1.0.0 "+want {
			t.Errorf("%s: bundles %q", prefer, names)
		}
		if n := res.Notes(false); len(n) != 1 || !strings.Contains(n[0], `package "a": taken from`) {
			t.Errorf("%s: notes %q", prefer, n)
		}
	}
	// Many packages from one input: one line, a few names, a count.
	many := MergeResult{}
	for i := range 8 {
		many.Preferred = append(many.Preferred, Preferred{Package: fmt.Sprintf("p%d", i), From: "B", Over: []string{"A"}, Prefer: PreferLast})
	}
	many.Preferred = append(many.Preferred, Preferred{Package: "q", From: "C", Over: []string{"A", "B"}, Prefer: PreferLast})
	want := []string{
		`8 packages taken from B (--prefer last), not from A: "p0", "p1", "p2", "p3", "p4" and 3 more`,
		`package "q": taken from C (--prefer last), not from A, B`,
	}
	if got := many.Notes(false); !slices.Equal(got, want) {
		t.Errorf("summary\n%q\nwant\n%q", got, want)
	}
	if got := many.Notes(true); len(got) != 9 || got[0] != `package "p0": taken from B (--prefer last), not from A` {
		t.Errorf("all: %q", got)
	}
	// An invalid input makes an invalid result: refused.
	bad := testCatalog("c", "nope", map[string][]string{"stable": {"c.v1.0.0"}})
	if _, err := Merge([]Input{{Source: "A", Config: a}, {Source: "bad", Config: bad}}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "the merged catalog is not valid") {
		t.Errorf("invalid: %v", err)
	}
}

func TestWriteDir(t *testing.T) {
	cfg := testCatalog("a", "stable", map[string][]string{"stable": {"a.v1.0.0"}})
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteDir(cfg, dir, declcfg.FormatYAML, false); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(dir, "a", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Not empty now: refused, untouched.
	other := testCatalog("b", "stable", map[string][]string{"stable": {"b.v1.0.0"}})
	var ne *NotEmptyError
	if err := WriteDir(other, dir, declcfg.FormatYAML, false); !errors.As(err, &ne) {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a", "catalog.yaml")); !bytes.Equal(got, first) {
		t.Error("refused write changed the directory")
	}
	// Forced: replaced whole.
	if err := WriteDir(other, dir, declcfg.FormatJSON, true); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "b" {
		t.Errorf("entries %v", ents)
	}
	parent, _ := os.ReadDir(filepath.Dir(dir))
	if len(parent) != 1 {
		t.Errorf("leftovers beside the output: %v", parent)
	}
	// A file in the way.
	file := filepath.Join(t.TempDir(), "f")
	_ = os.WriteFile(file, []byte("x"), 0o644)
	if err := WriteDir(other, file, declcfg.FormatJSON, true); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: %v", err)
	}
}
