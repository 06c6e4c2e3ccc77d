package compose

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/validate"
)

// The tests in this file run on the real catalogs of ../shared/conformance
// (skipping when it is absent) that upstream validates.

// pickRemoval chooses, in a catalog, a bundle B to remove (a channel head
// that is only in channels of at least two entries, when there is one) and
// a channel C (in another package and not its default, when there is one).
func pickRemoval(t *testing.T, cfg *declcfg.DeclarativeConfig, g *graph.Graph) (bpkg, b, cpkg, c string) {
	t.Helper()
	usable := func(p *graph.PackageGraph, name string) bool {
		in := 0
		for _, ch := range p.Channels {
			if ch.Has(name) {
				in++
				if len(ch.Entries) < 2 {
					return false
				}
			}
		}
		return in > 0
	}
	for _, p := range g.Packages {
		for _, ch := range p.Channels {
			if ch.ChainErr == nil && usable(p, ch.Head) {
				bpkg, b = p.Name, ch.Head
				break
			}
		}
		if b != "" {
			break
		}
	}
	if b == "" {
		for _, p := range g.Packages {
			for _, ch := range p.Channels {
				for _, en := range ch.Entries {
					if p.Name != "" && p.Nodes[en.Name].HasVersion {
						bpkg, b = p.Name, en.Name
						break
					}
				}
				if b != "" {
					break
				}
			}
			if b != "" {
				break
			}
		}
	}
	// Another package's non-default channel, else one of B's package,
	// else any channel.
	for pass := 0; pass < 3; pass++ {
		for _, p := range g.Packages {
			if p.Name == "" || (pass == 0 && p.Name == bpkg) {
				continue
			}
			for _, ch := range p.Channels {
				if pass == 2 || ch.Name != p.DefaultChannel {
					return bpkg, b, p.Name, ch.Name
				}
			}
		}
	}
	return bpkg, b, "", ""
}

// withoutBundleAndChannel copies cfg without bundle b of bpkg (its blob and
// its entries) and without channel c of cpkg.
func withoutBundleAndChannel(cfg *declcfg.DeclarativeConfig, bpkg, b, cpkg, c string) *declcfg.DeclarativeConfig {
	out := &declcfg.DeclarativeConfig{Packages: cfg.Packages, Deprecations: cfg.Deprecations, Others: cfg.Others}
	for _, ch := range cfg.Channels {
		if ch.Package == cpkg && ch.Name == c {
			continue
		}
		if ch.Package == bpkg {
			var entries []declcfg.ChannelEntry
			for _, en := range ch.Entries {
				if en.Name != b {
					entries = append(entries, en)
				}
			}
			ch.Entries = entries
		}
		out.Channels = append(out.Channels, ch)
	}
	for _, bu := range cfg.Bundles {
		if bu.Package == bpkg && bu.Name == b {
			continue
		}
		out.Bundles = append(out.Bundles, bu)
	}
	return out
}

func edgeKeys(edges []graph.Edge) []string {
	var out []string
	for _, e := range edges {
		out = append(out, edgeKey(e))
	}
	sort.Strings(out)
	return out
}

// expectedLost computes, with graph.Path alone, the lost upgrade paths of
// a package from og to ng (classic): channel/bundle.
func expectedLost(t *testing.T, og, ng *graph.PackageGraph) []string {
	t.Helper()
	var out []string
	for _, oc := range og.Channels {
		if ng.Channel(oc.Name) == nil {
			continue
		}
		for _, en := range oc.Entries {
			on := og.Nodes[en.Name]
			if !on.HasVersion {
				continue
			}
			in := graph.Installed{Name: on.Name, Version: on.Version, HasVersion: true}
			paths, err := og.Path(in, graph.PathOptions{Semantics: graph.Classic, Channels: []string{oc.Name}})
			if err != nil {
				t.Fatal(err)
			}
			if !paths[0].Reached {
				continue
			}
			if nn := ng.Nodes[on.Name]; nn != nil && nn.HasVersion {
				in.Version = nn.Version
			}
			paths, err = ng.Path(in, graph.PathOptions{Semantics: graph.Classic, Channels: []string{oc.Name}})
			if err != nil {
				t.Fatal(err)
			}
			if !paths[0].Reached {
				out = append(out, oc.Name+"/"+on.Name)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func reportedLost(d *PackageDiff) []string {
	var out []string
	for _, lp := range d.LostPaths {
		out = append(out, lp.Channel+"/"+lp.From.Name)
	}
	sort.Strings(out)
	return out
}

// checkOnce fails when a list of a report holds the same item twice.
func checkOnce(t *testing.T, r *Report) {
	t.Helper()
	once := func(what string, items []string) {
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it] {
				t.Errorf("%s reported twice: %s", what, it)
			}
			seen[it] = true
		}
	}
	var pkgs []string
	for _, p := range r.Packages {
		pkgs = append(pkgs, p.Name)
		names := func(refs []BundleRef) []string {
			var out []string
			for _, b := range refs {
				out = append(out, b.Name)
			}
			return out
		}
		var chans []string
		for _, c := range append(append([]ChannelRef{}, p.ChannelsAdded...), p.ChannelsRemoved...) {
			chans = append(chans, c.Name)
		}
		for _, c := range p.Channels {
			chans = append(chans, c.Name)
			once(p.Name+"/"+c.Name+" entries", append(names(c.EntriesAdded), names(c.EntriesRemoved)...))
			once(p.Name+"/"+c.Name+" edges", append(edgeKeys(c.EdgesAdded), edgeKeys(c.EdgesRemoved)...))
		}
		once(p.Name+" channels", chans)
		changed := names(p.BundlesAdded)
		changed = append(changed, names(p.BundlesRemoved)...)
		for _, b := range p.BundlesChanged {
			changed = append(changed, b.Name)
		}
		once(p.Name+" bundles", changed)
		once(p.Name+" lost paths", reportedLost(&p))
	}
	once("packages", pkgs)
}

// TestDiffConformance removes a bundle and a channel from a copy of each
// catalog and compares the copy (OLD) with the catalog (NEW), and back:
// every change is reported, once, and nothing else.
func TestDiffConformance(t *testing.T) {
	for name, dir := range conformanceCatalogs(t) {
		t.Run(name, func(t *testing.T) {
			cfg := loadConformance(t, dir)
			g, err := graphOf(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			bpkg, b, cpkg, c := pickRemoval(t, cfg, g)
			if b == "" || c == "" {
				t.Skipf("no bundle and channel to remove (bundle %q, channel %q)", b, c)
			}
			t.Logf("removing bundle %s/%s and channel %s/%s", bpkg, b, cpkg, c)
			oldCfg := withoutBundleAndChannel(cfg, bpkg, b, cpkg, c)
			oldSum, err := Summarize(oldCfg, "old")
			if err != nil {
				t.Fatal(err)
			}
			newSum, err := Summarize(cfg, "new")
			if err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{"forward", "backward"} {
				from, to := oldSum, newSum
				if dir == "backward" {
					from, to = newSum, oldSum
				}
				r, err := Diff(from, to, DiffOptions{FailOn: FailOnKinds})
				if err != nil {
					t.Fatal(err)
				}
				checkOnce(t, r)
				t.Logf("%s: %+v", dir, r.Summary)
				checkRemovalReport(t, dir, r, from, to, bpkg, b, cpkg, c)
			}
		})
	}
}

func checkRemovalReport(t *testing.T, dir string, r *Report, from, to *Summary, bpkg, b, cpkg, c string) {
	t.Helper()
	wantPkgs := []string{bpkg}
	if cpkg != bpkg {
		wantPkgs = append(wantPkgs, cpkg)
	}
	sort.Strings(wantPkgs)
	var gotPkgs []string
	for _, p := range r.Packages {
		gotPkgs = append(gotPkgs, p.Name)
	}
	if !reflect.DeepEqual(gotPkgs, wantPkgs) {
		t.Fatalf("%s: packages reported %q, want %q", dir, gotPkgs, wantPkgs)
	}
	forward := dir == "forward"
	for _, p := range r.Packages {
		if p.Change != Changed || p.DefaultChannel != nil || len(p.Metadata) > 0 || len(p.BundlesChanged) > 0 ||
			len(p.DeprecationsAdded)+len(p.DeprecationsRemoved)+len(p.DeprecationsChanged)+len(p.OthersAdded)+len(p.OthersRemoved)+len(p.OthersChanged) > 0 {
			t.Errorf("%s: package %s: unexpected changes: %+v", dir, p.Name, p)
		}
		added, removed := p.BundlesAdded, p.BundlesRemoved
		chAdded, chRemoved := p.ChannelsAdded, p.ChannelsRemoved
		if !forward {
			added, removed, chAdded, chRemoved = removed, added, chRemoved, chAdded
		}
		var wantB []string
		if p.Name == bpkg {
			wantB = []string{b}
		}
		var gotB []string
		for _, x := range added {
			gotB = append(gotB, x.Name)
		}
		if !reflect.DeepEqual(gotB, wantB) || len(removed) > 0 {
			t.Errorf("%s: package %s: bundles +%v -%v, want +%v", dir, p.Name, added, removed, wantB)
		}
		var wantC []string
		if p.Name == cpkg {
			wantC = []string{c}
		}
		var gotC []string
		for _, x := range chAdded {
			gotC = append(gotC, x.Name)
		}
		if !reflect.DeepEqual(gotC, wantC) || len(chRemoved) > 0 {
			t.Errorf("%s: package %s: channels +%v -%v, want +%v", dir, p.Name, chAdded, chRemoved, wantC)
		}

		fg, tg := from.Graph.Package(p.Name), to.Graph.Package(p.Name)
		newG := tg
		if !forward {
			newG = fg
		}
		reported := map[string]ChannelDiff{}
		for _, cd := range p.Channels {
			reported[cd.Name] = cd
		}
		for _, nc := range newG.Channels {
			if p.Name == cpkg && nc.Name == c {
				continue
			}
			var wantEntries, wantEdges []string
			if p.Name == bpkg && nc.Has(b) {
				wantEntries = []string{b}
				for _, e := range nc.Edges() {
					if e.To == b || (e.From == b && e.Kind == graph.KindSkipRange) {
						wantEdges = append(wantEdges, edgeKey(e))
					}
				}
			}
			sort.Strings(wantEdges)
			wantEdges = slices.Compact(wantEdges)
			cd := reported[nc.Name]
			delete(reported, nc.Name)
			entries, edges := cd.EntriesAdded, cd.EdgesAdded
			otherEntries, otherEdges := cd.EntriesRemoved, cd.EdgesRemoved
			if !forward {
				entries, edges, otherEntries, otherEdges = otherEntries, otherEdges, entries, edges
			}
			var gotEntries []string
			for _, en := range entries {
				gotEntries = append(gotEntries, en.Name)
			}
			if !reflect.DeepEqual(gotEntries, wantEntries) || len(otherEntries) > 0 {
				t.Errorf("%s: %s/%s: entries %v / %v, want %v", dir, p.Name, nc.Name, entries, otherEntries, wantEntries)
			}
			if got := edgeKeys(edges); !reflect.DeepEqual(got, wantEdges) || len(otherEdges) > 0 {
				t.Errorf("%s: %s/%s: edges %q / %v, want %q", dir, p.Name, nc.Name, got, otherEdges, wantEdges)
			}
			oc := fg.Channel(nc.Name)
			tc := tg.Channel(nc.Name)
			headMoved := oc.Head != tc.Head || (oc.ChainErr == nil) != (tc.ChainErr == nil)
			if headMoved != (cd.Head != nil) {
				t.Errorf("%s: %s/%s: head %q -> %q, reported %+v", dir, p.Name, nc.Name, oc.Head, tc.Head, cd.Head)
			}
			if len(cd.SkipRanges) > 0 {
				t.Errorf("%s: %s/%s: skipRanges %v", dir, p.Name, nc.Name, cd.SkipRanges)
			}
		}
		for n := range reported {
			t.Errorf("%s: %s: channel %s reported without a change", dir, p.Name, n)
		}
		if got, want := reportedLost(&p), expectedLost(t, fg, tg); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s: lost paths %q, want %q", dir, p.Name, got, want)
		}
	}
	// The gate: removals only backward (the bundle and the channel).
	var removedFailures []string
	for _, f := range r.Failures {
		if f.Kind == FailRemoved {
			removedFailures = append(removedFailures, f.Message)
		}
	}
	want := 0
	if !forward {
		want = 2
	}
	if len(removedFailures) != want {
		t.Errorf("%s: removal failures %q, want %d", dir, removedFailures, want)
	}
	lost := 0
	for _, p := range r.Packages {
		lost += len(p.LostPaths)
	}
	pathFailures := 0
	for _, f := range r.Failures {
		if f.Kind == FailPaths {
			pathFailures++
		}
	}
	if pathFailures != lost {
		t.Errorf("%s: %d path failures for %d lost paths", dir, pathFailures, lost)
	}
}

// TestFilterConformance filters every catalog to heads only, and to each
// of its packages: whole, above its median version and below it. The
// result validates and holds exactly what was asked.
func TestFilterConformance(t *testing.T) {
	for name, dir := range conformanceCatalogs(t) {
		t.Run(name, func(t *testing.T) {
			cfg := loadConformance(t, dir)
			g, err := graphOf(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkHeadsOnly(t, cfg, g)
			var runs, drops, stitched int
			for _, p := range g.Packages {
				if p.Name == "" {
					continue
				}
				checkWholePackage(t, cfg, p)
				r, d, st := checkBounded(t, cfg, p)
				runs, drops, stitched = runs+r, drops+d, stitched+st
			}
			t.Logf("%d packages; bounded filters: %d, %d selected bundles dropped, %d entries re-stitched", len(g.Packages), runs, drops, stitched)
		})
	}
}

func checkHeadsOnly(t *testing.T, cfg *declcfg.DeclarativeConfig, g *graph.Graph) {
	t.Helper()
	res, err := Filter(cfg, FilterOptions{All: PackageSelection{HeadsOnly: true}})
	if err != nil {
		t.Fatalf("heads only: %v", err)
	}
	// What opm validate says, CUE schemas included (warnings allowed).
	v, err := validate.Validate(context.Background(), res.Config, validate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Passed {
		t.Errorf("heads only: opm validate fails: %s", v.Message)
	}
	if len(res.Notes) > 0 {
		t.Errorf("heads only: notes %q", res.Notes)
	}
	heads := map[string]bool{}
	for _, c := range res.Config.Channels {
		gc := g.Package(c.Package).Channel(c.Name)
		if len(c.Entries) != 1 || c.Entries[0].Name != gc.Head {
			t.Errorf("heads only: %s/%s: entries %v, want the head %s", c.Package, c.Name, entrySpecs(c.Entries), gc.Head)
			continue
		}
		want, _ := gc.Entry(gc.Head)
		if got := c.Entries[0]; got.Replaces != want.Replaces || got.SkipRange != want.SkipRange || !slices.Equal(got.Skips, want.Skips) {
			t.Errorf("heads only: %s/%s: head entry %+v, want %+v", c.Package, c.Name, got, want)
		}
		heads[c.Package+"/"+gc.Head] = true
	}
	var nchan int
	for _, p := range g.Packages {
		if p.Name != "" {
			nchan += len(p.Channels)
		}
	}
	if len(res.Config.Channels) != nchan {
		t.Errorf("heads only: %d channels, want %d", len(res.Config.Channels), nchan)
	}
	for _, b := range res.Config.Bundles {
		if !heads[b.Package+"/"+b.Name] {
			t.Errorf("heads only: bundle %s/%s is no head", b.Package, b.Name)
		}
		delete(heads, b.Package+"/"+b.Name)
	}
	for h := range heads {
		t.Errorf("heads only: head %s has no bundle", h)
	}
	for i, p := range res.Config.Packages {
		if p.DefaultChannel != cfg.Packages[i].DefaultChannel {
			t.Errorf("heads only: %s: default channel %q, was %q", p.Name, p.DefaultChannel, cfg.Packages[i].DefaultChannel)
		}
	}
}

func checkWholePackage(t *testing.T, cfg *declcfg.DeclarativeConfig, p *graph.PackageGraph) {
	t.Helper()
	res, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{{Name: p.Name}}})
	if err != nil {
		t.Fatalf("package %s: %v", p.Name, err)
	}
	want := &declcfg.DeclarativeConfig{}
	for _, x := range cfg.Packages {
		if x.Name == p.Name {
			want.Packages = append(want.Packages, x)
		}
	}
	for _, x := range cfg.Channels {
		if x.Package == p.Name {
			want.Channels = append(want.Channels, x)
		}
	}
	for _, x := range cfg.Bundles {
		if x.Package == p.Name {
			want.Bundles = append(want.Bundles, x)
		}
	}
	for _, x := range cfg.Deprecations {
		if x.Package == p.Name {
			want.Deprecations = append(want.Deprecations, x)
		}
	}
	for _, x := range cfg.Others {
		if x.Package == p.Name || x.Package == "" {
			want.Others = append(want.Others, x)
		}
	}
	var got, exp bytes.Buffer
	if err := declcfg.WriteJSON(*res.Config, &got); err != nil {
		t.Fatal(err)
	}
	if err := declcfg.WriteJSON(*want, &exp); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), exp.Bytes()) || len(res.Notes) > 0 {
		t.Errorf("package %s: the filtered package differs from the input's (%d vs %d bytes), notes %q", p.Name, got.Len(), exp.Len(), res.Notes)
	}
}

// checkBounded filters p above and below its median version and returns
// the number of filters run, of selected bundles dropped and of entries
// changed.
func checkBounded(t *testing.T, cfg *declcfg.DeclarativeConfig, p *graph.PackageGraph) (runs, drops, stitched int) {
	t.Helper()
	var versions []*graph.Node
	for _, n := range p.Nodes {
		if n.HasVersion {
			versions = append(versions, n)
		}
	}
	if len(versions) < 2 {
		return 0, 0, 0
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i].Version.LT(versions[j].Version) })
	median := versions[len(versions)/2].Version.String()
	for _, sel := range []PackageSelection{{Name: p.Name, MinVersion: median}, {Name: p.Name, MaxVersion: median}} {
		desc := fmt.Sprintf("package %s min %q max %q", p.Name, sel.MinVersion, sel.MaxVersion)
		r, _ := boundsRange(sel.MinVersion, sel.MaxVersion)
		res, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{sel}})
		if err != nil {
			if strings.Contains(err.Error(), "no channel has a bundle") {
				continue
			}
			t.Errorf("%s: %v", desc, err)
			continue
		}
		runs++ // Filter validated the result
		for _, c := range res.Config.Channels {
			for _, en := range c.Entries {
				if orig, ok := p.Channel(c.Name).Entry(en.Name); ok && (orig.Replaces != en.Replaces || !slices.Equal(orig.Skips, en.Skips)) {
					stitched++
				}
			}
		}
		dropped := map[string]bool{}
		for _, n := range res.Notes {
			if i := strings.Index(n, "dropped "); i >= 0 {
				drops++
				name := n[i+len("dropped "):]
				dropped[n[strings.Index(n, "channel ")+8:strings.Index(n, ": dropped")]+" "+name[:strings.Index(name, " ")]] = true
			}
		}
		g, err := graphOf(res.Config, nil)
		if err != nil {
			t.Fatal(err)
		}
		np := g.Package(p.Name)
		for _, nc := range np.Channels {
			oc := p.Channel(nc.Name)
			for _, en := range oc.Entries {
				n := p.Nodes[en.Name]
				in := n.HasVersion && r.Contains(n.Version)
				if nc.Has(en.Name) != in && !dropped[fmt.Sprintf("%q %s", nc.Name, en.Name)] {
					t.Errorf("%s: channel %s: %s (in range: %v) kept: %v", desc, nc.Name, en.Name, in, nc.Has(en.Name))
				}
			}
			// What reached the head still does (within the kept entries).
			before, err := p.NewReach(graph.Classic, []string{nc.Name})
			if err != nil {
				t.Fatal(err)
			}
			after, err := np.NewReach(graph.Classic, []string{nc.Name})
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range nc.Entries {
				n := p.Nodes[en.Name]
				ok, _ := before.Reaches(graph.Installed{Name: n.Name, Version: n.Version, HasVersion: true})
				ok2, _ := after.Reaches(graph.Installed{Name: n.Name, Version: n.Version, HasVersion: true})
				if ok && !ok2 {
					t.Errorf("%s: channel %s: %s no longer reaches the head", desc, nc.Name, en.Name)
				}
			}
		}
	}
	return runs, drops, stitched
}

// jsonDigest is the SHA-256 of what `opm render -o json` writes for cfg.
func jsonDigest(t *testing.T, cfg *declcfg.DeclarativeConfig) [32]byte {
	t.Helper()
	h := sha256.New()
	if err := declcfg.WriteJSON(*cfg, h); err != nil {
		t.Fatal(err)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// TestMergeConformance merges pairs of disjoint catalogs (the result is
// what rendering both gives, byte for byte) and each catalog with itself
// (an error naming both inputs, unless --prefer).
func TestMergeConformance(t *testing.T) {
	cats := conformanceCatalogs(t)
	names := sortedNames(cats)
	for i, a := range names {
		b := names[(i+1)%len(names)]
		if a == b {
			continue
		}
		t.Run(a+"+"+b, func(t *testing.T) {
			ca, cb := loadConformance(t, cats[a]), loadConformance(t, cats[b])
			pa, pb := byPackage(ca), byPackage(cb)
			for n := range pa {
				if _, ok := pb[n]; ok && n != "" {
					t.Skipf("both hold package %q", n)
				}
			}
			res, err := Merge([]Input{{Source: a, Config: ca}, {Source: b, Config: cb}}, MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			both := &declcfg.DeclarativeConfig{}
			both.Merge(ca)
			both.Merge(cb)
			if got, want := jsonDigest(t, res.Config), jsonDigest(t, both); got != want {
				t.Errorf("merge differs from rendering both")
			}
		})
	}
	for _, a := range names {
		t.Run("self/"+a, func(t *testing.T) {
			ca := loadConformance(t, cats[a])
			_, err := Merge([]Input{{Source: "one/" + a, Config: ca}, {Source: "two/" + a, Config: ca}}, MergeOptions{})
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a conflict", err)
			}
			npkg := 0
			for n, b := range byPackage(ca) {
				if n != "" && b != nil {
					npkg++
				}
			}
			if len(ce.Conflicts) != npkg {
				t.Errorf("%d conflicts for %d packages", len(ce.Conflicts), npkg)
			}
			for _, c := range ce.Conflicts {
				if len(c.Sources) != 2 || !strings.HasPrefix(c.Sources[0], "one/"+a) || !strings.HasPrefix(c.Sources[1], "two/"+a) {
					t.Errorf("package %s: sources %q", c.Package, c.Sources)
				}
			}
			msg := err.Error()
			if !strings.Contains(msg, "one/"+a) || !strings.Contains(msg, "two/"+a) {
				t.Errorf("message does not name both inputs: %.300s", msg)
			}
			for _, prefer := range []Prefer{PreferFirst, PreferLast} {
				res, err := Merge([]Input{{Source: "one", Config: ca}, {Source: "two", Config: ca}}, MergeOptions{Prefer: prefer})
				if err != nil {
					t.Fatal(err)
				}
				if jsonDigest(t, res.Config) != jsonDigest(t, ca) {
					t.Errorf("--prefer %s: result differs from the input", prefer)
				}
			}
		})
	}
}

// TestMergeRendersLikeRender runs the merge action's path (references
// rendered through pkg/render) on the two smallest disjoint catalogs and
// compares with `opm render A B`.
func TestMergeRendersLikeRender(t *testing.T) {
	root := conformanceRoot(t)
	a := filepath.Join(root, "fbc-composite-example-v4.13", "input")
	b := filepath.Join(root, "kueue-fbc-v4.20", "input")
	ctx := context.Background()
	want, err := render.Render(ctx, render.Options{Refs: []string{a, b}})
	if err != nil {
		t.Skipf("render: %v", err)
	}
	var inputs []Input
	for _, ref := range []string{a, b} {
		cfg, err := Load(ctx, ref, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, Input{Source: ref, Config: cfg})
	}
	res, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []declcfg.Format{declcfg.FormatJSON, declcfg.FormatYAML} {
		var got, exp bytes.Buffer
		if err := declcfg.Write(*res.Config, &got, f); err != nil {
			t.Fatal(err)
		}
		if err := declcfg.Write(*want, &exp, f); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), exp.Bytes()) {
			t.Errorf("%s: merge differs from render", f)
		}
	}
}
