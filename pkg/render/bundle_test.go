package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

type testBundle struct {
	pkg, version, replaces, skipRange string
	skips                             []string
	channels, defaultChannel          string
}

func (tb testBundle) name() string { return tb.pkg + ".v" + tb.version }

// writeBundle writes a minimal bundle directory and returns its path.
func writeBundle(t *testing.T, root string, tb testBundle) string {
	t.Helper()
	dir := filepath.Join(root, tb.name())
	var csv strings.Builder
	fmt.Fprintf(&csv, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: %s\n", tb.name())
	if tb.skipRange != "" {
		fmt.Fprintf(&csv, "  annotations:\n    olm.skipRange: '%s'\n", tb.skipRange)
	}
	fmt.Fprintf(&csv, "spec:\n  version: %s\n", tb.version)
	if tb.replaces != "" {
		fmt.Fprintf(&csv, "  replaces: %s\n", tb.replaces)
	}
	if len(tb.skips) > 0 {
		fmt.Fprintf(&csv, "  skips: [%s]\n", strings.Join(tb.skips, ", "))
	}
	ann := fmt.Sprintf("annotations:\n  operators.operatorframework.io.bundle.package.v1: %s\n  operators.operatorframework.io.bundle.channels.v1: %s\n", tb.pkg, tb.channels)
	if tb.defaultChannel != "" {
		ann += fmt.Sprintf("  operators.operatorframework.io.bundle.channel.default.v1: %s\n", tb.defaultChannel)
	}
	for name, data := range map[string]string{
		"manifests/csv.yaml":        csv.String(),
		"metadata/annotations.yaml": ann,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRenderBundleDirImageTemplate(t *testing.T) {
	dir := writeBundle(t, t.TempDir(), testBundle{pkg: "foo", version: "1.2.3", channels: "stable"})
	cases := []struct {
		name, tmpl, want, wantErr string
	}{
		{name: "Success/NoTemplate", want: ""},
		{name: "Success/Template", tmpl: "quay.io/x/{{.Package}}-bundle:v{{.Version}}-{{.Name}}", want: "quay.io/x/foo-bundle:v1.2.3-foo.v1.2.3"},
		{name: "Error/Execute", tmpl: "{{.Nope}}", wantErr: "failed to execute image reference template"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Refs: []string{dir}, MigrationLevel: "all"}
			if tc.tmpl != "" {
				opts.ImageRefTemplate = template.Must(template.New("").Parse(tc.tmpl))
			}
			cfg, err := Render(context.Background(), opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b := cfg.Bundles[0]
			if b.Image != tc.want {
				t.Errorf("image = %q, want %q", b.Image, tc.want)
			}
			// With an image, migration replaces the objects with metadata.
			last := b.Properties[len(b.Properties)-1].Type
			if tc.want != "" && last != property.TypeCSVMetadata || tc.want == "" && last != property.TypeBundleObject {
				t.Errorf("last property %s for image %q", last, tc.want)
			}
		})
	}
}

func TestRenderBundleDirError(t *testing.T) {
	dir := writeBundle(t, t.TempDir(), testBundle{pkg: "foo", version: "1.2.3", channels: "stable"})
	if err := os.Remove(filepath.Join(dir, "manifests", "csv.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "cm.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Render(context.Background(), Options{Refs: []string{dir}})
	if want := fmt.Sprintf("render reference %q: manifests: no csv in bundle", dir); err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func channelsOf(cfg *declcfg.DeclarativeConfig) map[string][]declcfg.ChannelEntry {
	out := map[string][]declcfg.ChannelEntry{}
	for _, c := range cfg.Channels {
		out[c.Package+"/"+c.Name] = c.Entries
	}
	return out
}

func TestDeriveChannels(t *testing.T) {
	foo1 := testBundle{pkg: "foo", version: "0.1.0", channels: "beta", defaultChannel: "stable"}
	foo2 := testBundle{pkg: "foo", version: "0.2.0", replaces: "foo.v0.1.0", skips: []string{"foo.v0.1.1"}, skipRange: "<0.2.0", channels: "beta,stable", defaultChannel: "stable"}
	foo10 := testBundle{pkg: "foo", version: "0.10.0", replaces: "foo.v0.2.0", channels: "stable"}
	bar := testBundle{pkg: "bar", version: "1.0.0", channels: "alpha"}
	cases := []struct {
		name     string
		bundles  []testBundle
		dupFirst bool
		wantPkgs map[string]string // package -> default channel
		wantChs  map[string][]declcfg.ChannelEntry
		wantErr  string
	}{
		{
			name:     "Success/MergedAcrossBundles",
			bundles:  []testBundle{foo10, foo2, bar, foo1},
			wantPkgs: map[string]string{"foo": "stable", "bar": "alpha"},
			wantChs: map[string][]declcfg.ChannelEntry{
				"foo/beta": {{Name: "foo.v0.1.0"}, {Name: "foo.v0.2.0", Replaces: "foo.v0.1.0", Skips: []string{"foo.v0.1.1"}, SkipRange: "<0.2.0"}},
				"foo/stable": {
					{Name: "foo.v0.2.0", Replaces: "foo.v0.1.0", Skips: []string{"foo.v0.1.1"}, SkipRange: "<0.2.0"},
					{Name: "foo.v0.10.0", Replaces: "foo.v0.2.0"},
				},
				"bar/alpha": {{Name: "bar.v1.0.0"}},
			},
		},
		{
			name:     "Success/SameBundleTwice",
			bundles:  []testBundle{bar, bar},
			dupFirst: true,
			wantPkgs: map[string]string{"bar": "alpha"},
			wantChs:  map[string][]declcfg.ChannelEntry{"bar/alpha": {{Name: "bar.v1.0.0"}}},
		},
		{
			name:    "Error/DefaultChannelWithoutBundles",
			bundles: []testBundle{foo1},
			wantErr: `package "foo": default channel "stable" (from bundle "foo.v0.1.0") has no bundles: the bundles are in beta`,
		},
		{
			name:    "Error/DefaultChannelConflict",
			bundles: []testBundle{foo2, {pkg: "foo", version: "0.3.0", channels: "beta", defaultChannel: "beta"}},
			wantErr: `package "foo": bundles "foo.v0.2.0" and "foo.v0.3.0" disagree on the default channel ("stable" and "beta")`,
		},
		{
			name:    "Error/NoDefaultSeveralChannels",
			bundles: []testBundle{{pkg: "foo", version: "0.1.0", channels: "a,b"}},
			wantErr: `package "foo": no bundle names a default channel`,
		},
		{
			name:    "Error/NoChannels",
			bundles: []testBundle{{pkg: "foo", version: "0.1.0", channels: "", defaultChannel: "x"}},
			wantErr: `bundle "foo.v0.1.0" names no channel`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var refs []string
			for i, b := range tc.bundles {
				if tc.dupFirst && i > 0 {
					refs = append(refs, refs[0])
					continue
				}
				refs = append(refs, writeBundle(t, root, b))
			}
			cfg, err := Render(context.Background(), Options{Refs: refs, WithChannels: true})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotPkgs := map[string]string{}
			for _, p := range cfg.Packages {
				gotPkgs[p.Name] = p.DefaultChannel
			}
			if !reflect.DeepEqual(gotPkgs, tc.wantPkgs) {
				t.Errorf("packages = %v, want %v", gotPkgs, tc.wantPkgs)
			}
			if got := channelsOf(cfg); !reflect.DeepEqual(got, tc.wantChs) {
				t.Errorf("channels:\n got %+v\nwant %+v", got, tc.wantChs)
			}
			for _, b := range cfg.Bundles {
				for _, p := range b.Properties {
					if !strings.HasPrefix(p.Type, "olm.") {
						t.Errorf("bundle %s carries a property of type %q", b.Name, p.Type)
					}
				}
			}
		})
	}
}

func TestDeriveChannelsExistingCatalog(t *testing.T) {
	cfg := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: "olm.package", Name: "foo", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: "olm.channel", Package: "foo", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: "foo.v0.1.0"}}}},
	}
	dir := writeBundle(t, t.TempDir(), testBundle{pkg: "foo", version: "0.2.0", replaces: "foo.v0.1.0", channels: "stable", defaultChannel: "stable"})
	out, err := renderBundleFS(context.Background(), os.DirFS(dir), "", Options{WithChannels: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.hint == nil {
		t.Fatal("no channel hint beside the bundle")
	}
	hints := []bundleHint{{index: len(cfg.Bundles), hint: *out.hint}}
	cfg.Merge(out.cfg)
	if err := deriveChannels(cfg, hints); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Packages) != 1 || len(cfg.Channels) != 1 {
		t.Fatalf("got %d packages, %d channels; want the existing ones", len(cfg.Packages), len(cfg.Channels))
	}
	want := []declcfg.ChannelEntry{{Name: "foo.v0.1.0"}, {Name: "foo.v0.2.0", Replaces: "foo.v0.1.0"}}
	if !reflect.DeepEqual(cfg.Channels[0].Entries, want) {
		t.Errorf("entries = %+v, want %+v", cfg.Channels[0].Entries, want)
	}
}

// TestRenderBundleFSWithChannels: the exported RenderBundleFS derives the
// package and channel of its one bundle, and no private data leaks into
// its blobs.
func TestRenderBundleFSWithChannels(t *testing.T) {
	dir := writeBundle(t, t.TempDir(), testBundle{pkg: "foo", version: "0.2.0", replaces: "foo.v0.1.0", channels: "stable,fast", defaultChannel: "stable"})
	cfg, err := RenderBundleFS(context.Background(), os.DirFS(dir), "", Options{WithChannels: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Packages) != 1 || cfg.Packages[0].DefaultChannel != "stable" || len(cfg.Channels) != 2 || len(cfg.Bundles) != 1 {
		t.Fatalf("got %+v", cfg)
	}
	for _, p := range cfg.Bundles[0].Properties {
		if !strings.HasPrefix(p.Type, "olm.") {
			t.Errorf("bundle carries a property of type %q", p.Type)
		}
	}
	plain, err := RenderBundleFS(context.Background(), os.DirFS(dir), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Packages) != 0 || len(plain.Channels) != 0 || !reflect.DeepEqual(plain.Bundles, cfg.Bundles) {
		t.Errorf("without WithChannels: %+v", plain)
	}
}

// TestDeriveChannelsNodeHealthCheck renders the two node-healthcheck
// bundles of the corpus with --with-channels: one package, one channel
// whose entries carry what the CSVs say.
func TestDeriveChannelsNodeHealthCheck(t *testing.T) {
	var refs []string
	for _, v := range []string{"0.8.0", "0.7.0"} {
		dir := filepath.Join(conformanceBundleDir, "node-healthcheck-operator@"+v, "input")
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("conformance corpus not available (%v)", err)
		}
		refs = append(refs, dir)
	}
	ctx := context.Background()
	opts := Options{Refs: refs, WithChannels: true}
	cfg, err := Render(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Packages) != 1 || cfg.Packages[0].Name != "node-healthcheck-operator" || cfg.Packages[0].DefaultChannel != "stable" {
		t.Fatalf("packages = %+v", cfg.Packages)
	}
	want := map[string][]declcfg.ChannelEntry{
		"node-healthcheck-operator/stable": {
			{Name: "node-healthcheck-operator.v0.7.0", Replaces: "node-healthcheck-operator.v0.6.1", SkipRange: ">=0.6.0 <0.7.0"},
			{Name: "node-healthcheck-operator.v0.8.0", Replaces: "node-healthcheck-operator.v0.7.0", SkipRange: ">=0.6.0 <0.8.1"},
		},
	}
	if got := channelsOf(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("channels:\n got %+v\nwant %+v", got, want)
	}
	if len(cfg.Bundles) != 2 || cfg.Bundles[0].Name != "node-healthcheck-operator.v0.8.0" {
		t.Errorf("bundles must stay in argument order")
	}
}

// TestPrefetchBundleDirs checks that rendering bundle directories ahead of
// Render's loop changes neither the output nor which error is reported.
func TestPrefetchBundleDirs(t *testing.T) {
	root := t.TempDir()
	good1 := writeBundle(t, root, testBundle{pkg: "foo", version: "0.1.0", channels: "stable"})
	good2 := writeBundle(t, root, testBundle{pkg: "foo", version: "0.2.0", replaces: "foo.v0.1.0", channels: "stable"})
	bad := func(name string) string {
		dir := writeBundle(t, root, testBundle{pkg: name, version: "1.0.0", channels: "stable"})
		if err := os.Remove(filepath.Join(dir, "metadata", "annotations.yaml")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	bad1, bad2 := bad("bad1"), bad("bad2")
	cases := []struct {
		name    string
		refs    []string
		wantErr string
	}{
		{name: "Success/SameOutput", refs: []string{good2, good1, good2}},
		{name: "Error/FirstFailingRefInOrder", refs: []string{good1, bad2, bad1}, wantErr: fmt.Sprintf("render reference %q: metadata: Could not find annotations file", bad2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			opts := Options{Refs: tc.refs, WithChannels: true}
			want, wantErr := render(ctx, opts, false)
			got, err := render(ctx, opts, true)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || wantErr == nil || wantErr.Error() != tc.wantErr {
					t.Fatalf("errors %v (prefetch) and %v (in order), want %s", err, wantErr, tc.wantErr)
				}
				return
			}
			if err != nil || wantErr != nil {
				t.Fatalf("errors %v, %v", err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("prefetch changed the output")
			}
			if len(got.Bundles) != 3 {
				t.Errorf("got %d bundles, want 3 (a ref given twice renders twice)", len(got.Bundles))
			}
		})
	}
}
