package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// randomUniverse builds small random catalogs: a few packages per
// catalog, channels with replaces chains (and some skips), bundles that
// provide and require a handful of APIs and package ranges.
func randomUniverse(rng *rand.Rand) ([]Catalog, Request) {
	apis := []string{"A", "B", "C", "D"}
	pkgs := []string{"p", "q", "r", "s"}
	ncat := 1 + rng.Intn(2)
	var cats []Catalog
	type bref struct{ cat, name, pkg string }
	var all []bref
	for ci := 0; ci < ncat; ci++ {
		f := newFBC()
		for _, p := range pkgs {
			if rng.Intn(5) == 0 {
				continue
			}
			f.pkg(p, "stable")
			nb := 1 + rng.Intn(3)
			var names []string
			for i := 0; i < nb; i++ {
				name := fmt.Sprintf("%s.v%d.%d", p, ci, i)
				names = append(names, name)
				var props []property.Property
				for _, a := range apis {
					switch rng.Intn(10) {
					case 0, 2, 3:
						props = append(props, provides("x.io", "v1", a))
					case 1:
						props = append(props, requiresGVK("x.io", "v1", a))
					}
				}
				if rng.Intn(5) == 0 {
					props = append(props, requiresPkg(pkgs[rng.Intn(len(pkgs))], fmt.Sprintf(">=%d.%d.0", rng.Intn(2), rng.Intn(3))))
				}
				if rng.Intn(12) == 0 {
					props = append(props, deprecated())
				}
				if rng.Intn(10) == 0 {
					props = append(props, constraint(`{"all":{"constraints":[{"gvk":{"group":"x.io","version":"v1","kind":"A"}},{"not":{"constraints":[{"package":{"packageName":"p","versionRange":">=0.0.0"}}]}}]}}`))
				}
				f.bundle(p, name, fmt.Sprintf("%d.%d.0", ci, i), props...)
				all = append(all, bref{fmt.Sprintf("c%d", ci), name, p})
			}
			entries := []string{names[0]}
			for i := 1; i < len(names); i++ {
				e := names[i] + "<" + names[i-1]
				if i >= 2 && rng.Intn(3) == 0 {
					e += "|" + names[i-1]
				}
				entries = append(entries, e)
			}
			f.channel(p, "stable", entries...)
			if rng.Intn(3) == 0 {
				f.channel(p, "fast", names[len(names)-1])
			}
		}
		cats = append(cats, cat(fmt.Sprintf("c%d", ci), rng.Intn(3), f))
	}
	var req Request
	seenPkg := map[string]bool{}
	for i := 0; i < rng.Intn(2) && len(all) > 0; i++ {
		b := all[rng.Intn(len(all))]
		if seenPkg[b.pkg] {
			continue
		}
		seenPkg[b.pkg] = true
		req.Installed = append(req.Installed, Installed{Catalog: b.cat, Bundle: b.name})
	}
	for i := 0; i < 1+rng.Intn(3); i++ {
		s := Subscription{Package: pkgs[rng.Intn(len(pkgs))]}
		if rng.Intn(4) == 0 {
			s.Channel = "fast"
		}
		req.Subscriptions = append(req.Subscriptions, s)
	}
	return cats, req
}

// holds evaluates one rule under an assignment of the variables.
func (r *resolution) holds(ru *rule, val []bool) bool {
	v := func(rec *record) bool { return val[r.recVar[rec]] }
	switch ru.kind {
	case ruleInstalled:
		return v(ru.rec)
	case ruleSubMandatory:
		return val[ru.sub.v]
	case ruleSubRequires:
		if !val[ru.sub.v] {
			return true
		}
		for _, c := range ru.sub.cands {
			if v(c) {
				return true
			}
		}
		return false
	case ruleDeprecated:
		return !v(ru.rec)
	case ruleRequires:
		if !v(ru.rec) {
			return true
		}
		for _, c := range ru.di.cands {
			if v(c) {
				return true
			}
		}
		return false
	}
	n := 0
	for _, m := range ru.members {
		if val[m] {
			n++
		}
	}
	return n <= 1
}

// satisfiable decides by brute force whether rules can all hold.
func (r *resolution) satisfiable(rules []*rule) bool {
	n := len(r.vars) - 1
	val := make([]bool, n+1)
	for m := 0; m < 1<<n; m++ {
		for i := 1; i <= n; i++ {
			val[i] = m>>(i-1)&1 == 1
		}
		ok := true
		for _, ru := range rules {
			if !r.holds(ru, val) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestRandomAgainstBruteForce checks, on small random problems, that a
// solution meets every rule, that "unsatisfiable" is true (no assignment
// meets the rules) and that the explanation is a minimal unsatisfiable
// set (without any one of its rules, the rest can hold).
func TestRandomAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	checked, unsat := 0, 0
	for iter := 0; iter < 400; iter++ {
		cats, req := randomUniverse(rng)
		u, err := NewUniverse(cats)
		if err != nil {
			t.Fatal(err)
		}
		res, r, err := u.resolve(context.Background(), req)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		if res.Error != "" || len(r.vars)-1 > 16 {
			continue
		}
		checked++
		if res.Resolvable {
			val := r.selected
			for _, s := range r.subs {
				val[s.v] = true
			}
			for _, ru := range r.rules {
				if !r.holds(ru, val) {
					t.Fatalf("iter %d: the solution breaks a rule of kind %d", iter, ru.kind)
				}
			}
			continue
		}
		unsat++
		if r.satisfiable(r.rules) {
			t.Fatalf("iter %d: unsatisfiable, but brute force finds a solution", iter)
		}
		if r.satisfiable(r.core) {
			t.Fatalf("iter %d: the explanation is satisfiable", iter)
		}
		for i := range r.core {
			rest := append(append([]*rule(nil), r.core[:i]...), r.core[i+1:]...)
			if !r.satisfiable(rest) {
				t.Fatalf("iter %d: the explanation is not minimal: rule %d can go", iter, i)
			}
		}
	}
	t.Logf("%d problems checked, %d unsatisfiable", checked, unsat)
	if checked < 100 || unsat < 20 {
		t.Fatalf("only %d problems checked, %d unsatisfiable: the generator needs tuning", checked, unsat)
	}
}

// shuffled returns cats with every order that carries no meaning
// shuffled: catalogs, packages, channels, bundles, channel entries.
func shuffled(rng *rand.Rand, cats []Catalog) []Catalog {
	out := make([]Catalog, len(cats))
	for i, c := range cats {
		cfg := &declcfg.DeclarativeConfig{
			Packages: append([]declcfg.Package(nil), c.Config.Packages...),
			Bundles:  append([]declcfg.Bundle(nil), c.Config.Bundles...),
		}
		for _, ch := range c.Config.Channels {
			ch.Entries = append([]declcfg.ChannelEntry(nil), ch.Entries...)
			rng.Shuffle(len(ch.Entries), func(a, b int) { ch.Entries[a], ch.Entries[b] = ch.Entries[b], ch.Entries[a] })
			cfg.Channels = append(cfg.Channels, ch)
		}
		rng.Shuffle(len(cfg.Packages), func(a, b int) { cfg.Packages[a], cfg.Packages[b] = cfg.Packages[b], cfg.Packages[a] })
		rng.Shuffle(len(cfg.Channels), func(a, b int) { cfg.Channels[a], cfg.Channels[b] = cfg.Channels[b], cfg.Channels[a] })
		rng.Shuffle(len(cfg.Bundles), func(a, b int) { cfg.Bundles[a], cfg.Bundles[b] = cfg.Bundles[b], cfg.Bundles[a] })
		out[i] = Catalog{Name: c.Name, Priority: c.Priority, Config: cfg}
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

// TestDeterminism resolves the same problems again and again, with every
// order that carries no meaning shuffled, and wants the same answer and
// the same explanation, byte for byte.
func TestDeterminism(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 60; iter++ {
		cats, req := randomUniverse(rng)
		first := mustResolve(t, cats, req)
		want, _ := json.Marshal(first)
		for rep := 0; rep < 8; rep++ {
			res := mustResolve(t, shuffled(rng, cats), req)
			got, _ := json.Marshal(res)
			if string(got) != string(want) {
				t.Fatalf("iter %d rep %d: results differ\n got %s\nwant %s", iter, rep, got, want)
			}
		}
	}
}
