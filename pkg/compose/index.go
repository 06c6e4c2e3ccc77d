package compose

import (
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// pkgBlobs holds the indices, in cfg's slices, of one package's blobs.
type pkgBlobs struct {
	packages     []int
	channels     []int
	bundles      []int
	deprecations []int
	others       []int
}

// byPackage groups the blobs of cfg by package name ("" for the Others
// that belong to no package, and for channels, bundles and deprecations
// without a package, which writers drop).
func byPackage(cfg *declcfg.DeclarativeConfig) map[string]*pkgBlobs {
	out := map[string]*pkgBlobs{}
	get := func(name string) *pkgBlobs {
		b := out[name]
		if b == nil {
			b = &pkgBlobs{}
			out[name] = b
		}
		return b
	}
	for i := range cfg.Packages {
		b := get(cfg.Packages[i].Name)
		b.packages = append(b.packages, i)
	}
	for i := range cfg.Channels {
		b := get(cfg.Channels[i].Package)
		b.channels = append(b.channels, i)
	}
	for i := range cfg.Bundles {
		b := get(cfg.Bundles[i].Package)
		b.bundles = append(b.bundles, i)
	}
	for i := range cfg.Deprecations {
		b := get(cfg.Deprecations[i].Package)
		b.deprecations = append(b.deprecations, i)
	}
	for i := range cfg.Others {
		b := get(cfg.Others[i].Package)
		b.others = append(b.others, i)
	}
	return out
}

// firstPos is where the package's blobs start: its olm.package blob, else
// its first blob of any kind.
func (b *pkgBlobs) firstPos(cfg *declcfg.DeclarativeConfig) declcfg.Position {
	switch {
	case len(b.packages) > 0:
		return cfg.Packages[b.packages[0]].Pos
	case len(b.channels) > 0:
		return cfg.Channels[b.channels[0]].Pos
	case len(b.bundles) > 0:
		return cfg.Bundles[b.bundles[0]].Pos
	case len(b.deprecations) > 0:
		return cfg.Deprecations[b.deprecations[0]].Pos
	case len(b.others) > 0:
		return cfg.Others[b.others[0]].Pos
	}
	return declcfg.Position{}
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stripBundle is b with only what graph.New reads: its identity and its
// olm.package properties (copied, so b's blob can be freed). Parsing every
// property, as graph.New would on full bundles, decodes every manifest.
func stripBundle(b *declcfg.Bundle) declcfg.Bundle {
	out := declcfg.Bundle{Schema: b.Schema, Name: b.Name, Package: b.Package, Pos: b.Pos}
	for _, p := range b.Properties {
		if p.Type == property.TypePackage {
			out.Properties = append(out.Properties, property.Property{Type: p.Type, Value: append([]byte(nil), p.Value...)})
		}
	}
	return out
}

// graphOf builds the upgrade graphs of the packages of cfg for which keep
// is true (all when keep is nil), reading only the olm.package property of
// each bundle.
func graphOf(cfg *declcfg.DeclarativeConfig, keep func(pkg string) bool) (*graph.Graph, error) {
	sub := &declcfg.DeclarativeConfig{}
	for _, p := range cfg.Packages {
		if keep == nil || keep(p.Name) {
			sub.Packages = append(sub.Packages, declcfg.Package{Schema: p.Schema, Name: p.Name, DefaultChannel: p.DefaultChannel, Pos: p.Pos})
		}
	}
	for _, c := range cfg.Channels {
		if keep == nil || keep(c.Package) {
			sub.Channels = append(sub.Channels, c)
		}
	}
	for i := range cfg.Bundles {
		if keep == nil || keep(cfg.Bundles[i].Package) {
			sub.Bundles = append(sub.Bundles, stripBundle(&cfg.Bundles[i]))
		}
	}
	for _, d := range cfg.Deprecations {
		if keep == nil || keep(d.Package) {
			sub.Deprecations = append(sub.Deprecations, d)
		}
	}
	g, err := graph.New(sub)
	if err != nil {
		return nil, err
	}
	// Diffs and re-stitching compare every edge: bound them.
	if err := g.CheckEdges(graph.MaxEdges); err != nil {
		return nil, err
	}
	return g, nil
}
