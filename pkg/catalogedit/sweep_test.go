package catalogedit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/validate"
)

// TestEditSweep edits every package of the small conformance catalogs
// (promote its default channel's head to a new channel, make that the
// default, deprecate the package) and checks that each edit renders, loads
// back to what was asked, keeps every other file, and validates when the
// catalog did.
func TestEditSweep(t *testing.T) {
	root := filepath.Join(conformanceDir, "catalog")
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Skipf("conformance suite not found at %s", root)
	}
	ctx := context.Background()
	inPlace, whole := patchedInPlace.Load(), patchedWhole.Load()
	defer func() {
		t.Logf("blobs patched in place: %d, re-emitted whole: %d", patchedInPlace.Load()-inPlace, patchedWhole.Load()-whole)
	}()
	for _, cs := range cases {
		dir := filepath.Join(root, cs.Name(), "input")
		if size := treeSize(t, dir); size > 16<<20 || (raceEnabled || testing.Short()) && size > 256<<10 {
			continue
		}
		t.Run(cs.Name(), func(t *testing.T) {
			c, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := validate.Validate(ctx, c.Config, validate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := graph.New(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			var pkgs []string
			for _, p := range c.Config.Packages {
				pkgs = append(pkgs, p.Name)
			}
			sort.Strings(pkgs)
			edited := map[string]bool{}
			for _, pkg := range pkgs {
				pg := g.Package(pkg)
				ch := pg.Channel(pg.DefaultChannel)
				if ch == nil || ch.Head == "" {
					continue
				}
				if err := c.Promote(pkg, ch.Head, "zz-sweep", Edges{}, true); err != nil {
					t.Fatalf("%s: promote: %v", pkg, err)
				}
				if err := c.SetDefaultChannel(pkg, "zz-sweep"); err != nil {
					t.Fatalf("%s: set default: %v", pkg, err)
				}
				if err := c.Deprecate(pkg, TargetChannel, []string{pg.DefaultChannel}, "swept", false); err != nil {
					t.Fatalf("%s: deprecate: %v", pkg, err)
				}
				edited[pkg] = true
			}
			changes, err := c.Render()
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := c.ResultConfig(changes)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range changes {
				if ch.Action == ActionModified && !bytes.HasPrefix(ch.New, ch.Old[:firstDiff(ch.Old, ch.New)]) {
					t.Fatalf("%s: prefix changed", ch.Name)
				}
			}
			for _, p := range cfg.Packages {
				if edited[p.Name] && p.DefaultChannel != "zz-sweep" {
					t.Errorf("%s: default channel %q", p.Name, p.DefaultChannel)
				}
			}
			if res.Passed {
				after, err := validate.Validate(ctx, cfg, validate.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !after.Passed {
					t.Fatalf("result does not validate: %s", after.Message)
				}
			}
		})
	}
}

// TestRemoveSweep removes, in every package of the conformance catalogs
// that validate, a bundle from the middle of its default channel, and
// checks that the re-stitched catalog validates.
func TestRemoveSweep(t *testing.T) {
	root := filepath.Join(conformanceDir, "catalog")
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Skipf("conformance suite not found at %s", root)
	}
	ctx := context.Background()
	for _, cs := range cases {
		dir := filepath.Join(root, cs.Name(), "input")
		if size := treeSize(t, dir); size > 16<<20 || (raceEnabled || testing.Short()) && size > 256<<10 {
			continue
		}
		t.Run(cs.Name(), func(t *testing.T) {
			c, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := validate.Validate(ctx, c.Config, validate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed {
				t.Skip("catalog does not validate")
			}
			g, err := graph.New(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			removed := 0
			for _, pg := range g.Packages {
				ch := pg.Channel(pg.DefaultChannel)
				if ch == nil || len(ch.Entries) < 3 {
					continue
				}
				victim := ch.Entries[len(ch.Entries)/2].Name
				if victim == ch.Head {
					continue
				}
				if _, err := c.RemoveBundles(ctx, pg.Name, []string{victim}, RemoveOptions{}); err != nil {
					t.Errorf("%s: remove %s: %v", pg.Name, victim, err)
					continue
				}
				removed++
			}
			changes, err := c.Render()
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := c.ResultConfig(changes)
			if err != nil {
				t.Fatal(err)
			}
			after, err := validate.Validate(ctx, cfg, validate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !after.Passed {
				t.Fatalf("after removing %d bundles: %s", removed, after.Message)
			}
			t.Logf("removed %d bundles", removed)
		})
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func treeSize(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}
