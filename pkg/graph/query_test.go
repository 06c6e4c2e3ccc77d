package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/versionrange"
)

// catalog builds a one-package catalog; every entry gets a bundle whose
// version is the part of its name after ".v".
func catalog(t *testing.T, pkg, defaultChannel string, channels map[string][]declcfg.ChannelEntry, deprecated ...string) *PackageGraph {
	t.Helper()
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: pkg, DefaultChannel: defaultChannel}}}
	seen := map[string]bool{}
	for name, entries := range channels {
		cfg.Channels = append(cfg.Channels, channel(pkg, name, entries...))
		for _, e := range entries {
			if !seen[e.Name] {
				seen[e.Name] = true
				cfg.Bundles = append(cfg.Bundles, bundle(pkg, e.Name, e.Name[strings.LastIndex(e.Name, ".v")+2:]))
			}
		}
	}
	if len(deprecated) > 0 {
		d := declcfg.Deprecation{Schema: declcfg.SchemaDeprecations, Package: pkg}
		for _, b := range deprecated {
			d.Entries = append(d.Entries, declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: b}, Message: "deprecated"})
		}
		cfg.Deprecations = append(cfg.Deprecations, d)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g.Package(pkg)
}

// steps renders a path as "a -> b -> c" (bundle names, or the starting
// version when it has no bundle).
func steps(p *Path) string {
	parts := []string{p.From.Name}
	if p.From.Name == "" {
		parts[0] = p.From.Version.String()
	}
	for _, s := range p.Steps {
		parts = append(parts, s.To.Name)
	}
	return strings.Join(parts, " -> ")
}

func resolve(t *testing.T, p *PackageGraph, s string) Installed {
	t.Helper()
	in, err := p.Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func ver(s string) *semver.Version {
	v := semver.MustParse(s)
	return &v
}

// Seed (OLM concepts, "Example upgrade path"): 0.1.1 is installed, 0.1.3
// replaces 0.1.2 which replaces 0.1.1; OLM upgrades one version at a time.
func seedReplaces(t *testing.T) *PackageGraph {
	return catalog(t, "example", "alpha", map[string][]declcfg.ChannelEntry{"alpha": {
		{Name: "example.v0.1.1"},
		{Name: "example.v0.1.2", Replaces: "example.v0.1.1"},
		{Name: "example.v0.1.3", Replaces: "example.v0.1.2"},
	}})
}

// Seed ("Skipping upgrades"): etcdoperator.v0.9.2 replaces v0.9.0 and
// skips v0.9.1.
func seedEtcd(t *testing.T) *PackageGraph {
	return catalog(t, "etcd", "alpha", map[string][]declcfg.ChannelEntry{"alpha": {
		{Name: "etcdoperator.v0.9.0"},
		{Name: "etcdoperator.v0.9.1", Replaces: "etcdoperator.v0.9.0"},
		{Name: "etcdoperator.v0.9.2", Replaces: "etcdoperator.v0.9.0", Skips: []string{"etcdoperator.v0.9.1"}},
	}})
}

// Seed ("Z-stream support"): the new z-stream replaces the previous one
// and skipRange-covers every earlier z-stream of the minor version; the
// old releases need not exist in the catalog ("virtual" nodes).
func seedZStream(t *testing.T) *PackageGraph {
	return catalog(t, "elasticsearch-operator", "4.1", map[string][]declcfg.ChannelEntry{"4.1": {
		{Name: "elasticsearch-operator.v4.1.2", Replaces: "elasticsearch-operator.v4.1.1", SkipRange: ">=4.1.0 <4.1.2"},
	}})
}

// Seed (OLM v1 "Differences from original OLM"): v3.0.0 skips v2.0.0,
// v2.0.0 has skipRange >=1.0.0 <2.0.0, and 1.0.0 is installed.
func seedV1Difference(t *testing.T) *PackageGraph {
	return catalog(t, "example", "stable", map[string][]declcfg.ChannelEntry{"stable": {
		{Name: "example.v3.0.0", Skips: []string{"example.v2.0.0"}},
		{Name: "example.v2.0.0", SkipRange: ">=1.0.0 <2.0.0"},
	}})
}

func TestPathSeedExamples(t *testing.T) {
	tests := []struct {
		name    string
		graph   func(*testing.T) *PackageGraph
		from    string
		opts    PathOptions
		want    string
		reached bool
		reason  string
	}{
		{name: "Success/replaces walk classic", graph: seedReplaces, from: "0.1.1", opts: PathOptions{Semantics: Classic},
			want: "example.v0.1.1 -> example.v0.1.2 -> example.v0.1.3", reached: true, reason: `reached the head of channel "alpha"`},
		{name: "Success/replaces walk v1", graph: seedReplaces, from: "0.1.1", opts: PathOptions{Semantics: V1},
			want: "example.v0.1.1 -> example.v0.1.2 -> example.v0.1.3", reached: true},
		{name: "Success/etcd from v0.9.0 classic", graph: seedEtcd, from: "etcdoperator.v0.9.0", opts: PathOptions{Semantics: Classic},
			want: "etcdoperator.v0.9.0 -> etcdoperator.v0.9.2", reached: true},
		{name: "Success/etcd from v0.9.1 classic", graph: seedEtcd, from: "0.9.1", opts: PathOptions{Semantics: Classic},
			want: "etcdoperator.v0.9.1 -> etcdoperator.v0.9.2", reached: true},
		{name: "Success/etcd from v0.9.0 v1", graph: seedEtcd, from: "0.9.0", opts: PathOptions{Semantics: V1},
			want: "etcdoperator.v0.9.0 -> etcdoperator.v0.9.2", reached: true},
		{name: "Success/etcd from v0.9.1 v1", graph: seedEtcd, from: "0.9.1", opts: PathOptions{Semantics: V1},
			want: "etcdoperator.v0.9.1 -> etcdoperator.v0.9.2", reached: true},
		{name: "Success/etcd bad update never installed classic", graph: seedEtcd, from: "0.9.0", opts: PathOptions{Semantics: Classic, To: ver("0.9.1")},
			want:   "etcdoperator.v0.9.0 -> etcdoperator.v0.9.2",
			reason: `OLM classic's walk in channel "alpha" from etcdoperator.v0.9.0 (0.9.0) ends at etcdoperator.v0.9.2 (0.9.2) and never visits version 0.9.1`},
		{name: "Success/z-stream from virtual 4.1.0 classic", graph: seedZStream, from: "4.1.0", opts: PathOptions{Semantics: Classic},
			want: "4.1.0 -> elasticsearch-operator.v4.1.2", reached: true},
		{name: "Success/z-stream from virtual 4.1.1 by name classic", graph: seedZStream, from: "elasticsearch-operator.v4.1.1", opts: PathOptions{Semantics: Classic},
			want: "elasticsearch-operator.v4.1.1 -> elasticsearch-operator.v4.1.2", reached: true},
		{name: "Success/z-stream from virtual 4.1.0 v1", graph: seedZStream, from: "4.1.0", opts: PathOptions{Semantics: V1},
			want: "4.1.0 -> elasticsearch-operator.v4.1.2", reached: true},
		{name: "Success/z-stream outside the range", graph: seedZStream, from: "4.0.9", opts: PathOptions{Semantics: Classic},
			want:   "4.0.9",
			reason: `no OLM classic upgrade from 4.0.9 toward the head elasticsearch-operator.v4.1.2 (4.1.2) of channel "4.1": no entry on it has a skipRange covering that version`},
		{name: "Success/classic finds no path to 2.0.0", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: Classic, To: ver("2.0.0")},
			want:   "1.0.0",
			reason: `OLM classic's walk in channel "stable" from 1.0.0 ends at 1.0.0 and never visits version 2.0.0`},
		{name: "Success/classic finds no path at all", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: Classic},
			want:   "1.0.0",
			reason: `no OLM classic upgrade from 1.0.0 toward the head example.v3.0.0 (3.0.0) of channel "stable": no entry on it has a skipRange covering that version`},
		{name: "Success/v1 finds the path to 2.0.0", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: V1, To: ver("2.0.0")},
			want: "1.0.0 -> example.v2.0.0", reached: true},
		{name: "Success/v1 goes on to 3.0.0", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: V1},
			want: "1.0.0 -> example.v2.0.0 -> example.v3.0.0", reached: true, reason: "reached the newest version of channels stable"},
		{name: "Success/v1 within a range", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: V1, Range: mustRange(t, "<3.0.0")},
			want: "1.0.0 -> example.v2.0.0", reached: true},
		{name: "Success/v1 range with nothing reachable", graph: seedV1Difference, from: "1.0.0", opts: PathOptions{Semantics: V1, Range: mustRange(t, ">=3.0.0")},
			want: "1.0.0", reason: `OLM v1 finds no upgrade from 1.0.0 to a version in ">=3.0.0" in channels stable`},
		{name: "Success/classic range truncates the walk", graph: seedReplaces, from: "0.1.1", opts: PathOptions{Semantics: Classic, Range: mustRange(t, "~0.1.2")},
			want: "example.v0.1.1 -> example.v0.1.2 -> example.v0.1.3", reached: true},
		{name: "Success/classic range stops early", graph: seedReplaces, from: "0.1.1", opts: PathOptions{Semantics: Classic, Range: mustRange(t, "<0.1.3")},
			want: "example.v0.1.1 -> example.v0.1.2", reached: true},
		{name: "Success/already at head", graph: seedReplaces, from: "0.1.3", opts: PathOptions{Semantics: Classic},
			want: "example.v0.1.3", reached: true, reason: `example.v0.1.3 (0.1.3) is already the head of channel "alpha"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.graph(t)
			paths, err := p.Path(resolve(t, p, tt.from), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != 1 {
				t.Fatalf("got %d paths, want 1", len(paths))
			}
			got := paths[0]
			if steps(got) != tt.want {
				t.Errorf("path = %s, want %s", steps(got), tt.want)
			}
			if got.Reached != tt.reached {
				t.Errorf("reached = %v, want %v (%s)", got.Reached, tt.reached, got.Reason)
			}
			if tt.reason != "" && got.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", got.Reason, tt.reason)
			}
		})
	}
}

func mustRange(t *testing.T, s string) *versionrange.Range {
	t.Helper()
	r, err := versionrange.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPathEdgeKinds(t *testing.T) {
	p := seedZStream(t)
	paths, err := p.Path(resolve(t, p, "elasticsearch-operator.v4.1.1"), PathOptions{Semantics: V1})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths[0].Steps) != 1 {
		t.Fatalf("path = %s", steps(paths[0]))
	}
	// 4.1.1 has no bundle, hence no version: only replaces can match it.
	got := paths[0].Steps[0].Edges
	want := []Edge{{From: "elasticsearch-operator.v4.1.1", To: "elasticsearch-operator.v4.1.2", Kind: KindReplaces}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("edges = %+v, want %+v", got, want)
	}
}

// TestClassicVersusV1 covers where the two semantics part: closest to the
// head versus highest version, deprecations, downgrades.
func TestClassicVersusV1(t *testing.T) {
	// Both v1.2.0 and v1.1.0 upgrade from v1.0.0. On the chain v1.1.0 is
	// the head (it replaces v1.2.0, an odd but valid graph).
	odd := func(t *testing.T, deprecated ...string) *PackageGraph {
		return catalog(t, "op", "stable", map[string][]declcfg.ChannelEntry{"stable": {
			{Name: "op.v1.0.0"},
			{Name: "op.v1.2.0", Replaces: "op.v1.0.0"},
			{Name: "op.v1.1.0", Replaces: "op.v1.2.0", Skips: []string{"op.v1.0.0"}},
		}}, deprecated...)
	}
	tests := []struct {
		name  string
		graph *PackageGraph
		sem   Semantics
		want  string
	}{
		{name: "Success/classic closest to head", graph: odd(t), sem: Classic, want: "op.v1.0.0 -> op.v1.1.0"},
		{name: "Success/v1 highest version", graph: odd(t), sem: V1, want: "op.v1.0.0 -> op.v1.2.0"},
		{name: "Success/v1 deprecated last", graph: odd(t, "op.v1.2.0"), sem: V1, want: "op.v1.0.0 -> op.v1.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths, err := tt.graph.Path(resolve(t, tt.graph, "1.0.0"), PathOptions{Semantics: tt.sem})
			if err != nil {
				t.Fatal(err)
			}
			if got := steps(paths[0]); got != tt.want {
				t.Errorf("path = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("Success/v1 never downgrades", func(t *testing.T) {
		p := odd(t)
		// From 1.2.0, classic follows replaces down the version line to
		// the head 1.1.0; v1 stays.
		paths, _ := p.Path(resolve(t, p, "1.2.0"), PathOptions{Semantics: Classic})
		if got := steps(paths[0]); got != "op.v1.2.0 -> op.v1.1.0" {
			t.Errorf("classic path = %s", got)
		}
		paths, _ = p.Path(resolve(t, p, "1.2.0"), PathOptions{Semantics: V1})
		if got := steps(paths[0]); got != "op.v1.2.0" || !paths[0].Reached {
			t.Errorf("v1 path = %s (reached %v)", got, paths[0].Reached)
		}
	})
}

func TestPathChannels(t *testing.T) {
	p := catalog(t, "op", "stable", map[string][]declcfg.ChannelEntry{
		"stable": {{Name: "op.v1.0.0"}, {Name: "op.v1.1.0", Replaces: "op.v1.0.0"}},
		"fast":   {{Name: "op.v1.0.0"}, {Name: "op.v1.1.0", Replaces: "op.v1.0.0"}, {Name: "op.v2.0.0", Replaces: "op.v1.1.0"}},
		"broken": {{Name: "op.v1.0.0"}, {Name: "op.v1.1.0"}},
	})
	in := resolve(t, p, "1.0.0")
	t.Run("Success/classic defaults to the default channel", func(t *testing.T) {
		paths, err := p.Path(in, PathOptions{Semantics: Classic})
		if err != nil || len(paths) != 1 || paths[0].Channels[0] != "stable" || steps(paths[0]) != "op.v1.0.0 -> op.v1.1.0" {
			t.Fatalf("paths = %v, %v", paths, err)
		}
	})
	t.Run("Success/classic one path per channel", func(t *testing.T) {
		paths, err := p.Path(in, PathOptions{Semantics: Classic, Channels: []string{"fast", "broken"}})
		if err != nil || len(paths) != 2 {
			t.Fatalf("paths = %v, %v", paths, err)
		}
		if steps(paths[0]) != "op.v1.0.0 -> op.v1.1.0 -> op.v2.0.0" || !paths[0].Reached {
			t.Errorf("fast: %s", steps(paths[0]))
		}
		if paths[1].Reached || paths[1].Reason != `channel "broken" has no replaces chain to follow: multiple channel heads found in graph: op.v1.0.0, op.v1.1.0` {
			t.Errorf("broken: %q", paths[1].Reason)
		}
	})
	t.Run("Success/v1 defaults to every channel", func(t *testing.T) {
		paths, err := p.Path(in, PathOptions{Semantics: V1})
		if err != nil || len(paths) != 1 || steps(paths[0]) != "op.v1.0.0 -> op.v1.1.0 -> op.v2.0.0" {
			t.Fatalf("paths = %v, %v", paths, err)
		}
		if got := strings.Join(paths[0].Channels, ","); got != "broken,fast,stable" {
			t.Errorf("channels = %s", got)
		}
	})
	t.Run("Error/unknown channel", func(t *testing.T) {
		_, err := p.Path(in, PathOptions{Semantics: V1, Channels: []string{"nope"}})
		checkErr(t, err, `unknown channel "nope" of package "op" (channels: broken, fast, stable)`)
	})
	t.Run("Error/unknown semantics", func(t *testing.T) {
		_, err := p.Path(in, PathOptions{Semantics: "v2"})
		checkErr(t, err, `unknown semantics "v2", expected classic or v1`)
	})
}

func TestSuccessors(t *testing.T) {
	p := seedEtcd(t)
	got, err := p.Successors(resolve(t, p, "0.9.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name           string
		kinds          string
		chain          int
		classic, v1, l bool
	}
	var rows []row
	for _, s := range got {
		var kinds []string
		for _, e := range s.Edges {
			kinds = append(kinds, string(e.Kind))
		}
		rows = append(rows, row{s.Node.Name, strings.Join(kinds, ","), s.ChainIndex, s.Classic, s.V1, s.Lower})
	}
	want := []row{
		{"etcdoperator.v0.9.1", "replaces", -1, false, false, false},
		{"etcdoperator.v0.9.2", "replaces", 0, true, true, false},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("successors = %+v, want %+v", rows, want)
	}

	p = seedV1Difference(t)
	got, err = p.Successors(resolve(t, p, "1.0.0"), []string{"stable"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Node.Name != "example.v2.0.0" || got[0].Classic || !got[0].V1 || got[0].Edges[0].Kind != KindSkipRange || got[0].Edges[0].Range != ">=1.0.0 <2.0.0" {
		t.Errorf("successors of 1.0.0 = %+v", got)
	}
}

func TestResolve(t *testing.T) {
	p := seedZStream(t)
	tests := []struct {
		name    string
		in      string
		want    Installed
		wantErr string
	}{
		{name: "Success/bundle name", in: "elasticsearch-operator.v4.1.2", want: Installed{Name: "elasticsearch-operator.v4.1.2", Version: semver.MustParse("4.1.2"), HasVersion: true}},
		{name: "Success/version of a bundle", in: "4.1.2", want: Installed{Name: "elasticsearch-operator.v4.1.2", Version: semver.MustParse("4.1.2"), HasVersion: true}},
		{name: "Success/version without bundle", in: "4.1.0", want: Installed{Version: semver.MustParse("4.1.0"), HasVersion: true}},
		{name: "Success/name without bundle", in: "elasticsearch-operator.v4.1.1", want: Installed{Name: "elasticsearch-operator.v4.1.1"}},
		{name: "Success/version with a v", in: "v4.1.2", want: Installed{Name: "elasticsearch-operator.v4.1.2", Version: semver.MustParse("4.1.2"), HasVersion: true}},
		{name: "Error/neither", in: "elasticsearch-operator.v4.1.9", wantErr: `unknown bundle "elasticsearch-operator.v4.1.9" of package "elasticsearch-operator"; give a bundle name or a version; did you mean "elasticsearch-operator.v4.1.2"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Resolve(tt.in)
			checkErr(t, err, tt.wantErr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	t.Run("Error/shared version", func(t *testing.T) {
		cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{bundle("p", "p.a", "1.0.0"), bundle("p", "p.b", "1.0.0")}}
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Package("p").Resolve("1.0.0")
		checkErr(t, err, `package "p": bundles p.a, p.b all have version 1.0.0; name one of them instead`)
	})
}

func TestNew(t *testing.T) {
	g, err := New(mermaidFixture())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.PackageNames(), ","); got != "bar,foo" {
		t.Errorf("packages = %s", got)
	}
	foo := g.Package("foo")
	if got := strings.Join(foo.ChannelNames(), ","); got != "candidate,stable" {
		t.Errorf("channels = %s", got)
	}
	st := foo.Channel("stable")
	if st.Head != "foo.v4" || strings.Join(st.Chain, ",") != "foo.v4,foo.v3" || strings.Join(st.Stranded, ",") != "foo.v1" {
		t.Errorf("stable: head %s chain %v stranded %v", st.Head, st.Chain, st.Stranded)
	}
	var kinds []string
	for _, e := range st.Edges() {
		kinds = append(kinds, e.From+">"+e.To+":"+string(e.Kind))
	}
	want := "foo.v1>foo.v2:replaces foo.v2>foo.v3:replaces foo.v2>foo.v3:skips foo.v3>foo.v4:replaces foo.v2>foo.v4:skips foo.v1>foo.v4:skipRange foo.v2>foo.v4:skipRange foo.v3>foo.v4:skipRange"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("edges =\n%s\nwant\n%s", got, want)
	}
	// VisitEdgesAmong gives Edges' edges between the names it is given, in
	// Edges' order.
	for _, among := range []map[string]bool{
		{"foo.v1": true, "foo.v2": true, "foo.v3": true, "foo.v4": true},
		{"foo.v2": true, "foo.v4": true},
		{"foo.v1": true, "foo.v3": true},
		{},
	} {
		var want, got []string
		for _, e := range st.Edges() {
			if among[e.From] && among[e.To] {
				want = append(want, e.From+">"+e.To+":"+string(e.Kind))
			}
		}
		st.VisitEdgesAmong(func(n string) bool { return among[n] }, func(e Edge) bool {
			got = append(got, e.From+">"+e.To+":"+string(e.Kind))
			return true
		})
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("VisitEdgesAmong(%v) =\n%v\nwant\n%v", among, got, want)
		}
	}
	n := 0
	st.VisitEdgesAmong(func(string) bool { return true }, func(Edge) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("VisitEdgesAmong went on after fn returned false: %d calls", n)
	}
	if err := foo.Channel("candidate").RangeErrors["foo.v5"]; err == nil || err.Error() != `invalid skipRange "not-a-range": Could not get version from string: "not-a-range"` {
		t.Errorf("range error = %v", err)
	}
	if !g.Package("bar").Deprecated || !g.Package("bar").Nodes["bar.v1"].Deprecated {
		t.Error("bar deprecations not applied")
	}
	if g.Package("nope") != nil {
		t.Error("Package(nope) != nil")
	}

	bad := bundle("foo", "foo.v1", "1.0")
	bad.Pos = declcfg.Position{File: "foo/catalog.yaml", Line: 12}
	_, err = New(&declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{bad}})
	checkErr(t, err, `foo/catalog.yaml:12: package "foo": bundle "foo.v1" has invalid version "1.0": No Major.Minor.Patch elements found`)
}
