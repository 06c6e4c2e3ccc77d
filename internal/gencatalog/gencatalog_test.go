package gencatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// generateFS generates a catalog in memory.
func generateFS(t testing.TB, opts Options) fstest.MapFS {
	t.Helper()
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for i, name := range g.PackageNames() {
		var buf bytes.Buffer
		if err := g.WritePackage(&buf, i+1); err != nil {
			t.Fatal(err)
		}
		fsys[name+"/catalog."+opts.Format.Ext()] = &fstest.MapFile{Data: buf.Bytes()}
	}
	return fsys
}

func size(fsys fstest.MapFS) int {
	n := 0
	for _, f := range fsys {
		n += len(f.Data)
	}
	return n
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		name              string
		packages, bundles int
		seed              uint64
	}{
		{"Success/OnePackageOneBundle", 1, 1, 1},
		{"Success/OnePackage", 1, 20, 2},
		{"Success/TwoBundles", 5, 2, 3},
		{"Success/ThreeBundles", 10, 3, 4},
		{"Success/Typical", 12, 8, 5},
		{"Success/LongChains", 2, 60, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := generateFS(t, Options{Packages: tc.packages, Bundles: tc.bundles, Seed: tc.seed})
			c, err := readCatalog(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.packages) != tc.packages || len(c.bundles) != tc.packages*tc.bundles {
				t.Fatalf("got %d packages and %d bundles, want %d and %d",
					len(c.packages), len(c.bundles), tc.packages, tc.packages*tc.bundles)
			}
			for _, e := range c.check() {
				t.Error(e)
			}
		})
	}
}

// TestValidSeeds checks small catalogs of many shapes, where the channel
// layouts have the least room.
func TestValidSeeds(t *testing.T) {
	for seed := uint64(100); seed < 130; seed++ {
		opts := Options{Packages: 3, Bundles: 1 + int(seed%7), Seed: seed}
		c, err := readCatalog(generateFS(t, opts))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c.check() {
			t.Errorf("%+v: %s", opts, e)
		}
	}
}

// TestVariety checks that a catalog of a typical shape holds every feature
// the generator promises, so benchmarks exercise them.
func TestVariety(t *testing.T) {
	c, err := readCatalog(generateFS(t, Options{Packages: 24, Bundles: 5, Seed: 7}))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, p := range c.packages {
		counts["icon "+p.Icon.MediaType]++
		counts["default "+p.DefaultChannel]++
	}
	for _, ch := range c.channels {
		counts["channel "+ch.Name]++
		for _, e := range ch.Entries {
			if e.Replaces != "" {
				counts["replaces"]++
			}
			if len(e.Skips) > 0 {
				counts["skips"]++
			}
			if e.SkipRange != "" {
				counts["skipRange"]++
			}
			if strings.Contains(e.Name, "-rc.") {
				counts["prerelease"]++
			}
		}
	}
	for _, b := range c.bundles {
		for _, p := range b.Properties {
			counts["property "+p.Type]++
		}
	}
	for _, d := range c.deprecations {
		for _, e := range d.Entries {
			counts["deprecated "+e.Reference.Schema]++
		}
	}
	for _, want := range []string{
		"icon image/png", "icon image/svg+xml", "default stable", "default fast",
		"channel candidate", "channel fast", "channel stable",
		"replaces", "skips", "skipRange", "prerelease",
		"property olm.package", "property olm.gvk", "property olm.gvk.required", "property olm.package.required",
		"property olm.maxOpenShiftVersion", "property olm.bundle.object",
		"deprecated olm.package", "deprecated olm.channel", "deprecated olm.bundle",
	} {
		if counts[want] == 0 {
			t.Errorf("no %s in the catalog (counts: %v)", want, counts)
		}
	}
}

func TestDeterministic(t *testing.T) {
	opts := Options{Packages: 6, Bundles: 3, Seed: 42}
	a, b := generateFS(t, opts), generateFS(t, opts)
	if len(a) != len(b) {
		t.Fatalf("got %d and %d files", len(a), len(b))
	}
	for name, f := range a {
		if !bytes.Equal(f.Data, b[name].Data) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	opts.Seed = 43
	c := generateFS(t, opts)
	if bytes.Equal(a["pkg-001/catalog.json"].Data, c["pkg-001/catalog.json"].Data) {
		t.Error("seeds 42 and 43 give the same pkg-001")
	}
	// A package does not depend on how many bundles other packages have
	// (only on its own index, the seed and the counts).
	opts = Options{Packages: 6, Bundles: 3, Seed: 42, Format: FormatYAML}
	y1, y2 := generateFS(t, opts), generateFS(t, opts)
	for name, f := range y1 {
		if !bytes.Equal(f.Data, y2[name].Data) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
}

// TestGenerateDir checks the files written to disk match WritePackage, in
// parallel as in sequence, and that a non-empty directory is refused.
func TestGenerateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cat")
	opts := Options{Packages: 12, Bundles: 3, Seed: 9}
	st, err := Generate(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := generateFS(t, opts)
	var total int64
	for name, f := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs from WritePackage", name)
		}
		total += int64(len(got))
	}
	if st.Packages != 12 || st.Bundles != 36 || st.Bytes != total {
		t.Errorf("stats %+v, want 12 packages, 36 bundles, %d bytes", st, total)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 12 {
		t.Errorf("got %d entries in %s, want 12 (no temporary files left)", len(ents), dir)
	}

	_, err = Generate(context.Background(), dir, opts)
	if !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second Generate: got %v, want ErrNotEmpty", err)
	}
	opts.Force = true
	if _, err := Generate(context.Background(), dir, opts); err != nil {
		t.Errorf("Generate with Force: %v", err)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"Error/NoPackages", Options{Packages: 0, Bundles: 1}, "invalid number of packages 0"},
		{"Error/NoBundles", Options{Packages: 1, Bundles: 0}, "invalid number of bundles 0"},
		{"Error/Format", Options{Packages: 1, Bundles: 1, Format: 7}, "invalid format 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ParseFormat("toml"); err == nil {
		t.Error("ParseFormat(toml) succeeded")
	}
	g, _ := New(Options{Packages: 2, Bundles: 1})
	if err := g.WritePackage(&bytes.Buffer{}, 3); err == nil {
		t.Error("WritePackage(3) of 2 succeeded")
	}
}

// TestSize checks the bytes per bundle stay near the target (190 MB at
// 200 x 20, about 47.5 KB a bundle) and grow linearly with the counts.
func TestSize(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("generates ~60 MB")
	}
	small := size(generateFS(t, Options{Packages: 50, Bundles: 10, Seed: 1}))
	perBundle := float64(small) / 500
	if perBundle < 42e3 || perBundle > 53e3 {
		t.Errorf("%.0f bytes per bundle, want 42-53 KB", perBundle)
	}
	double := size(generateFS(t, Options{Packages: 100, Bundles: 10, Seed: 1}))
	if r := float64(double) / float64(small); r < 1.85 || r > 2.15 {
		t.Errorf("100 packages are %.2f times the size of 50, want about 2", r)
	}
	long := size(generateFS(t, Options{Packages: 50, Bundles: 20, Seed: 1}))
	if r := float64(long) / float64(small); r < 1.85 || r > 2.15 {
		t.Errorf("20 bundles a package are %.2f times the size of 10, want about 2", r)
	}
}

// TestYAML checks the YAML form holds the same blobs as the JSON form.
func TestYAML(t *testing.T) {
	opts := Options{Packages: 4, Bundles: 4, Seed: 5}
	js := generateFS(t, opts)
	opts.Format = FormatYAML
	ys := generateFS(t, opts)
	for name, f := range js {
		yf := ys[strings.TrimSuffix(name, ".json")+".yaml"]
		if yf == nil {
			t.Fatalf("no YAML for %s", name)
		}
		docs := strings.Split(strings.TrimPrefix(string(yf.Data), "---\n"), "\n---\n")
		dec := json.NewDecoder(bytes.NewReader(f.Data))
		for i, doc := range docs {
			var want any
			if err := dec.Decode(&want); err != nil {
				t.Fatalf("%s: blob %d: %v", name, i, err)
			}
			var got any
			if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
				t.Fatalf("%s: YAML doc %d: %v", name, i, err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("%s: doc %d differs between YAML and JSON", name, i)
			}
		}
		if dec.More() {
			t.Errorf("%s: more JSON blobs than YAML documents", name)
		}
	}
}

// TestCheck makes sure the checker used above is not vacuous: each broken
// variant of a valid catalog is reported.
func TestCheck(t *testing.T) {
	base := generateFS(t, Options{Packages: 3, Bundles: 6, Seed: 3})
	for _, tc := range []struct {
		name   string
		mutate func(c *catalog)
		want   string
	}{
		{"Error/TwoHeads", func(c *catalog) { c.channels[0].Entries[1].Replaces = "" }, "heads"},
		{"Error/Stranded", func(c *catalog) {
			es := c.channels[0].Entries
			es[len(es)-1].Replaces, es[len(es)-1].Skips = es[len(es)-3].Name, []string{es[len(es)-2].Name, es[len(es)-4].Name}
		}, "stranded"},
		{"Error/BadSkipRange", func(c *catalog) { c.channels[0].Entries[1].SkipRange = ">=9.0.0 <9.1.0" }, "covers no version"},
		{"Error/NoChannel", func(c *catalog) {
			c.bundles = append(c.bundles, c.bundles[0])
			c.bundles[len(c.bundles)-1].Name = "pkg-001.v99.0.0"
		}, "not found in any channel entries"},
		{"Error/DefaultChannel", func(c *catalog) { c.packages[0].DefaultChannel = "beta" }, "default channel"},
		{"Error/PackageName", func(c *catalog) { c.packages[0].Name = "Pkg_1" }, "invalid package name"},
		{"Error/Image", func(c *catalog) { c.bundles[0].Image = "quay.io/gen/x@sha256:12" }, "invalid image"},
		{"Error/Deprecation", func(c *catalog) {
			c.deprecations = append(c.deprecations, deprecationBlob{Package: "pkg-001", Entries: []deprecationEntry{{pkgRef{"olm.channel", "beta"}, "m"}}})
		}, "channel not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := readCatalog(base)
			if err != nil {
				t.Fatal(err)
			}
			if errs := c.check(); len(errs) > 0 {
				t.Fatalf("base catalog invalid: %v", errs)
			}
			tc.mutate(c)
			errs := c.check()
			if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
				t.Errorf("got %q, want an error containing %q", errs, tc.want)
			}
		})
	}
}
