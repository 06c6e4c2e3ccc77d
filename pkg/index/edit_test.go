package index_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/index"
)

// editCatalog is two packages, a stranded bundle in each, a deprecation
// and a blob of no package.
func editCatalog() *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	for _, pkg := range []string{"etcd", "foo"} {
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: "olm.package", Name: pkg, DefaultChannel: "stable"})
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: "olm.channel", Package: pkg, Name: "stable", Entries: []declcfg.ChannelEntry{{Name: pkg + ".v1"}, {Name: pkg + ".v2", Replaces: pkg + ".v1"}}})
		for _, b := range []string{".v1", ".v2", ".v0-stranded"} {
			cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: pkg, Name: pkg + b})
		}
		cfg.Deprecations = append(cfg.Deprecations, declcfg.Deprecation{Schema: "olm.deprecations", Package: pkg})
		cfg.Others = append(cfg.Others, declcfg.Meta{Schema: "example.other", Package: pkg})
	}
	cfg.Others = append(cfg.Others, declcfg.Meta{Schema: "example.global"})
	return cfg
}

// packagesOf lists the package of every blob of cfg, "" for none.
func packagesOf(cfg *declcfg.DeclarativeConfig) []string {
	var out []string
	for _, p := range cfg.Packages {
		out = append(out, p.Name)
	}
	for _, c := range cfg.Channels {
		out = append(out, c.Package)
	}
	for _, b := range cfg.Bundles {
		out = append(out, b.Package)
	}
	for _, d := range cfg.Deprecations {
		out = append(out, d.Package)
	}
	for _, m := range cfg.Others {
		out = append(out, m.Package)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestRemovePackages(t *testing.T) {
	cfg, err := index.RemovePackages(editCatalog(), []string{"etcd", "etcd", ""})
	if err != nil {
		t.Fatal(err)
	}
	if got := packagesOf(cfg); !slices.Equal(got, []string{"", "foo"}) {
		t.Errorf("packages left: %q, want foo and the blob of no package", got)
	}
	if len(cfg.Bundles) != 3 || len(cfg.Others) != 2 {
		t.Errorf("foo's blobs were touched: %d bundles, %d others", len(cfg.Bundles), len(cfg.Others))
	}

	// A package the index does not have is an error, naming it; the
	// others are removed all the same (the caller's --permissive).
	cfg, err = index.RemovePackages(editCatalog(), []string{"etcd", "fooo"})
	if err == nil || !strings.Contains(err.Error(), `"fooo"`) || !strings.Contains(err.Error(), "foo") {
		t.Errorf("err = %v, want one naming fooo and suggesting foo", err)
	}
	if got := packagesOf(cfg); !slices.Equal(got, []string{"", "foo"}) {
		t.Errorf("packages left: %q", got)
	}
}

func TestKeepPackages(t *testing.T) {
	cfg, err := index.KeepPackages(editCatalog(), []string{"foo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := packagesOf(cfg); !slices.Equal(got, []string{"", "foo"}) {
		t.Errorf("packages left: %q, want foo and the blob of no package", got)
	}
	// A misspelt name keeps nothing of it, and says so.
	cfg, err = index.KeepPackages(editCatalog(), []string{"etcd", "fo"})
	if err == nil || !strings.Contains(err.Error(), `"fo"`) {
		t.Errorf("err = %v, want one naming fo", err)
	}
	if got := packagesOf(cfg); !slices.Equal(got, []string{"", "etcd"}) {
		t.Errorf("packages left: %q", got)
	}
}

func TestPruneStranded(t *testing.T) {
	cfg := editCatalog()
	got := index.PruneStranded(cfg)
	if want := []string{"etcd/etcd.v0-stranded", "foo/foo.v0-stranded"}; !slices.Equal(got, want) {
		t.Errorf("pruned %q, want %q", got, want)
	}
	if len(cfg.Bundles) != 4 {
		t.Errorf("%d bundles left, want 4", len(cfg.Bundles))
	}
	if got := index.PruneStranded(cfg); len(got) != 0 {
		t.Errorf("second prune removed %q", got)
	}
}
