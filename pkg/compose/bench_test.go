package compose

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Benchmarks on a synthetic catalog (internal/gencatalog): 20 packages x 10
// bundles, or the size in $OPM_BENCH_SIZE (e.g. 200x20). NEW differs from
// OLD in 1% of its bundles (their image). hack/bench-compose.sh gives the
// end-to-end figures of the binary, with peak RSS.

func benchCatalogs(b *testing.B) (old, cur *declcfg.DeclarativeConfig) {
	b.Helper()
	np, nb := 20, 10
	if s := os.Getenv("OPM_BENCH_SIZE"); s != "" {
		ps, bs, _ := strings.Cut(s, "x")
		var err1, err2 error
		np, err1 = strconv.Atoi(ps)
		nb, err2 = strconv.Atoi(bs)
		if err1 != nil || err2 != nil {
			b.Fatalf("invalid OPM_BENCH_SIZE %q", s)
		}
	}
	dir := filepath.Join(b.TempDir(), "catalog")
	if _, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{Packages: np, Bundles: nb, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	old, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	cur = &declcfg.DeclarativeConfig{Packages: old.Packages, Channels: old.Channels, Deprecations: old.Deprecations, Others: old.Others}
	cur.Bundles = append([]declcfg.Bundle(nil), old.Bundles...)
	step := max(1, len(cur.Bundles)/max(1, len(cur.Bundles)/100))
	for i := 0; i < len(cur.Bundles); i += step {
		cur.Bundles[i].Image += "-changed"
	}
	return old, cur
}

func BenchmarkDiff(b *testing.B) {
	old, cur := benchCatalogs(b)
	b.ResetTimer()
	for b.Loop() {
		oldSum, err := Summarize(old, "old")
		if err != nil {
			b.Fatal(err)
		}
		ns, err := Summarize(cur, "new")
		if err != nil {
			b.Fatal(err)
		}
		r, err := Diff(oldSum, ns, DiffOptions{FailOn: FailOnKinds})
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.BundlesChanged == 0 {
			b.Fatal("no change found")
		}
	}
}

func BenchmarkFilterHeadsOnly(b *testing.B) {
	old, _ := benchCatalogs(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Filter(old, FilterOptions{All: PackageSelection{HeadsOnly: true}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	old, _ := benchCatalogs(b)
	other := testCatalog("zz-other", "stable", map[string][]string{"stable": {"zz-other.v1.0.0"}})
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge([]Input{{Source: "old", Config: old}, {Source: "other", Config: other}}, MergeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
