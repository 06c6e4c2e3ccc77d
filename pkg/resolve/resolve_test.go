package resolve

import (
	"testing"
)

// §3: a subscription installs the head of the default channel.
func TestSubscriptionHead(t *testing.T) {
	c := newFBC().pkg("a", "stable").
		channel("a", "stable", "a.v1", "a.v2<a.v1").
		bundle("a", "a.v1", "1.0.0").bundle("a", "a.v2", "2.0.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("a")})
	wantInstall(t, res, "c/a.v2")
	in := res.Install[0]
	if in.Package != "a" || in.Version != "2.0.0" || in.Channel != "stable" || in.Status != StatusNew || len(in.Reasons) != 1 || in.Reasons[0].Subscription != "a" {
		t.Fatalf("install = %+v", in)
	}
}

// §4, olm.gvk.required: all three of group, version and kind must match.
func TestGVKRequired(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("etcd.database.coreos.com", "v1beta2", "EtcdCluster")).
		pkg("etcd", "alpha").channel("etcd", "alpha", "etcd.v1").
		bundle("etcd", "etcd.v1", "0.9.4", provides("etcd.database.coreos.com", "v1beta2", "EtcdCluster")).
		pkg("other", "alpha").channel("other", "alpha", "other.v1").
		bundle("other", "other.v1", "1.0.0", provides("etcd.database.coreos.com", "v1beta1", "EtcdCluster"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/etcd.v1 c/app.v1")
	r := res.Install[0].Reasons
	if len(r) != 1 || r[0].RequiredBy != "app.v1" || r[0].Property != "olm.gvk.required" ||
		r[0].Requirement != "an API: kind EtcdCluster in group etcd.database.coreos.com, version v1beta2" {
		t.Fatalf("reasons = %+v", r)
	}

	// Nothing provides v1: the message says so.
	c2 := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresGVK("etcd.database.coreos.com", "v1", "EtcdCluster")).
		pkg("etcd", "alpha").channel("etcd", "alpha", "etcd.v1").
		bundle("etcd", "etcd.v1", "0.9.4", provides("etcd.database.coreos.com", "v1beta2", "EtcdCluster"))
	res = mustResolve(t, []Catalog{cat("c", 0, c2)}, Request{Subscriptions: subs("app")})
	wantConflicts(t, res,
		"[subscription] subscription app needs app.v1 (channel stable)",
		"[missing-dependency] app.v1 (channel stable) requires an API that nothing in the given catalogs provides: kind EtcdCluster in group etcd.database.coreos.com, version v1")
}

// §4, olm.package.required: package name and version range.
func TestPackageRequired(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", requiresPkg("prometheus", ">0.27.0")).
		pkg("prometheus", "beta").channel("prometheus", "beta", "prom.v0.22.2", "prom.v0.27.0<prom.v0.22.2", "prom.v0.32.0<prom.v0.27.0").
		bundle("prometheus", "prom.v0.22.2", "0.22.2").
		bundle("prometheus", "prom.v0.27.0", "0.27.0").
		bundle("prometheus", "prom.v0.32.0", "0.32.0")
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/prom.v0.32.0 c/app.v1")

	// Not the head: the chain is walked head first and the first match
	// wins.
	c.cfg.Bundles[0].Properties[1] = requiresPkg("prometheus", "<0.30.0 >0.22.2")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/prom.v0.27.0 c/app.v1")

	c.cfg.Bundles[0].Properties[1] = requiresPkg("prometheus", ">=1.0.0")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantConflicts(t, res,
		"[subscription] subscription app needs app.v1 (channel stable)",
		"[missing-dependency] app.v1 (channel stable) requires package prometheus in version range >=1.0.0, and no bundle in the given catalogs matches")

	// An unparsable range is an error of the whole resolution.
	c.cfg.Bundles[0].Properties[1] = requiresPkg("prometheus", "~1.2")
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantError(t, res, `bundle "app.v1" (catalog c): parse olm.package.required: invalid version range "~1.2" for package "prometheus"`)
}

// §4: olm.label.required matches an olm.label property.
func TestLabelRequired(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0", raw("olm.label.required", `{"label":"lts"}`)).
		pkg("a", "s").channel("a", "s", "a.v1").bundle("a", "a.v1", "1.0.0", raw("olm.label", `{"label":"edge"}`)).
		pkg("b", "s").channel("b", "s", "b.v1").bundle("b", "b.v1", "1.0.0", raw("olm.label", `{"label":"lts"}`))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/b.v1 c/app.v1")
	if got := res.Install[0].Reasons[0].Requirement; got != "a bundle with label lts" {
		t.Fatalf("requirement = %q", got)
	}
}

// §4: properties that are not dependencies (olm.gvk, olm.maxOpenShiftVersion,
// olm.kubeversion, custom types) are ignored.
func TestNonDependencyProperties(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0",
			raw("olm.maxOpenShiftVersion", `"4.8"`),
			raw("olm.kubeversion", `{"version":"1.16.0"}`),
			raw("color", `"red"`),
			raw("olm.bundle.object", `{"data":"e30="}`))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/app.v1")
}

// §4: every dependency property is one dependency, met independently: an
// olm.package.required and an olm.gvk.required may be met by two bundles
// (seed 002: there is no AND between constraints).
func TestIndependentDependencies(t *testing.T) {
	c := newFBC().
		pkg("app", "stable").channel("app", "stable", "app.v1").
		bundle("app", "app.v1", "1.0.0",
			requiresPkg("etcd", ">3.1.0"),
			requiresGVK("etcd.database.coreos.com", "v1beta2", "EtcdCluster")).
		pkg("etcd", "stable").channel("etcd", "stable", "etcd.v3.2.0").
		bundle("etcd", "etcd.v3.2.0", "3.2.0").
		pkg("etcd-legacy", "stable").channel("etcd-legacy", "stable", "legacy.v0.9.4").
		bundle("etcd-legacy", "legacy.v0.9.4", "0.9.4", provides("etcd.database.coreos.com", "v1beta2", "EtcdCluster"))
	res := mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantInstall(t, res, "c/etcd.v3.2.0 c/legacy.v0.9.4 c/app.v1")

	// The same with all: one bundle must have both, and none has.
	c.cfg.Bundles[0].Properties = c.cfg.Bundles[0].Properties[:1]
	c.cfg.Bundles[0].Properties = append(c.cfg.Bundles[0].Properties, constraint(`{"all":{"constraints":[
		{"package":{"packageName":"etcd","versionRange":">3.1.0"}},
		{"gvk":{"group":"etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster"}}]}}`))
	res = mustResolve(t, []Catalog{cat("c", 0, c)}, Request{Subscriptions: subs("app")})
	wantConflicts(t, res,
		"[subscription] subscription app needs app.v1 (channel stable)",
		"[missing-dependency] app.v1 (channel stable) requires a bundle matching all of (package etcd in version range >3.1.0; kind EtcdCluster in group etcd.database.coreos.com, version v1beta2), and no bundle in the given catalogs matches")
}
