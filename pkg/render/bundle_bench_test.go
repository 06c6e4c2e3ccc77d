package render

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// copyTree copies the directory src to dst.
func copyTree(tb testing.TB, src, dst string) int64 {
	tb.Helper()
	var total int64
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		n, err := io.Copy(out, in)
		total += n
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}

// BenchmarkRenderBundleDirs renders 100 bundle directories (copies of the
// corpus bundles, cycled) in one Render call: "sequential" as render.go
// loops over refs, "prefetch" with the bundle directories rendered
// concurrently first.
func BenchmarkRenderBundleDirs(b *testing.B) {
	b.Run("sequential", func(b *testing.B) { benchmarkRenderBundleDirs(b, false) })
	b.Run("prefetch", func(b *testing.B) { benchmarkRenderBundleDirs(b, true) })
}

func benchmarkRenderBundleDirs(b *testing.B, prefetch bool) {
	cases, err := os.ReadDir(conformanceBundleDir)
	if err != nil {
		b.Skipf("conformance corpus not available (%v)", err)
	}
	tmp := b.TempDir()
	var refs []string
	var size int64
	for i := 0; len(refs) < 100; i++ {
		c := cases[i%len(cases)]
		dst := filepath.Join(tmp, fmt.Sprintf("b%03d", len(refs)))
		size += copyTree(b, filepath.Join(conformanceBundleDir, c.Name(), "input"), dst)
		refs = append(refs, dst)
	}
	b.SetBytes(size)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg, err := render(context.Background(), Options{Refs: refs}, prefetch)
		if err != nil {
			b.Fatal(err)
		}
		if len(cfg.Bundles) != len(refs) {
			b.Fatalf("got %d bundles", len(cfg.Bundles))
		}
	}
	b.StopTimer()
	// CPU time (user+system) per op does not depend on what else the
	// machine is running; ns/op does.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
