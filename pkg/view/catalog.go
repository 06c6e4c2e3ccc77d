package view

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/icon"
)

// Catalog is one loaded catalog and what the pages need to find in it.
type Catalog struct {
	// Source names the catalog on the pages (the reference it was loaded
	// from).
	Source string
	Config *declcfg.DeclarativeConfig
	Graph  *graph.Graph

	prefix   string // URL prefix of its pages: "", "/old" or "/new"
	packages map[string]*pkgIndex
	names    []string // package names, sorted

	// The catalog page's rows and search texts, by name, computed once.
	rowsOnce sync.Once
	rows     []PackageRow
	hay      []string
}

// pkgIndex holds one package's blobs.
type pkgIndex struct {
	name    string
	blob    *declcfg.Package // nil when the package has no olm.package blob
	graph   *graph.PackageGraph
	bundles map[string]*declcfg.Bundle // first bundle of each name
	// deprecation messages, by "schema\x00name" ("olm.package\x00" for
	// the package itself)
	deprecations map[string]string
	// icon: detected media type and whether it can be shown
	iconType string
	iconOK   bool
}

// Icon limits: a package icon larger than maxIcon bytes is not served (the
// page shows a placeholder and says why).
const maxIcon = 1 << 20

// servableIcons are the media types served as package icons: raster
// images browsers decode, and SVG, which is only ever shown through <img>
// (no scripts run there) and served with a sandboxing CSP.
var servableIcons = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/svg+xml": true,
}

// NewCatalog indexes a loaded catalog and its graph (graph.New(cfg)).
func NewCatalog(source string, cfg *declcfg.DeclarativeConfig, g *graph.Graph) *Catalog {
	c := &Catalog{Source: source, Config: cfg, Graph: g, packages: map[string]*pkgIndex{}}
	get := func(name string) *pkgIndex {
		p := c.packages[name]
		if p == nil {
			p = &pkgIndex{name: name, bundles: map[string]*declcfg.Bundle{}, deprecations: map[string]string{}}
			c.packages[name] = p
		}
		return p
	}
	for i := range cfg.Packages {
		pk := &cfg.Packages[i]
		p := get(pk.Name)
		if p.blob == nil {
			p.blob = pk
			if pk.Icon != nil && len(pk.Icon.Data) > 0 {
				p.iconType = icon.MediaType(pk.Icon.Data)
				p.iconOK = servableIcons[p.iconType] && len(pk.Icon.Data) <= maxIcon
			}
		}
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		p := get(b.Package)
		if _, dup := p.bundles[b.Name]; !dup {
			p.bundles[b.Name] = b
		}
	}
	for _, d := range cfg.Deprecations {
		p := get(d.Package)
		for _, e := range d.Entries {
			k := e.Reference.Schema + "\x00" + e.Reference.Name
			if _, dup := p.deprecations[k]; !dup {
				p.deprecations[k] = e.Message
			}
		}
	}
	for _, pg := range g.Packages {
		get(pg.Name).graph = pg
	}
	for n, p := range c.packages {
		if p.graph == nil {
			p.graph = &graph.PackageGraph{Name: n, Nodes: map[string]*graph.Node{}}
		}
		c.names = append(c.names, n)
	}
	sort.Strings(c.names)
	return c
}

func (c *Catalog) pkg(name string) *pkgIndex { return c.packages[name] }

// deprecation returns the deprecation message of a package ("" schema
// name), channel or bundle, and whether there is one.
func (p *pkgIndex) deprecation(schema, name string) (string, bool) {
	m, ok := p.deprecations[schema+"\x00"+name]
	return m, ok
}

// headBundle is the head of the default channel (or of the first channel
// with a head), for the package's display name and description.
func (p *pkgIndex) headBundle() *declcfg.Bundle {
	chans := append([]*graph.ChannelGraph(nil), p.graph.Channels...)
	sort.SliceStable(chans, func(i, j int) bool {
		return chans[i].Name == p.defaultChannel() && chans[j].Name != p.defaultChannel()
	})
	for _, ch := range chans {
		if ch.Head != "" {
			if b := p.bundles[ch.Head]; b != nil {
				return b
			}
		}
	}
	return nil
}

func (p *pkgIndex) defaultChannel() string {
	if p.blob != nil {
		return p.blob.DefaultChannel
	}
	return p.graph.DefaultChannel
}

// channelsOf lists the channels that have bundle name as an entry.
func (p *pkgIndex) channelsOf(name string) []*graph.ChannelGraph {
	var out []*graph.ChannelGraph
	for _, ch := range p.graph.Channels {
		if ch.Has(name) {
			out = append(out, ch)
		}
	}
	return out
}

// searchText is what the package search looks in: the texts, case
// folded, apart.
func searchText(texts ...string) string {
	return strings.ToLower(strings.Join(texts, "\x00"))
}

// searchWords splits a search into its distinct words, case folded.
func searchWords(q string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// match reports whether a package matches a search: every word is in its
// search text (its name, display name, keywords or provider).
func match(hay string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}
