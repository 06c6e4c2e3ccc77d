package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/sqlite"
)

// AddOptions are what `opm index add` takes beyond where the result goes.
type AddOptions struct {
	// Bundles are the bundle images to add.
	Bundles []string
	// FromIndex is the index to add to ("" for none): a file-based
	// catalog (directory or image), or an sqlite database (file or index
	// image).
	FromIndex string
	// Mode builds the channels (default ModeReplaces).
	Mode Mode
	// Permissive goes on past errors adding bundles (upstream's
	// --permissive): what could be added is kept, and the errors are
	// passed to Warn.
	Permissive bool
	// OverwriteLatest replaces, in ModeReplaces, a channel head of the
	// index by the bundle of the same name given (upstream's
	// --overwrite-latest).
	OverwriteLatest bool
	// EnableAlpha allows bundles with the olm.substitutesFor annotation.
	EnableAlpha bool
	// Registry configures image pulls.
	Registry render.RegistryOptions
	// SQLite bounds the reading of an sqlite from-index.
	SQLite sqlite.Limits
	// Warn receives warnings (nil = dropped).
	Warn func(string)
}

// AddResult is the catalog built.
type AddResult struct {
	Config *declcfg.DeclarativeConfig
	// FromSQLite is set when the from-index was an sqlite database.
	FromSQLite bool
}

// Add builds the catalog: the from-index with the bundles added.
func Add(ctx context.Context, opts AddOptions) (*AddResult, error) {
	if opts.Mode == "" {
		opts.Mode = ModeReplaces
	}
	if _, err := ParseMode(string(opts.Mode)); err != nil {
		return nil, err
	}
	if len(opts.Bundles) == 0 {
		return nil, errors.New("no bundles to add")
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	bundles, err := pullBundles(ctx, opts.Bundles, opts.Registry.ImageOptions())
	if err != nil {
		return nil, err
	}

	c := sqlite.NewContents()
	var cat *catalog
	res := &AddResult{}
	if opts.FromIndex != "" {
		from, err := render.OpenIndex(ctx, opts.FromIndex, render.Options{Registry: opts.Registry, SQLite: opts.SQLite, Warn: opts.Warn})
		if err != nil {
			return nil, fmt.Errorf("from-index: %w", err)
		}
		if from.Database != nil {
			c, res.FromSQLite = from.Database, true
		} else {
			touched := map[string]bool{}
			for _, b := range bundles {
				touched[b.pkg] = true
			}
			if cat, err = readCatalog(c, from.Catalog, touched); err != nil {
				return nil, fmt.Errorf("from-index %s: %w", opts.FromIndex, err)
			}
		}
	}

	if err := sanityCheck(c, bundles, opts.OverwriteLatest); err != nil {
		return nil, err
	}
	if err := populate(c, bundles, opts); err != nil {
		if !opts.Permissive {
			return nil, err
		}
		warn(fmt.Sprintf("permissive mode: %v", err))
	}

	cfg, err := c.Render(warn)
	if err != nil {
		return nil, err
	}
	if cat != nil {
		cfg.Merge(&cat.extra)
		cfg.Merge(&cat.kept)
	}
	render.Normalize(cfg)
	res.Config = cfg
	return res, nil
}

// sanityCheck is upstream's check before anything is added: a bundle
// image or a bundle name already in its package is refused (a channel
// head may be overwritten with OverwriteLatest, one per package), and a
// bundle named as an edge belongs to one package.
func sanityCheck(c *sqlite.Contents, bundles []*inputBundle, overwrite bool) error {
	var errs []error
	adding := map[string]bool{}
	for _, b := range bundles {
		adding[b.ref] = true
	}
	overwrites := map[string]bool{}
	for _, b := range bundles {
		for _, path := range c.BundlePaths(b.pkg) {
			if adding[path] {
				errs = append(errs, fmt.Errorf("bundle %s already exists", b.ref))
			}
		}
		valid := false
		for _, ch := range c.ChannelNames(b.pkg) {
			if !c.InChannel(b.pkg, ch, b.name) {
				continue
			}
			if !overwrite {
				errs = append(errs, fmt.Errorf("bundle %s (%s) is already in package %s, channel %s (bundle already added that provides package and csv)", b.name, b.ref, b.pkg, ch))
				break
			}
			if by := c.ReplacedBy(b.pkg, ch, b.name); by != "" {
				errs = append(errs, fmt.Errorf("cannot overwrite bundle %s: it is not at the head of channel %s (%s replaces it); --overwrite-latest replaces channel heads only", b.name, ch, by))
				valid = false
				break
			}
			valid = true
		}
		if valid {
			if overwrites[b.pkg] {
				errs = append(errs, fmt.Errorf("cannot overwrite more than one bundle at a time for package %s with --overwrite-latest", b.pkg))
				break
			}
			overwrites[b.pkg] = true
		}
	}
	if err := edgePackages(c, bundles); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// edgePackages checks that every bundle named by the bundles added (as
// themselves, or in replaces or skips) belongs to one package.
func edgePackages(c *sqlite.Contents, bundles []*inputBundle) error {
	expected := map[string]string{}
	for _, b := range bundles {
		names := append(splitSkips(b.row.Skips.String), b.row.Replaces.String, b.name)
		for _, n := range names {
			if n == "" {
				continue
			}
			if pkg, ok := expected[n]; ok && pkg != b.pkg {
				pkgs := []string{pkg, b.pkg}
				sort.Strings(pkgs)
				return fmt.Errorf("bundle %s must belong to exactly one package, found on: %v", n, pkgs)
			}
			expected[n] = b.pkg
		}
	}
	for _, e := range c.Entries {
		if pkg, ok := expected[e.Bundle.String]; ok && e.Bundle.Valid && pkg != e.Package.String {
			return fmt.Errorf("bundle %s belongs to package %s on index, cannot be added as an edge for package %s", e.Bundle.String, e.Package.String, pkg)
		}
	}
	return nil
}

func splitSkips(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// populate adds the bundles in the mode asked, then checks that each is
// reached from the heads of its channels.
func populate(c *sqlite.Contents, bundles []*inputBundle, opts AddOptions) error {
	// upstream adds them in no particular order; by version is the order
	// its documentation describes
	sorted := slices.Clone(bundles)
	sort.SliceStable(sorted, func(i, j int) bool {
		vi, ei := semver.Parse(sorted[i].version)
		vj, ej := semver.Parse(sorted[j].version)
		if ei != nil || ej != nil {
			return ei == nil && ej != nil
		}
		return vi.LT(vj)
	})
	var err error
	switch opts.Mode {
	case ModeReplaces:
		err = addReplaces(c, sorted, opts.OverwriteLatest)
	default:
		err = addSemver(c, sorted, opts.Mode == ModeSemverSkipPatch)
		if err == nil {
			c.ClearNonHeadBundles()
		}
	}
	if err != nil {
		return err
	}
	return checkReached(c, bundles)
}

// addReplaces is upstream's replaces mode: each bundle added, then every
// package touched has its channels walked anew from heads chosen by
// version among its bundles (those already in its channels and those
// added).
func addReplaces(c *sqlite.Contents, bundles []*inputBundle, overwrite bool) error {
	var errs []error
	if overwrite {
		done := map[string]bool{}
		for _, b := range bundles {
			if done[b.pkg] || c.Bundles[b.name] == nil {
				continue
			}
			done[b.pkg] = true
			if err := c.RemoveHead(b.pkg, b.name); err != nil {
				return err
			}
		}
	}
	var pkgs []string
	added := map[string][]*inputBundle{}
	for _, b := range bundles {
		if err := c.AddBundle(b.row, b.images); err != nil {
			errs = append(errs, err)
			continue
		}
		if added[b.pkg] == nil {
			pkgs = append(pkgs, b.pkg)
		}
		added[b.pkg] = append(added[b.pkg], b)
	}
	for _, pkg := range pkgs {
		var candidates []headCandidate
		for _, b := range c.PackageBundles(pkg) {
			candidates = append(candidates, headCandidate{name: b.Name, version: b.Version, channels: b.Channels, defaultChannel: b.DefaultChannel})
		}
		for _, b := range added[pkg] {
			candidates = append(candidates, headCandidate{name: b.name, version: b.version, channels: b.channels, defaultChannel: b.defaultChannel})
		}
		def, heads, err := semverHeads(candidates)
		if err != nil {
			errs = append(errs, fmt.Errorf("package %s: %w", pkg, err))
			continue
		}
		if err := c.SetPackageChannels(pkg, def, heads); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// addSemver is upstream's semver and semver-skippatch modes: each bundle
// placed by version in each of its channels.
func addSemver(c *sqlite.Contents, bundles []*inputBundle, skipPatch bool) error {
	for _, b := range bundles {
		g, err := c.PackageGraph(b.pkg)
		if err != nil && !errors.Is(err, sqlite.ErrPackageNotInIndex) {
			return err
		}
		node := sqlite.GraphNode{Name: b.name, Version: b.version, Path: b.ref}
		if err := sqlite.AddBundleToGraph(g, node, b.channels, b.defaultChannel, skipPatch); err != nil {
			return err
		}
		if err := c.AddBundle(b.row, b.images); err != nil {
			return fmt.Errorf("error loading bundle %s into db: %w", b.name, err)
		}
		if err := c.SetPackageGraph(g); err != nil {
			return fmt.Errorf("error loading bundle %s into db: %w", b.name, err)
		}
	}
	return nil
}

// checkReached is upstream's check after an add: every bundle added is
// reached from the head of each of its channels, else the add pruned it.
func checkReached(c *sqlite.Contents, bundles []*inputBundle) error {
	var errs []error
	for _, b := range bundles {
		g, err := c.PackageGraph(b.pkg)
		if err != nil {
			errs = append(errs, fmt.Errorf("unable to verify added bundles for package %s: %v", b.pkg, err))
			continue
		}
		for _, ch := range b.channels {
			if g.Reaches(ch, b.ref) {
				continue
			}
			head := ""
			if cg := g.Channels[ch]; cg != nil {
				head = cg.Head.Name
			}
			errs = append(errs, fmt.Errorf("add prunes bundle %s (%s) from package %s, channel %s: the head of the channel is %s, and %s is not reached from it by replaces or skips; channels follow semantic versioning, so a version lower than the head's cannot be added unless the head reaches it", b.name, b.ref, b.pkg, ch, head, b.name))
		}
	}
	return errors.Join(errs...)
}

// headCandidate is a bundle as upstream's choice of channel heads sees it.
type headCandidate struct {
	name, version  string
	channels       []string
	defaultChannel string
}

// semverHeads chooses each channel's head, the bundle of greatest version
// naming it, and the default channel, the one the greatest version of all
// names (or the only channel), as upstream's replaces mode does.
func semverHeads(bundles []headCandidate) (string, []sqlite.Head, error) {
	type best struct {
		name  string
		v     semver.Version
		count int
	}
	heads := map[string]*best{}
	var order []string
	var max *best
	def := ""
	for _, b := range bundles {
		raw := b.version
		if raw == "" {
			raw = "0.0.0-z"
		}
		v, err := semver.Parse(raw)
		if err != nil {
			return "", nil, fmt.Errorf("error parsing bundle %s version %s: %s", b.name, raw, err)
		}
		cur := &best{name: b.name, v: v, count: 1}
		for _, ch := range b.channels {
			h, ok := heads[ch]
			if !ok {
				heads[ch] = &best{name: b.name, v: v, count: 1}
				order = append(order, ch)
				continue
			}
			c, err := buildIDCompare(v, h.v)
			if err != nil {
				return "", nil, err
			}
			if c < 0 {
				continue
			}
			n := 1
			if c == 0 {
				n += h.count
			}
			heads[ch] = &best{name: b.name, v: v, count: n}
		}
		if max != nil {
			c, err := buildIDCompare(v, max.v)
			if err != nil {
				return "", nil, err
			}
			if c < 0 {
				continue
			}
			if c == 0 {
				cur.count += max.count
			}
		}
		max = cur
		if b.defaultChannel != "" {
			def = b.defaultChannel
		}
	}
	if max != nil && max.count > 1 {
		return "", nil, fmt.Errorf("more than one bundle with maximum version %s", max.v)
	}
	sort.Strings(order)
	found := len(heads) == 1 && def == ""
	var out []sqlite.Head
	for _, ch := range order {
		h := heads[ch]
		if h.count > 1 {
			return "", nil, fmt.Errorf("more than one potential channel head for %s", ch)
		}
		if len(heads) == 1 {
			def = ch
		}
		found = found || ch == def
		out = append(out, sqlite.Head{Channel: ch, Bundle: h.name})
	}
	if !found {
		return "", nil, fmt.Errorf("unable to determine default channel among channel heads %v: no bundle of greatest version names a default channel (annotation operators.operatorframework.io.bundle.channel.default.v1) that is one of them", order)
	}
	return def, out, nil
}

// buildIDCompare compares versions as semver does, then, when they differ
// only in build metadata, compares the build identifiers by prerelease
// precedence, no build being lowest (upstream's BuildIdCompare).
func buildIDCompare(a, b semver.Version) (int, error) {
	if c := a.Compare(b); c != 0 {
		return c, nil
	}
	pa, err := buildAsPrerelease(a)
	if err != nil {
		return 0, err
	}
	pb, err := buildAsPrerelease(b)
	if err != nil {
		return 0, err
	}
	return pa.Compare(pb), nil
}

func buildAsPrerelease(v semver.Version) (semver.Version, error) {
	var pre []semver.PRVersion
	for _, b := range v.Build {
		p, err := semver.NewPRVersion(b)
		if err != nil {
			return semver.Version{}, fmt.Errorf("failed to convert build-id of %s to prerelease version for comparison: %s", v, err)
		}
		pre = append(pre, p)
	}
	out := semver.Version{Pre: pre}
	if len(pre) > 0 {
		out.Major = 1
	}
	return out, nil
}
