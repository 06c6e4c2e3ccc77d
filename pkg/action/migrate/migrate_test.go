package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/render"
)

const fooCatalog = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"example.com/foo:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"example.com/foo:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}}]}
`

const barCatalog = `---
schema: olm.package
name: bar
defaultChannel: alpha
---
schema: olm.channel
name: alpha
package: bar
entries:
- name: bar.v1.0.0
---
schema: olm.bundle
name: bar.v1.0.0
package: bar
image: example.com/bar:v1.0.0
properties:
- type: olm.package
  value: {packageName: bar, version: 1.0.0}
---
schema: example.custom
name: top-level
`

// writeTree creates files (slash paths relative to root) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every regular file under root by slash path.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// expected returns what WriteFS-style output holds for the catalog at dir:
// per package, the package's blobs written with the format's writer.
func expected(t *testing.T, dir string, format declcfg.Format) map[string]string {
	t.Helper()
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*declcfg.DeclarativeConfig{}
	get := func(n string) *declcfg.DeclarativeConfig {
		if groups[n] == nil {
			groups[n] = &declcfg.DeclarativeConfig{}
		}
		return groups[n]
	}
	for _, p := range cfg.Packages {
		get(p.Name).Packages = append(get(p.Name).Packages, p)
	}
	for _, c := range cfg.Channels {
		get(c.Package).Channels = append(get(c.Package).Channels, c)
	}
	for _, b := range cfg.Bundles {
		get(b.Package).Bundles = append(get(b.Package).Bundles, b)
	}
	for _, o := range cfg.Others {
		get(o.Package).Others = append(get(o.Package).Others, o)
	}
	out := map[string]string{}
	for n, c := range groups {
		var buf bytes.Buffer
		if err := declcfg.Write(*c, &buf, format); err != nil {
			t.Fatal(err)
		}
		name := "catalog." + string(format)
		if n != "" {
			name = n + "/" + name
		}
		out[name] = buf.String()
	}
	return out
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		format declcfg.Format
		// existing files in the output directory before the run; nil = the
		// directory does not exist; empty = it exists and is empty.
		existing map[string]string
		force    bool
	}{
		{name: "Success/JSONIntoAbsentDir", format: declcfg.FormatJSON},
		{name: "Success/DefaultFormatIsJSON", format: ""},
		{name: "Success/YAMLIntoEmptyDir", format: declcfg.FormatYAML, existing: map[string]string{}},
		{name: "Success/ForceReplacesContents", format: declcfg.FormatYAML, force: true,
			existing: map[string]string{"old/catalog.json": "{}", "notes.txt": "mine"}},
		{name: "Success/ForceOnEmptyDir", format: declcfg.FormatJSON, force: true, existing: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in")
			writeTree(t, in, map[string]string{"foo/index.json": fooCatalog, "bar.yaml": barCatalog})
			out := filepath.Join(tmp, "out")
			if tt.existing != nil {
				if err := os.Mkdir(out, 0o750); err != nil {
					t.Fatal(err)
				}
				writeTree(t, out, tt.existing)
			}
			var log strings.Builder
			err := Run(ctx, Options{CatalogRef: in, OutputDir: out, Format: tt.format, Force: tt.force,
				Logf: func(f string, a ...any) { log.WriteString(strings.TrimSpace(f) + "\n") }})
			if err != nil {
				t.Fatal(err)
			}
			format := tt.format
			if format == "" {
				format = declcfg.FormatJSON
			}
			if got, want := readTree(t, out), expected(t, in, format); !reflect.DeepEqual(got, want) {
				t.Errorf("output tree:\n%v\nwant:\n%v", got, want)
			}
			if got := names(t, tmp); !reflect.DeepEqual(got, []string{"in", "out"}) {
				t.Errorf("left behind in parent: %v", got)
			}
			if tt.existing != nil {
				st, err := os.Stat(out)
				if err != nil {
					t.Fatal(err)
				}
				if tt.force && len(tt.existing) > 0 && st.Mode().Perm() != 0o750 {
					t.Errorf("mode %v, want the replaced directory's 0750", st.Mode().Perm())
				}
			}
			if want := "rendering catalog %q as file-based catalog\nwrote rendered file-based catalog to %q\n"; log.String() != want {
				t.Errorf("log lines:\n%s", log.String())
			}
		})
	}
}

func TestMigrateForceThroughSymlink(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	writeTree(t, in, map[string]string{"foo.json": fooCatalog})
	target := filepath.Join(tmp, "real")
	writeTree(t, target, map[string]string{"stale.json": "{}"})
	link := filepath.Join(tmp, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), Options{CatalogRef: in, OutputDir: link, Force: true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if got, want := readTree(t, target), expected(t, in, declcfg.FormatJSON); !reflect.DeepEqual(got, want) {
		t.Errorf("target tree %v, want %v", got, want)
	}
}

func TestMigrateErrors(t *testing.T) {
	ctx := context.Background()
	bundleDir := map[string]string{"manifests/csv.yaml": "kind: ClusterServiceVersion\n", "metadata/annotations.yaml": "annotations: {}\n"}
	tests := []struct {
		name     string
		files    map[string]string // input catalog
		existing map[string]string // output dir content (nil = absent)
		outFile  bool              // the output path is a regular file
		level    string
		force    bool
		wantErr  string
		wantIs   error
	}{
		{name: "Error/OutputNotEmpty", files: map[string]string{"foo.json": fooCatalog},
			existing: map[string]string{"x": "mine"}, wantErr: `output dir "OUT" must be empty`},
		{name: "Error/OutputNotEmptyCheckedBeforeRender", files: bundleDir,
			existing: map[string]string{"x": "mine"}, wantErr: `output dir "OUT" must be empty`},
		{name: "Error/OutputIsAFile", files: map[string]string{"foo.json": fooCatalog},
			outFile: true, force: true, wantErr: `output dir "OUT" is not a directory`},
		{name: "Error/UnknownLevel", files: map[string]string{"foo.json": fooCatalog},
			level: "bogus", wantErr: `unknown migration level "bogus"`},
		{name: "Error/BundleDirectoryRefused", files: bundleDir,
			wantErr: `render catalog image: render reference "IN": cannot render bundle directory "IN": not allowed`, wantIs: render.ErrNotAllowed},
		{name: "Error/BadCatalogLeavesNothing", files: map[string]string{"foo.json": "{\"schema\": 5}\n"},
			wantErr: `render catalog image: render reference "IN": `},
		{name: "Error/UnwritablePackageNameLeavesNothing",
			files:   map[string]string{"foo.json": `{"schema":"olm.package","name":"../escape"}`},
			wantErr: `writing "OUT": invalid package name "../escape": must be a single local path element`},
		{name: "Error/ForceKeepsOldContentsOnWriteError", force: true,
			files:    map[string]string{"foo.json": `{"schema":"olm.package","name":"a/b"}`},
			existing: map[string]string{"keep/catalog.json": "{}"},
			wantErr:  `writing "OUT": invalid package name "a/b": must be a single local path element`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in")
			writeTree(t, in, tt.files)
			out := filepath.Join(tmp, "out")
			switch {
			case tt.outFile:
				writeTree(t, tmp, map[string]string{"out": "a file"})
			case tt.existing != nil:
				writeTree(t, out, tt.existing)
			}
			before := map[string]string{}
			if tt.existing != nil {
				before = readTree(t, out)
			}
			err := Run(ctx, Options{CatalogRef: in, OutputDir: out, MigrationLevel: tt.level, Force: tt.force})
			want := strings.NewReplacer("OUT", out, "IN", in).Replace(tt.wantErr)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error = %v, want prefix %s", err, want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.wantIs)
			}
			switch {
			case tt.outFile:
				if b, _ := os.ReadFile(out); string(b) != "a file" {
					t.Errorf("output file changed: %q", b)
				}
			case tt.existing == nil:
				if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("output dir created: %v", err)
				}
			default:
				if got := readTree(t, out); !reflect.DeepEqual(got, before) {
					t.Errorf("output dir changed: %v", got)
				}
			}
			if got := names(t, tmp); !reflect.DeepEqual(got, []string{"in", "out"}) && !reflect.DeepEqual(got, []string{"in"}) {
				t.Errorf("left behind in parent: %v", got)
			}
		})
	}
}

// conformanceCatalogs is ../shared/conformance/catalog from the repo root.
const conformanceCatalogs = "../../../shared/conformance/catalog"

// TestMigrateConformanceCatalogs migrates every catalog of the conformance
// suite with --migrate-level bundle-object-to-csv-metadata and checks that
// the result renders to the same blobs as rendering the input with that
// level, and gets the same validation verdict (every catalog but the two
// invalid ones validates).
func TestMigrateConformanceCatalogs(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(conformanceCatalogs, "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("no conformance suite at %s", conformanceCatalogs)
	}
	// Each level is checked in one format to keep the test quick; the
	// writers' formats are covered by TestMigrate and the render tests.
	for _, run := range []struct {
		level  string
		format declcfg.Format
	}{
		{"bundle-object-to-csv-metadata", declcfg.FormatYAML},
		{"none", declcfg.FormatJSON},
	} {
		for _, in := range dirs {
			t.Run(run.level+"/"+filepath.Base(filepath.Dir(in)), func(t *testing.T) {
				if (testing.Short() || raceEnabled) && dirSize(t, in) > 1<<20 {
					t.Skip("large catalog skipped in -short mode and under the race detector")
				}
				checkMigrated(t, in, run.level, run.format)
			})
		}
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func checkMigrated(t *testing.T, in, level string, format declcfg.Format) {
	t.Helper()
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	if err := Run(ctx, Options{CatalogRef: in, OutputDir: out, MigrationLevel: level, Format: format}); err != nil {
		t.Fatal(err)
	}
	want, err := render.Render(ctx, render.Options{Refs: []string{in}, MigrationLevel: level})
	if err != nil {
		t.Fatal(err)
	}
	got, err := render.Render(ctx, render.Options{Refs: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := blobs(t, got), blobs(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s: the migrated catalog renders %d blobs that differ from the %d of render --migrate-level %s", format, len(g), len(w), level)
	}
	_, gotErr := model.ConvertToModel(*got)
	_, wantErr := model.ConvertToModel(*want)
	if errText(gotErr) != errText(wantErr) {
		t.Errorf("%s: validation of the migrated catalog: %v\nof the input: %v", format, gotErr, wantErr)
	}
	if level == "none" {
		return
	}
	for _, b := range got.Bundles {
		for _, p := range b.Properties {
			if p.Type == "olm.bundle.object" && b.Image != "" {
				t.Errorf("%s: bundle %s still has olm.bundle.object", format, b.Name)
				break
			}
		}
	}
}

// blobs returns cfg as upstream's JSON stream decoded into generic values,
// so that key order inside values does not matter.
func blobs(t *testing.T, cfg *declcfg.DeclarativeConfig) []any {
	t.Helper()
	var buf bytes.Buffer
	if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	var out []any
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	lines := strings.Split(err.Error(), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestMigrateForceInPlace: a catalog is not migrated onto itself, even
// with Force: replacing the directory would also drop what the loader
// ignores there (.indexignore, a README, a .git directory). Nothing is
// touched.
func TestMigrateForceInPlace(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "catalog")
	writeTree(t, dir, map[string]string{"foo/index.json": fooCatalog, "bar.yaml": barCatalog})
	before := readTree(t, dir)
	err := Run(context.Background(), Options{CatalogRef: dir, OutputDir: dir + string(filepath.Separator), Force: true})
	var oe *fsutil.OutputDirError
	if !errors.As(err, &oe) || oe.Reason != "is the input" {
		t.Fatalf("got %v", err)
	}
	if got := readTree(t, dir); !reflect.DeepEqual(got, before) {
		t.Errorf("tree %v, want %v", got, before)
	}
	if got := names(t, tmp); !reflect.DeepEqual(got, []string{"catalog"}) {
		t.Errorf("left behind: %v", got)
	}
}

// TestMigrateCanceled checks that a canceled context writes nothing.
func TestMigrateCanceled(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	writeTree(t, in, map[string]string{"foo.json": fooCatalog})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(tmp, "out")
	if err := Run(ctx, Options{CatalogRef: in, OutputDir: out}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if got := names(t, tmp); !reflect.DeepEqual(got, []string{"in"}) {
		t.Errorf("left behind: %v", got)
	}
}
