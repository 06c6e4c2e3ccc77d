package index

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/sqlite"
)

// catalog is a file-based catalog split into the packages that receive
// bundles (read into rows) and the blobs kept as they are.
type catalog struct {
	kept declcfg.DeclarativeConfig
	// extra are the touched packages' blobs that rows do not hold
	// (deprecations, other schemas), added back after rendering.
	extra declcfg.DeclarativeConfig
}

// readCatalog reads the packages named in touched from cfg into c, and
// keeps the rest.
func readCatalog(c *sqlite.Contents, cfg *declcfg.DeclarativeConfig, touched map[string]bool) (*catalog, error) {
	out := &catalog{}
	for _, p := range cfg.Packages {
		if !touched[p.Name] {
			out.kept.Packages = append(out.kept.Packages, p)
		}
	}
	for _, ch := range cfg.Channels {
		if !touched[ch.Package] {
			out.kept.Channels = append(out.kept.Channels, ch)
		}
	}
	for _, b := range cfg.Bundles {
		if !touched[b.Package] {
			out.kept.Bundles = append(out.kept.Bundles, b)
		}
	}
	for _, d := range cfg.Deprecations {
		if touched[d.Package] {
			out.extra.Deprecations = append(out.extra.Deprecations, d)
		} else {
			out.kept.Deprecations = append(out.kept.Deprecations, d)
		}
	}
	for _, m := range cfg.Others {
		if touched[m.Package] {
			out.extra.Others = append(out.extra.Others, m)
		} else {
			out.kept.Others = append(out.kept.Others, m)
		}
	}
	for _, p := range cfg.Packages {
		if touched[p.Name] {
			if err := readPackage(c, cfg, p); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// readPackage reads one package of a catalog into rows: each bundle with
// its edges in each of its channels, then the channels walked from their
// heads along those edges, which gives back the catalog's channels.
func readPackage(c *sqlite.Contents, cfg *declcfg.DeclarativeConfig, p declcfg.Package) error {
	valid := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	edges := map[string]map[string]sqlite.Edges{}
	var heads []sqlite.Head
	for _, ch := range cfg.Channels {
		if ch.Package != p.Name {
			continue
		}
		g := graph.Channel{Name: ch.Name, Package: ch.Package}
		for _, e := range ch.Entries {
			g.Entries = append(g.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
			if edges[e.Name] == nil {
				edges[e.Name] = map[string]sqlite.Edges{}
			}
			edges[e.Name][ch.Name] = sqlite.Edges{Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange}
		}
		head, err := g.Head()
		if err != nil {
			return fmt.Errorf("package %q, channel %q: %w", p.Name, ch.Name, err)
		}
		heads = append(heads, sqlite.Head{Channel: ch.Name, Bundle: head})
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if b.Package != p.Name {
			continue
		}
		row, err := catalogBundleRow(b)
		if err != nil {
			return err
		}
		row.Edges = edges[b.Name]
		// the edges outside the bundle's channels: those of its default
		// channel, else of its first channel by name
		chans := make([]string, 0, len(row.Edges))
		for ch := range row.Edges {
			chans = append(chans, ch)
		}
		sort.Strings(chans)
		if slices.Contains(chans, p.DefaultChannel) {
			chans = []string{p.DefaultChannel}
		}
		if len(chans) > 0 {
			e := row.Edges[chans[0]]
			row.Replaces, row.Skips, row.SkipRange = valid(e.Replaces), valid(strings.Join(e.Skips, ",")), valid(e.SkipRange)
		}
		var images []string
		for _, ri := range b.RelatedImages {
			images = append(images, ri.Image)
		}
		if err := c.AddBundle(row, images); err != nil {
			return fmt.Errorf("package %q: %w", p.Name, err)
		}
	}
	pkg := p
	if err := c.SetPackageChannels(p.Name, p.DefaultChannel, heads); err != nil {
		return fmt.Errorf("package %q: %w", p.Name, err)
	}
	c.Packages[p.Name].Catalog = &pkg
	return nil
}

// catalogBundleRow is the row of a catalog's bundle blob: its manifests
// from its olm.bundle.object properties, its version from its olm.package
// property, its relatedImages as they are.
func catalogBundleRow(b *declcfg.Bundle) (*sqlite.Bundle, error) {
	valid := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	row := &sqlite.Bundle{
		Name:           b.Name,
		Path:           valid(b.Image),
		SkipRange:      valid(""),
		Replaces:       valid(""),
		Skips:          valid(""),
		SubstitutesFor: valid(""),
		Related:        declcfgBundleRelated(b),
	}
	var manifests strings.Builder
	for i, p := range b.Properties {
		switch p.Type {
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %q: %w", b.Name, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			row.Version = valid(v.Version)
		case property.TypeBundleObject:
			var v struct {
				Data string `json:"data"`
			}
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, fmt.Errorf("bundle %q: %w", b.Name, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			obj, err := base64.StdEncoding.DecodeString(v.Data)
			if err != nil {
				return nil, fmt.Errorf("bundle %q: %w", b.Name, &property.ParseError{Index: i, Type: p.Type, Err: err})
			}
			manifests.Write(obj)
			manifests.WriteByte('\n')
			var head struct {
				Kind string `json:"kind"`
			}
			if json.Unmarshal(obj, &head) == nil && head.Kind == "ClusterServiceVersion" && !row.CSV.Valid {
				row.CSV = valid(string(obj) + "\n")
			}
		}
	}
	if manifests.Len() > 0 {
		row.Manifests = valid(manifests.String())
	}
	addRows(row, b.Properties)
	return row, nil
}
