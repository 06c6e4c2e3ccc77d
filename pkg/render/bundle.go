package render

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/declcfg"
)

// renderBundleDir renders a bundle directory (manifests/ + metadata/). Its
// image is "" unless opts.ImageRefTemplate is set.
// pre holds the directories rendered ahead of time (may be nil).
func renderBundleDir(ctx context.Context, dir string, opts Options, pre *renderedAhead) (rendered, error) {
	if r, ok := pre.take(dir); ok {
		return r.rendered, r.err
	}
	return renderBundleRoot(ctx, dir, opts)
}

// renderBundleRoot parses the bundle directory dir (every name resolved
// inside it: a link leading out is an error naming the file) and renders
// it as renderBundleFS does, with no image.
func renderBundleRoot(ctx context.Context, dir string, opts Options) (rendered, error) {
	if err := ctx.Err(); err != nil {
		return rendered{}, err
	}
	b, err := bundle.ParseDir(ctx, dir)
	if err != nil {
		return rendered{}, err
	}
	return renderParsedBundle(b, "", opts)
}

// prefetchBundleDirs renders every bundle directory among opts.Refs
// concurrently (up to GOMAXPROCS at a time) and returns the results, which
// renderBundleDir then hands out in argument order. The output and the
// error reported (the first failing ref in order) are the same as without
// it. It returns nil for fewer than two bundle directories or when the mask
// rejects them.
func prefetchBundleDirs(ctx context.Context, opts Options) *renderedAhead {
	mask := opts.AllowedRefMask
	if mask == 0 {
		mask = RefAll
	}
	if mask&RefBundleDir == 0 {
		return nil
	}
	dirs := uniqueRefs(opts.Refs, func(ref string) bool {
		st, err := os.Stat(ref)
		return err == nil && st.IsDir() && IsBundleDir(ref)
	})
	if len(dirs) < 2 {
		return nil
	}
	return renderAhead(ctx, dirs, runtime.GOMAXPROCS(0), func(ctx context.Context, dir string) (rendered, error) {
		return renderBundleRoot(ctx, dir, opts)
	})
}

// imageRefTemplateData is what --alpha-image-ref-template sees.
type imageRefTemplateData struct {
	Package string
	Name    string
	Version string
}

// RenderBundleFS renders the unpacked bundle at the root of fsys (which
// holds manifests/ and metadata/) into one olm.bundle blob, as upstream
// does for bundle directories and bundle images (behaviour doc §3). image is
// the blob's image: the reference as typed for bundle images. When image is
// "" and opts.ImageRefTemplate is set, the image is computed from the
// template ({{.Package}}, {{.Name}}, {{.Version}}).
//
// The result's properties are sorted by type and value as upstream's
// bundle conversion leaves them (Render then moves olm.bundle.object to the
// end, sorts relatedImages and applies migrations). With opts.WithChannels
// the result also holds the bundle's olm.package and olm.channel blobs, as
// Render derives them for a single bundle.
func RenderBundleFS(ctx context.Context, fsys fs.FS, image string, opts Options) (*declcfg.DeclarativeConfig, error) {
	r, err := renderBundleFS(ctx, fsys, image, opts)
	if err != nil {
		return nil, err
	}
	if r.hint != nil {
		if err := deriveChannels(r.cfg, []bundleHint{{index: 0, hint: *r.hint}}); err != nil {
			return nil, err
		}
	}
	return r.cfg, nil
}

// renderBundleFS is RenderBundleFS without deriving channels: with
// opts.WithChannels it returns the bundle's channel hint beside the blob,
// for Render to derive channels across every bundle it renders.
func renderBundleFS(ctx context.Context, fsys fs.FS, image string, opts Options) (rendered, error) {
	if err := ctx.Err(); err != nil {
		return rendered{}, err
	}
	b, err := bundle.ParseFS(ctx, fsys)
	if err != nil {
		return rendered{}, err
	}
	return renderParsedBundle(b, image, opts)
}

// renderParsedBundle is renderBundleFS after the parse.
func renderParsedBundle(b *bundle.Bundle, image string, opts Options) (rendered, error) {
	if image == "" && opts.ImageRefTemplate != nil {
		pkg, err := b.PackageProperty()
		if err != nil {
			return rendered{}, err
		}
		var sb strings.Builder
		data := imageRefTemplateData{Package: b.Package, Name: b.Name, Version: pkg.Version}
		if err := opts.ImageRefTemplate.Execute(&sb, data); err != nil {
			return rendered{}, fmt.Errorf("failed to execute image reference template: %w", err)
		}
		image = sb.String()
	}
	db, err := b.Declcfg(image)
	if err != nil {
		return rendered{}, err
	}
	// Upstream sorts relatedImages with sort.Slice, which is not stable:
	// entries with the same image and different names come out in the
	// order pdqsort leaves them. Sorting the same input the same way here
	// reproduces that order; Render's later sort then finds it sorted.
	ri := db.RelatedImages
	sort.Slice(ri, func(i, j int) bool { return ri[i].Image < ri[j].Image })
	r := rendered{cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{*db}}}
	if opts.WithChannels {
		h, err := channelHintOf(b)
		if err != nil {
			return rendered{}, err
		}
		r.hint = &h
	}
	return r, nil
}

// channelHint is what --with-channels needs from a rendered bundle: its
// annotations' channels and the CSV's upgrade edges. It travels beside the
// bundle's blob (see rendered), never inside it.
type channelHint struct {
	Channels       []string
	DefaultChannel string
	Replaces       string
	Skips          []string
	SkipRange      string
	Version        string
}

// bundleHint is the channel hint of the bundle at index in a
// DeclarativeConfig's Bundles.
type bundleHint struct {
	index int
	hint  channelHint
}

func channelHintOf(b *bundle.Bundle) (channelHint, error) {
	replaces, err := b.CSV.Replaces()
	if err != nil {
		return channelHint{}, &bundle.FileError{File: b.CSV.File, Err: fmt.Errorf("spec.replaces: %w", err)}
	}
	skips, err := b.CSV.Skips()
	if err != nil {
		return channelHint{}, &bundle.FileError{File: b.CSV.File, Err: fmt.Errorf("spec.skips: %w", err)}
	}
	pkg, err := b.PackageProperty()
	if err != nil {
		return channelHint{}, err
	}
	return channelHint{
		Channels:       b.Channels,
		DefaultChannel: b.DefaultChannel,
		Replaces:       replaces,
		Skips:          skips,
		SkipRange:      b.CSV.SkipRange(),
		Version:        pkg.Version,
	}, nil
}

// deriveChannels adds olm.package and olm.channel blobs for the rendered
// bundles (--with-channels), merged across every bundle given:
//   - one olm.package per package, its default channel from the bundles'
//     annotations (bundles that disagree are an error naming both; with no
//     default given, a package with a single channel uses it);
//   - one olm.channel per channel named in the annotations, with one entry
//     per bundle holding the CSV's spec.replaces, spec.skips and olm.skipRange,
//     ordered by version.
//
// Packages and channels that already exist in cfg (from a catalog rendered
// in the same call) are kept; bundles are added to existing channels.
// hints are the rendered bundles' channel data, by index in cfg.Bundles.
func deriveChannels(cfg *declcfg.DeclarativeConfig, hints []bundleHint) error {
	type member struct {
		name string
		hint channelHint
	}
	var pkgOrder []string
	members := map[string][]member{}
	for _, h := range hints {
		b := &cfg.Bundles[h.index]
		if b.Package == "" {
			return fmt.Errorf("bundle %q: no package in its annotations: cannot place it in a channel", b.Name)
		}
		if _, ok := members[b.Package]; !ok {
			pkgOrder = append(pkgOrder, b.Package)
		}
		members[b.Package] = append(members[b.Package], member{name: b.Name, hint: h.hint})
	}

	for _, pkgName := range pkgOrder {
		ms := members[pkgName]
		// Members in version order (then name) so entries are deterministic.
		sort.SliceStable(ms, func(i, j int) bool {
			if c := compareVersions(ms[i].hint.Version, ms[j].hint.Version); c != 0 {
				return c < 0
			}
			return ms[i].name < ms[j].name
		})

		// One entry per bundle name; a bundle given twice must agree.
		byName := map[string]member{}
		var uniq []member
		for _, m := range ms {
			if prev, ok := byName[m.name]; ok {
				if !sameEdges(prev.hint, m.hint) {
					return fmt.Errorf("package %q: bundle %q is given twice with different upgrade edges or channels", pkgName, m.name)
				}
				continue
			}
			byName[m.name] = m
			uniq = append(uniq, m)
		}

		var defaultChannel, defaultFrom string
		channelSet := map[string]bool{}
		var channelNames []string
		for _, m := range uniq {
			if len(m.hint.Channels) == 0 {
				return fmt.Errorf("package %q: bundle %q names no channel in its annotations (%s)", pkgName, m.name, bundle.AnnotationChannels)
			}
			for _, c := range m.hint.Channels {
				if !channelSet[c] {
					channelSet[c] = true
					channelNames = append(channelNames, c)
				}
			}
			if d := m.hint.DefaultChannel; d != "" {
				if defaultChannel == "" {
					defaultChannel, defaultFrom = d, m.name
				} else if d != defaultChannel {
					return fmt.Errorf("package %q: bundles %q and %q disagree on the default channel (%q and %q)", pkgName, defaultFrom, m.name, defaultChannel, d)
				}
			}
		}
		sort.Strings(channelNames)
		if defaultChannel == "" {
			if len(channelNames) != 1 {
				return fmt.Errorf("package %q: no bundle names a default channel (%s) and there are %d channels (%s)", pkgName, bundle.AnnotationDefaultChannel, len(channelNames), strings.Join(channelNames, ", "))
			}
			defaultChannel = channelNames[0]
		} else if !channelSet[defaultChannel] && !hasChannel(cfg, pkgName, defaultChannel) {
			return fmt.Errorf("package %q: default channel %q (from bundle %q) has no bundles: the bundles are in %s", pkgName, defaultChannel, defaultFrom, strings.Join(channelNames, ", "))
		}

		if !hasPackage(cfg, pkgName) {
			cfg.Packages = append(cfg.Packages, declcfg.Package{
				Schema:         declcfg.SchemaPackage,
				Name:           pkgName,
				DefaultChannel: defaultChannel,
			})
		}
		for _, chName := range channelNames {
			var entries []declcfg.ChannelEntry
			for _, m := range uniq {
				if !contains(m.hint.Channels, chName) {
					continue
				}
				entries = append(entries, declcfg.ChannelEntry{
					Name:      m.name,
					Replaces:  m.hint.Replaces,
					Skips:     m.hint.Skips,
					SkipRange: m.hint.SkipRange,
				})
			}
			if ch := findChannel(cfg, pkgName, chName); ch != nil {
				for _, e := range entries {
					if !hasEntry(ch.Entries, e.Name) {
						ch.Entries = append(ch.Entries, e)
					}
				}
				continue
			}
			cfg.Channels = append(cfg.Channels, declcfg.Channel{
				Schema:  declcfg.SchemaChannel,
				Name:    chName,
				Package: pkgName,
				Entries: entries,
			})
		}
	}
	return nil
}

// compareVersions orders semver versions; unparsable versions sort after
// parsable ones, by string.
func compareVersions(a, b string) int {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	switch {
	case errA == nil && errB == nil:
		return va.Compare(vb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func sameEdges(a, b channelHint) bool {
	return a.Replaces == b.Replaces && a.SkipRange == b.SkipRange &&
		strings.Join(a.Skips, "\x00") == strings.Join(b.Skips, "\x00") &&
		strings.Join(a.Channels, "\x00") == strings.Join(b.Channels, "\x00") &&
		a.DefaultChannel == b.DefaultChannel
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func hasPackage(cfg *declcfg.DeclarativeConfig, name string) bool {
	for _, p := range cfg.Packages {
		if p.Name == name {
			return true
		}
	}
	return false
}

func hasChannel(cfg *declcfg.DeclarativeConfig, pkg, name string) bool {
	return findChannel(cfg, pkg, name) != nil
}

func findChannel(cfg *declcfg.DeclarativeConfig, pkg, name string) *declcfg.Channel {
	for i := range cfg.Channels {
		if cfg.Channels[i].Package == pkg && cfg.Channels[i].Name == name {
			return &cfg.Channels[i]
		}
	}
	return nil
}

func hasEntry(entries []declcfg.ChannelEntry, name string) bool {
	for _, e := range entries {
		if e.Name == name {
			return true
		}
	}
	return false
}
