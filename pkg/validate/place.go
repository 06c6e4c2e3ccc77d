package validate

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/property"
)

// Placing model issues.
//
// pkg/model reports each problem with upstream's message and the blob it
// comes from. place works out which element of which blob the problem is
// about, from the rule and the blob: the entry of a channel, one of its
// skips, a property's version, a field. Problems upstream reports on a
// bundle about its channel entry (an empty skip, an invalid skipRange) are
// moved to the channel blob that holds the entry.

var (
	propertyIndexRE     = regexp.MustCompile(`property\[(\d+)\]`)
	relatedImageIndexRE = regexp.MustCompile(`relatedImages\[(\d+)\]`)
	skipIndexRE         = regexp.MustCompile(`^skip\[(\d+)\]`)
	deprecationEntryRE  = regexp.MustCompile(`entry \[?(\d+)\]? for package`)
)

// issueFinding turns an issue of this group's model into a finding placed
// at the element it is about. seen counts issues by rule and subject, for
// rules reported once per repetition (a duplicate entry).
func (g *group) issueFinding(is model.Issue, seen map[string]int) Finding {
	f := Finding{Severity: SeverityError, Code: is.Code, Message: is.Message, Package: is.Package,
		Channel: is.Channel, Bundle: is.Bundle, at: blobOf(is.Pos)}
	g.place(&f, seen)
	g.finish(&f)
	return f
}

// finish resolves the finding's blob: its position, its index in the
// source and its stable key.
func (g *group) finish(f *Finding) {
	f.ref = -1
	at := f.at
	if !at.ok || at.i >= len(g.pos[at.kind]) {
		return
	}
	p := g.pos[at.kind][at.i]
	f.File, f.Line, f.Column = p.File, p.Line, p.Column
	f.ref = g.ref[at.kind][at.i]
	f.key = g.stablePath(at, f.Path)
	if at.kind == declcfg.KindOther {
		m := g.cfg.Others[at.i]
		f.key = m.Schema + "/" + m.Name + ":" + f.key
	}
}

func (g *group) place(f *Finding, seen map[string]int) {
	at := f.at
	if !at.ok {
		return
	}
	var ch *declcfg.Channel
	var b *declcfg.Bundle
	var d *declcfg.Deprecation
	switch at.kind {
	case declcfg.KindChannel:
		ch = &g.cfg.Channels[at.i]
	case declcfg.KindBundle:
		b = &g.cfg.Bundles[at.i]
	case declcfg.KindDeprecation:
		d = &g.cfg.Deprecations[at.i]
	}
	entry := func(name string) string {
		if ch == nil {
			return ""
		}
		if k := entryIndex(ch.Entries, name, 0); k >= 0 {
			return "entries[" + strconv.Itoa(k) + "]"
		}
		return "entries"
	}
	pkgProp := func(rest string) string {
		if b == nil {
			return ""
		}
		if i := nthProperty(b.Properties, property.TypePackage, 0); i >= 0 {
			return "properties[" + strconv.Itoa(i) + "]" + rest
		}
		return "properties"
	}
	depEntry := func(rest string, match func(declcfg.PackageScopedReference) bool) string {
		if d == nil {
			return ""
		}
		for j, e := range d.Entries {
			if match(e.Reference) {
				return "entries[" + strconv.Itoa(j) + "]" + rest
			}
		}
		return "entries"
	}
	// moveToEntry moves a problem upstream reports on a bundle to its entry
	// in the channel blob.
	moveToEntry := func(rest string) {
		ci := channelIndex(g.cfg.Channels, f.Channel)
		if ci < 0 {
			return
		}
		f.at = blobID{kind: declcfg.KindChannel, i: ci, ok: true}
		ch = &g.cfg.Channels[ci]
		if p := entry(f.Bundle); p != "entries" {
			f.Path = p + rest
		} else {
			f.Path = p
		}
	}

	switch f.Code {
	case model.CodePackageNoName, model.CodePackageDuplicate, model.CodePackageNameInvalid,
		model.CodeChannelNoName, model.CodeChannelDuplicate, model.CodeBundleDuplicate,
		model.CodeBundleNotInChannel, model.CodeBundleNameNotNormalized:
		f.Path = "name"
	case model.CodeChannelUnknownPackage, model.CodeBundleNoPackage, model.CodeBundleUnknownPackage,
		model.CodeDeprecationNoPackage, model.CodeDeprecationUnknownPackage, model.CodeDeprecationDuplicate:
		f.Path = "package"
	case model.CodeChannelDuplicateEntry:
		if ch != nil {
			key := f.Code + "\x00" + strconv.Itoa(at.i) + "\x00" + f.Bundle
			n := seen[key]
			seen[key]++
			if k := entryIndex(ch.Entries, f.Bundle, n+1); k >= 0 {
				f.Path = "entries[" + strconv.Itoa(k) + "]"
			}
		}
	case model.CodeChannelEntryNoBundle:
		f.Path = entry(f.Bundle)
	case model.CodeBundlePropertiesInvalid:
		if m := propertyIndexRE.FindStringSubmatch(f.Message); m != nil {
			f.Path = "properties[" + m[1] + "].value"
		} else {
			f.Path = "properties"
		}
	case model.CodeBundlePackagePropCount:
		if b != nil {
			if i := nthProperty(b.Properties, property.TypePackage, 1); i >= 0 {
				f.Path = "properties[" + strconv.Itoa(i) + "]"
			} else {
				f.Path = "properties"
			}
		}
	case model.CodeBundlePackagePropMismatch:
		f.Path = pkgProp(".value.packageName")
	case model.CodeBundleImageInvalid:
		f.Path = "image"
	case model.CodeBundleRelatedImageInvalid:
		if m := relatedImageIndexRE.FindStringSubmatch(f.Message); m != nil {
			f.Path = "relatedImages[" + m[1] + "].image"
		}
	case model.CodeBundleVersionInvalid, model.CodeBundleBuildMetaAndRelease:
		f.Path = pkgProp(".value.version")
	case model.CodeBundleReleaseInvalid:
		f.Path = pkgProp(".value.release")
	case model.CodeDeprecationNoSchema, model.CodeDeprecationSchemaUnknown:
		if m := deprecationEntryRE.FindStringSubmatch(f.Message); m != nil {
			f.Path = "entries[" + m[1] + "].reference"
			if f.Code == model.CodeDeprecationSchemaUnknown {
				f.Path += ".schema"
			}
		}
	case model.CodeDeprecationDuplicateEntry:
		if d != nil {
			key := f.Code + "\x00" + strconv.Itoa(at.i)
			n := seen[key]
			seen[key]++
			refs := map[declcfg.PackageScopedReference]bool{}
			for j, e := range d.Entries {
				if e.Reference.Schema == "" {
					continue
				}
				if refs[e.Reference] {
					if n == 0 {
						f.Path = "entries[" + strconv.Itoa(j) + "].reference"
						break
					}
					n--
				}
				refs[e.Reference] = true
			}
		}
	case model.CodeDeprecationBundleNotFound:
		f.Path = depEntry(".reference.name", func(r declcfg.PackageScopedReference) bool {
			return r.Schema == declcfg.SchemaBundle && r.Name == f.Bundle
		})
	case model.CodeDeprecationChannelMissing:
		f.Path = depEntry(".reference.name", func(r declcfg.PackageScopedReference) bool {
			return r.Schema == declcfg.SchemaChannel && r.Name == f.Channel
		})
	case model.CodeDeprecationPackageNamed:
		f.Path = depEntry(".reference.name", func(r declcfg.PackageScopedReference) bool {
			return r.Schema == declcfg.SchemaPackage && r.Name != ""
		})
	case model.CodeDeprecationNoMessage:
		f.Path = depEntry(".message", func(r declcfg.PackageScopedReference) bool {
			switch {
			case f.Bundle != "":
				return r.Schema == declcfg.SchemaBundle && r.Name == f.Bundle
			case f.Channel != "":
				return r.Schema == declcfg.SchemaChannel && r.Name == f.Channel
			}
			return r.Schema == declcfg.SchemaPackage
		})
	case model.CodePackageNoDefaultChannel:
		f.Path = "defaultChannel"
	case model.CodeChannelEmpty:
		if at.kind == declcfg.KindPackage {
			// The default channel upstream adds when none is declared.
			f.Path = "defaultChannel"
		} else {
			f.Path = "entries"
		}
	case model.CodeChannelNoHead:
		f.Path = "entries"
	case model.CodeChannelMultipleHeads, model.CodeChannelStranded:
		f.Path = entry(firstName(f.Message, ", "))
	case model.CodeChannelCycle:
		if p := entry(firstName(f.Message, " -> ")); strings.HasPrefix(p, "entries[") {
			f.Path = p + ".replaces"
		} else {
			f.Path = p
		}
	case model.CodeBundleSkipEmpty:
		if m := skipIndexRE.FindStringSubmatch(f.Message); m != nil {
			moveToEntry(".skips[" + m[1] + "]")
		}
	case model.CodeBundleSkipRangeInvalid:
		moveToEntry(".skipRange")
	case model.CodeBundlePackagePropMissing:
		if ch != nil {
			f.Path = entry(f.Bundle)
		} else {
			f.Path = "properties"
		}
	case model.CodeBundleImageMissing:
		if ch != nil {
			f.Path = entry(f.Bundle)
		} else {
			f.Path = "image"
		}
	}
}

// firstName returns the first name of a list after the last ": " of msg.
func firstName(msg, sep string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	name, _, _ := strings.Cut(msg, sep)
	return name
}

// entryIndex returns the index of the n-th (0-based) entry named name, or
// -1.
func entryIndex(entries []declcfg.ChannelEntry, name string, n int) int {
	for k, e := range entries {
		if e.Name == name {
			if n == 0 {
				return k
			}
			n--
		}
	}
	return -1
}

// channelIndex returns the index of the first channel named name, the one
// the model keeps, or -1.
func channelIndex(chs []declcfg.Channel, name string) int {
	for i, c := range chs {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// nthProperty returns the index of the n-th (0-based) property of type
// typ, or -1.
func nthProperty(props []property.Property, typ string, n int) int {
	for i, p := range props {
		if p.Type == typ {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// stablePath rewrites the indices of path into what they index: entries
// and skips by name, properties by type (and rank among those of that
// type), related images by name, deprecation entries by reference. Keys
// built from it survive edits that move elements around.
func (g *group) stablePath(at blobID, path string) string {
	if path == "" {
		return ""
	}
	elems := parsePath(path)
	var sb strings.Builder
	var entries []declcfg.ChannelEntry
	var props []property.Property
	var related []declcfg.RelatedImage
	var deps []declcfg.DeprecationEntry
	switch at.kind {
	case declcfg.KindChannel:
		entries, props = g.cfg.Channels[at.i].Entries, g.cfg.Channels[at.i].Properties
	case declcfg.KindBundle:
		props, related = g.cfg.Bundles[at.i].Properties, g.cfg.Bundles[at.i].RelatedImages
	case declcfg.KindPackage:
		props = g.cfg.Packages[at.i].Properties
	case declcfg.KindDeprecation:
		deps = g.cfg.Deprecations[at.i].Entries
	}
	var skips []string
	for n, e := range elems {
		if e.index < 0 {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(e.key)
			continue
		}
		name := ""
		if n > 0 {
			switch parent := elems[n-1].key; {
			case n == 1 && parent == "entries" && e.index < len(entries):
				name = entries[e.index].Name
				skips = entries[e.index].Skips
			case n == 1 && parent == "entries" && e.index < len(deps):
				r := deps[e.index].Reference
				name = r.Schema + ":" + r.Name
			case n == 1 && parent == "properties" && e.index < len(props):
				t := props[e.index].Type
				rank := 0
				for _, p := range props[:e.index] {
					if p.Type == t {
						rank++
					}
				}
				name = t + "#" + strconv.Itoa(rank)
			case n == 1 && parent == "relatedImages" && e.index < len(related):
				name = related[e.index].Name + "=" + related[e.index].Image
			case n == 3 && parent == "skips" && e.index < len(skips):
				name = skips[e.index]
			}
		}
		if name == "" {
			sb.WriteString("[" + strconv.Itoa(e.index) + "]")
		} else {
			sb.WriteString("[" + strconv.Quote(name) + "]")
		}
	}
	return sb.String()
}
