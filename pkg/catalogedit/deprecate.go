package catalogedit

import (
	"fmt"
	"slices"

	"github.com/opmkit/opm/pkg/declcfg"
)

// Deprecation targets.
const (
	TargetPackage = "package"
	TargetChannel = "channel"
	TargetBundle  = "bundle"
)

// Deprecate writes deprecation entries for the package itself, some of its
// channels or some of its bundles into the package's olm.deprecations blob
// (created when it has none); an entry that exists gets the new message.
// With remove, the entries are taken out instead (and the blob with its
// last entry).
func (c *Catalog) Deprecate(pkg, target string, names []string, message string, remove bool) error {
	if _, err := c.requirePackage(pkg); err != nil {
		return err
	}
	var schema string
	switch target {
	case TargetPackage:
		schema = declcfg.SchemaPackage
		if len(names) > 0 {
			return refusef("deprecate package takes no names after the package")
		}
		names = []string{""}
	case TargetChannel:
		schema = declcfg.SchemaChannel
		for _, n := range names {
			if c.Channel(pkg, n) == nil {
				return c.unknownChannel(pkg, n)
			}
		}
	case TargetBundle:
		schema = declcfg.SchemaBundle
		names = slices.Clone(names)
		for i, n := range names {
			var err error
			if names[i], err = c.resolveBundle(pkg, n); err != nil {
				return err
			}
		}
	default:
		return refusef("cannot deprecate %q: expected package, channel or bundle", target)
	}
	if len(names) == 0 {
		return refusef("name the %ss of package %q to deprecate", target, pkg)
	}
	if !remove && message == "" {
		return refusef("a deprecation needs a message (--message)")
	}
	label := func(n string) string {
		if n == "" {
			return "package " + pkg
		}
		return target + " " + n
	}

	d := c.Deprecation(pkg)
	if d == nil {
		if remove {
			for _, n := range names {
				c.note(Change{Kind: KindNone, Package: pkg, Message: label(n) + " is not deprecated"})
			}
			return nil
		}
		dep := declcfg.Deprecation{Schema: declcfg.SchemaDeprecations, Package: pkg}
		for _, n := range names {
			dep.Entries = append(dep.Entries, declcfg.DeprecationEntry{
				Reference: declcfg.PackageScopedReference{Schema: schema, Name: n},
				Message:   message,
			})
		}
		place := c.placeDeprecation(pkg)
		v, err := c.newValue(dep, place, declcfg.SchemaDeprecations)
		if err != nil {
			return err
		}
		b, err := c.Create(v, place)
		if err != nil {
			return err
		}
		c.note(Change{Kind: KindDeprecationsAdded, Package: pkg, File: c.fileOf(b), Message: "added the olm.deprecations blob of " + pkg})
		for _, n := range names {
			c.note(Change{Kind: KindDeprecated, Package: pkg, Channel: pick(target == TargetChannel, n), Bundle: pick(target == TargetBundle, n), File: c.fileOf(b),
				Message: "deprecated " + label(n)})
		}
		return nil
	}

	if remove {
		var drop []int
		for _, n := range names {
			i := slices.IndexFunc(d.dep.Entries, func(e declcfg.DeprecationEntry) bool {
				return e.Reference.Schema == schema && e.Reference.Name == n
			})
			if i < 0 {
				c.note(Change{Kind: KindNone, Package: pkg, Message: label(n) + " is not deprecated"})
				continue
			}
			drop = append(drop, i)
			c.note(Change{Kind: KindUndeprecated, Package: pkg, Channel: pick(target == TargetChannel, n), Bundle: pick(target == TargetBundle, n), File: c.fileOf(d),
				Message: "removed the deprecation of " + label(n)})
		}
		if len(drop) == 0 {
			return nil
		}
		return c.dropDeprecationEntries(pkg, d, drop)
	}

	o, err := c.Edit(d)
	if err != nil {
		return err
	}
	list := entriesOf(o)
	sorted := keysSorted(o)
	for _, n := range names {
		i := slices.IndexFunc(d.dep.Entries, func(e declcfg.DeprecationEntry) bool {
			return e.Reference.Schema == schema && e.Reference.Name == n
		})
		if i >= 0 && i < len(list) {
			eo, ok := list[i].(*Object)
			if !ok {
				return fmt.Errorf("%s: deprecation entry %d is not an object", c.DisplayPos(d), i)
			}
			if eo.String("message") == message {
				c.note(Change{Kind: KindNone, Package: pkg, File: c.fileOf(d), Message: label(n) + " is already deprecated with this message"})
				continue
			}
			ne := clone(eo).(*Object)
			ne.Set("message", message)
			list[i] = ne
			c.note(Change{Kind: KindDeprecated, Package: pkg, Channel: pick(target == TargetChannel, n), Bundle: pick(target == TargetBundle, n), File: c.fileOf(d),
				Message: "updated the deprecation message of " + label(n)})
			continue
		}
		ref := &Object{Keys: []string{"schema"}, Vals: []any{schema}}
		if n != "" {
			ref.Set("name", n)
		}
		eo := &Object{Keys: []string{"reference", "message"}, Vals: []any{ref, message}}
		// like the entries already there; else as the blob's own keys
		if sib := mostKeys(list); sib != nil {
			eo = orderLikeDeep(eo, sib)
		} else if sorted {
			eo = writerOrder(eo)
		}
		list = append(list, eo)
		c.note(Change{Kind: KindDeprecated, Package: pkg, Channel: pick(target == TargetChannel, n), Bundle: pick(target == TargetBundle, n), File: c.fileOf(d),
			Message: "deprecated " + label(n)})
	}
	o.Set("entries", list)
	return c.Sync(d)
}

func pick(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// dropDeprecationEntries removes entries (by index) from pkg's
// deprecations blob, and the blob when none is left.
func (c *Catalog) dropDeprecationEntries(pkg string, d *Blob, drop []int) error {
	if len(drop) >= len(d.dep.Entries) {
		c.Delete(d)
		c.note(Change{Kind: KindUndeprecated, Package: pkg, File: c.fileOf(d), Message: "removed the olm.deprecations blob of " + pkg + " (no entry left)"})
		return nil
	}
	o, err := c.Edit(d)
	if err != nil {
		return err
	}
	list := entriesOf(o)
	var keep []any
	for i, v := range list {
		if !slices.Contains(drop, i) {
			keep = append(keep, v)
		}
	}
	o.Set("entries", keep)
	return c.Sync(d)
}
