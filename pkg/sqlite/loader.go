package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opmkit/opm/pkg/property"
)

// The loader operations below change Contents as upstream's index loader
// changed a database: `opm index add` built its databases with them, and
// opm's `index add` builds its catalogs with them, so that a catalog comes
// out as upstream's database rendered.

// NewContents returns empty contents.
func NewContents() *Contents {
	return &Contents{
		Packages:      map[string]*Package{},
		Bundles:       map[string]*Bundle{},
		RelatedImages: map[string][]string{},
	}
}

// nextEntryID is the id SQLite gives the next channel_entry row.
func (c *Contents) nextEntryID() int64 {
	if len(c.Entries) == 0 {
		return 1
	}
	return c.Entries[len(c.Entries)-1].ID + 1
}

// AddBundle adds a bundle row and the images of its related_image rows.
func (c *Contents) AddBundle(b *Bundle, images []string) error {
	if _, ok := c.Bundles[b.Name]; ok {
		return fmt.Errorf("failed to add bundle %q: UNIQUE constraint failed: operatorbundle.name", b.Name)
	}
	c.Bundles[b.Name] = b
	c.RelatedImages[b.Name] = append(c.RelatedImages[b.Name], images...)
	return nil
}

// RemovePackage drops a package, its channels and their entries (not its
// bundles), as the loader does before it writes a package's channels anew.
func (c *Contents) RemovePackage(name string) {
	if _, ok := c.Packages[name]; ok {
		delete(c.Packages, name)
		c.PackageOrder = slices.DeleteFunc(c.PackageOrder, func(n string) bool { return n == name })
	}
	c.Entries = slices.DeleteFunc(c.Entries, func(e Entry) bool { return e.Package.Valid && e.Package.String == name })
}

func (c *Contents) addPackage(name string) *Package {
	p := c.Packages[name]
	if p == nil {
		p = &Package{Name: name}
		c.Packages[name] = p
		c.PackageOrder = append(c.PackageOrder, name)
	}
	return p
}

func (c *Contents) addEntry(channel, pkg, bundle string, depth int64) int64 {
	id := c.nextEntryID()
	c.Entries = append(c.Entries, Entry{
		ID:      id,
		Channel: sql.NullString{String: channel, Valid: true},
		Package: sql.NullString{String: pkg, Valid: true},
		Bundle:  sql.NullString{String: bundle, Valid: true},
		Depth:   sql.NullInt64{Int64: depth, Valid: true},
	})
	return id
}

func (c *Contents) setReplaces(id, replaces int64) {
	for i := range c.Entries {
		if c.Entries[i].ID == id {
			c.Entries[i].Replaces = sql.NullInt64{Int64: replaces, Valid: true}
			return
		}
	}
}

// Deprecated reports whether a bundle has an olm.deprecated property.
func (b *Bundle) Deprecated() bool {
	for _, p := range b.Properties {
		if p.Type.String == property.TypeDeprecated {
			return true
		}
	}
	return false
}

// Head is a channel and the bundle at its head.
type Head struct {
	Channel, Bundle string
}

// addPackageProperty adds the olm.package row the loader writes for each
// bundle it walks, unless the bundle already has an olm.package property
// of that package (upstream would add a second, different one for a bundle
// whose own olm.package says more, a release, and fail validation).
func (b *Bundle) addPackageProperty(pkg string) {
	raw, _ := json.Marshal(property.Package{PackageName: pkg, Version: b.Version.String})
	for _, p := range b.Properties {
		if p.Type.String != property.TypePackage || p.Value.String == string(raw) {
			continue
		}
		var v property.Package
		if json.Unmarshal([]byte(p.Value.String), &v) == nil && v.PackageName == pkg {
			return
		}
	}
	b.Properties = append(b.Properties, TypedValue{Type: valid(property.TypePackage), Value: valid(string(raw))})
}

func valid(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// SetPackageChannels writes a package's channels from their heads, as
// upstream's loader does in replaces mode: each channel is walked from its
// head along the bundles' replaces, every skip adding an entry for the
// skipped bundle; a channel whose head is deprecated is left out, and the
// walk stops at a deprecated bundle. Every error is collected; any error
// leaves the contents as they were.
func (c *Contents) SetPackageChannels(pkg, defaultChannel string, heads []Head) error {
	saved := c.snapshot()
	c.RemovePackage(pkg)
	p := c.addPackage(pkg)
	var errs []error
	var kept []Head
	for _, h := range heads {
		if b := c.Bundles[h.Bundle]; b != nil && b.Deprecated() {
			continue
		}
		p.Channels = append(p.Channels, Channel{Name: h.Channel, Head: valid(h.Bundle)})
		if h.Channel == defaultChannel {
			p.DefaultChannel = valid(h.Channel)
		}
		kept = append(kept, h)
	}
	if !p.DefaultChannel.Valid {
		errs = append(errs, fmt.Errorf("no default channel specified for %s", pkg))
	}
	for _, h := range kept {
		errs = append(errs, c.walk(pkg, h)...)
	}
	if err := errors.Join(errs...); err != nil {
		c.restore(saved)
		return err
	}
	return nil
}

// walk adds the entries of one channel, from its head down.
func (c *Contents) walk(pkg string, h Head) []error {
	var errs []error
	current := h.Bundle
	currentID := c.addEntry(h.Channel, pkg, current, 0)
	depth := int64(1)
	seen := map[string]bool{current: true}
	for {
		b := c.Bundles[current]
		if b == nil {
			errs = append(errs, fmt.Errorf("no bundle found for bundlename %s", current))
			break
		}
		b.addPackageProperty(pkg)
		if b.Deprecated() {
			break
		}
		var skips []string
		if b.Skips.Valid && b.Skips.String != "" {
			skips = strings.Split(b.Skips.String, ",")
		}
		replaces := b.Replaces.String
		if e, ok := b.Edges[h.Channel]; ok {
			skips, replaces = e.Skips, e.Replaces
		}
		for _, s := range skips {
			skipped := c.addEntry(h.Channel, pkg, s, depth)
			synthetic := c.addEntry(h.Channel, pkg, current, depth)
			c.setReplaces(synthetic, skipped)
			depth++
		}
		if replaces == "" {
			break
		}
		replacedID := c.addEntry(h.Channel, pkg, replaces, depth)
		if seen[replaces] {
			errs = append(errs, fmt.Errorf("channel %q of package %q: replaces cycle: %s replaces %s, which is already in the chain", h.Channel, pkg, current, replaces))
			break
		}
		seen[replaces] = true
		c.setReplaces(currentID, replacedID)
		if c.Bundles[replaces] == nil {
			errs = append(errs, fmt.Errorf("invalid bundle %s: channel %q of package %q reaches %s, which replaces %s, a bundle not in the index (add it, or correct spec.replaces)", h.Bundle, h.Channel, pkg, current, replaces))
			break
		}
		currentID = replacedID
		current = replaces
		depth++
	}
	return errs
}

// GraphNode is a bundle of a channel graph.
type GraphNode struct {
	Name, Version, Path string
}

// ChannelGraph is a channel as upstream's semver modes build it: its head,
// and for each bundle in it the bundles it replaces (those that are not in
// the channel are its skips).
type ChannelGraph struct {
	Head  GraphNode
	Nodes map[GraphNode][]GraphNode
	// Order lists the nodes in the order they were added.
	Order []GraphNode
}

// PackageGraph is a package as upstream's semver modes build it.
type PackageGraph struct {
	Name           string
	DefaultChannel string
	Channels       map[string]*ChannelGraph
	// ChannelOrder lists the channels in the order they were added.
	ChannelOrder []string
}

// SetPackageGraph writes a package's channels from its graph, as upstream's
// loader does in the semver modes: each channel walked from its head
// through the one replaced bundle that is in the channel, the others
// becoming skips. A graph with nodes the walk does not reach is an error.
func (c *Contents) SetPackageGraph(g *PackageGraph) error {
	saved := c.snapshot()
	p := c.addPackage(g.Name)
	var errs []error
	for _, name := range g.ChannelOrder {
		ch := g.Channels[name]
		i := slices.IndexFunc(p.Channels, func(x Channel) bool { return x.Name == name })
		if i < 0 {
			p.Channels = append(p.Channels, Channel{Name: name})
			i = len(p.Channels) - 1
		}
		p.Channels[i].Head = valid(ch.Head.Name)
	}
	if slices.ContainsFunc(p.Channels, func(x Channel) bool { return x.Name == g.DefaultChannel }) {
		p.DefaultChannel = valid(g.DefaultChannel)
	} else {
		errs = append(errs, fmt.Errorf("the default channel (%s) does not exist", g.DefaultChannel))
	}
	for _, name := range g.ChannelOrder {
		ch := g.Channels[name]
		c.Entries = slices.DeleteFunc(c.Entries, func(e Entry) bool {
			return e.Package.String == g.Name && e.Channel.String == name
		})
		current := ch.Head
		depth := int64(0)
		var previous int64
		for {
			id := c.addEntry(name, g.Name, current.Name, depth)
			if previous != 0 {
				c.setReplaces(previous, id)
			}
			var next *GraphNode
			var synthetic []GraphNode
			for _, r := range ch.Nodes[current] {
				if _, ok := ch.Nodes[r]; ok {
					r := r
					next = &r
				} else {
					synthetic = append(synthetic, r)
				}
			}
			sd := depth + 1
			for _, s := range synthetic {
				sid := c.addEntry(name, g.Name, s.Name, sd)
				cid := c.addEntry(name, g.Name, current.Name, sd)
				c.setReplaces(cid, sid)
				sd++
			}
			if next == nil {
				if want := int64(len(ch.Nodes) - 1); want != depth {
					errs = append(errs, fmt.Errorf("invalid graph of channel %q of package %q: %d of its %d bundles are not reached from its head %s", name, g.Name, int64(len(ch.Nodes))-1-depth, len(ch.Nodes), ch.Head.Name))
				}
				break
			}
			if depth > int64(len(ch.Nodes)) {
				errs = append(errs, fmt.Errorf("invalid graph of channel %q of package %q: a replaces cycle", name, g.Name))
				break
			}
			current = *next
			previous = id
			depth++
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.restore(saved)
		return err
	}
	return nil
}

// ClearNonHeadBundles drops the manifests and CSV of every bundle that has
// an image and heads no channel, as upstream's loader does after an add in
// the semver modes.
func (c *Contents) ClearNonHeadBundles() {
	heads := map[string]bool{}
	for _, p := range c.Packages {
		for _, ch := range p.Channels {
			if ch.Head.Valid {
				heads[ch.Head.String] = true
			}
		}
	}
	for _, b := range c.Bundles {
		if b.Path.Valid && b.Path.String != "" && !heads[b.Name] {
			b.Manifests = sql.NullString{}
			b.CSV = sql.NullString{}
			// without its CSV, a bundle's relatedImages are its
			// related_image rows, with no names
			b.Related = nil
		}
	}
}

type snapshot struct {
	pkgs    map[string]Package
	order   []string
	entries []Entry
	props   map[string][]TypedValue
}

func (c *Contents) snapshot() snapshot {
	s := snapshot{
		pkgs:    map[string]Package{},
		order:   slices.Clone(c.PackageOrder),
		entries: slices.Clone(c.Entries),
		props:   map[string][]TypedValue{},
	}
	for k, p := range c.Packages {
		cp := *p
		cp.Channels = slices.Clone(p.Channels)
		s.pkgs[k] = cp
	}
	for k, b := range c.Bundles {
		s.props[k] = slices.Clone(b.Properties)
	}
	return s
}

func (c *Contents) restore(s snapshot) {
	c.Packages = map[string]*Package{}
	for k, p := range s.pkgs {
		p := p
		c.Packages[k] = &p
	}
	c.PackageOrder = s.order
	c.Entries = s.entries
	for k, b := range c.Bundles {
		b.Properties = s.props[k]
	}
}
