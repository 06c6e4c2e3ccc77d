package catalogedit

import (
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// UsesCSVMetadata reports whether pkg's newest bundle carries
// olm.csv.metadata (rather than olm.bundle.object properties), the form a
// bundle added to the package should take.
func (c *Catalog) UsesCSVMetadata(pkg string) bool {
	var best *declcfg.Bundle
	var bestV semver.Version
	for _, b := range c.Bundles(pkg) {
		v, err := graph.BundleVersion(b.bundle)
		if err != nil {
			continue
		}
		if best == nil || v.GT(bestV) {
			best, bestV = b.bundle, v
		}
	}
	if best == nil {
		return false
	}
	for _, p := range best.Properties {
		if p.Type == property.TypeCSVMetadata {
			return true
		}
	}
	return false
}

// AddBundle inserts a rendered bundle into its package and adds it to
// channels with the edges asked for. With create, a missing package
// (default channel: the first channel) and missing channels are created.
// A template gets a bundle stub naming the bundle's image.
func (c *Catalog) AddBundle(b declcfg.Bundle, channels []string, e Edges, create bool) error {
	if err := e.Check(); err != nil {
		return err
	}
	if len(channels) == 0 {
		return refusef("name at least one channel for bundle %q", b.Name)
	}
	pkg := b.Package
	if pkg == "" || b.Name == "" {
		return refusef("the rendered bundle has no package or name")
	}
	ver, err := graph.BundleVersion(&b)
	if err != nil {
		return refusef("bundle %q: %v", b.Name, err)
	}
	if c.Package(pkg) == nil {
		if !create {
			e := c.unknownPackage(pkg)
			e.Hint = fmt.Sprintf("add --create to create it, with default channel %q", channels[0])
			return e
		}
		if err := c.createPackage(pkg, channels[0]); err != nil {
			return err
		}
	}
	if c.hasBundle(pkg, b.Name) {
		return refusef("package %q already has a bundle %q", pkg, b.Name)
	}
	place, err := c.placeBundle(pkg, b.Name, &ver)
	if err != nil {
		return err
	}
	var v *Object
	if c.Template {
		if b.Image == "" {
			return refusef("a basic template lists bundle images: bundle %q has no image", b.Name)
		}
		v = &Object{Keys: []string{"schema", "image"}, Vals: []any{declcfg.SchemaBundle, b.Image}}
		v = shapeNew(v, c.refValue(c.single, declcfg.SchemaBundle))
	} else {
		b.Schema = declcfg.SchemaBundle
		v, err = c.newValue(b, place, declcfg.SchemaBundle)
		if err != nil {
			return err
		}
	}
	// entries first, so that a new package's file lists its channels
	// before its bundle, as upstream writes them
	noteAt := len(c.changes)
	what := fmt.Sprintf("adding %s", b.Name)
	for _, ch := range channels {
		if err := c.addEntry(what, pkg, ch, b.Name, &ver, e, create); err != nil {
			return err
		}
	}
	nb, err := c.Create(v, place)
	if err != nil {
		return err
	}
	if c.Template {
		// the stub has no name: keep the bundle's for what follows
		nb.Name = b.Name
	}
	c.changes = append(c.changes[:noteAt], append([]Change{{Kind: KindBundleAdded, Package: pkg, Bundle: b.Name, File: c.fileOf(nb),
		Message: fmt.Sprintf("added bundle %s (%s)", b.Name, ver)}}, c.changes[noteAt:]...)...)
	return nil
}

// createPackage adds an olm.package blob.
func (c *Catalog) createPackage(pkg, defaultChannel string) error {
	place, err := c.placePackage(pkg)
	if err != nil {
		return err
	}
	p := declcfg.Package{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: defaultChannel}
	v, err := c.newValue(p, place, declcfg.SchemaPackage)
	if err != nil {
		return err
	}
	b, err := c.Create(v, place)
	if err != nil {
		return err
	}
	c.note(Change{Kind: KindPackageAdded, Package: pkg, File: c.fileOf(b),
		Message: fmt.Sprintf("added package %s (default channel %s)", pkg, defaultChannel)})
	return nil
}
