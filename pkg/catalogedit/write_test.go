package catalogedit

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, a, b map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, k+" (new)")
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("files changed: %v", diffs)
	}
}

// twoFileCatalog has a package whose channels and bundles live in two
// files, so an edit touches both.
func twoFileCatalog(t *testing.T) string {
	return writeCatalog(t, map[string]string{
		"foo/package.yaml": "schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n",
		"foo/bundles.yaml": "schema: olm.bundle\npackage: foo\nname: foo.v0.1.0\nimage: example.com/foo:v0.1.0\nproperties:\n- {type: olm.package, value: {packageName: foo, version: 0.1.0}}\n---\nschema: olm.bundle\npackage: foo\nname: foo.v0.2.0\nimage: example.com/foo:v0.2.0\nproperties:\n- {type: olm.package, value: {packageName: foo, version: 0.2.0}}\n",
	})
}

func removeV1(t *testing.T, dir string) (*Catalog, []FileChange) {
	t.Helper()
	c, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.RemoveBundles(context.Background(), "foo", []string{"foo.v0.1.0"}, RemoveOptions{DropEdges: true}); err != nil {
		t.Fatal(err)
	}
	changes, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 {
		t.Fatalf("%d changes", len(changes))
	}
	return c, changes
}

func TestWriteAllOrNothing(t *testing.T) {
	for fail := 0; fail < 2; fail++ {
		dir := twoFileCatalog(t)
		before := snapshot(t, dir)
		c, changes := removeV1(t, dir)
		testFailAfter = fail
		err := c.Write(changes)
		testFailAfter = -1
		if err == nil {
			t.Fatal("injected failure not reported")
		}
		sameSnapshot(t, before, snapshot(t, dir))
	}
	dir := twoFileCatalog(t)
	c, changes := removeV1(t, dir)
	if err := c.Write(changes); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if len(after) != 2 || strings.Contains(after["foo/bundles.yaml"], "v0.1.0") || strings.Contains(after["foo/package.yaml"], "v0.1.0") {
		t.Fatalf("after: %v", after)
	}
}

func TestWriteRefusesReadOnlyAndChangedFiles(t *testing.T) {
	dir := twoFileCatalog(t)
	before := snapshot(t, dir)
	c, changes := removeV1(t, dir)
	ro := filepath.Join(dir, "foo", "bundles.yaml")
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	err := c.Write(changes)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("got %v", err)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	if err := os.Chmod(ro, 0o644); err != nil {
		t.Fatal(err)
	}
	// changed under our feet
	if err := os.WriteFile(ro, []byte(before["foo/bundles.yaml"]+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Write(changes)
	if err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Fatalf("got %v", err)
	}
	if got := snapshot(t, dir)["foo/package.yaml"]; got != before["foo/package.yaml"] {
		t.Fatal("package.yaml changed")
	}
}

// TestWriteKeepsMode: a file rewritten keeps its mode, and its owner and
// group (as root: other users cannot give files away).
func TestWriteKeepsMode(t *testing.T) {
	dir := twoFileCatalog(t)
	p := filepath.Join(dir, "foo", "package.yaml")
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(p, 4321, 4322); err != nil {
			t.Fatal(err)
		}
	}
	c, changes := removeV1(t, dir)
	if err := c.Write(changes); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if own := fileOwner(st); root && (own.uid != 4321 || own.gid != 4322) {
		t.Errorf("owner %d:%d", own.uid, own.gid)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "foo"))
	if len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestWriteLeavesNothingInTheTree: at every point of a write (a process
// killed there stops there), the catalog directory holds only catalog
// files, each old or new, and loads; the temporary files and backups are
// in a directory beside it, which is gone at the end.
func TestWriteLeavesNothingInTheTree(t *testing.T) {
	dir := twoFileCatalog(t)
	c, changes := removeV1(t, dir)
	names := func(d string) []string {
		var out []string
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(d, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	steps := 0
	testStep = func(done int) {
		steps++
		if got := names(dir); strings.Join(got, " ") != "foo/bundles.yaml foo/package.yaml" {
			t.Errorf("after %d replacements the tree holds %v", done, got)
		}
		if _, err := declcfg.LoadFS(context.Background(), os.DirFS(dir)); err != nil {
			t.Errorf("after %d replacements: %v", done, err)
		}
		side, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".opm-edit-*"))
		if len(side) != 1 {
			t.Errorf("after %d replacements: side directories %v", done, side)
		}
	}
	defer func() { testStep = nil }()
	if err := c.Write(changes); err != nil {
		t.Fatal(err)
	}
	if steps != 3 {
		t.Errorf("%d steps seen", steps)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("left beside the catalog: %v", ents)
	}
}
