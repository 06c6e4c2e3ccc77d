package resolve

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// benchCatalog is the largest catalog of the conformance suite (most
// bundles), read at run time; OPM_RESOLVE_BENCH_CATALOG names another.
func benchCatalog(b *testing.B) (Catalog, []string) {
	b.Helper()
	dir := os.Getenv("OPM_RESOLVE_BENCH_CATALOG")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "conformance", "catalog", "community-operators-prod-v4.20", "input")
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no benchmark catalog (%v): the conformance suite is not beside the repository", err)
	}
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	var pkgs []string
	for _, p := range cfg.Packages {
		pkgs = append(pkgs, p.Name)
	}
	sort.Strings(pkgs)
	return Catalog{Name: "community", Config: cfg}, pkgs
}

// BenchmarkResolveAllAtOnce subscribes to every package of the catalog in
// one resolution (index, expansion, search or explanation).
func BenchmarkResolveAllAtOnce(b *testing.B) {
	c, pkgs := benchCatalog(b)
	var req Request
	for _, p := range pkgs {
		req.Subscriptions = append(req.Subscriptions, Subscription{Package: p})
	}
	b.ResetTimer()
	var res *Result
	for b.Loop() {
		var err error
		res, err = Resolve(context.Background(), []Catalog{c}, req)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Stats.Variables), "vars")
	b.ReportMetric(float64(res.Stats.Clauses), "clauses")
	b.ReportMetric(float64(res.Stats.SolverCalls), "solver-calls")
	b.ReportMetric(float64(res.Stats.Conflicts), "solver-conflicts")
	b.ReportMetric(float64(len(res.Conflicts)), "conflicts")
	b.ReportMetric(float64(len(pkgs)), "packages")
}

// BenchmarkResolveAllResolvableAtOnce subscribes at once to every package
// that resolves on its own, so that the search runs to a solution.
func BenchmarkResolveAllResolvableAtOnce(b *testing.B) {
	c, pkgs := benchCatalog(b)
	u, err := NewUniverse([]Catalog{c})
	if err != nil {
		b.Fatal(err)
	}
	var req Request
	for _, p := range pkgs {
		res, err := u.Resolve(context.Background(), Request{Subscriptions: []Subscription{{Package: p}}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Resolvable {
			req.Subscriptions = append(req.Subscriptions, Subscription{Package: p})
		}
	}
	b.ResetTimer()
	var res *Result
	for b.Loop() {
		res, err = Resolve(context.Background(), []Catalog{c}, req)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(req.Subscriptions)), "packages")
	b.ReportMetric(float64(len(res.Install)), "installed")
	b.ReportMetric(float64(res.Stats.SolverCalls), "solver-calls")
	b.ReportMetric(float64(res.Stats.Conflicts), "solver-conflicts")
	if !res.Resolvable {
		b.ReportMetric(float64(len(res.Conflicts)), "conflicts")
	}
}

// BenchmarkResolveEach resolves every package on its own against one
// index of the catalog (what validate --check-dependencies does per
// channel head); one op is all packages.
func BenchmarkResolveEach(b *testing.B) {
	c, pkgs := benchCatalog(b)
	b.ResetTimer()
	ok := 0
	for b.Loop() {
		u, err := NewUniverse([]Catalog{c})
		if err != nil {
			b.Fatal(err)
		}
		ok = 0
		for _, p := range pkgs {
			res, err := u.Resolve(context.Background(), Request{Subscriptions: []Subscription{{Package: p}}})
			if err != nil {
				b.Fatal(err)
			}
			if res.Resolvable {
				ok++
			}
		}
	}
	b.ReportMetric(float64(len(pkgs)), "packages")
	b.ReportMetric(float64(ok), "resolvable")
}
