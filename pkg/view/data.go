package view

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/csvtypes"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/property"
)

// The JSON forms of the pages: each page's /api twin returns one of them.

// CatalogData is the catalog page: its packages, filtered by Query.
type CatalogData struct {
	Source   string       `json:"source"`
	Query    string       `json:"query,omitempty"`
	Total    int          `json:"total"`
	Packages []PackageRow `json:"packages"`
}

// PackageRow is one package of the catalog page.
type PackageRow struct {
	Name               string   `json:"name"`
	DisplayName        string   `json:"displayName,omitempty"`
	Provider           string   `json:"provider,omitempty"`
	Summary            string   `json:"summary,omitempty"`
	Keywords           []string `json:"keywords,omitempty"`
	DefaultChannel     string   `json:"defaultChannel"`
	HeadVersion        string   `json:"headVersion,omitempty"`
	Channels           int      `json:"channels"`
	Bundles            int      `json:"bundles"`
	Deprecated         bool     `json:"deprecated"`
	DeprecationMessage string   `json:"deprecationMessage,omitempty"`
	// Icon is the icon's URL ("" when the package has none that can be
	// shown); IconNote says why an icon is not shown.
	Icon     string `json:"icon,omitempty"`
	IconNote string `json:"iconNote,omitempty"`
}

// PackageData is the package page.
type PackageData struct {
	PackageRow
	// Description is the olm.package description, else the head bundle's
	// CSV description (markdown).
	Description     string       `json:"description,omitempty"`
	DescriptionFrom string       `json:"descriptionFrom,omitempty"`
	ChannelRows     []ChannelRow `json:"channelList"`
	BundleRows      []BundleRow  `json:"bundleList"`
}

// ChannelRow is one channel of a package.
type ChannelRow struct {
	Name               string `json:"name"`
	Default            bool   `json:"default"`
	Head               string `json:"head,omitempty"`
	HeadVersion        string `json:"headVersion,omitempty"`
	Entries            int    `json:"entries"`
	Edges              int    `json:"edges"`
	Deprecated         bool   `json:"deprecated"`
	DeprecationMessage string `json:"deprecationMessage,omitempty"`
	Error              string `json:"error,omitempty"`
}

// BundleRow is one bundle of a package (or a name its channels mention
// without a bundle).
type BundleRow struct {
	Name                string   `json:"name"`
	Version             string   `json:"version,omitempty"`
	HasBundle           bool     `json:"hasBundle"`
	Channels            []string `json:"channels"`
	Deprecated          bool     `json:"deprecated"`
	MaxOpenShiftVersion string   `json:"maxOpenShiftVersion,omitempty"`
	// OLMv1Refused are the rule codes of OLM v1's refusal of the bundle,
	// under operator-controller's default feature gates (pkg/olmv1).
	OLMv1Refused []string `json:"olmV1Refused,omitempty"`
}

// catalogData builds the catalog page's data.
func (s *Server) catalogData(ctx context.Context, c *Catalog, q string) *CatalogData {
	out := &CatalogData{Source: c.Source, Query: q, Total: len(c.names), Packages: []PackageRow{}}
	rows, hay := s.packageRows(c)
	words := searchWords(q)
	for i, row := range rows {
		if i%256 == 0 && canceled(ctx) {
			break
		}
		if match(hay[i], words) {
			out.Packages = append(out.Packages, row)
		}
	}
	return out
}

// packageRows returns the rows of the catalog's packages, by name, and
// the text the search looks in for each, computed once.
func (s *Server) packageRows(c *Catalog) ([]PackageRow, []string) {
	c.rowsOnce.Do(func() {
		for _, n := range c.names {
			row := s.packageRow(c, c.pkg(n))
			c.rows = append(c.rows, row)
			c.hay = append(c.hay, searchText(append([]string{row.Name, row.DisplayName, row.Provider}, row.Keywords...)...))
		}
	})
	return c.rows, c.hay
}

func (s *Server) packageRow(c *Catalog, p *pkgIndex) PackageRow {
	row := PackageRow{Name: p.name, DefaultChannel: p.defaultChannel(), Channels: len(p.graph.Channels), Bundles: len(p.bundles)}
	row.DeprecationMessage, row.Deprecated = p.deprecation(declcfg.SchemaPackage, "")
	if h := p.headBundle(); h != nil {
		if n := p.graph.Nodes[h.Name]; n != nil {
			row.HeadVersion = n.VersionString()
		}
		if m := csvMetadata(h); m != nil {
			row.DisplayName, row.Provider, row.Keywords = m.DisplayName, m.Provider.Name, m.Keywords
			row.Summary = m.Annotations["description"]
		}
	}
	switch {
	case p.blob == nil || p.blob.Icon == nil || len(p.blob.Icon.Data) == 0:
	case p.iconOK:
		row.Icon = s.url(c, "packages", p.name, "icon")
	case len(p.blob.Icon.Data) > maxIcon:
		row.IconNote = fmt.Sprintf("icon not shown: %d bytes, more than the %d allowed", len(p.blob.Icon.Data), maxIcon)
	case p.iconType == "":
		row.IconNote = "icon not shown: its content is no known image type"
	default:
		row.IconNote = fmt.Sprintf("icon not shown: %s is not an image type browsers show", p.iconType)
	}
	return row
}

// packageData builds the package page's data.
func (s *Server) packageData(ctx context.Context, c *Catalog, p *pkgIndex) *PackageData {
	out := &PackageData{PackageRow: s.packageRow(c, p), ChannelRows: []ChannelRow{}, BundleRows: []BundleRow{}}
	if p.blob != nil && p.blob.Description != "" {
		out.Description, out.DescriptionFrom = p.blob.Description, "olm.package"
	} else if h := p.headBundle(); h != nil {
		if m := csvMetadata(h); m != nil && m.Description != "" {
			out.Description, out.DescriptionFrom = m.Description, h.Name
		}
	}
	for _, ch := range p.graph.Channels {
		if canceled(ctx) {
			break
		}
		row := ChannelRow{Name: ch.Name, Default: ch.Name == out.DefaultChannel, Head: ch.Head, Entries: len(ch.Entries), Edges: ch.EdgeCount(graph.MaxEdges)}
		if n := p.graph.Nodes[ch.Head]; n != nil {
			row.HeadVersion = n.VersionString()
		}
		row.DeprecationMessage, row.Deprecated = p.deprecation(declcfg.SchemaChannel, ch.Name)
		if ch.ChainErr != nil {
			row.Error = ch.ChainErr.Error()
		}
		out.ChannelRows = append(out.ChannelRows, row)
	}
	nodes := sortedNodes(p.graph)
	for _, n := range nodes {
		row := BundleRow{Name: n.Name, Version: n.VersionString(), HasBundle: n.HasBundle, Deprecated: n.Deprecated, Channels: []string{}}
		for _, ch := range p.channelsOf(n.Name) {
			row.Channels = append(row.Channels, ch.Name)
		}
		if n.MaxOpenShift != nil {
			row.MaxOpenShiftVersion = n.MaxOpenShift.String()
		}
		row.OLMv1Refused = olmv1Refused(p.bundles[n.Name])
		out.BundleRows = append(out.BundleRows, row)
	}
	return out
}

// olmv1Refused returns the codes of the rules for which OLM v1 refuses b
// (nil for an installable bundle, or none).
func olmv1Refused(b *declcfg.Bundle) []string {
	if b == nil {
		return nil
	}
	ob, _ := olmv1.FromDeclcfg(b)
	return olmv1.Check(ob, olmv1.DefaultGates()).Codes(olmv1.Refused)
}

// sortedNodes returns the package's nodes, newest first (nodes without a
// version last, by name).
func sortedNodes(p *graph.PackageGraph) []*graph.Node {
	out := make([]*graph.Node, 0, len(p.Nodes))
	for _, n := range p.Nodes {
		out = append(out, n)
	}
	sortNewestFirst(out)
	return out
}

func sortNewestFirst(nodes []*graph.Node) {
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if a.HasVersion != b.HasVersion {
			return a.HasVersion
		}
		if a.HasVersion {
			if c := graph.CompareVersions(a, b); c != 0 {
				return c > 0
			}
		}
		return a.Name < b.Name
	})
}

// BundleData is the bundle page.
type BundleData struct {
	Package             string          `json:"package"`
	Name                string          `json:"name"`
	Version             string          `json:"version,omitempty"`
	Release             string          `json:"release,omitempty"`
	Image               string          `json:"image,omitempty"`
	Deprecated          bool            `json:"deprecated"`
	DeprecationMessage  string          `json:"deprecationMessage,omitempty"`
	MaxOpenShiftVersion string          `json:"maxOpenShiftVersion,omitempty"`
	MaxOpenShiftError   string          `json:"maxOpenShiftVersionError,omitempty"`
	Channels            []BundleChannel `json:"channels"`
	CSV                 *CSVData        `json:"csv,omitempty"`
	Provides            []API           `json:"provides"`
	Requires            []API           `json:"requires"`
	RequiresPackages    []RequiredPkg   `json:"requiresPackages"`
	RelatedImages       []RelatedImage  `json:"relatedImages"`
	Properties          []PropertyRow   `json:"properties"`
	// Pos is where the bundle's blob is.
	Pos string `json:"position,omitempty"`
}

// BundleChannel is a channel the bundle is in, with its entry's edges.
type BundleChannel struct {
	Name       string   `json:"name"`
	Head       bool     `json:"head"`
	ChainIndex *int     `json:"chainIndex"`
	Replaces   string   `json:"replaces,omitempty"`
	Skips      []string `json:"skips,omitempty"`
	SkipRange  string   `json:"skipRange,omitempty"`
	// UpgradesTo lists the entries of the channel that upgrade from it.
	UpgradesTo []string `json:"upgradesTo"`
}

// CSVData is the ClusterServiceVersion metadata shown for a bundle.
type CSVData struct {
	DisplayName    string                `json:"displayName,omitempty"`
	Description    string                `json:"description,omitempty"`
	Summary        string                `json:"summary,omitempty"`
	Provider       string                `json:"provider,omitempty"`
	ProviderURL    string                `json:"providerURL,omitempty"`
	Maturity       string                `json:"maturity,omitempty"`
	MinKubeVersion string                `json:"minKubeVersion,omitempty"`
	Capabilities   string                `json:"capabilities,omitempty"`
	Keywords       []string              `json:"keywords,omitempty"`
	Maintainers    []csvtypes.Maintainer `json:"maintainers,omitempty"`
	Links          []csvtypes.AppLink    `json:"links,omitempty"`
	InstallModes   []string              `json:"installModes,omitempty"`
	From           string                `json:"from"` // olm.csv.metadata or olm.bundle.object
	// ShowSummary: the page shows the summary above the description, as
	// the description does not already say it.
	ShowSummary bool `json:"-"`
}

// API is a provided or required API: a GVK, with the CRD's display name
// and description when the CSV gives them.
type API struct {
	Group       string `json:"group"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

// RequiredPkg is an olm.package.required property.
type RequiredPkg struct {
	Package string `json:"packageName"`
	Range   string `json:"versionRange"`
}

// RelatedImage is one related image.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// PropertyRow is one property; large values are summarised.
type PropertyRow struct {
	Type string `json:"type"`
	// Value is the JSON value, indented, when it is at most maxPropertyShown
	// bytes; Summary says what a larger one (or a bundle object) holds.
	Value   string `json:"value,omitempty"`
	Summary string `json:"summary,omitempty"`
	Size    int    `json:"size"`
}

const maxPropertyShown = 4096

// bundleData builds the bundle page's data.
func bundleData(p *pkgIndex, name string) (*BundleData, bool) {
	n := p.graph.Nodes[name]
	b := p.bundles[name]
	if n == nil && b == nil {
		return nil, false
	}
	out := &BundleData{Package: p.name, Name: name, Channels: []BundleChannel{}, Provides: []API{}, Requires: []API{},
		RequiresPackages: []RequiredPkg{}, RelatedImages: []RelatedImage{}, Properties: []PropertyRow{}}
	if n != nil {
		out.Version, out.Release = n.VersionString(), n.Release
		if n.MaxOpenShift != nil {
			out.MaxOpenShiftVersion = n.MaxOpenShift.String()
		}
		if n.MaxOpenShiftErr != nil {
			out.MaxOpenShiftError = n.MaxOpenShiftErr.Error()
		}
	}
	out.DeprecationMessage, out.Deprecated = p.deprecation(declcfg.SchemaBundle, name)
	for _, ch := range p.channelsOf(name) {
		e, _ := ch.Entry(name)
		bc := BundleChannel{Name: ch.Name, Head: ch.Head == name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange, UpgradesTo: []string{}}
		if i := ch.ChainIndex(name); i >= 0 {
			bc.ChainIndex = &i
		}
		seen := map[string]bool{}
		for _, ed := range ch.EdgesFrom(name) {
			if !seen[ed.To] {
				seen[ed.To] = true
				bc.UpgradesTo = append(bc.UpgradesTo, ed.To)
			}
		}
		out.Channels = append(out.Channels, bc)
	}
	if b == nil {
		return out, true
	}
	out.Image, out.Pos = b.Image, b.Pos.String()
	for _, ri := range b.RelatedImages {
		out.RelatedImages = append(out.RelatedImages, RelatedImage{Name: ri.Name, Image: ri.Image})
	}
	m := csvMetadata(b)
	crds := map[string]csvtypes.CRDDescription{}
	if m != nil {
		out.CSV = &CSVData{DisplayName: m.DisplayName, Description: m.Description, Summary: m.Annotations["description"],
			Provider: m.Provider.Name, ProviderURL: m.Provider.URL, Maturity: m.Maturity, MinKubeVersion: m.MinKubeVersion,
			Capabilities: m.Annotations["capabilities"], Keywords: m.Keywords, Maintainers: m.Maintainers, Links: m.Links, From: m.from}
		words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		out.CSV.ShowSummary = out.CSV.Summary != "" && !strings.Contains(words(m.Description), words(out.CSV.Summary))
		for _, im := range m.InstallModes {
			if im.Supported {
				out.CSV.InstallModes = append(out.CSV.InstallModes, im.Type)
			}
		}
		for _, d := range append(m.CustomResourceDefinitions.Owned, m.CustomResourceDefinitions.Required...) {
			crds[d.Kind+"\x00"+d.Version] = d
		}
	}
	api := func(g, v, k string) API {
		a := API{Group: g, Version: v, Kind: k}
		if d, ok := crds[k+"\x00"+v]; ok && (d.Name == "" || strings.HasSuffix(d.Name, "."+g)) {
			a.DisplayName, a.Description = d.DisplayName, d.Description
		}
		return a
	}
	for _, pr := range b.Properties {
		row := PropertyRow{Type: pr.Type, Size: len(pr.Value)}
		switch pr.Type {
		case property.TypeGVK, property.TypeGVKRequired:
			var g property.GVK
			if json.Unmarshal(pr.Value, &g) == nil {
				if pr.Type == property.TypeGVK {
					out.Provides = append(out.Provides, api(g.Group, g.Version, g.Kind))
				} else {
					out.Requires = append(out.Requires, api(g.Group, g.Version, g.Kind))
				}
			}
		case property.TypePackageRequired:
			var r property.PackageRequired
			if json.Unmarshal(pr.Value, &r) == nil {
				out.RequiresPackages = append(out.RequiresPackages, RequiredPkg{Package: r.PackageName, Range: r.VersionRange})
			}
		case property.TypeBundleObject:
			row.Summary = objectSummary(pr.Value)
		case property.TypeCSVMetadata:
			if m != nil && m.from == property.TypeCSVMetadata {
				row.Summary = fmt.Sprintf("the CSV metadata this page shows (%d bytes; in full by `opm render`)", len(pr.Value))
			}
		}
		if row.Summary == "" {
			if len(pr.Value) <= maxPropertyShown {
				row.Value = showJSON(pr.Value)
			} else {
				row.Summary = fmt.Sprintf("%d bytes of JSON (shown in full by `opm render`)", len(pr.Value))
			}
		}
		out.Properties = append(out.Properties, row)
	}
	return out, true
}

// objectSummary names the manifest an olm.bundle.object property holds.
func objectSummary(raw json.RawMessage) string {
	var v property.BundleObject
	if err := json.Unmarshal(raw, &v); err != nil {
		return "an object that does not decode: " + err.Error()
	}
	var o struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(v.Data, &o); err != nil {
		return fmt.Sprintf("%d bytes that are not a JSON manifest", len(v.Data))
	}
	return fmt.Sprintf("%s %q (%d bytes)", o.Kind, o.Metadata.Name, len(v.Data))
}

// showJSON is a property value for people: on one line when short,
// indented otherwise.
func showJSON(raw json.RawMessage) string {
	var b strings.Builder
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if len(raw) > 100 {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// csvMeta is the CSV metadata of a bundle, from its olm.csv.metadata
// property or its ClusterServiceVersion object.
type csvMeta struct {
	csvtypes.Metadata
	from string
}

// csvMetadata returns the bundle's CSV metadata, or nil.
func csvMetadata(b *declcfg.Bundle) *csvMeta {
	for _, pr := range b.Properties {
		if pr.Type == property.TypeCSVMetadata {
			var m csvMeta
			if json.Unmarshal(pr.Value, &m.Metadata) == nil {
				m.from = property.TypeCSVMetadata
				return &m
			}
		}
	}
	csv := b.CsvJSON
	if csv == "" {
		cp := *b // LoadObjects sets fields: work on a copy, pages are served concurrently
		cp.Objects, cp.CsvJSON = nil, ""
		if cp.LoadObjects() != nil || cp.CsvJSON == "" {
			return nil
		}
		csv = cp.CsvJSON
	}
	var o struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			csvtypes.Metadata
			CRDs csvtypes.CustomResourceDefinitions `json:"customresourcedefinitions"`
		} `json:"spec"`
	}
	if json.Unmarshal([]byte(csv), &o) != nil {
		return nil
	}
	m := &csvMeta{Metadata: o.Spec.Metadata, from: property.TypeBundleObject}
	m.Annotations = o.Metadata.Annotations
	m.CustomResourceDefinitions = o.Spec.CRDs
	return m
}
