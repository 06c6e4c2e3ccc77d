package compose

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/model"
)

func filterOne(t *testing.T, cfg *declcfg.DeclarativeConfig, sel PackageSelection) *FilterResult {
	t.Helper()
	res, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{sel}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func channelSpecs(res *FilterResult, name string) []string {
	for _, c := range res.Config.Channels {
		if c.Name == name {
			return entrySpecs(c.Entries)
		}
	}
	return nil
}

func TestFilterChannels(t *testing.T) {
	tests := []struct {
		name     string
		channel  []string
		sel      PackageSelection
		want     []string
		notes    []string
		bundles  []string
		defaultC string
	}{
		{
			name:    "nothing removed keeps the entries as declared",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0@>=1.0.0 <1.2.0"},
			sel:     PackageSelection{Name: "p"},
			want:    []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0@>=1.0.0 <1.2.0"},
		},
		{
			name:    "min version keeps the top of the chain and its dangling replaces",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0"},
			sel:     PackageSelection{Name: "p", MinVersion: "1.1.0"},
			want:    []string{"p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0"},
		},
		{
			name:    "max version moves the head down",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0"},
			sel:     PackageSelection{Name: "p", MaxVersion: "1.1.0"},
			want:    []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0"},
		},
		{
			name:    "a channel's own bounds replace the package's",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0", "p.v2.0.0<p.v1.2.0"},
			sel:     PackageSelection{Name: "p", MinVersion: "1.2.0", Channels: []ChannelSelection{{Name: "stable", MaxVersion: "1.0.0", MinVersion: "1.0.0"}, {Name: "fast"}}},
			want:    []string{"p.v1.0.0"},
		},
		{
			name:    "z-stream off the chain becomes the head when its skipper goes",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.0.0|p.v1.1.0"},
			sel:     PackageSelection{Name: "p", MaxVersion: "1.1.0"},
			want:    []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0"},
		},
		{
			name:    "an entry whose only upgrade was removed is dropped with a note",
			channel: []string{"p.v1.0.0", "p.v2.0.0<p.v1.0.0", "p.v1.5.0", "p.v3.0.0<p.v2.0.0|p.v1.5.0"},
			sel:     PackageSelection{Name: "p", MaxVersion: "2.9.0"},
			want:    []string{"p.v1.0.0", "p.v2.0.0<p.v1.0.0"},
			notes:   []string{`package "p", channel "stable": dropped p.v1.5.0 (1.5.0) although selected: without the bundles filtered out it cannot upgrade to p.v2.0.0 (2.0.0), the head kept (the one most kept bundles upgrade to)`},
		},
		{
			name:    "heads only keeps the head as declared",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0|p.v1.0.5@>=1.0.0 <1.2.0"},
			sel:     PackageSelection{Name: "p", HeadsOnly: true},
			want:    []string{"p.v1.2.0<p.v1.1.0|p.v1.0.5@>=1.0.0 <1.2.0"},
		},
		{
			name:    "heads only after a max version",
			channel: []string{"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0"},
			sel:     PackageSelection{Name: "p", HeadsOnly: true, MaxVersion: "1.1.9"},
			want:    []string{"p.v1.1.0<p.v1.0.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testCatalog("p", "stable", map[string][]string{"stable": tt.channel, "fast": tt.channel})
			res := filterOne(t, cfg, tt.sel)
			if got := channelSpecs(res, "stable"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stable:\n got %q\nwant %q", got, tt.want)
			}
			var notes []string
			for _, n := range res.Notes {
				if strings.Contains(n, `channel "stable"`) {
					notes = append(notes, n)
				}
			}
			if !reflect.DeepEqual(notes, tt.notes) {
				t.Errorf("notes:\n got %q\nwant %q", notes, tt.notes)
			}
		})
	}
}

func TestFilterRestitchGap(t *testing.T) {
	// Keep 1.0.0 and 1.3.0 only: 1.3.0 now replaces 1.0.0 and skips the
	// removed 1.1.0 and 1.2.0, so clusters on those still upgrade.
	cfg := testCatalog("p", "stable", map[string][]string{"stable": {
		"p.v1.0.0", "p.v1.1.0<p.v1.0.0", "p.v1.2.0<p.v1.1.0", "p.v1.3.0<p.v1.2.0",
	}})
	keep := map[string]bool{"p.v1.0.0": true, "p.v1.3.0": true}
	g, err := graphOf(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := g.Package("p")
	kc, err := filterChannel(p, p.Channel("stable"), cfg.Channels[0].Entries, keep)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p.v1.0.0", "p.v1.3.0<p.v1.0.0|p.v1.2.0,p.v1.1.0"}
	if got := entrySpecs(kc.entries); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if kc.head != "p.v1.3.0" {
		t.Errorf("head %q", kc.head)
	}
	// Clusters on the removed bundles still upgrade to the head.
	out := &declcfg.DeclarativeConfig{Packages: cfg.Packages, Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Name: "stable", Package: "p", Entries: kc.entries}},
		Bundles: []declcfg.Bundle{testBundle("p", "p.v1.0.0"), testBundle("p", "p.v1.3.0")}}
	g2, err := graphOf(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"p.v1.1.0", "p.v1.2.0"} {
		paths, err := g2.Package("p").Path(graph.Installed{Name: from}, graph.PathOptions{Semantics: graph.Classic})
		if err != nil {
			t.Fatal(err)
		}
		if !paths[0].Reached {
			t.Errorf("from %s: %s", from, paths[0].Reason)
		}
	}
}

func TestFilterRestitchOffChain(t *testing.T) {
	// 1.0.1 is off the chain; OLM classic upgrades it to 1.1.0, which goes:
	// the next kept chain entry, 1.2.0, now skips it.
	cfg := testCatalog("p", "stable", map[string][]string{"stable": {
		"p.v1.0.0", "p.v1.0.1<p.v1.0.0", "p.v1.1.0<p.v1.0.0|p.v1.0.1", "p.v1.2.0<p.v1.1.0", "p.v1.3.0<p.v1.2.0",
	}})
	keep := map[string]bool{"p.v1.0.0": true, "p.v1.0.1": true, "p.v1.2.0": true, "p.v1.3.0": true}
	g, err := graphOf(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := g.Package("p")
	kc, err := filterChannel(p, p.Channel("stable"), cfg.Channels[0].Entries, keep)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p.v1.0.0", "p.v1.0.1<p.v1.0.0", "p.v1.2.0<p.v1.0.0|p.v1.1.0,p.v1.0.1", "p.v1.3.0<p.v1.2.0"}
	if got := entrySpecs(kc.entries); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFilterDefaultChannel(t *testing.T) {
	cfg := testCatalog("p", "stable", map[string][]string{
		"stable":    {"p.v1.0.0"},
		"fast":      {"p.v1.0.0", "p.v2.0.0<p.v1.0.0"},
		"candidate": {"p.v1.0.0", "p.v2.0.0<p.v1.0.0", "p.v3.0.0<p.v2.0.0"},
	})
	// Kept default channel.
	res := filterOne(t, cfg, PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "fast"}, {Name: "stable"}}})
	if res.Config.Packages[0].DefaultChannel != "stable" || len(res.Notes) != 0 {
		t.Errorf("default %q, notes %q", res.Config.Packages[0].DefaultChannel, res.Notes)
	}
	// The first channel selected.
	res = filterOne(t, cfg, PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "fast"}, {Name: "candidate"}}})
	if res.Config.Packages[0].DefaultChannel != "fast" || len(res.Notes) != 1 {
		t.Errorf("default %q, notes %q", res.Config.Packages[0].DefaultChannel, res.Notes)
	}
	// The channel whose head is newest, when none is named.
	res = filterOne(t, cfg, PackageSelection{Name: "p", MinVersion: "2.0.0"})
	if res.Config.Packages[0].DefaultChannel != "candidate" {
		t.Errorf("default %q, notes %q", res.Config.Packages[0].DefaultChannel, res.Notes)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, `channel "stable" left out`) }) {
		t.Errorf("notes %q", res.Notes)
	}
	// As selected.
	res = filterOne(t, cfg, PackageSelection{Name: "p", DefaultChannel: "candidate"})
	if res.Config.Packages[0].DefaultChannel != "candidate" {
		t.Errorf("default %q", res.Config.Packages[0].DefaultChannel)
	}
	if _, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{{Name: "p", DefaultChannel: "nope"}}}); err == nil || !strings.Contains(err.Error(), `the default channel "nope" is not among the channels kept`) {
		t.Errorf("err %v", err)
	}
}

func TestFilterErrors(t *testing.T) {
	cfg := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v2.0.0<p.v1.0.0"}})
	for _, tt := range []struct {
		sel  PackageSelection
		want string
	}{
		{PackageSelection{Name: "q"}, `unknown package "q" (packages: p)`},
		{PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "beta"}}}, `package "p": unknown channel "beta" (channels: stable)`},
		{PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "stabel"}}}, `package "p": unknown channel "stabel"; did you mean "stable"?`},
		{PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "stable", MinVersion: "3.0.0"}}}, `channel "stable" has no bundle at or above version 3.0.0`},
		{PackageSelection{Name: "p", MinVersion: "3.0.0"}, `no channel has a bundle at or above version 3.0.0`},
		{PackageSelection{Name: "p", MinVersion: "v1"}, `minimum: invalid version "v1"`},
		{PackageSelection{Name: "p", MinVersion: "v3.0.0"}, `no channel has a bundle at or above version v3.0.0`}, // a leading v is fine
		{PackageSelection{Name: "p", MinVersion: "2.0.0", MaxVersion: "1.0.0"}, `minimum version 2.0.0 is above maximum version 1.0.0`},
	} {
		_, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{tt.sel}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.sel, err, tt.want)
		}
	}
	if _, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{{Name: "p"}, {Name: "p"}}}); err == nil || !strings.Contains(err.Error(), "selected more than once") {
		t.Errorf("duplicate: %v", err)
	}
}

func TestFilterKeepsDeprecationsAndOthers(t *testing.T) {
	cfg := testCatalog("p", "stable", map[string][]string{
		"stable": {"p.v1.0.0", "p.v2.0.0<p.v1.0.0"},
		"alpha":  {"p.v1.0.0"},
	})
	cfg.Merge(testCatalog("q", "stable", map[string][]string{"stable": {"q.v1.0.0"}}))
	cfg.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Package: "p", Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaPackage}, Message: "p is old"},
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaChannel, Name: "alpha"}, Message: "alpha is old"},
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "p.v1.0.0"}, Message: "1.0.0 is old"},
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "p.v2.0.0"}, Message: "2.0.0 is old"},
	}}}
	cfg.Others = []declcfg.Meta{
		{Schema: "my.meta", Package: "p", Blob: []byte(`{"package":"p","schema":"my.meta"}`)},
		{Schema: "my.meta", Package: "q", Blob: []byte(`{"package":"q","schema":"my.meta"}`)},
		{Schema: "my.catalog", Blob: []byte(`{"schema":"my.catalog"}`)},
	}
	res := filterOne(t, cfg, PackageSelection{Name: "p", Channels: []ChannelSelection{{Name: "stable"}}, HeadsOnly: true})
	var refs []string
	for _, d := range res.Config.Deprecations {
		for _, en := range d.Entries {
			refs = append(refs, en.Reference.Schema+":"+en.Reference.Name)
		}
	}
	if want := []string{"olm.package:", "olm.bundle:p.v2.0.0"}; !reflect.DeepEqual(refs, want) {
		t.Errorf("deprecations %q, want %q", refs, want)
	}
	var others []string
	for _, o := range res.Config.Others {
		others = append(others, o.Schema+"/"+o.Package)
	}
	if want := []string{"my.meta/p", "my.catalog/"}; !reflect.DeepEqual(others, want) {
		t.Errorf("others %q, want %q", others, want)
	}
	if len(res.Config.Bundles) != 1 || res.Config.Bundles[0].Name != "p.v2.0.0" {
		t.Errorf("bundles %+v", res.Config.Bundles)
	}
}

// randomChannel builds a random valid channel over n versions: a
// replaces chain up to the newest one (sometimes jumping over entries),
// the entries off the chain each skipped by a newer entry and replacing
// an older one, some extra skips of names outside the channel, and some
// skipRanges.
func randomChannel(t *testing.T, rng *rand.Rand, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p.v%d.%d.0", 1+i/3, i%3)
	}
	onChain := make([]bool, n)
	onChain[n-1] = true
	for i := 0; i < n-1; i++ {
		onChain[i] = rng.IntN(3) > 0
	}
	entries := make([]declcfg.ChannelEntry, n)
	prev := -1
	for i := range names {
		entries[i].Name = names[i]
		if onChain[i] {
			if prev >= 0 {
				entries[i].Replaces = names[prev]
			}
			prev = i
		} else if i > 0 && rng.IntN(2) == 0 {
			entries[i].Replaces = names[rng.IntN(i)]
		}
	}
	for i := range names {
		if onChain[i] {
			continue
		}
		by := i + 1 + rng.IntN(n-1-i)
		entries[by].Skips = append(entries[by].Skips, names[i])
	}
	for i := range entries {
		if rng.IntN(6) == 0 {
			entries[i].Skips = append(entries[i].Skips, fmt.Sprintf("p.v0.%d.0", rng.IntN(5)))
		}
		if i > 0 && rng.IntN(5) == 0 {
			entries[i].SkipRange = ">=" + versionOfName(names[rng.IntN(i)]) + " <" + versionOfName(names[i])
		}
	}
	specs := entrySpecs(entries)
	rng.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	cfg := testCatalog("p", "stable", map[string][]string{"stable": specs})
	if _, err := model.ConvertToModel(*cfg); err != nil {
		t.Fatalf("random channel %q is invalid: %v", specs, err)
	}
	return specs
}

// TestFilterRandomChannels filters random valid channels to random version
// bounds and random subsets: the result always validates, holds only
// selected bundles, drops only what it notes, and every kept bundle that
// reached the head still does.
func TestFilterRandomChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 400
	if os.Getenv("COMPOSE_FUZZ_RUNS") != "" {
		runs, _ = strconv.Atoi(os.Getenv("COMPOSE_FUZZ_RUNS"))
	}
	var nDropped, nStitched int
	if testing.Short() {
		runs = 50
	}
	for run := 0; run < runs; run++ {
		n := 2 + rng.IntN(12)
		specs := randomChannel(t, rng, n)
		cfg := testCatalog("p", "stable", map[string][]string{"stable": specs})
		before := reachAll(t, cfg, "p", "stable")

		var sel PackageSelection
		var keep func(name string) bool
		g, _ := graphOf(cfg, nil)
		p := g.Package("p")
		switch rng.IntN(3) {
		case 0: // bounds
			lo, hi := rng.IntN(n), rng.IntN(n)
			if lo > hi {
				lo, hi = hi, lo
			}
			loV := fmt.Sprintf("%d.%d.0", 1+lo/3, lo%3)
			hiV := fmt.Sprintf("%d.%d.0", 1+hi/3, hi%3)
			sel = PackageSelection{Name: "p", MinVersion: loV, MaxVersion: hiV}
			r, _ := boundsRange(loV, hiV)
			keep = func(name string) bool { return r.Contains(p.Nodes[name].Version) }
		default: // an arbitrary subset, through filterChannel
			subset := map[string]bool{}
			for _, s := range specs {
				if rng.IntN(3) > 0 {
					subset[e(s).Name] = true
				}
			}
			if len(subset) == 0 {
				continue
			}
			keep = func(name string) bool { return subset[name] }
		}
		desc := fmt.Sprintf("run %d: channel %q", run, specs)

		var entries []declcfg.ChannelEntry
		var dropped []droppedEntry
		if sel.Name != "" {
			res, err := Filter(cfg, FilterOptions{Packages: []PackageSelection{sel}})
			if err != nil {
				if strings.Contains(err.Error(), "has no bundle") {
					continue
				}
				t.Fatalf("%s, %+v: %v", desc, sel, err)
			}
			entries = res.Config.Channels[0].Entries
			for _, note := range res.Notes {
				if !strings.Contains(note, "dropped") {
					t.Errorf("%s: unexpected note %q", desc, note)
				}
				name := note[strings.Index(note, "dropped ")+8:]
				dropped = append(dropped, droppedEntry{name: name[:strings.Index(name, " ")]})
			}
		} else {
			k := map[string]bool{}
			for _, s := range specs {
				k[e(s).Name] = keep(e(s).Name)
			}
			kc, err := filterChannel(p, p.Channel("stable"), cfg.Channels[0].Entries, k)
			if err != nil {
				t.Fatalf("%s, keep %q: %v", desc, sortedKeys(k), err)
			}
			entries, dropped = kc.entries, kc.dropped
			desc += fmt.Sprintf(", keep %q", sortedKeys(k))
		}

		if len(dropped) > 0 {
			nDropped++
		}
		for _, en := range entries {
			if orig := slices.IndexFunc(specs, func(s string) bool { return e(s).Name == en.Name }); orig >= 0 && entrySpecs([]declcfg.ChannelEntry{en})[0] != specs[orig] {
				nStitched++
				break
			}
		}

		// Only selected bundles; every selected one kept or noted.
		got := map[string]bool{}
		for _, en := range entries {
			got[en.Name] = true
			if !keep(en.Name) {
				t.Errorf("%s: kept unselected %s", desc, en.Name)
			}
		}
		for _, s := range specs {
			name := e(s).Name
			if keep(name) && !got[name] && !slices.ContainsFunc(dropped, func(d droppedEntry) bool { return d.name == name }) {
				t.Errorf("%s: selected %s silently missing", desc, name)
			}
		}
		// Valid, and what reached the head still does.
		out := &declcfg.DeclarativeConfig{Packages: cfg.Packages, Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Name: "stable", Package: "p", Entries: entries}}}
		for name := range got {
			out.Bundles = append(out.Bundles, testBundle("p", name))
		}
		if _, err := model.ConvertToModel(*out); err != nil {
			t.Errorf("%s: result %q invalid: %v", desc, entrySpecs(entries), err)
			continue
		}
		after := reachAll(t, out, "p", "stable")
		for name := range got {
			if before[name] && !after[name] {
				t.Errorf("%s: result %q: %s no longer reaches the head", desc, entrySpecs(entries), name)
			}
		}
	}
	t.Logf("%d runs: %d dropped a selected bundle, %d re-stitched an entry", runs, nDropped, nStitched)
}
