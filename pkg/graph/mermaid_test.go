package graph

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// bundle builds an olm.bundle with a single olm.package property.
func bundle(pkg, name, version string) declcfg.Bundle {
	v, _ := json.Marshal(property.Package{PackageName: pkg, Version: version})
	return declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: pkg, Name: name,
		Properties: []property.Property{{Type: property.TypePackage, Value: v}}}
}

func channel(pkg, name string, entries ...declcfg.ChannelEntry) declcfg.Channel {
	return declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name, Entries: entries}
}

// mermaidFixture is a two-package catalog exercising every edge kind,
// repeated skips, deprecations and a channel name shared by both packages.
func mermaidFixture() *declcfg.DeclarativeConfig {
	return &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "foo", DefaultChannel: "stable"}, {Schema: declcfg.SchemaPackage, Name: "bar", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{
			channel("foo", "stable",
				declcfg.ChannelEntry{Name: "foo.v1"},
				declcfg.ChannelEntry{Name: "foo.v2", Replaces: "foo.v1"},
				declcfg.ChannelEntry{Name: "foo.v3", Replaces: "foo.v2", Skips: []string{"foo.v2"}},
				declcfg.ChannelEntry{Name: "foo.v4", Replaces: "foo.v3", Skips: []string{"foo.v2"}, SkipRange: "<4.0.0"},
			),
			channel("foo", "candidate",
				declcfg.ChannelEntry{Name: "foo.v1"},
				declcfg.ChannelEntry{Name: "foo.v5", Replaces: "foo.v1", SkipRange: "not-a-range"},
			),
			channel("bar", "stable",
				declcfg.ChannelEntry{Name: "bar.v1"},
				declcfg.ChannelEntry{Name: "bar.v2", Replaces: "bar.v1", Skips: []string{"bar.v1"}},
			),
		},
		Bundles: []declcfg.Bundle{
			bundle("foo", "foo.v1", "1.0.0"), bundle("foo", "foo.v2", "2.0.0"), bundle("foo", "foo.v3", "3.0.0"),
			bundle("foo", "foo.v4", "4.0.0"), bundle("foo", "foo.v5", "5.0.0-rc.1"),
			bundle("bar", "bar.v1", "1.0.0"), bundle("bar", "bar.v2", "2.0.0"),
		},
		Deprecations: []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Package: "bar", Entries: []declcfg.DeprecationEntry{
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaPackage}, Message: "bar is gone"},
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaChannel, Name: "candidate"}, Message: "no candidates"},
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "bar.v1"}, Message: "old"},
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "foo.v1"}, Message: "matched by name only"},
		}}},
	}
}

func TestWriteMermaid(t *testing.T) {
	tests := []struct {
		name     string
		opts     MermaidOptions
		golden   string
		warnings string
	}{
		{name: "Success/default", golden: "mermaid-default.mmd",
			warnings: `warning: ignoring invalid SkipRange for package/edge "foo"/"foo.v5": Could not get version from string: "not-a-range"` + "\n"},
		{name: "Success/v0 semantics", opts: MermaidOptions{V0Semantics: true}, golden: "mermaid-v0.mmd"},
		{name: "Success/package name", opts: MermaidOptions{PackageName: "bar"}, golden: "mermaid-package.mmd"},
		{name: "Success/minimum edge", opts: MermaidOptions{MinimumEdge: "foo.v2"}, golden: "mermaid-minedge.mmd"},
		{name: "Success/minimum edge v0", opts: MermaidOptions{MinimumEdge: "foo.v3", V0Semantics: true}, golden: "mermaid-minedge-v0.mmd"},
		{name: "Success/unknown package", opts: MermaidOptions{PackageName: "nope"}, golden: "mermaid-empty.mmd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, warn bytes.Buffer
			tt.opts.Warnings = &warn
			if err := WriteMermaid(mermaidFixture(), &out, tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tt.golden), out.Bytes())
			if tt.warnings != "" && warn.String() != tt.warnings {
				t.Errorf("warnings = %q, want %q", warn.String(), tt.warnings)
			}
		})
	}
}

func TestWriteMermaidErrors(t *testing.T) {
	twoPkgProps := bundle("foo", "foo.v1", "1.0.0")
	twoPkgProps.Properties = append(twoPkgProps.Properties, twoPkgProps.Properties[0])
	tests := []struct {
		name    string
		cfg     *declcfg.DeclarativeConfig
		opts    MermaidOptions
		wantErr string
	}{
		{name: "Error/unknown minimum edge", cfg: mermaidFixture(), opts: MermaidOptions{MinimumEdge: "foo.v9"},
			wantErr: `unknown minimum edge name: "foo.v9"`},
		{name: "Error/two olm.package properties", cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{twoPkgProps}},
			wantErr: `bundle "foo.v1" has multiple "olm.package" properties, expected exactly 1`},
		{name: "Error/no olm.package property", cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{{Name: "x"}}},
			wantErr: `bundle "x" has multiple "olm.package" properties, expected exactly 1`},
		{name: "Error/bad version", cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{bundle("foo", "foo.v1", "v1.0.0")}},
			wantErr: `bundle "foo.v1" has invalid version "v1.0.0": Invalid character(s) found in major number "v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := WriteMermaid(tt.cfg, &out, tt.opts)
			checkErr(t, err, tt.wantErr)
			if out.Len() != 0 {
				t.Errorf("wrote %d bytes on error", out.Len())
			}
		})
	}
}

func TestWriteMermaidKeepsInput(t *testing.T) {
	cfg := mermaidFixture()
	if err := WriteMermaid(cfg, &bytes.Buffer{}, MermaidOptions{}); err != nil {
		t.Fatal(err)
	}
	if cfg.Channels[0].Name != "stable" || cfg.Channels[1].Name != "candidate" {
		t.Errorf("WriteMermaid reordered the caller's channels")
	}
}

// TestWriteMermaidConformance reproduces every render-graph run of the
// conformance suite's catalogs byte for byte.
func TestWriteMermaidConformance(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "conformance", "catalog")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "render-graph.args"))
	if err != nil || len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", root)
	}
	for _, args := range dirs {
		dir := filepath.Dir(args)
		t.Run("Success/"+filepath.Base(dir), func(t *testing.T) {
			a, err := os.ReadFile(args)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(a)); strings.Join(got, " ") != "alpha render-graph input" {
				t.Skipf("args %q not handled by this test", got)
			}
			want, err := os.ReadFile(filepath.Join(dir, "render-graph.stdout"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := loadCatalog(t, filepath.Join(dir, "input"))
			var out bytes.Buffer
			if err := WriteMermaid(cfg, &out, MermaidOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("output differs from upstream (%d bytes, want %d)", out.Len(), len(want))
			}
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
