package graph

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/versionrange"
)

// MermaidOptions configure [WriteMermaid].
type MermaidOptions struct {
	// MinimumEdge names a bundle whose version is the floor of the graph:
	// only its package's channels are drawn, it loses its own outgoing
	// edges, and other entries keep only the edges that stay at or above
	// it.
	MinimumEdge string
	// PackageName keeps only that package's channels.
	PackageName string
	// V0Semantics styles what OLM v0 would never traverse: entries already
	// skipped by a higher entry get the "skipped" class and edges into them
	// are drawn dashed red.
	V0Semantics bool
	// Warnings receives upstream's warning lines (an invalid skipRange is
	// ignored with a warning). Nil discards them.
	Warnings io.Writer
}

// BundleVersion returns the version of b's single olm.package property,
// parsed as strict semver, with upstream's error wording.
func BundleVersion(b *declcfg.Bundle) (semver.Version, error) {
	v, _, err := bundleVersionRelease(b)
	return v, err
}

// bundleVersionRelease is [BundleVersion] with the olm.package release.
func bundleVersionRelease(b *declcfg.Bundle) (semver.Version, string, error) {
	props, err := property.Parse(b.Properties)
	if err != nil {
		return semver.Version{}, "", fmt.Errorf("parse properties for bundle %q: %w", b.Name, err)
	}
	if len(props.Packages) != 1 {
		return semver.Version{}, "", fmt.Errorf("bundle %q has multiple %q properties, expected exactly 1", b.Name, property.TypePackage)
	}
	v, err := semver.Parse(props.Packages[0].Version)
	if err != nil {
		return semver.Version{}, "", fmt.Errorf("bundle %q has invalid version %q: %w", b.Name, props.Packages[0].Version, err)
	}
	return v, props.Packages[0].Release, nil
}

// bundleVersions maps bundle names to versions; the first bundle of a name
// wins, whatever its package (as upstream).
func bundleVersions(cfg *declcfg.DeclarativeConfig) (map[string]semver.Version, error) {
	versions := make(map[string]semver.Version, len(cfg.Bundles))
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if _, ok := versions[b.Name]; ok {
			continue
		}
		v, err := BundleVersion(b)
		if err != nil {
			return nil, err
		}
		versions[b.Name] = v
	}
	return versions, nil
}

// WriteMermaid writes the channels of cfg as a Mermaid flowchart, byte for
// byte as upstream's `opm alpha render-graph` (MermaidWriter.WriteChannels).
// Packages are sorted by name; channels are sorted by name across all
// packages; entries by decreasing version; edges point from the older node
// to the newer one. Entries without a bundle count as version 0.0.0.
//
// Upstream quirks kept on purpose: link indices for V0 styling are counted
// in channel-name order across packages (so with several packages they may
// not match Mermaid's own edge numbering), deprecated channels match by
// name in any package, and only the last deprecated package is styled.
//
// cfg.Channels is not modified. A flowchart of more than MaxEdges links
// (a channel whose skipRanges all cover each other has quadratically
// many) is refused with a *TooManyEdgesError before it is written.
func WriteMermaid(cfg *declcfg.DeclarativeConfig, w io.Writer, opts MermaidOptions) error {
	channels := append([]declcfg.Channel(nil), cfg.Channels...)
	// sort.Slice, not SliceStable: channels of the same name in different
	// packages come out in the order upstream's identical call gives.
	sort.Slice(channels, func(i, j int) bool { return channels[i].Name < channels[j].Name })

	versions, err := bundleVersions(cfg)
	if err != nil {
		return err
	}
	var floor semver.Version
	if opts.MinimumEdge != "" {
		v, ok := versions[opts.MinimumEdge]
		if !ok {
			return fmt.Errorf("unknown minimum edge name: %q", opts.MinimumEdge)
		}
		floor = v
	}
	floorPackage := ""
	if opts.MinimumEdge != "" {
	find:
		for _, c := range channels {
			for _, e := range c.Entries {
				if e.Name == opts.MinimumEdge {
					floorPackage = c.Package
					break find
				}
			}
		}
	}

	depPackages := map[string]bool{}
	depChannels := map[string]bool{}
	depBundles := map[string]bool{}
	for _, d := range cfg.Deprecations {
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaPackage:
				depPackages[d.Package] = true
			case declcfg.SchemaChannel:
				depChannels[e.Reference.Name] = true
			case declcfg.SchemaBundle:
				depBundles[e.Reference.Name] = true
			}
		}
	}

	pkgs := map[string]*strings.Builder{}
	var (
		deprecatedPackage  string
		deprecatedChannels []string
		linkID             int
		styledLinks        []string
		classes            = map[string][]string{}
	)
	for ci := range channels {
		c := filterChannel(&channels[ci], versions, floor, floorPackage, opts)
		if c == nil {
			continue
		}
		b := pkgs[c.Package]
		if b == nil {
			b = &strings.Builder{}
			pkgs[c.Package] = b
		}
		channelID := c.Package + "-" + c.Name
		fmt.Fprintf(b, "    %%%% channel %q\n", c.Name)
		fmt.Fprintf(b, "    subgraph %s[%q]\n", channelID, c.Name)
		if depPackages[c.Package] {
			deprecatedPackage = c.Package
		}
		if depChannels[c.Name] {
			deprecatedChannels = append(deprecatedChannels, channelID)
		}

		sorted := make([]*declcfg.ChannelEntry, 0, len(c.Entries))
		for i := range c.Entries {
			sorted = append(sorted, &c.Entries[i])
		}
		sort.Slice(sorted, func(i, j int) bool {
			return versions[sorted[i].Name].GT(versions[sorted[j].Name])
		})

		// The entries by version, for the members of each skipRange.
		var byVersion *versionrange.Index
		var hits []int

		skipped := map[string]bool{}
		// styleIfSkipped styles the link when name is already skipped;
		// capture records name as skipped when it is not yet.
		style := func(name string, capture bool) {
			if !opts.V0Semantics {
				return
			}
			if skipped[name] {
				styledLinks = append(styledLinks, strconv.Itoa(linkID))
			} else if capture {
				skipped[name] = true
			}
		}

		for _, e := range sorted {
			entryID := channelID + "-" + e.Name
			fmt.Fprintf(b, "      %s[%q]\n", entryID, e.Name)
			switch dep, skip := depBundles[e.Name], skipped[e.Name]; {
			case dep && skip:
				classes["deprecatedskipped"] = append(classes["deprecatedskipped"], entryID)
			case dep:
				classes["deprecated"] = append(classes["deprecated"], entryID)
			case skip:
				classes["skipped"] = append(classes["skipped"], entryID)
			}
			for _, s := range e.Skips {
				fmt.Fprintf(b, "      %s-%s[%q]-- skip --> %s[%q]\n", channelID, s, s, entryID, e.Name)
				style(s, true)
				linkID++
			}
			if e.SkipRange != "" {
				r, err := versionrange.ParseSkipRange(e.SkipRange)
				if err != nil {
					if opts.Warnings != nil {
						fmt.Fprintf(opts.Warnings, "warning: ignoring invalid SkipRange for package/edge %q/%q: %v\n", c.Package, e.Name, err)
					}
				} else {
					if byVersion == nil {
						vers := make([]semver.Version, len(c.Entries))
						for i, other := range c.Entries {
							vers[i] = versions[other.Name]
						}
						byVersion = versionrange.NewIndex(vers, nil)
					}
					hits = byVersion.Members(hits[:0], r, rangeTests)
					for _, h := range hits {
						other := &c.Entries[h]
						if linkID >= MaxEdges {
							return &TooManyEdgesError{Package: c.Package, Channel: c.Name, Limit: MaxEdges}
						}
						fmt.Fprintf(b, "      %s-%s[%q]-- \"skipRange(%s)\" --> %s[%q]\n", channelID, other.Name, other.Name, e.SkipRange, entryID, e.Name)
						style(e.Name, false)
						linkID++
					}
				}
			}
			if e.Replaces != "" {
				fmt.Fprintf(b, "      %s-%s[%q]-- replace --> %s[%q]\n", channelID, e.Replaces, e.Replaces, entryID, e.Name)
				style(e.Name, false)
				linkID++
			}
		}
		b.WriteString("    end\n")
	}

	bw := bufio.NewWriter(w)
	bw.WriteString("graph LR\n")
	bw.WriteString("  classDef deprecated fill:#E8960F\n")
	bw.WriteString("  classDef skipped stroke:#FF0000,stroke-width:4px\n")
	bw.WriteString("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n")
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(bw, "  %%%% package %q\n", n)
		fmt.Fprintf(bw, "  subgraph %q\n", n)
		bw.WriteString(pkgs[n].String())
		bw.WriteString("  end\n")
	}
	if deprecatedPackage != "" {
		fmt.Fprintf(bw, "style %s fill:#989695\n", deprecatedPackage)
	}
	for _, c := range deprecatedChannels {
		fmt.Fprintf(bw, "style %s fill:#DCD0FF\n", c)
	}
	for _, class := range []string{"deprecated", "deprecatedskipped", "skipped"} {
		ids := classes[class]
		if len(ids) == 0 {
			continue
		}
		sort.Strings(ids)
		ids = compact(ids)
		fmt.Fprintf(bw, "class %s %s\n", strings.Join(ids, ","), class)
	}
	if len(styledLinks) > 0 {
		fmt.Fprintf(bw, "linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n", strings.Join(styledLinks, ","))
	}
	return bw.Flush()
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// filterChannel applies --package-name and --minimum-edge as upstream does;
// nil means the channel is not drawn.
func filterChannel(c *declcfg.Channel, versions map[string]semver.Version, floor semver.Version, floorPackage string, opts MermaidOptions) *declcfg.Channel {
	if opts.MinimumEdge == "" && opts.PackageName == "" {
		return c
	}
	if opts.PackageName != "" && c.Package != opts.PackageName {
		return nil
	}
	if floorPackage != "" && c.Package != floorPackage {
		return nil
	}
	out := &declcfg.Channel{Schema: c.Schema, Name: c.Name, Package: c.Package, Properties: c.Properties}
	for _, e := range c.Entries {
		f := declcfg.ChannelEntry{Name: e.Name}
		switch {
		case opts.MinimumEdge == "":
			f = e
		case e.Name == opts.MinimumEdge:
			// the floor is kept without its (backward) references
			out.Entries = append(out.Entries, f)
			continue
		default:
			if e.Replaces != "" && versions[e.Replaces].GTE(floor) {
				f.Replaces = e.Replaces
			}
			for _, s := range e.Skips {
				if versions[s].GTE(floor) {
					f.Skips = append(f.Skips, s)
				}
			}
			if e.SkipRange != "" {
				if r, err := versionrange.ParseSkipRange(e.SkipRange); err == nil && r.Contains(floor) {
					f.SkipRange = e.SkipRange
				}
			}
		}
		hasEdges := f.Replaces != "" || len(f.Skips) > 0 || f.SkipRange != ""
		hadEdges := e.Replaces != "" || len(e.Skips) > 0 || e.SkipRange != ""
		if hasEdges || (!hadEdges && versions[e.Name].GTE(floor)) {
			out.Entries = append(out.Entries, f)
		}
	}
	if len(out.Entries) == 0 {
		return nil
	}
	return out
}
