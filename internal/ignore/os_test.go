package ignore

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestNewConformanceInputs reads the conformance catalogs' own .indexignore files
// (../shared/conformance relative to the repository root) through os.DirFS.
func TestNewConformanceInputs(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "conformance")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("conformance suite not found at %s: %v", root, err)
	}
	tests := []struct {
		dir     string
		queries []query
	}{
		{"catalog/catalogd-test-catalog/input", []query{f("expected_all.json", true), f("catalog.yaml", false)}},
		{"catalog/operator-controller-test-catalog-v1/input", []query{f("expected_all.json", true), f("catalog.yaml", false)}},
		{"invalid/loader/input", []query{f("README.md", true), f("a.json", false), f("sub/b.yaml", false)}},
	}
	for _, tt := range tests {
		t.Run("Success/"+tt.dir, func(t *testing.T) {
			m, err := New(os.DirFS(filepath.Join(root, tt.dir)), ".indexignore")
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tt.queries {
				if got := m.Match(q.path, q.isDir); got != q.want {
					t.Errorf("Match(%q, %v) = %v, want %v", q.path, q.isDir, got, q.want)
				}
			}
		})
	}
}

func TestNewSymlinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("patterns.txt", "*.md\n")
	write("real/.indexignore", "*.json\n")
	write("real/a.json", "{}")
	if err := os.Symlink("patterns.txt", filepath.Join(dir, ".indexignore")); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	m, err := New(os.DirFS(dir), ".indexignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []query{
		f("README.md", true),    // a symlinked ignore file is read
		f("real/a.json", true),  // a real directory is searched
		f("link/a.json", false), // a link to a directory is not followed
	} {
		if got := m.Match(q.path, q.isDir); got != q.want {
			t.Errorf("Match(%q, %v) = %v, want %v", q.path, q.isDir, got, q.want)
		}
	}
}

func TestMatchConcurrent(t *testing.T) {
	m := NewFromFiles(benchIgnore)
	want := map[string]bool{}
	for _, p := range benchPaths {
		want[p] = m.Match(p, false)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 1000 {
				p := benchPaths[i%len(benchPaths)]
				if got := m.Match(p, false); got != want[p] {
					t.Errorf("Match(%q) = %v, want %v", p, got, want[p])
					return
				}
			}
		})
	}
	wg.Wait()
}
