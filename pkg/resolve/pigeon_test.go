package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// pigeonholeCatalog is n+1 packages ("pigeon0".."pigeonN"), each needing
// an API that every one of n packages ("hole0"..) provides in one of its
// bundles, and a package "root" requiring every pigeon: one bundle per
// package makes each hole serve one pigeon at most, so it cannot be
// installed, and proving so is exponential for clause learning.
func pigeonholeCatalog(n int) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	pkgProp := func(p, v string) property.Property {
		return property.Property{Type: "olm.package", Value: []byte(fmt.Sprintf(`{"packageName":%q,"version":%q}`, p, v))}
	}
	addPkg := func(p string, entries []declcfg.ChannelEntry) {
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: "olm.package", Name: p, DefaultChannel: "stable"})
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: "olm.channel", Package: p, Name: "stable", Entries: entries})
	}
	rootProps := []property.Property{pkgProp("root", "1.0.0")}
	for i := 0; i <= n; i++ {
		p := fmt.Sprintf("pigeon%d", i)
		rootProps = append(rootProps, property.Property{Type: "olm.package.required", Value: []byte(fmt.Sprintf(`{"packageName":%q,"versionRange":">=0.0.0"}`, p))})
		addPkg(p, []declcfg.ChannelEntry{{Name: p + ".v1.0.0"}})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: p, Name: p + ".v1.0.0", Image: "x/" + p, Properties: []property.Property{
			pkgProp(p, "1.0.0"),
			{Type: "olm.gvk.required", Value: []byte(fmt.Sprintf(`{"group":"example.com","version":"v1","kind":"Nest%d"}`, i))},
		}})
	}
	addPkg("root", []declcfg.ChannelEntry{{Name: "root.v1.0.0"}})
	cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: "root", Name: "root.v1.0.0", Image: "x/root", Properties: rootProps})
	for h := 0; h < n; h++ {
		p := fmt.Sprintf("hole%d", h)
		var entries []declcfg.ChannelEntry
		for i := 0; i <= n; i++ {
			name := fmt.Sprintf("%s.v%d.0.0", p, i+1)
			e := declcfg.ChannelEntry{Name: name}
			if i > 0 {
				e.Replaces = fmt.Sprintf("%s.v%d.0.0", p, i)
			}
			entries = append(entries, e)
			cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: p, Name: name, Image: "x/" + name, Properties: []property.Property{
				pkgProp(p, fmt.Sprintf("%d.0.0", i+1)),
				{Type: "olm.gvk", Value: []byte(fmt.Sprintf(`{"group":"example.com","version":"v1","kind":"Nest%d"}`, i))},
			}})
		}
		addPkg(p, entries)
	}
	return cfg
}

// TestSolverBudget: a pigeonhole ends with a BudgetError naming the
// packages, within the budget; a small one is decided (not installable);
// a canceled context stops the search.
func TestSolverBudget(t *testing.T) {
	req := Request{Subscriptions: []Subscription{{Package: "root"}}}
	res, err := Resolve(context.Background(), []Catalog{{Name: "c", Config: pigeonholeCatalog(4)}}, req)
	if err != nil || res.Resolvable {
		t.Fatalf("n=4: %v, %+v", err, res)
	}
	cats := []Catalog{{Name: "c", Config: pigeonholeCatalog(11)}}
	req.Budget = 2000
	start := time.Now()
	_, err = Resolve(context.Background(), cats, req)
	var be *BudgetError
	if !errors.As(err, &be) || be.Conflicts != 2000 || len(be.Packages) != 24 || be.Packages[0] != "hole0" {
		t.Fatalf("got %v", err)
	}
	t.Logf("%v in %v", err, time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req.Budget = -1
	start = time.Now()
	if _, err := Resolve(ctx, cats, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopped after %v", d)
	}
}

// TestCelAggregateLimit: CEL rules that are each within the per-evaluation
// limit but together cost more than the aggregate limit stop the
// resolution with an error that says so.
func TestCelAggregateLimit(t *testing.T) {
	defer func(l uint64) { celAggregateLimit = l }(celAggregateLimit)
	celAggregateLimit = 50_000
	cfg := &declcfg.DeclarativeConfig{}
	var rootProps []property.Property
	rootProps = append(rootProps, property.Property{Type: "olm.package", Value: []byte(`{"packageName":"root","version":"1.0.0"}`)})
	for i := 0; i < 20; i++ {
		rule := fmt.Sprintf(`properties.all(p, properties.all(q, properties.exists(r, r.type == "x%d")))`, i)
		rootProps = append(rootProps, property.Property{Type: "olm.constraint", Value: []byte(fmt.Sprintf(`{"failureMessage":"m","cel":{"rule":%q}}`, rule))})
	}
	cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: "olm.package", Name: "root", DefaultChannel: "stable"})
	cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: "olm.channel", Package: "root", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: "root.v1.0.0"}}})
	cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: "root", Name: "root.v1.0.0", Image: "x/root", Properties: rootProps})
	for i := 0; i < 50; i++ {
		p := fmt.Sprintf("p%d", i)
		props := []property.Property{{Type: "olm.package", Value: []byte(fmt.Sprintf(`{"packageName":%q,"version":"1.0.0"}`, p))}}
		for j := 0; j < 10; j++ {
			props = append(props, property.Property{Type: "olm.label", Value: []byte(fmt.Sprintf(`{"label":"l%d"}`, j))})
		}
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: "olm.package", Name: p, DefaultChannel: "stable"})
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: "olm.channel", Package: p, Name: "stable", Entries: []declcfg.ChannelEntry{{Name: p + ".v1.0.0"}}})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: "olm.bundle", Package: p, Name: p + ".v1.0.0", Image: "x/" + p, Properties: props})
	}
	res, err := Resolve(context.Background(), []Catalog{{Name: "c", Config: cfg}}, Request{Subscriptions: []Subscription{{Package: "root"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resolvable || !strings.Contains(res.Error, "the olm.constraint CEL rules cost more than 50000 together") {
		t.Fatalf("got %+v", res)
	}
}
