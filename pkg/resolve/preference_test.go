package resolve

import (
	"testing"
)

// appNeedsFoo is a catalog with app requiring the Foo API and nothing
// providing it.
func appNeedsFoo() *fbc {
	return newFBC().pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("foo.example.com", "v1", "Foo"))
}

func fooProvider(pkg string) *fbc {
	return newFBC().pkg(pkg, "stable").channel(pkg, "stable", pkg+".v1").
		bundle(pkg, pkg+".v1", "1.0.0", provides("foo.example.com", "v1", "Foo"))
}

// §6.2: a dependency is taken from the highest-priority catalog, ties by
// catalog name; priority is a preference, never a filter.
func TestCatalogPriority(t *testing.T) {
	app := cat("app", 0, appNeedsFoo())
	res := mustResolve(t, []Catalog{app, cat("lo", -5, fooProvider("lo")), cat("hi", 10, fooProvider("hi"))},
		Request{Subscriptions: subs("app")})
	wantInstall(t, res, "hi/hi.v1 app/app.v1")

	res = mustResolve(t, []Catalog{app, cat("zeta", 3, fooProvider("zeta")), cat("beta", 3, fooProvider("beta"))},
		Request{Subscriptions: subs("app")})
	wantInstall(t, res, "beta/beta.v1 app/app.v1")

	// Only in a lower-priority catalog: used.
	res = mustResolve(t, []Catalog{cat("app", 100, appNeedsFoo()), cat("lo", -100, fooProvider("lo"))},
		Request{Subscriptions: subs("app")})
	wantInstall(t, res, "lo/lo.v1 app/app.v1")
}

// §6.2: the requiring bundle's own catalog beats a higher priority.
func TestSameCatalogPreferred(t *testing.T) {
	own := appNeedsFoo()
	own.cfg.Merge(fooProvider("mine").config())
	res := mustResolve(t, []Catalog{cat("app", 0, own), cat("hi", 10, fooProvider("hi"))},
		Request{Subscriptions: subs("app")})
	wantInstall(t, res, "app/mine.v1 app/app.v1")
	if r := res.Install[0].Reasons[0]; r.RequiredBy != "app.v1" || r.RequiredByCatalog != "app" {
		t.Fatalf("reason = %+v", r)
	}
}

// §6.1: an installed bundle comes before every catalog.
func TestInstalledDependencyPreferred(t *testing.T) {
	own := appNeedsFoo()
	own.cfg.Merge(fooProvider("mine").config())
	res := mustResolve(t, []Catalog{cat("app", 0, own), cat("hi", 10, fooProvider("hi"))},
		Request{Installed: installed("hi/hi.v1"), Subscriptions: subs("app")})
	wantInstall(t, res, "hi/hi.v1 app/app.v1")
	in := res.Install[0]
	if in.Status != StatusInstalled || in.Channel != "" || len(in.Reasons) != 2 || !in.Reasons[0].Installed || in.Reasons[1].RequiredBy != "app.v1" {
		t.Fatalf("install[0] = %+v", in)
	}
}

// §3.3, §6.3: the default channel comes first, for subscriptions and for
// dependencies; then the other channels by name.
func TestDefaultChannelPreferred(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "alpha", "db.v3").
		channel("db", "stable", "db.v1").
		channel("db", "beta", "db.v2").
		bundle("db", "db.v1", "1.0.0", provides("db.example.com", "v1", "DB")).
		bundle("db", "db.v2", "2.0.0", provides("db.example.com", "v1", "DB")).
		bundle("db", "db.v3", "3.0.0", provides("db.example.com", "v1", "DB")).
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("db.example.com", "v1", "DB"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1")
	if res.Install[0].Channel != "stable" {
		t.Fatalf("channel = %q", res.Install[0].Channel)
	}
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/db.v1 c/app.v1")

	// Without the default channel: alpha before beta.
	c.cfg.Channels = append(c.cfg.Channels[:1:1], c.cfg.Channels[2:]...)
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/db.v3 c/app.v1")

	// Across packages, default channels come before package names: zz's
	// default channel beats aa's other channel.
	c2 := appNeedsFoo().
		pkg("aa", "stable").channel("aa", "stable", "aa.v0").channel("aa", "edge", "aa.v1").
		bundle("aa", "aa.v0", "0.1.0").
		bundle("aa", "aa.v1", "1.0.0", provides("foo.example.com", "v1", "Foo")).
		pkg("zz", "stable").channel("zz", "stable", "zz.v1").
		bundle("zz", "zz.v1", "1.0.0", provides("foo.example.com", "v1", "Foo"))
	res = mustResolve(t, []Catalog{cat("c", 0, c2)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/zz.v1 c/app.v1")
}

// §2: within a channel, chain order from the head, never version order.
func TestChainOrderNotVersion(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v9", "db.v2<db.v9").
		bundle("db", "db.v9", "9.0.0").
		bundle("db", "db.v2", "2.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v2")
}

// §2, §12: skipped bundles are no candidates, for dependencies nor for
// subscriptions, except through startingCSV.
func TestSkippedNotCandidates(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1", "db.v3<db.v2|db.v2").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").bundle("db", "db.v3", "3.0.0").
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresPkg("db", ">=2.0.0 <3.0.0"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantConflicts(t, res,
		"[subscription] subscription app needs app.v1 (channel stable)",
		"[missing-dependency] app.v1 (channel stable) requires package db in version range >=2.0.0 <3.0.0, and no bundle in the given catalogs matches")
	// The chain walks through db.v2 to db.v1.
	c.cfg.Bundles[3].Properties[1] = requiresPkg("db", "<2.0.0")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/db.v1 c/app.v1")

	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db@db.v2")})
	wantInstall(t, res, "c/db.v2")

	// An entry only skipped, never reached by replaces, is off the chain.
	c2 := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v3<|db.v1").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v3", "3.0.0").
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresPkg("db", "<2.0.0"))
	res = mustResolve(t, []Catalog{cat("c", 0, c2)}, Request{Subscriptions: subs("app")})
	if res.Resolvable {
		t.Fatalf("resolvable: %s", installSet(res))
	}
}

// §3.2: startingCSV picks the named bundle when nothing is installed, and
// is ignored when a bundle of the package is installed.
func TestStartingCSV(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1", "db.v3<db.v2").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").bundle("db", "db.v3", "3.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db:stable@db.v1")})
	wantInstall(t, res, "c/db.v1")

	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v2"), Subscriptions: subs("db@db.v1")})
	wantInstall(t, res, "c/db.v3")
	if in := res.Install[0]; in.Status != StatusUpgrade || in.Replaces != "db.v2" {
		t.Fatalf("install = %+v", in)
	}

	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db:stable@db.v9")})
	wantConflicts(t, res, "[subscription-without-candidates] no operators found with name db.v9 in channel stable of package db in the catalog referenced by subscription db:stable@db.v9")
}

// §3.2: the subscription messages, in their order.
func TestSubscriptionWithoutCandidates(t *testing.T) {
	c := newFBC().pkg("db", "stable").channel("db", "stable", "db.v1").bundle("db", "db.v1", "1.0.0")
	empty := newFBC()
	for _, tc := range []struct {
		cats []Catalog
		sub  Subscription
		want string
	}{
		{[]Catalog{cat("c", 0, c), cat("e", 0, empty)}, Subscription{Package: "db", Catalog: "e"}, "no operators found from catalog e referenced by subscription db"},
		{[]Catalog{cat("c", 0, c)}, Subscription{Package: "nope"}, "no operators found in package nope in any of the given catalogs (subscription nope)"},
		{[]Catalog{cat("c", 0, c), cat("d", 0, fooProvider("foo"))}, Subscription{Package: "db", Catalog: "d"}, "no operators found in package db in the catalog referenced by subscription db"},
		{[]Catalog{cat("c", 0, c)}, Subscription{Package: "db", Channel: "fast"}, "no operators found in channel fast of package db in the catalog referenced by subscription db:fast"},
	} {
		res := mustResolve(t, tc.cats, Request{Subscriptions: []Subscription{tc.sub}})
		wantConflicts(t, res, "[subscription-without-candidates] "+tc.want)
	}
}

// §3.1: a subscription's catalog is the installed bundle's, else the
// highest priority one that has the package (ties by name); it never
// takes candidates from another catalog.
func TestSubscriptionCatalog(t *testing.T) {
	mk := func(v string) *fbc {
		return newFBC().pkg("db", "stable").channel("db", "stable", "db."+v).bundle("db", "db."+v, v)
	}
	res := mustResolve(t, []Catalog{cat("a", 0, mk("1.0.0")), cat("b", 5, mk("2.0.0")), cat("c", 5, mk("3.0.0"))},
		Request{Subscriptions: subs("db")})
	wantInstall(t, res, "b/db.2.0.0")

	// Installed from a: a it is, though b has priority.
	cats := []Catalog{cat("a", 0, newFBC().pkg("db", "stable").channel("db", "stable", "db.1.0.0", "db.1.1.0<db.1.0.0").
		bundle("db", "db.1.0.0", "1.0.0").bundle("db", "db.1.1.0", "1.1.0")), cat("b", 5, mk("2.0.0"))}
	res = mustResolve(t, cats, Request{Installed: installed("a/db.1.0.0"), Subscriptions: subs("db")})
	wantInstall(t, res, "a/db.1.1.0")

	// The head of b cannot be installed (its dependency is missing); the
	// subscription stays in b and fails rather than move to a.
	b := mk("2.0.0")
	b.cfg.Bundles[0].Properties = append(b.cfg.Bundles[0].Properties, requiresGVK("g", "v", "Missing"))
	res = mustResolve(t, []Catalog{cat("a", 0, mk("1.0.0")), cat("b", 5, b)}, Request{Subscriptions: subs("db")})
	wantConflicts(t, res,
		"[subscription] subscription db needs db.2.0.0 (catalog b, channel stable)",
		"[missing-dependency] db.2.0.0 (catalog b, channel stable) requires an API that nothing in the given catalogs provides: kind Missing in group g, version v")
}

// §12: the preferred candidate's dependency cannot be met: it is passed
// over for the next one.
func TestBacktrackToNextCandidate(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0").
		bundle("db", "db.v2", "2.0.0", requiresGVK("g", "v", "Missing"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1")

	// For a dependency, the next candidate may be in another catalog.
	own := appNeedsFoo()
	bad := fooProvider("mine")
	bad.cfg.Bundles[0].Properties = append(bad.cfg.Bundles[0].Properties, requiresGVK("g", "v", "Missing"))
	own.cfg.Merge(bad.config())
	res = mustResolve(t, []Catalog{cat("app", 0, own), cat("other", -1, fooProvider("other"))}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "other/other.v1 app/app.v1")
}

// §12, channel omitted: when the default channel cannot work, another
// channel is used; naming the default channel fails instead.
func TestChannelOmitted(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v2").channel("db", "fast", "db.v3").
		bundle("db", "db.v2", "2.0.0", requiresGVK("g", "v", "Missing")).
		bundle("db", "db.v3", "3.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v3")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db:stable")})
	if res.Resolvable {
		t.Fatal("resolvable with the default channel named")
	}
}

// §3.2, §3.3: an installed, subscribed bundle is upgraded to an entry that
// replaces it, skips it or whose skipRange covers its version; one step,
// the head of the chain first; keeping it is the last resort.
func TestInstalledUpgrade(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1", "db.v3<db.v2").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").bundle("db", "db.v3", "3.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v1"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v2")
	if in := res.Install[0]; in.Status != StatusUpgrade || in.Replaces != "db.v1" || in.Reasons[0].Subscription != "db" {
		t.Fatalf("install = %+v", in)
	}

	// skips and skipRange.
	c2 := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1", "db.v3<db.v2|db.v1", "db.v4<db.v3||>=1.0.0 <2.0.0").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").bundle("db", "db.v3", "3.0.0").bundle("db", "db.v4", "4.0.0")
	res = mustResolve(t, []Catalog{cat("c", 0, c2)}, Request{Installed: installed("c/db.v1"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v4")

	// The head is installed: kept.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v3"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v3")
	if in := res.Install[0]; in.Status != StatusInstalled || in.Reasons[0].Subscription != "db" {
		t.Fatalf("install = %+v", in)
	}

	// The upgrade's dependency is missing: kept.
	c.cfg.Bundles[1].Properties = append(c.cfg.Bundles[1].Properties, requiresGVK("g", "v", "Missing"))
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v1"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1")
}

// §7: an installed bundle no subscription names stays, and so do its
// dependencies' guarantees.
func TestFreestandingInstalled(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v1")})
	wantInstall(t, res, "c/db.v1")
	if r := res.Install[0].Reasons; len(r) != 1 || !r[0].Installed {
		t.Fatalf("reasons = %+v", r)
	}

	// Its dependency must still be met: a missing one is unsatisfiable.
	c.cfg.Bundles[0].Properties = append(c.cfg.Bundles[0].Properties, requiresGVK("g", "v", "Gone"))
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v1")})
	wantConflicts(t, res,
		"[installed] db.v1 is installed and no subscription names its package db, so it stays",
		"[missing-dependency] db.v1 (installed) requires an API that nothing in the given catalogs provides: kind Gone in group g, version v")
}

// §12: an upgrade that would break an installed dependent is not made.
func TestUpgradeWouldBreakDependent(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0", provides("db.example.com", "v1", "DB")).
		bundle("db", "db.v2", "2.0.0", provides("db.example.com", "v2", "DB")).
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("db.example.com", "v1", "DB"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/app.v1", "c/db.v1"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1 c/app.v1")

	// The dependent requires the current version by range: same.
	c.cfg.Bundles[2].Properties[1] = requiresPkg("db", "<2.0.0")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/app.v1", "c/db.v1"), Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1 c/app.v1")
}

// §12: an installed provider being upgraded away does not meet a new
// bundle's dependency when its successor drops the API: another provider
// is pulled in.
func TestUpgradedProviderReplaced(t *testing.T) {
	c := newFBC().pkg("p", "stable").
		channel("p", "stable", "p.v1", "p.v2<p.v1").
		bundle("p", "p.v1", "1.0.0", provides("foo.example.com", "v1", "Foo")).
		bundle("p", "p.v2", "2.0.0").
		pkg("q", "stable").channel("q", "stable", "q.v1").
		bundle("q", "q.v1", "1.0.0", provides("foo.example.com", "v1", "Foo")).
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("foo.example.com", "v1", "Foo"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/p.v1"), Subscriptions: subs("app", "p")})
	wantInstall(t, res, "c/q.v1 c/app.v1 c/p.v2")

	// The dependent is installed and nobody subscribes to it: its
	// dependency is chosen before the subscription's candidates (breadth
	// first, §8), so the installed provider is kept.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/app.v1", "c/p.v1"), Subscriptions: subs("p")})
	wantInstall(t, res, "c/p.v1 c/app.v1")
}

// §12: the seed's upgrade deadlock with a cycle: A needs B and B needs A;
// their new versions need each other's new APIs. Solved as a whole, both
// upgrade together.
func TestUpgradeTogether(t *testing.T) {
	c := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1", "a.v2<a.v1").
		bundle("a", "a.v1", "1.0.0", provides("x.io", "v1", "A"), requiresGVK("x.io", "v1", "B")).
		bundle("a", "a.v2", "2.0.0", provides("x.io", "v1", "A2"), requiresGVK("x.io", "v1", "B2")).
		pkg("b", "stable").channel("b", "stable", "b.v1", "b.v2<b.v1").
		bundle("b", "b.v1", "1.0.0", provides("x.io", "v1", "B"), requiresGVK("x.io", "v1", "A")).
		bundle("b", "b.v2", "2.0.0", provides("x.io", "v1", "B2"), requiresGVK("x.io", "v1", "A2"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/a.v1", "c/b.v1"), Subscriptions: subs("a", "b")})
	wantInstall(t, res, "c/b.v2 c/a.v2")

	// Only a is subscribed: b stays at v1, so a cannot move either.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/a.v1", "c/b.v1"), Subscriptions: subs("a")})
	wantInstall(t, res, "c/a.v1 c/b.v1")
}

// §12: dependency cycles between new bundles are fine.
func TestDependencyCycle(t *testing.T) {
	c := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1").
		bundle("a", "a.v1", "1.0.0", provides("x.io", "v1", "A"), requiresGVK("x.io", "v1", "B")).
		pkg("b", "stable").channel("b", "stable", "b.v1").
		bundle("b", "b.v1", "1.0.0", provides("x.io", "v1", "B"), requiresGVK("x.io", "v1", "A"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("a")})
	wantInstall(t, res, "c/b.v1 c/a.v1")
}

// §12: a bundle requiring an API it provides meets the requirement
// itself.
func TestSelfDependency(t *testing.T) {
	c := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1").
		bundle("a", "a.v1", "1.0.0", provides("x.io", "v1", "A"), requiresGVK("x.io", "v1", "A")).
		pkg("z", "stable").channel("z", "stable", "z.v1").
		bundle("z", "z.v1", "1.0.0", provides("x.io", "v1", "A"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("a")})
	wantInstall(t, res, "c/a.v1")
}

// §6, §7: a bundle never meets its own package's dependency with a
// sibling (one bundle per package).
func TestOwnPackageDependency(t *testing.T) {
	c := newFBC().
		pkg("a", "stable").channel("a", "stable", "a.v1", "a.v2<a.v1").
		bundle("a", "a.v1", "1.0.0").
		bundle("a", "a.v2", "2.0.0", requiresPkg("a", "<2.0.0"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("a")})
	wantInstall(t, res, "c/a.v1")
}

// §12: a bundle in several channels is several candidates; one bundle
// per package keeps one.
func TestBundleInSeveralChannels(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1").channel("db", "fast", "db.v1").
		bundle("db", "db.v1", "1.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1")
	if res.Install[0].Channel != "stable" {
		t.Fatalf("channel = %q", res.Install[0].Channel)
	}
	// Two subscriptions the same bundle satisfies through one channel: fine.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db", "db:stable")})
	wantInstall(t, res, "c/db.v1")
	// Through two channels: two records of one package, unsatisfiable.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db:fast", "db:stable")})
	wantConflicts(t, res,
		"[subscription] subscription db:fast needs db.v1 (channel fast)",
		"[subscription] subscription db:stable needs db.v1 (channel stable)",
		"[one-bundle-per-package] db.v1 (channel fast) and db.v1 (channel stable) both belong to package db, and only one bundle of a package can be installed")
}

// §7: olm.deprecated excludes a bundle; olm.deprecations blobs do not.
func TestDeprecated(t *testing.T) {
	c := newFBC().pkg("db", "stable").
		channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0").
		bundle("db", "db.v2", "2.0.0", deprecated())
	c.cfg.Deprecations = append(c.cfg.Deprecations, declDeprecation("db", "db.v1"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
	wantInstall(t, res, "c/db.v1")

	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db@db.v2")})
	wantConflicts(t, res,
		"[subscription] subscription db@db.v2 needs db.v2 (channel stable)",
		"[deprecated] db.v2 (channel stable) is deprecated (it has an olm.deprecated property) and is never installed")
}

// §7, §12: two providers of one API cannot both be selected.
func TestOneProviderPerAPI(t *testing.T) {
	c := fooProvider("x")
	c.cfg.Merge(fooProvider("y").config())
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("x", "y")})
	wantConflicts(t, res,
		"[subscription] subscription x needs x.v1 (channel stable)",
		"[subscription] subscription y needs y.v1 (channel stable)",
		"[one-provider-per-api] x.v1 (channel stable) and y.v1 (channel stable) both provide kind Foo in group foo.example.com (version v1), and only one bundle can provide an API")

	// One of them installed and nobody subscribes to it.
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Installed: installed("c/x.v1"), Subscriptions: subs("y")})
	wantConflicts(t, res,
		"[installed] x.v1 is installed and no subscription names its package x, so it stays",
		"[subscription] subscription y needs y.v1 (channel stable)",
		"[one-provider-per-api] x.v1 (installed) and y.v1 (channel stable) both provide kind Foo in group foo.example.com (version v1), and only one bundle can provide an API")

	// Required by two bundles that each insist on their own provider.
	c2 := newFBC().
		pkg("a", "s").channel("a", "s", "a.v1").bundle("a", "a.v1", "1.0.0", requiresPkg("x", ">=1.0.0")).
		pkg("b", "s").channel("b", "s", "b.v1").bundle("b", "b.v1", "1.0.0", requiresPkg("y", ">=1.0.0"))
	c2.cfg.Merge(c.config())
	res = mustResolve(t, []Catalog{cat("c", 0, c2)}, Request{Subscriptions: subs("a", "b")})
	wantConflicts(t, res,
		"[subscription] subscription a needs a.v1 (channel s)",
		"[subscription] subscription b needs b.v1 (channel s)",
		"[dependency] a.v1 (channel s) requires package x in version range >=1.0.0, which only x.v1 (channel stable) meets",
		"[dependency] b.v1 (channel s) requires package y in version range >=1.0.0, which only y.v1 (channel stable) meets",
		"[one-provider-per-api] x.v1 (channel stable) and y.v1 (channel stable) both provide kind Foo in group foo.example.com (version v1), and only one bundle can provide an API")
}

// §12: two subscriptions needing incompatible versions of one package.
func TestIncompatibleVersions(t *testing.T) {
	c := newFBC().
		pkg("db", "stable").channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").
		pkg("a", "s").channel("a", "s", "a.v1").bundle("a", "a.v1", "1.0.0", requiresPkg("db", "<2.0.0")).
		pkg("b", "s").channel("b", "s", "b.v1").bundle("b", "b.v1", "1.0.0", requiresPkg("db", ">=2.0.0"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("a", "b")})
	wantConflicts(t, res,
		"[subscription] subscription a needs a.v1 (channel s)",
		"[subscription] subscription b needs b.v1 (channel s)",
		"[dependency] a.v1 (channel s) requires package db in version range <2.0.0, which only db.v1 (channel stable) meets",
		"[dependency] b.v1 (channel s) requires package db in version range >=2.0.0, which only db.v2 (channel stable) meets",
		"[one-bundle-per-package] db.v1 (channel stable) and db.v2 (channel stable) both belong to package db, and only one bundle of a package can be installed")
}

// §2: channel chain errors abort the resolution when the channel is used.
func TestChainErrors(t *testing.T) {
	for _, tc := range []struct {
		entries []string
		want    string
	}{
		{[]string{"db.v1<db.v2", "db.v2<db.v1"}, `no channel heads (entries not replaced by another entry) found in channel "stable" of package "db"`},
		{[]string{"db.v1", "db.v2"}, `but 2 replacement chains were found in channel "stable" of package "db"`},
		{[]string{"db.v1<db.v3", "db.v2<db.v1", "db.v3<db.v2", "db.v4<db.v1"}, `a cycle exists in the chain of replacement beginning with "db.v4" in channel "stable" of package "db"`},
	} {
		c := newFBC().pkg("db", "stable").channel("db", "stable", tc.entries...).
			bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0").bundle("db", "db.v3", "3.0.0").bundle("db", "db.v4", "4.0.0")
		res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("db")})
		wantError(t, res, tc.want)
	}
}

// §11: requests the resolver cannot take.
func TestInputErrors(t *testing.T) {
	c := newFBC().pkg("db", "stable").channel("db", "stable", "db.v1", "db.v2<db.v1").
		bundle("db", "db.v1", "1.0.0").bundle("db", "db.v2", "2.0.0")
	for _, tc := range []struct {
		cats []Catalog
		req  Request
		want string
	}{
		{[]Catalog{cat("c", 0, c)}, Request{Installed: installed("x/db.v1")}, `installed bundle x/db.v1: no catalog named "x"`},
		{[]Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v9")}, `installed bundle c/db.v9: unknown bundle "db.v9" in catalog "c"; did you mean "db.v1" or "db.v2"?`},
		{[]Catalog{cat("c", 0, c)}, Request{Installed: installed("c/db.v1", "c/db.v2")}, `installed bundles db.v1 and db.v2 are both of package "db"`},
		{[]Catalog{cat("c", 0, c), cat("c", 1, c)}, Request{}, `catalog "c" is given twice`},
		{[]Catalog{cat("c", 0, c)}, Request{Subscriptions: []Subscription{{Package: "db", Catalog: "x"}}}, `subscription db: no catalog named "x"`},
		{[]Catalog{cat("c", 0, newFBC().pkg("db", "s").channel("db", "s", "db.v1"))}, Request{}, `channel "s" of package "db" lists bundle "db.v1", which has no olm.bundle blob`},
	} {
		_, err := Resolve(t.Context(), tc.cats, tc.req)
		var ie *InputError
		if err == nil || !asInputError(err, &ie) || !contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want an InputError with %q", err, tc.want)
		}
	}
}

// Nothing to do is resolvable.
func TestEmptyRequest(t *testing.T) {
	res := mustResolve(t, nil, Request{})
	if !res.Resolvable || len(res.Install) != 0 {
		t.Fatalf("res = %+v", res)
	}
}

// A requirement nearly every bundle meets, on many bundles, grows the
// problem quadratically: past a bound it is an error, not a memory blowup.
func TestProblemSizeBound(t *testing.T) {
	old := maxCandidateRefs
	maxCandidateRefs = 100
	defer func() { maxCandidateRefs = old }()
	f := newFBC()
	for i := 0; i < 20; i++ {
		p := string(rune('a' + i))
		f.pkg(p, "s").channel(p, "s", p+".v1").bundle(p, p+".v1", "1.0.0", constraint(`{"not":{"constraints":[]}}`), constraint(`{"all":{"constraints":[]}}`))
	}
	res := mustResolve(t, []Catalog{cat("c", 0, f)}, Request{Subscriptions: subs("a")})
	wantError(t, res, "the problem is too large: more than 100 dependency candidates")
}
