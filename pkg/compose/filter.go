package compose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/versionrange"
)

// PackageSelection says what to keep of one package.
type PackageSelection struct {
	Name string
	// Channels to keep, in order of preference for the default channel
	// (empty: every channel).
	Channels []ChannelSelection
	// MinVersion and MaxVersion bound, inclusively, the versions kept in
	// every channel (empty: no bound). Versions compare as semver, with
	// pre-releases ordered before their release and build metadata
	// ignored, as OLM's skipRanges compare them.
	MinVersion string
	MaxVersion string
	// HeadsOnly keeps, in each channel, only its head (after the version
	// bounds).
	HeadsOnly bool
	// DefaultChannel, when set, is the default channel of the result; it
	// must be one of the channels kept.
	DefaultChannel string
}

// ChannelSelection names a channel to keep, with bounds of its own that
// replace the package's, and whether to keep only its head (the package's
// HeadsOnly applies too).
type ChannelSelection struct {
	Name       string
	MinVersion string
	MaxVersion string
	HeadsOnly  bool
}

// FilterOptions configure [Filter].
type FilterOptions struct {
	// Packages to keep. Empty: every package of the catalog, each with the
	// settings of All.
	Packages []PackageSelection
	// All applies to every package when Packages is empty (its Name,
	// Channels and DefaultChannel must be empty).
	All PackageSelection
}

// FilterResult is the subset and what the filter had to decide.
type FilterResult struct {
	Config *declcfg.DeclarativeConfig
	// Notes explain each decision the selection did not spell out: a
	// default channel chosen anew, a channel left empty by the version
	// bounds, a selected bundle dropped to keep its channel valid.
	Notes []string
	// Counts of what was kept.
	Packages, Channels, Bundles int
}

// Filter returns the subset of cfg that opts selects, as a catalog that
// passes upstream's validation whenever the selected packages did:
//
//   - channels keep their head, and every kept bundle that could upgrade to
//     the head (OLM classic) still can, through re-stitched edges where
//     bundles between them were removed (see restitch.go);
//   - the default channel is kept, or chosen anew with a note: the
//     selection's DefaultChannel, else the first selected channel kept,
//     else the kept channel whose head has the highest version;
//   - deprecation entries of kept packages, channels and bundles are kept,
//     and so are the other blobs of kept packages and the blobs that
//     belong to no package.
//
// Blobs keep their input order and content; only channel entries and
// default channels change.
func Filter(cfg *declcfg.DeclarativeConfig, opts FilterOptions) (*FilterResult, error) {
	blobs := byPackage(cfg)
	sels := opts.Packages
	if len(sels) == 0 {
		if opts.All.Name != "" || len(opts.All.Channels) > 0 || opts.All.DefaultChannel != "" {
			return nil, errors.New("a selection for every package cannot name a package, channels or a default channel")
		}
		for _, name := range sortedNames(blobs) {
			if b := blobs[name]; name != "" && len(b.packages) > 0 {
				s := opts.All
				s.Name = name
				sels = append(sels, s)
			}
		}
	}
	selected := map[string]*PackageSelection{}
	for i := range sels {
		s := &sels[i]
		if s.Name == "" {
			return nil, errors.New("a package selection has no name")
		}
		if selected[s.Name] != nil {
			return nil, fmt.Errorf("package %q is selected more than once", s.Name)
		}
		b := blobs[s.Name]
		if b == nil || len(b.packages) == 0 {
			var names []string
			for n, pb := range blobs {
				if len(pb.packages) > 0 {
					names = append(names, n)
				}
			}
			return nil, suggest.Unknown("package", s.Name, "", names)
		}
		selected[s.Name] = s
	}
	g, err := graphOf(cfg, func(p string) bool { return selected[p] != nil })
	if err != nil {
		return nil, err
	}

	res := &FilterResult{}
	note := func(format string, args ...any) { res.Notes = append(res.Notes, fmt.Sprintf(format, args...)) }
	// Per package: the new entries of each kept channel and the new default.
	newEntries := map[string]map[string][]declcfg.ChannelEntry{}
	newDefault := map[string]string{}
	keptBundles := map[string]map[string]bool{}
	for i := range sels {
		s := &sels[i]
		pg := g.Package(s.Name)
		pkgPos := cfg.Packages[blobs[s.Name].packages[0]].Pos
		chans, err := filterPackage(cfg, blobs[s.Name], pg, s, note)
		if err != nil {
			return nil, fmt.Errorf("%s: package %q: %w", pkgPos, s.Name, err)
		}
		newEntries[s.Name] = chans
		kb := map[string]bool{}
		for _, entries := range chans {
			for _, e := range entries {
				kb[e.Name] = true
			}
		}
		keptBundles[s.Name] = kb
		def, err := chooseDefault(pg, s, chans, cfg.Packages[blobs[s.Name].packages[0]].DefaultChannel, note)
		if err != nil {
			return nil, fmt.Errorf("%s: package %q: %w", pkgPos, s.Name, err)
		}
		newDefault[s.Name] = def
	}

	out := &declcfg.DeclarativeConfig{}
	for _, p := range cfg.Packages {
		if selected[p.Name] != nil {
			p.DefaultChannel = newDefault[p.Name]
			out.Packages = append(out.Packages, p)
		}
	}
	written := map[[2]string]bool{}
	for _, c := range cfg.Channels {
		entries, ok := newEntries[c.Package][c.Name]
		if selected[c.Package] == nil || !ok || written[[2]string{c.Package, c.Name}] {
			continue
		}
		written[[2]string{c.Package, c.Name}] = true
		c.Entries = entries
		out.Channels = append(out.Channels, c)
	}
	for _, b := range cfg.Bundles {
		if keptBundles[b.Package][b.Name] {
			out.Bundles = append(out.Bundles, b)
		}
	}
	for _, d := range cfg.Deprecations {
		if selected[d.Package] == nil {
			continue
		}
		var entries []declcfg.DeprecationEntry
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaChannel:
				if _, ok := newEntries[d.Package][e.Reference.Name]; !ok {
					continue
				}
			case declcfg.SchemaBundle:
				if !keptBundles[d.Package][e.Reference.Name] {
					continue
				}
			}
			entries = append(entries, e)
		}
		if len(entries) > 0 {
			d.Entries = entries
			out.Deprecations = append(out.Deprecations, d)
		}
	}
	for _, o := range cfg.Others {
		if o.Package == "" || selected[o.Package] != nil {
			out.Others = append(out.Others, o)
		}
	}
	res.Config = out
	res.Packages = len(out.Packages)
	res.Channels = len(out.Channels)
	res.Bundles = len(out.Bundles)

	if _, err := model.ConvertToModel(*out); err != nil {
		return nil, invalidResult(cfg, blobs, sels, err)
	}
	return res, nil
}

// invalidResult explains a result that does not validate: the selected
// packages were invalid to begin with, or the filter broke them.
func invalidResult(cfg *declcfg.DeclarativeConfig, blobs map[string]*pkgBlobs, sels []PackageSelection, err error) error {
	in := &declcfg.DeclarativeConfig{}
	for _, s := range sels {
		b := blobs[s.Name]
		for _, i := range b.packages {
			in.Packages = append(in.Packages, cfg.Packages[i])
		}
		for _, i := range b.channels {
			in.Channels = append(in.Channels, cfg.Channels[i])
		}
		for _, i := range b.bundles {
			in.Bundles = append(in.Bundles, cfg.Bundles[i])
		}
		for _, i := range b.deprecations {
			in.Deprecations = append(in.Deprecations, cfg.Deprecations[i])
		}
	}
	if _, inErr := model.ConvertToModel(*in); inErr != nil {
		return fmt.Errorf("the selected packages are not valid in the input: %w", inErr)
	}
	return fmt.Errorf("the filtered catalog does not validate (a bug in the filter; please report it): %w", err)
}

// boundsRange returns the skipRange-dialect range ">=min <=max", or nil
// when both are empty.
func boundsRange(min, max string) (*versionrange.SkipRange, error) {
	var parts []string
	var lo, hi semver.Version
	if min != "" {
		v, err := versionrange.ParseVersion(min)
		if err != nil {
			return nil, fmt.Errorf("minimum: %w", err)
		}
		lo = v
		parts = append(parts, ">="+v.String())
	}
	if max != "" {
		v, err := versionrange.ParseVersion(max)
		if err != nil {
			return nil, fmt.Errorf("maximum: %w", err)
		}
		hi = v
		parts = append(parts, "<="+v.String())
	}
	if len(parts) == 0 {
		return nil, nil
	}
	if min != "" && max != "" && lo.GT(hi) {
		return nil, fmt.Errorf("minimum version %s is above maximum version %s", min, max)
	}
	return versionrange.ParseSkipRange(strings.Join(parts, " "))
}

// filterPackage returns the entries of each kept channel of one package.
func filterPackage(cfg *declcfg.DeclarativeConfig, b *pkgBlobs, pg *graph.PackageGraph, s *PackageSelection, note func(string, ...any)) (map[string][]declcfg.ChannelEntry, error) {
	if pg == nil || len(pg.Channels) == 0 {
		return nil, errors.New("the package has no channel")
	}
	if _, err := boundsRange(s.MinVersion, s.MaxVersion); err != nil {
		return nil, err
	}
	type chosen struct {
		c        *graph.ChannelGraph
		min, max string
		explicit bool
		heads    bool
	}
	var chans []chosen
	if len(s.Channels) == 0 {
		for _, c := range pg.Channels {
			chans = append(chans, chosen{c: c, min: s.MinVersion, max: s.MaxVersion, heads: s.HeadsOnly})
		}
	} else {
		seen := map[string]bool{}
		for _, cs := range s.Channels {
			c := pg.Channel(cs.Name)
			if c == nil {
				return nil, suggest.Unknown("channel", cs.Name, "", pg.ChannelNames())
			}
			if seen[cs.Name] {
				return nil, fmt.Errorf("channel %q is selected more than once", cs.Name)
			}
			seen[cs.Name] = true
			ch := chosen{c: c, min: s.MinVersion, max: s.MaxVersion, explicit: true, heads: s.HeadsOnly || cs.HeadsOnly}
			if cs.MinVersion != "" {
				ch.min = cs.MinVersion
			}
			if cs.MaxVersion != "" {
				ch.max = cs.MaxVersion
			}
			chans = append(chans, ch)
		}
	}
	// The declared entries of each channel: its first olm.channel blob.
	declared := map[string][]declcfg.ChannelEntry{}
	for _, i := range b.channels {
		c := &cfg.Channels[i]
		if _, ok := declared[c.Name]; !ok {
			declared[c.Name] = c.Entries
		}
	}

	out := map[string][]declcfg.ChannelEntry{}
	for _, ch := range chans {
		c := ch.c
		r, err := boundsRange(ch.min, ch.max)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", c.Name, err)
		}
		keep := map[string]bool{}
		for _, e := range c.Entries {
			n := pg.Nodes[e.Name]
			keep[e.Name] = r == nil || (n != nil && n.HasVersion && r.Contains(n.Version))
		}
		kc, err := filterChannel(pg, c, declared[c.Name], keep)
		if err != nil {
			return nil, fmt.Errorf("%s: channel %q: %w", c.Pos, c.Name, err)
		}
		for _, d := range kc.dropped {
			note("package %q, channel %q: dropped %s although selected: %s", s.Name, c.Name, nodeRef(pg, d.name), d.reason)
		}
		if len(kc.entries) == 0 {
			bounds := describeBounds(ch.min, ch.max)
			if ch.explicit {
				return nil, fmt.Errorf("channel %q has no bundle %s", c.Name, bounds)
			}
			note("package %q: channel %q left out: it has no bundle %s", s.Name, c.Name, bounds)
			continue
		}
		if ch.heads {
			for _, e := range kc.entries {
				if e.Name == kc.head {
					kc.entries = []declcfg.ChannelEntry{e}
					break
				}
			}
		}
		out[c.Name] = kc.entries
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no channel has a bundle %s", describeBounds(s.MinVersion, s.MaxVersion))
	}
	return out, nil
}

func describeBounds(min, max string) string {
	switch {
	case min != "" && max != "":
		return fmt.Sprintf("between versions %s and %s", min, max)
	case min != "":
		return fmt.Sprintf("at or above version %s", min)
	case max != "":
		return fmt.Sprintf("at or below version %s", max)
	}
	return "left"
}

// chooseDefault picks the default channel of a filtered package.
func chooseDefault(pg *graph.PackageGraph, s *PackageSelection, chans map[string][]declcfg.ChannelEntry, old string, note func(string, ...any)) (string, error) {
	kept := sortedNames(chans)
	if s.DefaultChannel != "" {
		if _, ok := chans[s.DefaultChannel]; !ok {
			return "", fmt.Errorf("the default channel %q is not among the channels kept (%s)", s.DefaultChannel, strings.Join(kept, ", "))
		}
		if s.DefaultChannel != old {
			note("package %q: default channel %q replaced by %q, as selected", s.Name, old, s.DefaultChannel)
		}
		return s.DefaultChannel, nil
	}
	if _, ok := chans[old]; ok {
		return old, nil
	}
	for _, cs := range s.Channels {
		if _, ok := chans[cs.Name]; ok {
			note("package %q: default channel %q is not kept; using %q, the first channel selected", s.Name, old, cs.Name)
			return cs.Name, nil
		}
	}
	best := ""
	var bestV semver.Version
	for _, name := range kept {
		ch := graph.Channel{Package: s.Name, Name: name}
		for _, e := range chans[name] {
			ch.Entries = append(ch.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		head, err := ch.Head()
		if err != nil {
			continue
		}
		v := versionOf(pg, head)
		if best == "" || v.GT(bestV) {
			best, bestV = name, v
		}
	}
	if best == "" {
		best = kept[0]
	}
	note("package %q: default channel %q is not kept; using %q, whose head has the highest version", s.Name, old, best)
	return best, nil
}
