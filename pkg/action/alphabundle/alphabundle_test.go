package alphabundle

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const testCSV = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: p.v1.0.0\nspec:\n  version: 1.0.0\n"

// TestGenerateChecksBeforeWriting: a conflict found late (a copied
// manifest) leaves every file untouched, the earlier ones included.
func TestGenerateChecksBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"src/a.yaml":             testCSV,
		"src/b.yaml":             "kind: ConfigMap\n",
		"out/manifests/b.yaml":   "kind: Secret\n",
		"unrelated/keep.txt":     "x",
		"src/sub/ignored.yaml":   "kind: ConfigMap\n",
		"out/manifests/c.yaml":   "kept\n",
		"work/bundle.Dockerfile": "FROM mine\n",
	})
	opts := GenerateOptions{Directory: filepath.Join(dir, "src"), OutputDir: filepath.Join(dir, "out"), Package: "p", Channels: "stable", WorkDir: filepath.Join(dir, "work")}
	_, err := Generate(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "b.yaml exists and differs from the manifest b.yaml") {
		t.Fatalf("error %v", err)
	}
	for _, p := range []string{"out/manifests/a.yaml", "out/metadata/annotations.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s written before the conflict was found (%v)", p, err)
		}
	}
	opts.Overwrite = true
	res, err := Generate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Path] = f.Action
	}
	want := map[string]string{
		filepath.Join(dir, "out/manifests/a.yaml"):          "created",
		filepath.Join(dir, "out/manifests/b.yaml"):          "replaced",
		filepath.Join(dir, "out/metadata/annotations.yaml"): "created",
		"bundle.Dockerfile":                                 "replaced",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "out/manifests/c.yaml")); string(data) != "kept\n" {
		t.Error("a file the manifests do not have was touched")
	}
	if _, err := os.Stat(filepath.Join(dir, "out/manifests/sub")); err == nil {
		t.Error("a subdirectory was copied")
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "not copied: sub/") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestMoveEntries: without overwrite an existing entry is refused before
// anything moves; with it, the old entries go to backup; when an entry
// cannot be moved aside, what was moved is taken back and the replaced
// entries restored.
func TestMoveEntries(t *testing.T) {
	dir := t.TempDir()
	from, to, backup := filepath.Join(dir, "from"), filepath.Join(dir, "to"), filepath.Join(dir, "backup")
	writeFiles(t, dir, map[string]string{
		"from/a/new.txt": "new a",
		"from/b/new.txt": "new b",
		"to/a/old.txt":   "old a",
		"to/b/old.txt":   "old b",
		"to/keep.txt":    "keep",
		"backup/b/x.txt": "in the way", // to/b cannot be moved aside
	})
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	check := func(files map[string]string) {
		t.Helper()
		for p, want := range files {
			if data, err := os.ReadFile(filepath.Join(dir, p)); string(data) != want {
				t.Errorf("%s = %q (%v), want %q", p, data, err, want)
			}
		}
	}
	if err := moveEntries(from, to, backup, entries, false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("without overwrite: %v", err)
	}
	check(map[string]string{"to/a/old.txt": "old a", "from/a/new.txt": "new a"})

	if err := moveEntries(from, to, backup, entries, true); err == nil {
		t.Fatal("moving to/b aside succeeded")
	}
	check(map[string]string{"to/a/old.txt": "old a", "to/b/old.txt": "old b", "to/keep.txt": "keep", "from/b/new.txt": "new b"})

	if err := os.RemoveAll(backup); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(from) // a was consumed by the rolled-back attempt
	if err := moveEntries(from, to, backup, entries, true); err != nil {
		t.Fatal(err)
	}
	check(map[string]string{"to/b/new.txt": "new b", "to/keep.txt": "keep", "backup/b/old.txt": "old b"})
}
