package model

import (
	// Registers sha256 with go-digest: pull specs with digests fail as
	// "unsupported digest algorithm" without it.
	_ "crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/distribution/reference"

	"github.com/opmkit/opm/internal/k8sname"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Rule codes of the conversion stage (upstream's fail-fast checks).
const (
	CodePackageNoName             = "package-no-name"
	CodePackageDuplicate          = "package-duplicate"
	CodePackageNameInvalid        = "package-name-invalid"
	CodeChannelUnknownPackage     = "channel-unknown-package"
	CodeChannelNoName             = "channel-no-name"
	CodeChannelDuplicate          = "channel-duplicate"
	CodeChannelDuplicateEntry     = "channel-duplicate-entry"
	CodeChannelEntryNoBundle      = "channel-entry-without-bundle"
	CodeBundleNoPackage           = "bundle-no-package"
	CodeBundleUnknownPackage      = "bundle-unknown-package"
	CodeBundleDuplicate           = "bundle-duplicate"
	CodeBundlePropertiesInvalid   = "bundle-properties-invalid"
	CodeBundlePackagePropCount    = "bundle-package-property-count"
	CodeBundlePackagePropMismatch = "bundle-package-property-mismatch"
	CodeBundleImageInvalid        = "bundle-image-invalid"
	CodeBundleRelatedImageInvalid = "bundle-related-image-invalid"
	CodeBundleVersionInvalid      = "bundle-version-invalid"
	CodeBundleReleaseInvalid      = "bundle-release-invalid"
	CodeBundleNotInChannel        = "bundle-not-in-channel"
	CodeDeprecationNoPackage      = "deprecation-no-package"
	CodeDeprecationUnknownPackage = "deprecation-unknown-package"
	CodeDeprecationDuplicate      = "deprecation-duplicate-package"
	CodeDeprecationNoSchema       = "deprecation-entry-no-schema"
	CodeDeprecationDuplicateEntry = "deprecation-entry-duplicate"
	CodeDeprecationBundleNotFound = "deprecation-bundle-not-found"
	CodeDeprecationChannelMissing = "deprecation-channel-not-found"
	CodeDeprecationPackageNamed   = "deprecation-package-named"
	CodeDeprecationSchemaUnknown  = "deprecation-schema-unknown"
)

// ConvertToModel converts cfg into a model and validates it, as upstream:
// the conversion stops at the first problem (a *RuleError whose text is
// upstream's), then [Model.Validate] runs (a *ValidationError tree).
func ConvertToModel(cfg declcfg.DeclarativeConfig) (Model, error) {
	c := converter{}
	m := c.convert(cfg)
	if len(c.issues) > 0 {
		return nil, &RuleError{Issue: c.issues[0]}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Convert converts cfg without stopping at the first problem and without
// running [Model.Validate]. It returns every conversion issue in upstream's
// check order (the first one is what ConvertToModel reports) and the model
// built from the blobs that passed. When issues is empty, the model is
// exactly what ConvertToModel validates.
func Convert(cfg declcfg.DeclarativeConfig) (m Model, issues []Issue) {
	c := converter{collect: true}
	m = c.convert(cfg)
	return m, c.issues
}

type converter struct {
	collect bool
	issues  []Issue
}

// fail records an issue and reports whether conversion must stop.
func (c *converter) fail(is Issue) bool {
	c.issues = append(c.issues, is)
	return !c.collect
}

func (c *converter) convert(cfg declcfg.DeclarativeConfig) Model {
	m := Model{}
	defaultChannels := map[string]string{}
	for _, p := range cfg.Packages {
		is := Issue{Pos: p.Pos, Package: p.Name}
		if p.Name == "" {
			is.Code, is.Message = CodePackageNoName, "config contains package with no name"
			if c.fail(is) {
				return nil
			}
			continue
		}
		if _, ok := m[p.Name]; ok {
			is.Code, is.Message = CodePackageDuplicate, fmt.Sprintf("duplicate package %q", p.Name)
			if c.fail(is) {
				return nil
			}
			continue
		}
		if errs := k8sname.IsDNS1123Label(p.Name); len(errs) > 0 {
			is.Code, is.Message = CodePackageNameInvalid, fmt.Sprintf("invalid package name %q: %v", p.Name, errs)
			if c.fail(is) {
				return nil
			}
			continue
		}
		mp := &Package{Name: p.Name, Description: p.Description, Channels: map[string]*Channel{}, Pos: p.Pos}
		if p.Icon != nil {
			mp.Icon = &Icon{Data: p.Icon.Data, MediaType: p.Icon.MediaType}
		}
		defaultChannels[p.Name] = p.DefaultChannel
		m[p.Name] = mp
	}

	// channelEntries reproduces upstream's bookkeeping of entries without a
	// bundle blob, including its bug: the set is replaced per channel, so
	// only the last channel of each package is checked.
	channelEntries := map[string]map[string]declcfg.Position{}
	for _, ch := range cfg.Channels {
		is := Issue{Pos: ch.Pos, Package: ch.Package, Channel: ch.Name}
		mp, ok := m[ch.Package]
		if !ok {
			is.Code, is.Message = CodeChannelUnknownPackage, fmt.Sprintf("unknown package %q for channel %q", ch.Package, ch.Name)
			if c.fail(is) {
				return nil
			}
			continue
		}
		if ch.Name == "" {
			is.Code, is.Message = CodeChannelNoName, fmt.Sprintf("package %q contains channel with no name", ch.Package)
			if c.fail(is) {
				return nil
			}
			continue
		}
		if _, ok := mp.Channels[ch.Name]; ok {
			is.Code, is.Message = CodeChannelDuplicate, fmt.Sprintf("package %q has duplicate channel %q", ch.Package, ch.Name)
			if c.fail(is) {
				return nil
			}
			continue
		}
		mc := &Channel{Package: mp, Name: ch.Name, Bundles: make(map[string]*Bundle, len(ch.Entries)), Properties: ch.Properties, Pos: ch.Pos, Entries: ch.Entries}
		entries := make(map[string]declcfg.Position, len(ch.Entries))
		for _, e := range ch.Entries {
			if _, ok := mc.Bundles[e.Name]; ok {
				is.Bundle = e.Name
				is.Code, is.Message = CodeChannelDuplicateEntry, fmt.Sprintf("invalid package %q, channel %q: duplicate entry %q", ch.Package, ch.Name, e.Name)
				if c.fail(is) {
					return nil
				}
				continue
			}
			entries[e.Name] = ch.Pos
			mc.Bundles[e.Name] = &Bundle{Package: mp, Channel: mc, Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange, EntryPos: ch.Pos}
		}
		if defaultChannels[ch.Package] == ch.Name {
			mp.DefaultChannel = mc
		}
		mp.Channels[ch.Name] = mc
		channelEntries[ch.Package] = entries
	}

	packageBundles := map[string]map[string]bool{}
	parsed := parseAllProperties(cfg.Bundles)
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		// A bundle blob accounts for its entry even when it fails its own
		// checks (they are reported on their own).
		delete(channelEntries[b.Package], b.Name)
		if c.convertBundle(m, b, parsed[i], packageBundles) {
			return nil
		}
	}

	pkgNames := make([]string, 0, len(channelEntries))
	for p := range channelEntries {
		pkgNames = append(pkgNames, p)
	}
	sort.Strings(pkgNames)
	for _, p := range pkgNames {
		left := channelEntries[p]
		if len(left) == 0 {
			continue
		}
		names := make([]string, 0, len(left))
		var pos declcfg.Position
		for n, np := range left {
			names = append(names, n)
			pos = np
		}
		sort.Strings(names)
		is := Issue{Code: CodeChannelEntryNoBundle, Pos: pos, Package: p, Bundle: names[0],
			Message: fmt.Sprintf("no olm.bundle blobs found in package %q for olm.channel entries %s", p, names)}
		if c.fail(is) {
			return nil
		}
	}

	for _, mp := range m {
		dc := defaultChannels[mp.Name]
		if dc != "" && mp.DefaultChannel == nil {
			ch := &Channel{Package: mp, Name: dc, Bundles: map[string]*Bundle{}, Pos: mp.Pos}
			mp.DefaultChannel = ch
			mp.Channels[dc] = ch
		}
	}

	if c.convertDeprecations(m, cfg.Deprecations, packageBundles) {
		return nil
	}
	return m
}

// convertBundle attaches b to every channel that lists it; it reports
// whether conversion must stop.
func (c *converter) convertBundle(m Model, b *declcfg.Bundle, parsed parsedProps, packageBundles map[string]map[string]bool) bool {
	is := Issue{Pos: b.Pos, Package: b.Package, Bundle: b.Name}
	fail := func(code, format string, args ...any) bool {
		is.Code, is.Message = code, fmt.Sprintf(format, args...)
		return c.fail(is)
	}
	if b.Package == "" {
		return fail(CodeBundleNoPackage, "package name must be set for bundle %q", b.Name)
	}
	mp, ok := m[b.Package]
	if !ok {
		return fail(CodeBundleUnknownPackage, "unknown package %q for bundle %q", b.Package, b.Name)
	}
	seen := packageBundles[b.Package]
	if seen == nil {
		seen = map[string]bool{}
		packageBundles[b.Package] = seen
	}
	if seen[b.Name] {
		return fail(CodeBundleDuplicate, "package %q has duplicate bundle %q", b.Package, b.Name)
	}
	seen[b.Name] = true

	props, err := parsed.props, parsed.err
	if err != nil {
		return fail(CodeBundlePropertiesInvalid, "parse properties for bundle %q: %v", b.Name, err)
	}
	if len(props.Packages) != 1 {
		return fail(CodeBundlePackagePropCount, "package %q bundle %q must have exactly 1 %q property, found %d", b.Package, b.Name, property.TypePackage, len(props.Packages))
	}
	if b.Package != props.Packages[0].PackageName {
		return fail(CodeBundlePackagePropMismatch, "package %q does not match %q property %q", b.Package, property.TypePackage, props.Packages[0].PackageName)
	}
	if b.Image != "" {
		if err := checkPullSpec(b.Image); err != nil {
			return fail(CodeBundleImageInvalid, "package %q bundle %q image: invalid image pull spec %q: %v", b.Package, b.Name, b.Image, err)
		}
	}
	for i, ri := range b.RelatedImages {
		if ri.Image == "" {
			continue
		}
		if err := checkPullSpec(ri.Image); err != nil {
			return fail(CodeBundleRelatedImageInvalid, "package %q bundle %q relatedImages[%d].image: invalid image pull spec %q: %v", b.Package, b.Name, i, ri.Image, err)
		}
	}
	rawVersion := props.Packages[0].Version
	ver, err := semver.Parse(rawVersion)
	if err != nil {
		return fail(CodeBundleVersionInvalid, "error parsing bundle %q version %q: %v", b.Name, rawVersion, err)
	}
	rawRelease := props.Packages[0].Release
	rel, err := NewRelease(rawRelease)
	if err != nil {
		return fail(CodeBundleReleaseInvalid, "error parsing bundle %q release version %q: %v", b.Name, rawRelease, err)
	}

	var related []RelatedImage
	if len(b.RelatedImages) > 0 {
		related = make([]RelatedImage, len(b.RelatedImages))
		for i, ri := range b.RelatedImages {
			related[i] = RelatedImage{Name: ri.Name, Image: ri.Image}
		}
	}
	found := false
	for _, mc := range mp.Channels {
		mb, ok := mc.Bundles[b.Name]
		if !ok {
			continue
		}
		found = true
		mb.Image = b.Image
		mb.Properties = b.Properties
		mb.RelatedImages = related
		mb.CsvJSON = b.CsvJSON
		mb.Objects = b.Objects
		mb.PropertiesP = props
		mb.Version = ver
		mb.Release = rel
		mb.Pos = b.Pos
		mb.HasBlob = true
	}
	if !found {
		return fail(CodeBundleNotInChannel, "package %q, bundle %q not found in any channel entries", b.Package, b.Name)
	}
	return false
}

func (c *converter) convertDeprecations(m Model, deps []declcfg.Deprecation, packageBundles map[string]map[string]bool) bool {
	done := map[string]bool{}
	for i, d := range deps {
		is := Issue{Pos: d.Pos, Package: d.Package}
		fail := func(code, format string, args ...any) bool {
			is.Code, is.Message = code, fmt.Sprintf(format, args...)
			return c.fail(is)
		}
		if d.Package == "" {
			if fail(CodeDeprecationNoPackage, "package name must be set for deprecation item %v", i) {
				return true
			}
			continue
		}
		mp, ok := m[d.Package]
		if !ok {
			if fail(CodeDeprecationUnknownPackage, "cannot apply deprecations to an unknown package %q", d.Package) {
				return true
			}
			continue
		}
		if done[d.Package] {
			if fail(CodeDeprecationDuplicate, "expected a maximum of one deprecation per package: %q", d.Package) {
				return true
			}
			continue
		}
		done[d.Package] = true

		refs := map[declcfg.PackageScopedReference]bool{}
		for j, e := range d.Entries {
			is.Channel, is.Bundle = "", ""
			ref := e.Reference
			if ref.Schema == "" {
				if fail(CodeDeprecationNoSchema, "schema must be set for deprecation entry [%v] for package %q", j, d.Package) {
					return true
				}
				continue
			}
			if refs[ref] {
				if fail(CodeDeprecationDuplicateEntry, "duplicate deprecation entry %#v for package %q", ref, d.Package) {
					return true
				}
				continue
			}
			refs[ref] = true
			dep := &Deprecation{Message: e.Message, Pos: d.Pos}
			switch ref.Schema {
			case declcfg.SchemaBundle:
				is.Bundle = ref.Name
				if !packageBundles[d.Package][ref.Name] {
					if fail(CodeDeprecationBundleNotFound, "cannot deprecate bundle %q for package %q: bundle not found", ref.Name, d.Package) {
						return true
					}
					continue
				}
				for _, mc := range mp.Channels {
					if mb, ok := mc.Bundles[ref.Name]; ok {
						mb.Deprecation = dep
					}
				}
			case declcfg.SchemaChannel:
				is.Channel = ref.Name
				mc, ok := mp.Channels[ref.Name]
				if !ok {
					if fail(CodeDeprecationChannelMissing, "cannot deprecate channel %q for package %q: channel not found", ref.Name, d.Package) {
						return true
					}
					continue
				}
				mc.Deprecation = dep
			case declcfg.SchemaPackage:
				if ref.Name != "" {
					if fail(CodeDeprecationPackageNamed, "package name must be empty for deprecated package %q (specified %q)", d.Package, ref.Name) {
						return true
					}
					continue
				}
				mp.Deprecation = dep
			default:
				if fail(CodeDeprecationSchemaUnknown, "cannot deprecate object %#v referenced by entry %v for package %q: object schema unknown", ref, j, d.Package) {
					return true
				}
			}
		}
	}
	return false
}

// checkPullSpec parses an image pull spec as upstream does. distribution's
// newer releases name the offending repository in the uppercase error;
// upstream's (older) text does not, and ours follows upstream.
func checkPullSpec(s string) error {
	_, err := reference.ParseNormalizedNamed(s)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "invalid reference format: repository name (") && strings.HasSuffix(msg, ") must be lowercase") {
		return errors.New("invalid reference format: repository name must be lowercase")
	}
	return err
}
