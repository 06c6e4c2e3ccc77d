// Package model is the validated form of a file-based catalog: packages,
// their channels and the bundles in each channel, with parsed versions,
// releases and deprecations. It holds upstream opm's ConvertToModel
// fail-fast checks (with upstream's exact messages) and its model
// validation, whose error tree is upstream's text with siblings in a
// deterministic order.
//
// Every problem also carries a stable rule code and the position of the blob
// it is about (see [Issue]), so that `opm validate` can report findings and
// other commands can reuse one set of rules.
package model

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Model maps package names to packages.
type Model map[string]*Package

// Package is one package and its channels.
type Package struct {
	Name           string
	Description    string
	Icon           *Icon
	DefaultChannel *Channel
	Channels       map[string]*Channel
	Deprecation    *Deprecation

	// Pos is where the olm.package blob starts.
	Pos declcfg.Position
}

// Icon is a package icon.
type Icon struct {
	Data      []byte
	MediaType string
}

// Channel is one channel of a package; Bundles maps entry names to bundles.
// A bundle listed by several channels has one *Bundle per channel.
type Channel struct {
	Package     *Package
	Name        string
	Bundles     map[string]*Bundle
	Properties  []property.Property
	Deprecation *Deprecation

	// Pos is where the olm.channel blob starts (zero for the empty default
	// channel the conversion adds, as upstream, when none is declared).
	Pos declcfg.Position
	// Entries keeps the channel's entries in declaration order.
	Entries []declcfg.ChannelEntry
}

// Bundle is one bundle as a member of one channel.
type Bundle struct {
	Package       *Package
	Channel       *Channel
	Name          string
	Image         string
	Replaces      string
	Skips         []string
	SkipRange     string
	Properties    []property.Property
	RelatedImages []RelatedImage
	Deprecation   *Deprecation

	// CsvJSON and Objects are copied from the declcfg bundle as they are
	// (see declcfg.Bundle.LoadObjects).
	CsvJSON string
	Objects []string

	// PropertiesP are the parsed Properties; its BundleObjects have no
	// Data (see Objects and declcfg.Bundle.LoadObjects).
	PropertiesP *property.Properties
	Version     semver.Version
	Release     Release

	// Pos is where the olm.bundle blob starts; EntryPos where the channel
	// blob that lists the bundle starts.
	Pos      declcfg.Position
	EntryPos declcfg.Position
	// HasBlob reports whether an olm.bundle blob was found for the entry.
	HasBlob bool
}

// RelatedImage is one entry of a bundle's relatedImages.
type RelatedImage struct {
	Name  string
	Image string
}

// Deprecation is a deprecation message for a package, channel or bundle.
type Deprecation struct {
	Message string
	// Pos is where the olm.deprecations blob starts.
	Pos declcfg.Position
}

// VersionString is the version key of a bundle used to detect duplicate
// versions: the semver (with build metadata) or `<semver>-<release>`.
func (b *Bundle) VersionString() string {
	if len(b.Release) > 0 {
		return b.Version.String() + "-" + b.Release.String()
	}
	return b.Version.String()
}

// NormalizedName is the name a bundle with a release must have:
// `<package>-v<version>-<release>`.
func (b *Bundle) NormalizedName() string {
	pkg := ""
	if b.Package != nil {
		pkg = b.Package.Name
	}
	return fmt.Sprintf("%s-v%s-%s", pkg, b.Version.String(), b.Release.String())
}

// Compare orders bundles by version, then release: at equal versions a
// bundle without a release sorts first.
func (b *Bundle) Compare(o *Bundle) int {
	if c := b.Version.Compare(o.Version); c != 0 {
		return c
	}
	return b.Release.Compare(o.Release)
}

// Release is a bundle release: dot-separated pre-release-style segments.
type Release []semver.PRVersion

// maxReleaseLength is the longest release string accepted.
const maxReleaseLength = 20

// NewRelease parses a release string. The empty string is no release.
func NewRelease(s string) (Release, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxReleaseLength {
		return nil, fmt.Errorf("invalid release %q: exceeds maximum length of %d characters", s, maxReleaseLength)
	}
	segs := strings.Split(s, ".")
	r := make(Release, 0, len(segs))
	var msgs []string
	for i, seg := range segs {
		pr, err := semver.NewPRVersion(seg)
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("segment %d: %v", i, err))
			continue
		}
		r = append(r, pr)
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("invalid release %q: %s", s, strings.Join(msgs, "\n"))
	}
	return r, nil
}

func (r Release) String() string {
	parts := make([]string, len(r))
	for i, p := range r {
		parts[i] = p.String()
	}
	return strings.Join(parts, ".")
}

// Compare compares releases: no release sorts before any release, then
// pre-release precedence rules apply.
func (r Release) Compare(o Release) int {
	switch {
	case len(r) == 0 && len(o) == 0:
		return 0
	case len(r) == 0:
		return -1
	case len(o) == 0:
		return 1
	}
	for i := 0; i < len(r) && i < len(o); i++ {
		if c := r[i].Compare(o[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(r) < len(o):
		return -1
	case len(r) > len(o):
		return 1
	}
	return 0
}
