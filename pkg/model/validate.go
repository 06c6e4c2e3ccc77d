package model

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Rule codes of the model validation (upstream's error tree).
const (
	CodePackageNameEmpty          = "package-name-empty"
	CodePackageNoDefaultChannel   = "package-default-channel-unset"
	CodePackageNoChannels         = "package-no-channels"
	CodePackageChannelKey         = "package-channel-key-mismatch"
	CodePackageChannelLink        = "package-channel-not-linked"
	CodePackageDuplicateVersions  = "package-duplicate-versions"
	CodePackageDefaultNotFound    = "package-default-channel-not-found"
	CodeDeprecationNoMessage      = "deprecation-no-message"
	CodeChannelNameEmpty          = "channel-name-empty"
	CodeChannelNoPackage          = "channel-package-unset"
	CodeChannelEmpty              = "channel-empty"
	CodeChannelNoHead             = "channel-no-head"
	CodeChannelMultipleHeads      = "channel-multiple-heads"
	CodeChannelCycle              = "channel-replaces-cycle"
	CodeChannelStranded           = "channel-stranded-bundles"
	CodeChannelBundleKey          = "channel-bundle-key-mismatch"
	CodeChannelBundleLink         = "channel-bundle-not-linked"
	CodeBundleNameEmpty           = "bundle-name-empty"
	CodeBundleNameNotNormalized   = "bundle-name-not-normalized"
	CodeBundleChannelUnset        = "bundle-channel-unset"
	CodeBundlePackageUnset        = "bundle-package-unset"
	CodeBundlePackageChannel      = "bundle-package-channel-mismatch"
	CodeBundleSkipEmpty           = "bundle-skip-empty"
	CodeBundleSkipRangeInvalid    = "bundle-skiprange-invalid"
	CodeBundlePackagePropMissing  = "bundle-package-property-missing"
	CodeBundleImageMissing        = "bundle-image-missing"
	CodeBundleBuildMetaAndRelease = "bundle-build-metadata-with-release"
)

// Validate checks the model as upstream's model validation does and returns
// a *ValidationError tree rooted at "invalid index", or nil. Siblings are in
// a deterministic order: the checks of a node in upstream's order, with
// packages, channels and bundles sorted by name.
func (m Model) Validate() error {
	root := &ValidationError{Message: "invalid index"}
	for _, name := range sortedKeys(m) {
		root.add(m[name].Validate())
	}
	return root.orNil()
}

// Validate checks one package and its channels.
func (p *Package) Validate() error {
	v := &ValidationError{Message: fmt.Sprintf("invalid package %q", p.Name)}
	leaf := func(code, format string, args ...any) {
		v.add(&RuleError{Issue{Code: code, Message: fmt.Sprintf(format, args...), Pos: p.Pos, Package: p.Name}})
	}
	if p.Name == "" {
		leaf(CodePackageNameEmpty, "package name must not be empty")
	}
	// Upstream validates the icon, but every check in it is disabled.
	if p.DefaultChannel == nil {
		leaf(CodePackageNoDefaultChannel, "default channel must be set")
	}
	if len(p.Channels) == 0 {
		leaf(CodePackageNoChannels, "package must contain at least one channel")
	}
	foundDefault := false
	for _, name := range sortedKeys(p.Channels) {
		ch := p.Channels[name]
		if name != ch.Name {
			leaf(CodePackageChannelKey, "channel key %q does not match channel name %q", name, ch.Name)
		}
		v.add(ch.Validate())
		if ch == p.DefaultChannel {
			foundDefault = true
		}
		if ch.Package != p {
			leaf(CodePackageChannelLink, "channel %q not correctly linked to parent package", ch.Name)
		}
	}
	if err := p.validateUniqueBundleVersions(); err != nil {
		leaf(CodePackageDuplicateVersions, "%s", err)
	}
	if p.DefaultChannel != nil && !foundDefault {
		leaf(CodePackageDefaultNotFound, "default channel %q not found in channels list", p.DefaultChannel.Name)
	}
	if p.Deprecation != nil && p.Deprecation.Message == "" {
		v.add(&RuleError{Issue{Code: CodeDeprecationNoMessage, Message: "invalid deprecation: message must be set", Pos: p.Deprecation.Pos, Package: p.Name}})
	}
	return v.orNil()
}

func (p *Package) validateUniqueBundleVersions() error {
	byVersion := map[string]map[string]bool{}
	for _, ch := range p.Channels {
		for _, b := range ch.Bundles {
			vs := b.VersionString()
			if byVersion[vs] == nil {
				byVersion[vs] = map[string]bool{}
			}
			byVersion[vs][b.Name] = true
		}
	}
	var vals []string
	for _, vs := range sortedKeys(byVersion) {
		if len(byVersion[vs]) > 1 {
			vals = append(vals, fmt.Sprintf("{%s: [%s]}", vs, strings.Join(sortedKeys(byVersion[vs]), ", ")))
		}
	}
	if len(vals) > 0 {
		return fmt.Errorf("duplicate versions found in bundles: %v", vals)
	}
	return nil
}

// Graph returns the channel's entries as a graph channel, in declaration
// order (entries without a declaration, if any, follow sorted by name).
func (c *Channel) Graph() *graph.Channel {
	g := &graph.Channel{Name: c.Name}
	if c.Package != nil {
		g.Package = c.Package.Name
	}
	seen := make(map[string]bool, len(c.Bundles))
	for _, e := range c.Entries {
		b, ok := c.Bundles[e.Name]
		if !ok || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		g.Entries = append(g.Entries, graph.Entry{Name: b.Name, Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange})
	}
	for _, name := range sortedKeys(c.Bundles) {
		if seen[name] {
			continue
		}
		b := c.Bundles[name]
		g.Entries = append(g.Entries, graph.Entry{Name: b.Name, Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange})
	}
	return g
}

// Validate checks one channel, its upgrade graph and its bundles.
func (c *Channel) Validate() error {
	v := &ValidationError{Message: fmt.Sprintf("invalid channel %q", c.Name)}
	pkg := ""
	if c.Package != nil {
		pkg = c.Package.Name
	}
	leaf := func(code, msg string) {
		v.add(&RuleError{Issue{Code: code, Message: msg, Pos: c.Pos, Package: pkg, Channel: c.Name}})
	}
	if c.Name == "" {
		leaf(CodeChannelNameEmpty, "channel name must not be empty")
	}
	if c.Package == nil {
		leaf(CodeChannelNoPackage, "package must be set")
	}
	if len(c.Bundles) == 0 {
		leaf(CodeChannelEmpty, "channel must contain at least one bundle")
	} else if stranded, err := c.Graph().Stranded(); err != nil {
		var (
			mh *graph.MultipleHeadsError
			ce *graph.CycleError
		)
		code := CodeChannelNoHead
		switch {
		case errors.As(err, &mh):
			code = CodeChannelMultipleHeads
		case errors.As(err, &ce):
			code = CodeChannelCycle
		}
		leaf(code, err.Error())
	} else if len(stranded) > 0 {
		leaf(CodeChannelStranded, (&graph.StrandedError{Bundles: stranded}).Error())
	}
	for _, name := range sortedKeys(c.Bundles) {
		b := c.Bundles[name]
		if name != b.Name {
			leaf(CodeChannelBundleKey, fmt.Sprintf("bundle key %q does not match bundle name %q", name, b.Name))
		}
		v.add(b.Validate())
		if b.Channel != c {
			leaf(CodeChannelBundleLink, fmt.Sprintf("bundle %q not correctly linked to parent channel", b.Name))
		}
	}
	if c.Deprecation != nil && c.Deprecation.Message == "" {
		v.add(&RuleError{Issue{Code: CodeDeprecationNoMessage, Message: "invalid deprecation: message must be set", Pos: c.Deprecation.Pos, Package: pkg, Channel: c.Name}})
	}
	return v.orNil()
}

// Validate checks one bundle.
func (b *Bundle) Validate() error {
	v := &ValidationError{Message: fmt.Sprintf("invalid bundle %q", b.Name)}
	is := Issue{Pos: b.Pos, Bundle: b.Name}
	if !b.HasBlob || !is.Pos.IsValid() {
		is.Pos = b.EntryPos
	}
	if b.Package != nil {
		is.Package = b.Package.Name
	}
	if b.Channel != nil {
		is.Channel = b.Channel.Name
	}
	leaf := func(code, format string, args ...any) {
		i := is
		i.Code, i.Message = code, fmt.Sprintf(format, args...)
		v.add(&RuleError{i})
	}
	if b.Name == "" {
		leaf(CodeBundleNameEmpty, "name must be set")
	}
	if len(b.Release) > 0 && b.Name != b.NormalizedName() {
		leaf(CodeBundleNameNotNormalized, "name %q does not match normalized name %q", b.Name, b.NormalizedName())
	}
	if b.Channel == nil {
		leaf(CodeBundleChannelUnset, "channel must be set")
	}
	if b.Package == nil {
		leaf(CodeBundlePackageUnset, "package must be set")
	}
	if b.Channel != nil && b.Package != nil && b.Package != b.Channel.Package {
		leaf(CodeBundlePackageChannel, "package does not match channel's package")
	}
	props := b.PropertiesP
	if props == nil {
		var err error
		props, err = property.Parse(b.Properties)
		if err != nil {
			leaf(CodeBundlePropertiesInvalid, "%v", err)
		}
	}
	for i, s := range b.Skips {
		if s == "" {
			leaf(CodeBundleSkipEmpty, "skip[%d] is empty", i)
		}
	}
	if b.SkipRange != "" {
		if _, err := versionrange.ParseSkipRange(b.SkipRange); err != nil {
			leaf(CodeBundleSkipRangeInvalid, "invalid skipRange %q: %v", b.SkipRange, err)
		}
	}
	if props != nil && len(props.Packages) != 1 {
		leaf(CodeBundlePackagePropMissing, "must be exactly one property with type %q", property.TypePackage)
	}
	if b.Image == "" && len(b.Objects) == 0 && !hasBundleObject(b.Properties) {
		leaf(CodeBundleImageMissing, "bundle image must be set")
	}
	if b.Deprecation != nil && b.Deprecation.Message == "" {
		i := is
		i.Pos = b.Deprecation.Pos
		i.Code, i.Message = CodeDeprecationNoMessage, "invalid deprecation: message must be set"
		v.add(&RuleError{i})
	}
	if len(b.Release) > 0 && len(b.Version.Build) > 0 {
		leaf(CodeBundleBuildMetaAndRelease, "cannot use build metadata in version with a release version")
	}
	return v.orNil()
}

func hasBundleObject(props []property.Property) bool {
	for _, p := range props {
		if p.Type == property.TypeBundleObject {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
