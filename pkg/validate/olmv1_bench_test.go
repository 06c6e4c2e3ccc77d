package validate

import (
	"context"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/olmv1"
)

// BenchmarkOLMv1Generated validates a generated catalog (internal/gencatalog,
// 50 packages x 20 bundles with bundle objects: about 47 MB of JSON) one
// package at a time as opm validate does, without and with the OLM v1
// checks (--target olm-v1 without its CRD upgrade checks): the difference
// is their cost.
func BenchmarkOLMv1Generated(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	if _, err := gencatalog.Generate(ctx, dir, gencatalog.Options{Packages: 50, Bundles: 20, Seed: 1, Format: gencatalog.FormatJSON}); err != nil {
		b.Fatal(err)
	}
	schemas, err := LoadSchemas("")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		olmv1 *OLMv1Options
	}{{"without", nil}, {"with", &OLMv1Options{Gates: olmv1.DefaultGates()}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var res *Result
			for b.Loop() {
				ix, err := declcfg.IndexDir(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				res, err = ValidateIndex(ctx, ix, Options{Schemas: schemas, OLMv1: bc.olmv1})
				ix.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			if res.OLMv1 != nil {
				b.ReportMetric(float64(res.OLMv1.Bundles), "bundles")
			}
		})
	}
}
