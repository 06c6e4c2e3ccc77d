package index_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/index"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/render"
)

// recordedHost is the registry the recordings were made against.
const recordedHost = "127.0.0.1:5111"

// deviations are where opm's catalog differs from upstream's on purpose,
// by scenario and step: the test checks opm's result instead.
var deviations = map[string]func(t *testing.T, cfg *declcfg.DeclarativeConfig, err error){
	// Upstream's semver-skippatch cannot add a patch release below an
	// older minor ("Invalid graph"): the bundle replaces the version it
	// skips, which leaves the channel. opm has it replace the greatest
	// version that stays, and skip the lower patches.
	"skippatch-steps/6": func(t *testing.T, cfg *declcfg.DeclarativeConfig, err error) {
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range cfg.Channels {
			if ch.Package != "foo" || ch.Name != "beta" {
				continue
			}
			last := ch.Entries[len(ch.Entries)-1]
			if last.Name != "foo.v0.3.1" || last.Replaces != "foo.v0.2.0" || strings.Join(last.Skips, ",") != "foo.v0.3.0" {
				t.Errorf("foo.v0.3.1's entry is %+v, want it to replace foo.v0.2.0 and skip foo.v0.3.0", last)
			}
			return
		}
		t.Error("no channel beta of package foo")
	},
}

// TestUpstream builds the catalogs of the scenarios upstream opm v1.73.0's
// `opm index add` was recorded on (testdata/upstream-v1.73.0, see its
// README), from the same conformance bundles pushed to a registry, and
// compares them with upstream's databases rendered by upstream, byte for
// byte: each scenario's steps chained through opm's own file-based catalogs,
// and its last step added to upstream's database of the step before.
func TestUpstream(t *testing.T) {
	conformance, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "conformance", "bundle"))
	if _, err := os.Stat(conformance); err != nil {
		t.Skipf("skipping: the conformance suite (%s) is not there", conformance)
	}
	ctx := context.Background()
	reg := registrytest.New(t)
	t.Setenv("TMPDIR", t.TempDir())
	dir := filepath.Join("testdata", "upstream-v1.73.0")
	data, err := os.ReadFile(filepath.Join(dir, "scenarios.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pushed := map[string]bool{}
	push := func(t *testing.T, ref string) string {
		name := strings.TrimSuffix(strings.TrimPrefix(ref, recordedHost+"/bundles/"), ":v1")
		ours := reg.Host + "/bundles/" + name + ":v1"
		if !pushed[name] {
			_, err := build.RunBundle(ctx, build.BundleOptions{Options: build.Options{Dir: filepath.Join(conformance, bundleDir(name), "input"), Tags: []string{ours}}})
			if err != nil {
				t.Fatal(err)
			}
			pushed[name] = true
		}
		return ours
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		name := f[0]
		t.Run(name, func(t *testing.T) {
			sd := filepath.Join(dir, name)
			mode, err := index.ParseMode(strings.TrimSpace(string(read(t, filepath.Join(sd, "mode")))))
			if err != nil {
				t.Fatal(err)
			}
			steps, _ := filepath.Glob(filepath.Join(sd, "step*.bundles"))
			var (
				from string
				last = len(steps)
			)
			for i := 1; i <= last; i++ {
				var refs []string
				for _, r := range strings.Split(strings.TrimSpace(string(read(t, filepath.Join(sd, stepFile(i, "bundles"))))), ",") {
					refs = append(refs, push(t, r))
				}
				res, err := index.Add(ctx, index.AddOptions{Bundles: refs, FromIndex: from, Mode: mode})
				var cfg *declcfg.DeclarativeConfig
				if res != nil {
					cfg = res.Config
				}
				if !check(t, sd, name, i, cfg, err, reg.Host) {
					return
				}
				if i == last-1 {
					// the last step again, on upstream's own database
					img := dbImage(t, filepath.Join(sd, stepFile(i, "db.gz")))
					ref := reg.Host + "/index/" + name + ":sqlite"
					if err := registrytest.Push(ctx, ref, img); err != nil {
						t.Fatal(err)
					}
					var next []string
					for _, r := range strings.Split(strings.TrimSpace(string(read(t, filepath.Join(sd, stepFile(last, "bundles"))))), ",") {
						next = append(next, push(t, r))
					}
					res, err := index.Add(ctx, index.AddOptions{Bundles: next, FromIndex: ref, Mode: mode})
					var cfg *declcfg.DeclarativeConfig
					if res != nil {
						cfg = res.Config
						if !res.FromSQLite {
							t.Error("the sqlite index image was not read as one")
						}
					}
					t.Run("sqlite", func(t *testing.T) { check(t, sd, name, last, cfg, err, reg.Host) })
				}
				from = filepath.Join(t.TempDir(), "catalog")
				if err := declcfg.WriteFS(*cfg, from, declcfg.FormatJSON); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// check compares one step with its recording; it reports whether the
// chain can go on.
func check(t *testing.T, sd, name string, step int, cfg *declcfg.DeclarativeConfig, err error, host string) bool {
	t.Helper()
	if dev, ok := deviations[name+"/"+itoa(step)]; ok {
		dev(t, cfg, err)
		return false
	}
	wantExit := strings.TrimSpace(string(read(t, filepath.Join(sd, stepFile(step, "exit")))))
	if wantExit != "0" {
		if err == nil {
			t.Fatalf("step %d: no error; upstream failed: %s", step, read(t, filepath.Join(sd, stepFile(step, "stderr"))))
		}
		return false
	}
	if err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	want, ok := readMaybe(filepath.Join(sd, stepFile(step, "render.json")))
	if !ok {
		return true
	}
	var buf bytes.Buffer
	if err := declcfg.Write(*withoutConstraints(cfg), &buf, declcfg.FormatJSON); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(buf.String(), host, recordedHost)
	if got != string(want) {
		t.Errorf("step %d differs from upstream's render (%d bytes, upstream %d)", step, len(got), len(want))
		os.WriteFile(filepath.Join(os.TempDir(), name+"-"+itoa(step)+".json"), []byte(got), 0o644)
	}
	return true
}

// withoutConstraints drops the olm.constraint properties: the one
// difference of opm's catalogs. Upstream's loader stores a bundle's
// dependencies file whole, and its render keeps only the olm.gvk and
// olm.package ones: olm.constraint (and olm.label) dependencies are lost.
// opm keeps them, as `opm render` of the bundle image does.
func withoutConstraints(cfg *declcfg.DeclarativeConfig) *declcfg.DeclarativeConfig {
	out := *cfg
	out.Bundles = make([]declcfg.Bundle, len(cfg.Bundles))
	for i, b := range cfg.Bundles {
		var props []property.Property
		for _, p := range b.Properties {
			if p.Type != property.TypeConstraint {
				props = append(props, p)
			}
		}
		b.Properties = props
		out.Bundles[i] = b
	}
	return &out
}

func bundleDir(name string) string {
	kind, version, _ := strings.Cut(name, "-")
	switch kind {
	case "foo", "bar", "baz":
		return "upstream-" + kind + "-bundle-v" + version
	case "etcd":
		return "upstream-etcd." + version
	case "prom":
		return "upstream-prometheus." + version
	case "argo":
		return "argocd-operator@" + version
	}
	return name
}

// dbImage is an sqlite index image holding the gzipped database.
func dbImage(t *testing.T, gz string) v1.Image {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "database"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "database", "index.db"), read(t, gz), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := registrytest.DirImage(dir, "", map[string]string{render.DatabaseLabel: "/database/index.db"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func stepFile(i int, ext string) string { return "step" + itoa(i) + "." + ext }

func itoa(i int) string { return strconv.Itoa(i) }

// read reads path, decompressing a .gz path.
func read(t *testing.T, path string) []byte {
	t.Helper()
	b, ok := readMaybe(path)
	if !ok {
		t.Fatalf("%s: not found", path)
	}
	return b
}

// readMaybe reads path, or path.gz decompressed; ok is false when neither
// exists.
func readMaybe(path string) ([]byte, bool) {
	if b, err := os.ReadFile(path); err == nil {
		if strings.HasSuffix(path, ".gz") {
			return gunzip(b), true
		}
		return b, true
	}
	if b, err := os.ReadFile(path + ".gz"); err == nil {
		return gunzip(b), true
	}
	return nil, false
}

func gunzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		panic(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		panic(err)
	}
	return out
}
