package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
)

// TestReachAgreesWithPath checks Reach against Path on random channels,
// valid or not, under both semantics, from every entry in random order and
// from versions no bundle has.
func TestReachAgreesWithPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for run := 0; run < 300; run++ {
		n := 1 + rng.IntN(10)
		var entries []declcfg.ChannelEntry
		for i := 0; i < n; i++ {
			e := declcfg.ChannelEntry{Name: fmt.Sprintf("p.v1.%d.0", i)}
			if i > 0 && rng.IntN(4) > 0 {
				e.Replaces = fmt.Sprintf("p.v1.%d.0", rng.IntN(i))
			}
			if rng.IntN(4) == 0 {
				e.Skips = []string{fmt.Sprintf("p.v1.%d.0", rng.IntN(n))}
			}
			if rng.IntN(4) == 0 {
				e.SkipRange = fmt.Sprintf(">=1.%d.0 <1.%d.0", rng.IntN(n), rng.IntN(n+1))
			}
			entries = append(entries, e)
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		p := catalog(t, "p", "stable", map[string][]declcfg.ChannelEntry{"stable": entries})
		for _, sem := range []Semantics{Classic, V1} {
			r, err := p.NewReach(sem, []string{"stable"})
			if err != nil {
				t.Fatal(err)
			}
			var from []Installed
			for _, i := range rng.Perm(n) {
				from = append(from, resolve(t, p, entries[i].Name))
			}
			from = append(from, Installed{Version: semver.MustParse("1.0.5"), HasVersion: true}, Installed{Name: "p.v0.1.0", Version: semver.MustParse("0.1.0"), HasVersion: true})
			for _, in := range from {
				got, err := r.Reaches(in)
				if err != nil {
					t.Fatal(err)
				}
				paths, err := p.Path(in, PathOptions{Semantics: sem, Channels: []string{"stable"}})
				if err != nil {
					t.Fatal(err)
				}
				if got != paths[0].Reached {
					t.Fatalf("run %d, %s, entries %+v: from %s Reach says %v, Path %v (%s)", run, sem, entries, in.Label(), got, paths[0].Reached, paths[0].Reason)
				}
			}
			all, err := r.ReachesEntries()
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := p.NewReach(sem, []string{"stable"})
			want := map[string]bool{}
			for _, e := range entries {
				ok, _ := fresh.Reaches(resolve(t, p, e.Name))
				want[e.Name] = ok
			}
			if !reflect.DeepEqual(all, want) {
				t.Fatalf("run %d, %s: ReachesEntries %v, want %v", run, sem, all, want)
			}
		}
	}
}

func TestNewReachErrors(t *testing.T) {
	p := catalog(t, "p", "", map[string][]declcfg.ChannelEntry{"a": {{Name: "p.v1.0.0"}}, "b": {{Name: "p.v1.0.0"}}})
	for _, tt := range []struct {
		sem   Semantics
		chans []string
		want  string
	}{
		{Classic, nil, `package "p" has no default channel; name a channel`},
		{Classic, []string{"a", "b"}, "OLM classic follows one channel at a time, got 2"},
		{Classic, []string{"c"}, `unknown channel "c" of package "p" (channels: a, b)`},
		{"v0", nil, `unknown semantics "v0", expected classic or v1`},
	} {
		if _, err := p.NewReach(tt.sem, tt.chans); err == nil || err.Error() != tt.want {
			t.Errorf("%s %v: got %v, want %q", tt.sem, tt.chans, err, tt.want)
		}
	}
	if _, err := p.NewReach(V1, nil); err != nil {
		t.Errorf("v1, all channels: %v", err)
	}
}

func TestChainFrom(t *testing.T) {
	c := &Channel{Package: "p", Name: "stable", Entries: []Entry{
		{Name: "d", Replaces: "c"}, {Name: "c", Replaces: "b", Skips: []string{"x"}}, {Name: "b", Replaces: "a"}, {Name: "a"},
		{Name: "x", Replaces: "b"}, {Name: "y", Replaces: "z"}, {Name: "z", Replaces: "y"},
	}}
	for _, tt := range []struct {
		from string
		want []string
		err  string
	}{
		{from: "d", want: []string{"d", "c", "b", "a"}},
		{from: "b", want: []string{"b", "a"}},
		{from: "x", want: []string{"x", "b", "a"}},
		{from: "y", err: "detected cycle in replaces chain of upgrade graph: y -> z -> y"},
		{from: "q", err: `channel "stable" has no entry "q"`},
	} {
		got, err := c.ChainFrom(tt.from)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: got %v, want %q", tt.from, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.from, got, err, tt.want)
		}
	}
}
