package list

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/render"
)

// BenchmarkList loads, validates and lists the bundles of a synthetic
// 50 x 20 catalog (about 48 MB), as `opm alpha list bundles` does.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "catalog")
	st, err := gencatalog.Generate(ctx, dir, gencatalog.Options{Packages: 50, Bundles: 20, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m, err := Load(ctx, dir, render.RegistryOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rows, err := Bundles(m, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteBundles(io.Discard, rows); err != nil {
			b.Fatal(err)
		}
		if err := WritePackages(io.Discard, Packages(m)); err != nil {
			b.Fatal(err)
		}
	}
}
