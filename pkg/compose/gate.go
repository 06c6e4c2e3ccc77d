package compose

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/opmkit/opm/pkg/property"
)

// The release gate against the published index: what a candidate catalog
// prunes from it (FailPruned), and what it ships that is not released yet
// (Unreleased).

// DefaultPreReleaseChannels are the substrings that make a channel a
// pre-release one, whose entries may be pruned (Konflux's
// fbc-target-index-pruning-check).
var DefaultPreReleaseChannels = []string{"candidate", "dev-preview", "pre-ga"}

// preRelease reports whether channel name contains one of the substrings.
func preRelease(name string, substrings []string) bool {
	for _, s := range substrings {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// prunedFailures lists what NEW prunes from OLD outside pre-release
// channels: a channel removed, an entry a channel no longer lists, and,
// unless NEW is a fragment, a package removed (its channels). Pruning a
// pre-release channel is allowed. This is Konflux's
// fbc-target-index-pruning-check, which compares the packages both sides
// have.
func (r *Report) prunedFailures(pre []string) {
	add := func(pkg, format string, args ...any) {
		r.Failures = append(r.Failures, Failure{Kind: FailPruned, Package: pkg, Message: fmt.Sprintf(format, args...)})
	}
	for _, p := range r.Packages {
		switch p.Change {
		case Added:
			continue
		case Removed:
			var names []string
			for _, c := range p.ChannelsRemoved {
				if !preRelease(c.Name, pre) {
					names = append(names, fmt.Sprintf("%q", c.Name))
				}
			}
			if len(names) > 0 {
				add(p.Name, "package %q was pruned: %s %s", p.Name, map[bool]string{true: "channel", false: "channels"}[len(names) == 1], strings.Join(names, ", "))
			}
			continue
		}
		for _, c := range p.ChannelsRemoved {
			if !preRelease(c.Name, pre) {
				add(p.Name, "package %q: channel %q was pruned (%s)", p.Name, c.Name, plural(c.Entries, "entry", "entries"))
			}
		}
		for _, c := range p.Channels {
			if preRelease(c.Name, pre) {
				continue
			}
			for _, e := range c.EntriesRemoved {
				add(p.Name, "package %q: channel %q: entry %s was pruned", p.Name, c.Name, quoteRef(e))
			}
		}
	}
}

// Unreleased is what a candidate catalog ships that the published one
// does not: per package of the candidate, its bundles whose image the
// published package lacks, and the related images of its bundles that no
// bundle of the published package has. Bundles marked olm.deprecated
// (the old sqlite deprecation) are left out, as Konflux leaves them out.
type Unreleased struct {
	Old      string              `json:"old"`
	New      string              `json:"new"`
	Packages []UnreleasedPackage `json:"packages"`
	// Bundles and RelatedImages count the whole list.
	Bundles       int `json:"bundles"`
	RelatedImages int `json:"relatedImages"`
}

// UnreleasedPackage is the unreleased content of one package.
type UnreleasedPackage struct {
	Name          string            `json:"name"`
	Bundles       []UnreleasedImage `json:"bundles,omitempty"`
	RelatedImages []string          `json:"relatedImages,omitempty"`
}

// UnreleasedImage is a bundle not released yet.
type UnreleasedImage struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Image   string `json:"image"`
}

// FindUnreleased lists what NEW ships that OLD does not: see Unreleased.
// packages restricts the packages (empty: every package of NEW).
func FindUnreleased(old, cur *Summary, packages []string) *Unreleased {
	u := &Unreleased{Old: old.Source, New: cur.Source, Packages: []UnreleasedPackage{}}
	for _, name := range sortedNames(cur.Packages) {
		if name == "" || len(packages) > 0 && !slices.Contains(packages, name) {
			continue
		}
		np, op := cur.Packages[name], old.Packages[name]
		released, relatedReleased := map[string]bool{}, map[string]bool{}
		if op != nil {
			for _, b := range op.Bundles {
				if b.deprecated() {
					continue
				}
				released[b.key()] = true
				for _, ri := range b.relatedRefs {
					relatedReleased[ri] = true
				}
			}
		}
		up := UnreleasedPackage{Name: name}
		related := map[string]bool{}
		for _, n := range sortedNames(np.Bundles) {
			b := np.Bundles[n]
			if b.deprecated() {
				continue
			}
			if !released[b.key()] {
				up.Bundles = append(up.Bundles, UnreleasedImage{Name: b.Name, Version: b.Version, Image: b.Image})
			}
			for _, ri := range b.relatedRefs {
				if !relatedReleased[ri] {
					related[ri] = true
				}
			}
		}
		up.RelatedImages = sortedNames(related)
		if len(up.Bundles)+len(up.RelatedImages) == 0 {
			continue
		}
		u.Packages = append(u.Packages, up)
		u.Bundles += len(up.Bundles)
		u.RelatedImages += len(up.RelatedImages)
	}
	return u
}

// key identifies a released bundle: its image, or its name when it has
// none (a bundle carried as olm.bundle.object properties only).
func (b *BundleSummary) key() string {
	if b.Image != "" {
		return "image\x00" + b.Image
	}
	return "name\x00" + b.Name
}

func (b *BundleSummary) deprecated() bool { return len(b.propsOf(property.TypeDeprecated)) > 0 }

// WriteUnreleasedText writes u for people: per package, its unreleased
// bundles and related images, then the counts.
func WriteUnreleasedText(w io.Writer, u *Unreleased) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	if len(u.Packages) == 0 {
		p("Nothing in %s is missing from %s: no bundle or related image to release.", u.New, u.Old)
		return bw.Flush()
	}
	for _, pk := range u.Packages {
		p("package %q:", pk.Name)
		for _, b := range pk.Bundles {
			img := b.Image
			if img == "" {
				img = "(no image)"
			}
			p("    bundle %s %s", BundleRef{Name: b.Name, Version: b.Version}, img)
		}
		for _, ri := range pk.RelatedImages {
			p("    related image %s", ri)
		}
	}
	p("")
	p("Unreleased in %s (not in %s): %s, %s", u.New, u.Old, plural(u.Bundles, "bundle", "bundles"), plural(u.RelatedImages, "related image", "related images"))
	return bw.Flush()
}
