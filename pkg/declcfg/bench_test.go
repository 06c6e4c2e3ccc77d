package declcfg_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Benchmarks of the loader and writers on a synthetic catalog (see
// internal/gencatalog): 20 packages x 10 bundles, about 9.5 MB of JSON, or
// the size in $OPM_BENCH_SIZE (e.g. OPM_BENCH_SIZE=200x20, about 190 MB).
// The end-to-end figures of the binary come from hack/bench.sh.
func benchSize(b *testing.B) (packages, bundles int) {
	s := os.Getenv("OPM_BENCH_SIZE")
	if s == "" {
		return 20, 10
	}
	ps, bs, ok := strings.Cut(s, "x")
	np, err1 := strconv.Atoi(ps)
	nb, err2 := strconv.Atoi(bs)
	if !ok || err1 != nil || err2 != nil || np < 1 || nb < 1 {
		b.Fatalf("invalid OPM_BENCH_SIZE %q: want PACKAGESxBUNDLES, e.g. 200x20", s)
	}
	return np, nb
}

// genCatalog writes a synthetic catalog in a temporary directory and
// returns the directory, its size in bytes and its number of bundles.
func genCatalog(b *testing.B, format gencatalog.Format) (dir string, size int64, bundles int) {
	b.Helper()
	np, nb := benchSize(b)
	dir = filepath.Join(b.TempDir(), "catalog")
	st, err := gencatalog.Generate(context.Background(), dir, gencatalog.Options{
		Packages: np, Bundles: nb, Seed: 1, Format: format,
	})
	if err != nil {
		b.Fatal(err)
	}
	return dir, st.Bytes, st.Bundles
}

func BenchmarkLoad(b *testing.B) {
	for _, bc := range []struct {
		name   string
		format gencatalog.Format
		opts   []declcfg.LoadOption
	}{
		{"json", gencatalog.FormatJSON, nil},
		{"json-serial", gencatalog.FormatJSON, []declcfg.LoadOption{declcfg.WithConcurrency(1)}},
		{"yaml", gencatalog.FormatYAML, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir, size, bundles := genCatalog(b, bc.format)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				cfg, err := declcfg.LoadDir(context.Background(), dir, bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if len(cfg.Bundles) != bundles {
					b.Fatalf("loaded %d bundles", len(cfg.Bundles))
				}
			}
		})
	}
}

// loadForWrite loads a generated JSON catalog and returns it with the size
// of its JSON rendering.
func loadForWrite(b *testing.B, write func(declcfg.DeclarativeConfig, io.Writer) error) (*declcfg.DeclarativeConfig, int64) {
	b.Helper()
	dir, _, _ := genCatalog(b, gencatalog.FormatJSON)
	cfg, err := declcfg.LoadDir(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	if err := write(*cfg, &out); err != nil {
		b.Fatal(err)
	}
	return cfg, int64(out.Len())
}

func BenchmarkWriteJSON(b *testing.B) {
	cfg, size := loadForWrite(b, declcfg.WriteJSON)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := declcfg.WriteJSON(*cfg, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteYAML(b *testing.B) {
	cfg, size := loadForWrite(b, declcfg.WriteYAML)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := declcfg.WriteYAML(*cfg, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderJSON is what `opm render DIR -o json` does with a catalog
// directory: load, then write.
func BenchmarkRenderJSON(b *testing.B) {
	dir, size, _ := genCatalog(b, gencatalog.FormatJSON)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cfg, err := declcfg.LoadDir(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := declcfg.WriteJSON(*cfg, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
