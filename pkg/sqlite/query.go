package sqlite

import (
	"fmt"
	"slices"

	"github.com/opmkit/opm/pkg/declcfg"
)

// Queries of upstream's loader checks, on Contents.

// Render turns the contents into FBC as upstream's `opm render` does for a
// database (see DB.Render).
func (c *Contents) Render(warn func(string)) (*declcfg.DeclarativeConfig, error) {
	return convert(c, warn)
}

// inPackage calls fn for each entry of the package whose bundle has a
// row, in entry order.
func (c *Contents) inPackage(pkg string, fn func(e *Entry, b *Bundle)) {
	for i := range c.Entries {
		e := &c.Entries[i]
		if !e.Package.Valid || e.Package.String != pkg || !e.Bundle.Valid {
			continue
		}
		if b := c.Bundles[e.Bundle.String]; b != nil {
			fn(e, b)
		}
	}
}

// BundlePaths lists the images of the bundles in a package's channels.
func (c *Contents) BundlePaths(pkg string) []string {
	var out []string
	c.inPackage(pkg, func(_ *Entry, b *Bundle) {
		if !slices.Contains(out, b.Path.String) {
			out = append(out, b.Path.String)
		}
	})
	return out
}

// ChannelNames lists a package's channels.
func (c *Contents) ChannelNames(pkg string) []string {
	p := c.Packages[pkg]
	if p == nil {
		return nil
	}
	out := make([]string, len(p.Channels))
	for i, ch := range p.Channels {
		out[i] = ch.Name
	}
	return out
}

// InChannel reports whether a bundle is in a channel.
func (c *Contents) InChannel(pkg, channel, bundle string) bool {
	found := false
	c.inPackage(pkg, func(e *Entry, b *Bundle) {
		if e.Channel.String == channel && b.Name == bundle {
			found = true
		}
	})
	return found
}

// ReplacedBy names a bundle of the index whose entry in the channel
// replaces or skips the bundle's ("" for none).
func (c *Contents) ReplacedBy(pkg, channel, bundle string) string {
	ids := map[int64]bool{}
	c.inPackage(pkg, func(e *Entry, b *Bundle) {
		if e.Channel.String == channel && b.Name == bundle {
			ids[e.ID] = true
		}
	})
	by := ""
	for _, e := range c.Entries {
		if by == "" && e.Replaces.Valid && ids[e.Replaces.Int64] && e.Bundle.Valid && c.Bundles[e.Bundle.String] != nil {
			by = e.Bundle.String
		}
	}
	return by
}

// PackageBundle is a bundle in a package's channels as upstream's loader
// lists it when it chooses channel heads.
type PackageBundle struct {
	Name, Version string
	// Channels are every channel with an entry of the bundle.
	Channels []string
	// DefaultChannel is the package's.
	DefaultChannel string
}

// PackageBundles lists the bundles in a package's channels.
func (c *Contents) PackageBundles(pkg string) []PackageBundle {
	var out []PackageBundle
	seen := map[string]bool{}
	def := ""
	if p := c.Packages[pkg]; p != nil {
		def = p.DefaultChannel.String
	}
	c.inPackage(pkg, func(_ *Entry, b *Bundle) {
		if seen[b.Name] {
			return
		}
		seen[b.Name] = true
		v := b.Version.String
		if v == "" && b.CSV.Valid {
			if csv, err := parseCSV(b.CSV.String); err == nil {
				v, _ = csv.version()
			}
		}
		pb := PackageBundle{Name: b.Name, Version: v, DefaultChannel: def}
		for _, e := range c.Entries {
			if e.Bundle.String == b.Name && e.Channel.Valid && !slices.Contains(pb.Channels, e.Channel.String) {
				pb.Channels = append(pb.Channels, e.Channel.String)
			}
		}
		out = append(out, pb)
	})
	return out
}

// RemoveHead removes a bundle that heads every channel of the package it
// is in: its row, its related images and its entries.
func (c *Contents) RemoveHead(pkg, bundle string) error {
	for _, ch := range c.ChannelNames(pkg) {
		if by := c.ReplacedBy(pkg, ch, bundle); by != "" {
			return fmt.Errorf("cannot overwrite bundle %s from package %s: replaced by %s on channel %s", bundle, pkg, by, ch)
		}
	}
	delete(c.Bundles, bundle)
	delete(c.RelatedImages, bundle)
	c.Entries = slices.DeleteFunc(c.Entries, func(e Entry) bool { return e.Bundle.String == bundle })
	return nil
}
