package validate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
)

// benchCRDUpgrades validates dir with and without the CRD upgrade checks
// and reports the cost of the checks per bundle.
func benchCRDUpgrades(b *testing.B, dir string) {
	ctx := context.Background()
	schemas, err := LoadSchemas("")
	if err != nil {
		b.Fatal(err)
	}
	run := func(opts Options) *Result {
		ix, err := declcfg.IndexDir(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		opts.Schemas = schemas
		res, err := ValidateIndex(ctx, ix, opts)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	b.ReportAllocs()
	b.ResetTimer()
	var findings int
	for b.Loop() {
		findings = len(run(Options{CRDUpgrades: &CRDUpgradeOptions{}}).Findings)
	}
	b.ReportMetric(float64(findings), "findings")
}

// BenchmarkCRDUpgradesGenerated checks every edge of a generated catalog
// (internal/gencatalog, 50 packages x 20 bundles with bundle objects:
// about 47 MB of JSON). Its bundles share their CRDs, so this measures
// reading the manifests and walking the graph more than comparing.
func BenchmarkCRDUpgradesGenerated(b *testing.B) {
	dir := b.TempDir()
	if _, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{Packages: 50, Bundles: 20, Seed: 1, Format: gencatalog.FormatJSON}); err != nil {
		b.Fatal(err)
	}
	benchCRDUpgrades(b, dir)
}

// BenchmarkCRDUpgradesOkderators checks every edge of the largest catalog
// of the conformance suite that carries bundle objects.
func BenchmarkCRDUpgradesOkderators(b *testing.B) {
	dir, _ := filepath.Abs("../../../shared/conformance/catalog/okderators-catalog-index/input")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no conformance suite: %v", err)
	}
	benchCRDUpgrades(b, dir)
}
