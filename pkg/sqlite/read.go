package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/k8stypes"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/property"
)

// Contents is what an index database holds, as upstream's queries read
// it once its schema is the latest: the rows Entries derives the channels
// from, and the bundles, packages and channels they refer to.
type Contents struct {
	// Packages by name.
	Packages map[string]*Package
	// PackageOrder lists the package names in the order the table gives
	// them.
	PackageOrder []string
	// Bundles by name (bundles with a NULL name are not kept).
	Bundles map[string]*Bundle
	// Entries are the channel_entry rows, by ascending entry_id.
	Entries []Entry
	// RelatedImages are the related_image rows by bundle name, in order.
	RelatedImages map[string][]string
}

// Package is a package row and its channels.
type Package struct {
	Name           string
	DefaultChannel sql.NullString
	// Channels are the package's channel rows, in the order upstream's
	// query returns them.
	Channels []Channel

	// Catalog, when set, is the olm.package blob of the file-based catalog
	// the package was read from (never from a database): its description
	// is kept, and its icon when the head of its default channel has no
	// CSV to take one from.
	Catalog *declcfg.Package
}

// Channel is a channel row: its name and head bundle.
type Channel struct {
	Name string
	Head sql.NullString
}

// Bundle is an operatorbundle row, with its properties and dependencies
// (upstream gathers those by bundle name alone).
type Bundle struct {
	Name           string
	CSV            sql.NullString
	Manifests      sql.NullString // the bundle column: the manifests' JSON, one after another
	Path           sql.NullString // bundlepath: the bundle image
	Version        sql.NullString
	SkipRange      sql.NullString
	Replaces       sql.NullString
	Skips          sql.NullString
	SubstitutesFor sql.NullString
	Properties     []TypedValue
	Dependencies   []TypedValue

	// The fields below are never read from a database: they carry what a
	// file-based catalog says of a bundle that opm's index add reads into
	// Contents.

	// Edges, when set, are the bundle's edges in each channel of the
	// catalog: the walk of a channel follows them there instead of
	// Replaces and Skips, and the bundle's entry there gets their
	// SkipRange.
	Edges map[string]Edges
	// Related, when not nil, are the bundle's relatedImages, used instead
	// of the CSV's and the related_image rows.
	Related []declcfg.RelatedImage
}

// Edges are a bundle's upgrade edges in one channel.
type Edges struct {
	Replaces  string
	Skips     []string
	SkipRange string
}

// TypedValue is a properties or dependencies row.
type TypedValue struct {
	Type  sql.NullString
	Value sql.NullString
}

// Entry is a channel_entry row: the bundle's membership of a channel at a
// depth from its head, and the entry it replaces (or, for the extra
// entries skips make, skips).
type Entry struct {
	ID       int64
	Channel  sql.NullString
	Package  sql.NullString
	Bundle   sql.NullString
	Replaces sql.NullInt64
	Depth    sql.NullInt64
}

// load reads the tables of a database whose schema is the latest.
func load(ctx context.Context, q querier, lim Limits) (*Contents, error) {
	c := &Contents{
		Packages:      map[string]*Package{},
		Bundles:       map[string]*Bundle{},
		RelatedImages: map[string][]string{},
	}
	var rows int64
	count := func() error {
		rows++
		if lim.MaxRows > 0 && rows > lim.MaxRows {
			return fmt.Errorf("the database has more than %d rows (the limit)", lim.MaxRows)
		}
		return ctx.Err()
	}
	scan := func(query string, fn func(*sql.Rows) error) error {
		r, err := q.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			if err := count(); err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return r.Err()
	}

	err := scan(`SELECT DISTINCT name FROM package`, func(r *sql.Rows) error {
		var n sql.NullString
		if err := r.Scan(&n); err != nil {
			return err
		}
		if n.Valid && c.Packages[n.String] == nil {
			c.Packages[n.String] = &Package{Name: n.String}
			c.PackageOrder = append(c.PackageOrder, n.String)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the packages: %w", err)
	}
	err = scan(`SELECT DISTINCT package.name, package.default_channel, channel.name, channel.head_operatorbundle_name
		FROM package INNER JOIN channel ON channel.package_name = package.name`, func(r *sql.Rows) error {
		var pkg, def, ch, head sql.NullString
		if err := r.Scan(&pkg, &def, &ch, &head); err != nil {
			return err
		}
		p := c.Packages[pkg.String]
		if p == nil {
			return nil
		}
		// upstream keeps the default channel of the last row read
		p.DefaultChannel = def
		p.Channels = append(p.Channels, Channel{Name: ch.String, Head: head})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the channels: %w", err)
	}
	err = scan(`SELECT name, csv, bundle, bundlepath, version, skiprange, replaces, skips, substitutesfor FROM operatorbundle`, func(r *sql.Rows) error {
		var b Bundle
		var name sql.NullString
		if err := r.Scan(&name, &b.CSV, &b.Manifests, &b.Path, &b.Version, &b.SkipRange, &b.Replaces, &b.Skips, &b.SubstitutesFor); err != nil {
			return err
		}
		if lim.MaxValueSize > 0 && int64(len(b.CSV.String)+len(b.Manifests.String)) > lim.MaxValueSize {
			return fmt.Errorf("bundle %q: its manifests hold more than %d bytes (the limit)", name.String, lim.MaxValueSize)
		}
		if name.Valid {
			b.Name = name.String
			c.Bundles[b.Name] = &b
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the bundles: %w", err)
	}
	for _, t := range []struct {
		table string
		dst   func(*Bundle) *[]TypedValue
	}{
		{"properties", func(b *Bundle) *[]TypedValue { return &b.Properties }},
		{"dependencies", func(b *Bundle) *[]TypedValue { return &b.Dependencies }},
	} {
		err = scan(`SELECT operatorbundle_name, CAST(type AS TEXT), CAST(value AS TEXT) FROM `+t.table, func(r *sql.Rows) error {
			var name sql.NullString
			var tv TypedValue
			if err := r.Scan(&name, &tv.Type, &tv.Value); err != nil {
				return err
			}
			if b := c.Bundles[name.String]; name.Valid && b != nil {
				*t.dst(b) = append(*t.dst(b), tv)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the %s: %w", t.table, err)
		}
	}
	err = scan(`SELECT entry_id, channel_name, package_name, operatorbundle_name, replaces, depth FROM channel_entry ORDER BY entry_id`, func(r *sql.Rows) error {
		var e Entry
		if err := r.Scan(&e.ID, &e.Channel, &e.Package, &e.Bundle, &e.Replaces, &e.Depth); err != nil {
			return err
		}
		c.Entries = append(c.Entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the channel entries: %w", err)
	}
	err = scan(`SELECT image, operatorbundle_name FROM related_image`, func(r *sql.Rows) error {
		var img, name sql.NullString
		if err := r.Scan(&img, &name); err != nil {
			return err
		}
		if img.Valid && name.Valid {
			c.RelatedImages[name.String] = append(c.RelatedImages[name.String], img.String)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the related images: %w", err)
	}
	return c, nil
}

// membership is one bundle in one channel, as upstream's bundle listing
// derives it from the channel entries.
type membership struct {
	firstID  int64
	bundle   sql.NullString
	pkg      sql.NullString
	channel  sql.NullString
	replaces sql.NullString
	skips    []string
	hasSkips bool
}

type memberKey struct{ bundle, pkg, channel sql.NullString }

// memberships derives one membership per (bundle, package, channel) from
// the entries, as upstream's listing query does: the entries reached from
// the heads (the entries at the smallest depth of the whole table) by
// following replaces form the replaces chains; the name a bundle's chain
// entries replace is its replaces (the greatest, should there be several),
// and the entries outside the chains, the extra ones skips make, give its
// skips.
func memberships(entries []Entry) []*membership {
	byID := make(map[int64]*Entry, len(entries))
	var tip sql.NullInt64
	for i := range entries {
		e := &entries[i]
		byID[e.ID] = e
		if e.Depth.Valid && (!tip.Valid || e.Depth.Int64 < tip.Int64) {
			tip = e.Depth
		}
	}
	chain := map[int64]bool{}
	var queue []int64
	for _, e := range entries {
		if tip.Valid && e.Depth.Valid && e.Depth.Int64 == tip.Int64 && !chain[e.ID] {
			chain[e.ID] = true
			queue = append(queue, e.ID)
		}
	}
	for len(queue) > 0 {
		e := byID[queue[0]]
		queue = queue[1:]
		if !e.Replaces.Valid {
			continue
		}
		if next, ok := byID[e.Replaces.Int64]; ok && !chain[next.ID] {
			chain[next.ID] = true
			queue = append(queue, next.ID)
		}
	}

	var out []*membership
	groups := map[memberKey]*membership{}
	// NULLs group together, as GROUP BY groups them.
	for _, e := range entries {
		k := memberKey{e.Bundle, e.Package, e.Channel}
		m, ok := groups[k]
		if !ok {
			m = &membership{firstID: e.ID, bundle: e.Bundle, pkg: e.Package, channel: e.Channel}
			groups[k] = m
			out = append(out, m)
		}
		if !e.Replaces.Valid {
			continue
		}
		target, ok := byID[e.Replaces.Int64]
		if chain[e.ID] {
			if ok && target.Bundle.Valid && (!m.replaces.Valid || target.Bundle.String > m.replaces.String) {
				m.replaces = target.Bundle
			}
			continue
		}
		// A skip edge counts only where all three names compare equal
		// (NULL never does), and only when the entry it points at exists.
		if !ok || !e.Bundle.Valid || !e.Package.Valid || !e.Channel.Valid {
			continue
		}
		if target.Bundle.Valid {
			m.hasSkips = true
			m.skips = append(m.skips, target.Bundle.String)
		}
	}
	return out
}

// Warning is something upstream logs and goes past.
type Warning string

// convert turns the contents into FBC as upstream's `opm render` does for
// an sqlite database: the model built from the packages, channels and
// bundles (deprecated bundles left out), validated, and written out as
// blobs, with the related_image rows added to the bundles'.
func convert(c *Contents, warn func(string)) (*declcfg.DeclarativeConfig, error) {
	m := model.Model{}
	for _, name := range c.PackageOrder {
		p := c.Packages[name]
		if len(p.Channels) == 0 {
			return nil, fmt.Errorf("package %s not found", name)
		}
		mp := &model.Package{Name: p.Name, Channels: map[string]*model.Channel{}}
		for _, ch := range p.Channels {
			mc := &model.Channel{Package: mp, Name: ch.Name, Bundles: map[string]*model.Bundle{}}
			if ch.Name == p.DefaultChannel.String {
				mp.DefaultChannel = mc
			}
			mp.Channels[ch.Name] = mc
		}
		m[p.Name] = mp
	}

	for _, ms := range memberships(c.Entries) {
		b := c.Bundles[ms.bundle.String]
		if !ms.bundle.Valid || b == nil || !b.Version.Valid || !b.Path.Valid || !ms.channel.Valid {
			continue
		}
		ab, err := newAPIBundle(b, ms)
		if err != nil {
			return nil, err
		}
		if ab.deprecated {
			continue
		}
		mp, ok := m[ms.pkg.String]
		if !ok {
			return nil, fmt.Errorf("unknown package %q for bundle %q", ms.pkg.String, b.Name)
		}
		mc, ok := mp.Channels[ms.channel.String]
		if !ok {
			return nil, fmt.Errorf("unknown channel %q for bundle %q", ms.channel.String, b.Name)
		}
		mb, err := ab.modelBundle()
		if err != nil {
			return nil, fmt.Errorf("convert bundle %q: %v", b.Name, err)
		}
		mb.Package, mb.Channel = mp, mc
		mc.Bundles[b.Name] = mb
	}

	for _, name := range c.PackageOrder {
		if err := setIcon(c, m[name], warn); err != nil {
			return nil, fmt.Errorf("populate package icons: %v", err)
		}
	}
	for _, mp := range m {
		for _, mc := range mp.Channels {
			for _, mb := range mc.Bundles {
				mb.HasBlob = true
				pp, err := property.Parse(mb.Properties)
				if err == nil {
					mb.PropertiesP = pp
				}
			}
		}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	cfg := fromModel(m)
	rows := map[string][]string{}
	for name, imgs := range c.RelatedImages {
		if b := c.Bundles[name]; b == nil || b.Related == nil {
			rows[name] = imgs
		}
	}
	addRelatedImages(cfg, rows)
	for i := range cfg.Packages {
		if p := c.Packages[cfg.Packages[i].Name]; p != nil && p.Catalog != nil {
			cfg.Packages[i].Description = p.Catalog.Description
			cfg.Packages[i].Properties = p.Catalog.Properties
			if cfg.Packages[i].Icon == nil {
				cfg.Packages[i].Icon = p.Catalog.Icon
			}
		}
	}
	return cfg, nil
}

// apiBundle is a bundle as upstream's registry API carries it, between the
// database rows and the model.
type apiBundle struct {
	name, pkg, version, path     string
	replaces, skipRange, csvJSON string
	skips                        []string
	objects                      []string
	properties, dependencies     []TypedValue
	provided, required           []gvk
	deprecated                   bool
	related                      []declcfg.RelatedImage
}

func newAPIBundle(b *Bundle, ms *membership) (*apiBundle, error) {
	ab := &apiBundle{
		name:      b.Name,
		pkg:       ms.pkg.String,
		version:   b.Version.String,
		path:      b.Path.String,
		replaces:  ms.replaces.String,
		skipRange: b.SkipRange.String,
		related:   b.Related,
	}
	if e, ok := b.Edges[ms.channel.String]; ok {
		ab.skipRange = e.SkipRange
	}
	if ms.hasSkips {
		ab.skips = ms.skips
	}
	if b.Manifests.String != "" {
		objs, csvJSON, err := splitManifests(b.Manifests.String)
		if err != nil {
			return nil, err
		}
		ab.objects, ab.csvJSON = objs, csvJSON
	}
	ab.dependencies = uniqueValues(b.Dependencies)
	ab.required = legacyGVKs(ab.dependencies)
	ab.properties = uniqueValues(b.Properties)
	ab.provided = legacyGVKs(ab.properties)
	for _, p := range ab.properties {
		if p.Type.String == property.TypeDeprecated {
			ab.deprecated = true
		}
	}
	return ab, nil
}

// uniqueValues drops repeated (type, value) pairs, keeping the first.
func uniqueValues(in []TypedValue) []TypedValue {
	if len(in) <= 1 {
		return in
	}
	seen := map[[2]string]bool{}
	var out []TypedValue
	for _, tv := range in {
		k := [2]string{tv.Type.String, tv.Value.String}
		if !seen[k] {
			seen[k] = true
			out = append(out, tv)
		}
	}
	return out
}

// legacyGVKs are the values of the olm.gvk rows, read up to the first that
// does not decode (as upstream, which ignores that error).
func legacyGVKs(in []TypedValue) []gvk {
	var out []gvk
	for _, tv := range in {
		if tv.Type.String != property.TypeGVK {
			continue
		}
		var v struct{ Group, Version, Kind string }
		if err := json.Unmarshal([]byte(tv.Value.String), &v); err != nil {
			break
		}
		out = append(out, gvk{v.Group, v.Version, v.Kind})
	}
	return out
}

// splitManifests splits the bundle column into its JSON values and finds
// the CSV: each value up to it must be an object with a kind.
func splitManifests(s string) (objs []string, csvJSON string, err error) {
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "", err
		}
		objs = append(objs, string(raw))
	}
	for _, o := range objs {
		var head struct {
			Kind     *string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(o), &head); err != nil {
			return nil, "", err
		}
		if head.Kind == nil || *head.Kind == "" {
			return nil, "", errors.New("an object of the bundle has no kind")
		}
		if *head.Kind == "ClusterServiceVersion" {
			if head.Metadata.Name == "" {
				break
			}
			return objs, o, nil
		}
	}
	return nil, "", errors.New("no csv in bundle")
}

// modelBundle is upstream's conversion of a registry API bundle to a model
// bundle: its properties, the required GVKs and packages of its
// dependencies (other dependencies are dropped), its objects, sorted.
func (ab *apiBundle) modelBundle() (*model.Bundle, error) {
	var props []property.Property
	provided := map[gvk]bool{}
	required := map[gvk]bool{}
	var providedOrder, requiredOrder []gvk
	addGVK := func(set map[gvk]bool, order *[]gvk, g gvk) {
		if !set[g] {
			set[g] = true
			*order = append(*order, g)
		}
	}
	foundPackage := false
	for i, p := range ab.properties {
		switch p.Type.String {
		case property.TypeGVK:
			var v struct{ Group, Version, Kind string }
			if err := json.Unmarshal([]byte(p.Value.String), &v); err != nil {
				return nil, fmt.Errorf("convert properties: %v", &property.ParseError{Index: i, Type: p.Type.String, Err: err})
			}
			addGVK(provided, &providedOrder, gvk{v.Group, v.Version, v.Kind})
		case property.TypePackage:
			foundPackage = true
			props = append(props, property.Property{Type: p.Type.String, Value: json.RawMessage(p.Value.String)})
		default:
			props = append(props, property.Property{Type: p.Type.String, Value: json.RawMessage(p.Value.String)})
		}
	}
	for i, d := range ab.dependencies {
		switch d.Type.String {
		case property.TypeGVK:
			var v struct{ Group, Version, Kind string }
			if err := json.Unmarshal([]byte(d.Value.String), &v); err != nil {
				return nil, fmt.Errorf("convert properties: %v", &property.ParseError{Index: i, Type: d.Type.String, Err: err})
			}
			addGVK(required, &requiredOrder, gvk{v.Group, v.Version, v.Kind})
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal([]byte(d.Value.String), &v); err != nil {
				return nil, fmt.Errorf("convert properties: %v", &property.ParseError{Index: i, Type: d.Type.String, Err: err})
			}
			props = append(props, property.MustBuild(property.PackageRequired{PackageName: v.PackageName, VersionRange: v.Version}))
		}
	}
	if !foundPackage {
		props = append(props, property.MustBuild(property.Package{PackageName: ab.pkg, Version: ab.version}))
	}
	for _, g := range ab.provided {
		addGVK(provided, &providedOrder, g)
	}
	for _, g := range ab.required {
		addGVK(required, &requiredOrder, g)
	}
	for _, g := range providedOrder {
		props = append(props, property.MustBuild(property.GVK{Group: g.group, Kind: g.kind, Version: g.version}))
	}
	for _, g := range requiredOrder {
		props = append(props, property.MustBuild(property.GVKRequired{Group: g.group, Kind: g.kind, Version: g.version}))
	}
	for _, o := range ab.objects {
		props = append(props, property.MustBuild(property.BundleObject{Data: []byte(o)}))
	}
	sortProperties(props)
	for i := range props {
		props[i].Value = normalizeValue(props[i].Value)
	}

	related, err := csvRelatedImages(ab.csvJSON)
	if err != nil {
		return nil, fmt.Errorf("get related iamges: %v", err)
	}
	if ab.related != nil {
		related = make([]model.RelatedImage, len(ab.related))
		for i, ri := range ab.related {
			related[i] = model.RelatedImage{Name: ri.Name, Image: ri.Image}
		}
	}
	v, err := semver.Parse(ab.version)
	if err != nil {
		return nil, fmt.Errorf("parse version %q: %v", ab.version, err)
	}
	return &model.Bundle{
		Name:          ab.name,
		Image:         ab.path,
		Replaces:      ab.replaces,
		Skips:         ab.skips,
		SkipRange:     ab.skipRange,
		CsvJSON:       ab.csvJSON,
		Objects:       ab.objects,
		Properties:    props,
		RelatedImages: related,
		Version:       v,
	}, nil
}

// sortProperties orders properties by type, then value bytes.
func sortProperties(props []property.Property) {
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].Type != props[j].Type {
			return props[i].Type < props[j].Type
		}
		return string(props[i].Value) < string(props[j].Value)
	})
}

// normalizeValue compacts a valid JSON value (upstream re-encodes every
// property value; an empty one becomes null); anything else is kept as it
// is.
func normalizeValue(v json.RawMessage) json.RawMessage {
	out, err := property.MarshalNoEscape(v)
	if err != nil {
		return v
	}
	return out
}

// csvRelatedImages reads spec.relatedImages of a CSV (nil for no CSV).
func csvRelatedImages(csvJSON string) ([]model.RelatedImage, error) {
	if csvJSON == "" {
		return nil, nil
	}
	var c struct {
		Spec struct {
			RelatedImages []struct {
				Name  string `json:"name"`
				Image string `json:"image"`
			} `json:"relatedImages"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(csvJSON), &c); err != nil {
		return nil, fmt.Errorf("unmarshal csv: %v", err)
	}
	out := []model.RelatedImage{}
	for _, ri := range c.Spec.RelatedImages {
		out = append(out, model.RelatedImage{Name: ri.Name, Image: ri.Image})
	}
	return out, nil
}

// setIcon gives a package the first icon of the CSV of its default
// channel's head, as upstream does.
func setIcon(c *Contents, mp *model.Package, warn func(string)) error {
	if mp.DefaultChannel == nil {
		// upstream dereferences the missing channel and crashes
		return fmt.Errorf("get default channel head for package %q: the package has no default channel", mp.Name)
	}
	var head *Bundle
	for _, ch := range c.Packages[mp.Name].Channels {
		if ch.Name == mp.DefaultChannel.Name {
			if ch.Head.Valid {
				head = c.Bundles[ch.Head.String]
			}
			break
		}
	}
	if head == nil {
		return fmt.Errorf("get default channel head for package %q: no entry found for %s %s", mp.Name, mp.Name, mp.DefaultChannel.Name)
	}
	if !head.CSV.Valid && c.Packages[mp.Name].Catalog != nil {
		return nil // the catalog's icon is kept
	}
	var csv struct {
		Metadata k8stypes.ObjectMeta `json:"metadata"`
		Spec     struct {
			Icon []struct {
				Data      string `json:"base64data"`
				MediaType string `json:"mediatype"`
			} `json:"icon"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(head.CSV.String), &csv); err != nil {
		return fmt.Errorf("unmarshal CSV json for bundle %q: %v", head.Name, err)
	}
	if len(csv.Spec.Icon) == 0 {
		return nil
	}
	icon := csv.Spec.Icon[0]
	data, err := base64.StdEncoding.DecodeString(icon.Data)
	if err != nil {
		data, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(icon.Data, " ", ""))
		if err != nil {
			if warn != nil {
				warn(fmt.Sprintf("base64 decode CSV icon for bundle %q: %v", head.Name, err))
			}
			return nil
		}
	}
	if len(data) > 0 {
		mp.Icon = &model.Icon{Data: data, MediaType: icon.MediaType}
	}
	return nil
}

// fromModel writes the model as blobs, as upstream's ConvertFromModel does:
// packages, channels (entries sorted by name) and bundles (the properties
// of all their channels, de-duplicated and sorted) sorted by name.
func fromModel(m model.Model) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	for _, name := range sortedNames(m) {
		mp := m[name]
		pkg := declcfg.Package{Schema: declcfg.SchemaPackage, Name: mp.Name, Description: mp.Description}
		if mp.DefaultChannel != nil {
			pkg.DefaultChannel = mp.DefaultChannel.Name
		}
		if mp.Icon != nil {
			pkg.Icon = &declcfg.Icon{Data: mp.Icon.Data, MediaType: mp.Icon.MediaType}
		}
		cfg.Packages = append(cfg.Packages, pkg)
		bundles := map[string]*declcfg.Bundle{}
		for _, chName := range sortedNames(mp.Channels) {
			mc := mp.Channels[chName]
			ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Name: mc.Name, Package: mp.Name, Entries: []declcfg.ChannelEntry{}, Properties: mc.Properties}
			for _, bName := range sortedNames(mc.Bundles) {
				mb := mc.Bundles[bName]
				ch.Entries = append(ch.Entries, declcfg.ChannelEntry{Name: mb.Name, Replaces: mb.Replaces, Skips: mb.Skips, SkipRange: mb.SkipRange})
				b, ok := bundles[mb.Name]
				if !ok {
					b = &declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: mb.Name, Package: mp.Name, Image: mb.Image, CsvJSON: mb.CsvJSON, Objects: mb.Objects}
					for _, ri := range mb.RelatedImages {
						b.RelatedImages = append(b.RelatedImages, declcfg.RelatedImage{Name: ri.Name, Image: ri.Image})
					}
					bundles[mb.Name] = b
				}
				b.Properties = append(b.Properties, mb.Properties...)
			}
			cfg.Channels = append(cfg.Channels, ch)
		}
		for _, bName := range sortedNames(bundles) {
			b := bundles[bName]
			b.Properties = dedupProperties(b.Properties)
			sortProperties(b.Properties)
			cfg.Bundles = append(cfg.Bundles, *b)
		}
	}
	return cfg
}

func dedupProperties(in []property.Property) []property.Property {
	seen := map[[2]string]bool{}
	var out []property.Property
	for _, p := range in {
		k := [2]string{p.Type, string(p.Value)}
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// addRelatedImages appends to each bundle the images of its related_image
// rows that its relatedImages do not already name, with no name (upstream
// adds them in no particular order; render sorts them by image).
func addRelatedImages(cfg *declcfg.DeclarativeConfig, rows map[string][]string) {
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		imgs := rows[b.Name]
		if len(imgs) == 0 {
			continue
		}
		have := map[string]bool{}
		for _, ri := range b.RelatedImages {
			have[ri.Image] = true
		}
		for _, img := range imgs {
			if !have[img] {
				have[img] = true
				b.RelatedImages = append(b.RelatedImages, declcfg.RelatedImage{Image: img})
			}
		}
	}
}
