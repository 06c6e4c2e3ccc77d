package resolve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Catalog is one catalog given to the resolver: a name, a priority
// (CatalogSource spec.priority; higher is preferred) and its blobs.
type Catalog struct {
	Name     string
	Priority int
	Config   *declcfg.DeclarativeConfig
}

// catalog indexes one Catalog.
type catalog struct {
	name     string
	priority int
	pkgs     map[string]*pkgIndex
	// groups are every (package, channel) in the order dependency
	// candidates are taken from a catalog: default channels first, then
	// by package name, then by channel name.
	groups []*group
	// providers maps an API to the packages whose bundles provide it.
	providers  map[property.GVK][]string
	hasRecords bool
}

type pkgIndex struct {
	name           string
	defaultChannel string
	channels       map[string]*group
	channelNames   []string // sorted
	bundles        map[string]*bundle
	groups         []*group // this package's groups, in catalog order
}

// group is one channel of one package of one catalog: its records in
// entry order and, computed on first use, its replaces chain.
type group struct {
	cat       *catalog
	pkg       *pkgIndex
	channel   string
	isDefault bool
	order     int
	records   []*record

	chainDone bool
	chain     []*record
	chainErr  error
}

// record is what OLM's resolver sees for one channel entry: a bundle in
// one channel of one catalog (the same bundle in two channels is two
// records), or an installed bundle.
type record struct {
	bundle *bundle
	// cat is nil for an installed bundle.
	cat       *catalog
	channel   string
	isDefault bool
	entry     declcfg.ChannelEntry
	skipRange *versionrange.SkipRange // nil when absent or unparsable (OLM drops it)
	// installedFrom is the catalog an installed bundle came from.
	installedFrom *catalog
}

func (r *record) installed() bool { return r.cat == nil }

// bundle is one olm.bundle blob with the properties the resolver reads.
type bundle struct {
	name string
	// pkg is the bundle's package for every matching purpose: the
	// packageName of its olm.package property.
	pkg         string
	blobPackage string
	versionText string
	version     semver.Version
	versionOK   bool
	// props are the properties as OLM's resolver sees them (§1.1):
	// every property but olm.bundle.object and olm.csv.metadata, in file
	// order, then a copy of each olm.gvk.required and
	// olm.package.required. nOwn is the number before the copies.
	props      []property.Property
	nOwn       int
	gvks       []property.GVK // provided APIs, de-duplicated, in order
	labels     []string
	deprecated bool
	pos        declcfg.Position
	catalog    string

	celDone  bool
	celProps []any
	celErr   error
}

// newCatalog indexes c. Errors are catalogs OLM could not serve: a
// channel entry without its bundle blob, two blobs for one bundle.
func newCatalog(c Catalog) (*catalog, error) {
	cat := &catalog{name: c.Name, priority: c.Priority, pkgs: map[string]*pkgIndex{}, providers: map[property.GVK][]string{}}
	if c.Config == nil {
		return cat, nil
	}
	pkgOf := func(name string) *pkgIndex {
		p := cat.pkgs[name]
		if p == nil {
			p = &pkgIndex{name: name, channels: map[string]*group{}, bundles: map[string]*bundle{}}
			cat.pkgs[name] = p
		}
		return p
	}
	for _, p := range c.Config.Packages {
		pkgOf(p.Name).defaultChannel = p.DefaultChannel
	}
	for i := range c.Config.Bundles {
		b := &c.Config.Bundles[i]
		p := pkgOf(b.Package)
		if _, dup := p.bundles[b.Name]; dup {
			return nil, fmt.Errorf("catalog %q: %s: package %q has two bundles named %q", c.Name, b.Pos, b.Package, b.Name)
		}
		nb, err := newBundle(b, c.Name)
		if err != nil {
			return nil, err
		}
		p.bundles[b.Name] = nb
	}
	for _, ch := range c.Config.Channels {
		p := pkgOf(ch.Package)
		g := p.channels[ch.Name]
		if g == nil {
			g = &group{cat: cat, pkg: p, channel: ch.Name}
			p.channels[ch.Name] = g
		}
		for _, e := range ch.Entries {
			b := p.bundles[e.Name]
			if b == nil {
				return nil, fmt.Errorf("catalog %q: %s: channel %q of package %q lists bundle %q, which has no olm.bundle blob", c.Name, ch.Pos, ch.Name, ch.Package, e.Name)
			}
			r := &record{bundle: b, cat: cat, channel: ch.Name, entry: e}
			if e.SkipRange != "" {
				if sr, err := versionrange.ParseSkipRange(e.SkipRange); err == nil {
					r.skipRange = sr
				}
			}
			g.records = append(g.records, r)
		}
	}
	for _, p := range cat.pkgs {
		for name, g := range p.channels {
			if len(g.records) == 0 {
				delete(p.channels, name) // OLM sees no records, so no channel
				continue
			}
			g.isDefault = name == p.defaultChannel
			for _, r := range g.records {
				r.isDefault = g.isDefault
			}
			p.channelNames = append(p.channelNames, name)
			cat.groups = append(cat.groups, g)
			cat.hasRecords = true
		}
		sort.Strings(p.channelNames)
	}
	sort.Slice(cat.groups, func(i, j int) bool {
		a, b := cat.groups[i], cat.groups[j]
		if a.isDefault != b.isDefault {
			return a.isDefault
		}
		if a.pkg.name != b.pkg.name {
			return a.pkg.name < b.pkg.name
		}
		return a.channel < b.channel
	})
	for i, g := range cat.groups {
		g.order = i
		g.pkg.groups = append(g.pkg.groups, g)
	}
	seen := map[property.GVK]map[string]bool{}
	for _, g := range cat.groups {
		for _, r := range g.records {
			for _, gvk := range r.bundle.gvks {
				if seen[gvk] == nil {
					seen[gvk] = map[string]bool{}
				}
				if !seen[gvk][g.pkg.name] {
					seen[gvk][g.pkg.name] = true
					cat.providers[gvk] = append(cat.providers[gvk], g.pkg.name)
				}
			}
		}
	}
	return cat, nil
}

// newBundle reads the properties the resolver uses. Values of the types it
// interprets must be valid JSON (the loader guarantees it for FBC).
func newBundle(b *declcfg.Bundle, catName string) (*bundle, error) {
	nb := &bundle{name: b.Name, blobPackage: b.Package, pos: b.Pos, catalog: catName}
	var copies []property.Property
	hasPkg := false
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			continue
		case property.TypePackage:
			if !hasPkg {
				var v property.Package
				if err := json.Unmarshal(p.Value, &v); err != nil {
					return nil, fmt.Errorf("catalog %q: %s: bundle %q: parse %s: %w", catName, b.Pos, b.Name, p.Type, err)
				}
				hasPkg = true
				nb.pkg, nb.versionText = v.PackageName, v.Version
			}
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, fmt.Errorf("catalog %q: %s: bundle %q: parse %s: %w", catName, b.Pos, b.Name, p.Type, err)
			}
			if !containsGVK(nb.gvks, v) {
				nb.gvks = append(nb.gvks, v)
			}
		case property.TypeLabel:
			// OLM's label predicate skips values it cannot decode.
			var v struct {
				Label string `json:"label"`
			}
			if json.Unmarshal(p.Value, &v) == nil {
				nb.labels = append(nb.labels, v.Label)
			}
		case property.TypeDeprecated:
			nb.deprecated = true
		case property.TypeGVKRequired, property.TypePackageRequired:
			copies = append(copies, p)
		}
		nb.props = append(nb.props, p)
	}
	if !hasPkg {
		// OLM adds the olm.package property a bundle lacks.
		nb.pkg = b.Package
		v, _ := property.MarshalNoEscape(property.Package{PackageName: b.Package})
		nb.props = append(nb.props, property.Property{Type: property.TypePackage, Value: v})
	}
	nb.nOwn = len(nb.props)
	nb.props = append(nb.props, copies...)
	if v, err := semver.Parse(nb.versionText); err == nil {
		nb.version, nb.versionOK = v, true
	}
	return nb, nil
}

func containsGVK(list []property.GVK, g property.GVK) bool {
	for _, x := range list {
		if x == g {
			return true
		}
	}
	return false
}

// celProperties returns the bundle's properties as CEL sees them: a list
// of {"type": string, "value": decoded JSON}.
func (b *bundle) celProperties() ([]any, error) {
	if !b.celDone {
		b.celDone = true
		out := make([]any, 0, len(b.props))
		for _, p := range b.props {
			var v any
			if err := json.Unmarshal(p.Value, &v); err != nil {
				b.celErr = fmt.Errorf("bundle %q: property %q: %w", b.name, p.Type, err)
				break
			}
			out = append(out, map[string]any{"type": p.Type, "value": v})
		}
		b.celProps = out
	}
	return b.celProps, b.celErr
}

// chainOrder orders records of one channel as OLM's sortChannel does
// (§2): from the one entry no other entry replaces or skips, follow
// replaces; entries some entry skips are walked through but left out, and
// entries off the chain are dropped.
func chainOrder(recs []*record, pkg, channel string) ([]*record, error) {
	byName := make(map[string]*record, len(recs))
	for _, r := range recs {
		if _, ok := byName[r.bundle.name]; !ok {
			byName[r.bundle.name] = r
		}
	}
	replaced := map[string]bool{}
	skipped := map[string]bool{}
	for _, r := range recs {
		if _, ok := byName[r.entry.Replaces]; ok {
			replaced[r.entry.Replaces] = true
		}
		for _, s := range r.entry.Skips {
			skipped[s] = true
			if _, ok := byName[s]; ok {
				replaced[s] = true
			}
		}
	}
	var heads []*record
	for _, r := range recs {
		if !replaced[r.bundle.name] && byName[r.bundle.name] == r {
			heads = append(heads, r)
		}
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", channel, pkg)
	}
	var chains [][]*record
	for _, h := range heads {
		var chain []*record
		visited := map[string]bool{}
		for cur := h; cur != nil; cur = byName[cur.entry.Replaces] {
			if visited[cur.bundle.name] {
				return nil, fmt.Errorf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", h.bundle.name, channel, pkg)
			}
			visited[cur.bundle.name] = true
			if !skipped[cur.bundle.name] {
				chain = append(chain, cur)
			}
		}
		chains = append(chains, chain)
	}
	if len(chains) > 1 {
		var desc []string
		for _, c := range chains {
			var names []string
			for _, r := range c {
				names = append(names, r.bundle.name)
			}
			desc = append(desc, strings.Join(names, " -> "))
		}
		return nil, fmt.Errorf("a unique replacement chain within a channel is required to determine the relative order between channel entries, but %d replacement chains were found in channel %q of package %q: %s", len(chains), channel, pkg, strings.Join(desc, ", "))
	}
	return chains[0], nil
}

// chainOf returns the group's chain, computed once.
func (g *group) chainOf() ([]*record, error) {
	if !g.chainDone {
		g.chainDone = true
		g.chain, g.chainErr = chainOrder(g.records, g.pkg.name, g.channel)
	}
	return g.chain, g.chainErr
}
