package migrate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
)

// BenchmarkMigrate migrates a synthetic 50 x 20 catalog (about 48 MB) to a
// new directory, with no migration and with bundle-object-to-csv-metadata.
func BenchmarkMigrate(b *testing.B) {
	ctx := context.Background()
	tmp := b.TempDir()
	in := filepath.Join(tmp, "catalog")
	st, err := gencatalog.Generate(ctx, in, gencatalog.Options{Packages: 50, Bundles: 20, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, level := range []string{"none", "bundle-object-to-csv-metadata"} {
		b.Run(level, func(b *testing.B) {
			b.SetBytes(st.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				out := filepath.Join(tmp, "out")
				if err := Run(ctx, Options{CatalogRef: in, OutputDir: out, MigrationLevel: level, Format: declcfg.FormatJSON}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := os.RemoveAll(out); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
