package gencatalog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// TestRoundTrip loads a generated catalog with pkg/declcfg and writes it
// back: since every package file is written as upstream's render writes
// that package, the writer's output is the files concatenated in package
// order, byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		write  func(declcfg.DeclarativeConfig, *bytes.Buffer) error
	}{
		{"Success/JSON", FormatJSON, func(c declcfg.DeclarativeConfig, b *bytes.Buffer) error { return declcfg.WriteJSON(c, b) }},
		{"Success/YAML", FormatYAML, func(c declcfg.DeclarativeConfig, b *bytes.Buffer) error { return declcfg.WriteYAML(c, b) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Packages: 6, Bundles: 4, Seed: 11, Format: tc.format}
			if _, err := Generate(context.Background(), dir, opts); err != nil {
				t.Fatal(err)
			}
			cfg, err := declcfg.LoadDir(context.Background(), dir)
			if err != nil {
				t.Fatalf("LoadDir: %v", err)
			}
			if len(cfg.Packages) != 6 || len(cfg.Bundles) != 24 || len(cfg.Others) != 0 {
				t.Fatalf("loaded %d packages, %d bundles, %d others; want 6, 24, 0",
					len(cfg.Packages), len(cfg.Bundles), len(cfg.Others))
			}
			for _, b := range cfg.Bundles {
				if err := b.LoadObjects(); err != nil {
					t.Fatalf("bundle %s: %v", b.Name, err)
				}
				if len(b.Objects) < 2 || b.CsvJSON == "" {
					t.Fatalf("bundle %s: %d objects, CSV %d bytes", b.Name, len(b.Objects), len(b.CsvJSON))
				}
			}
			var want bytes.Buffer
			g, _ := New(opts)
			for _, name := range g.PackageNames() {
				data, err := os.ReadFile(filepath.Join(dir, name, "catalog."+tc.format.Ext()))
				if err != nil {
					t.Fatal(err)
				}
				want.Write(data)
			}
			var got bytes.Buffer
			if err := tc.write(*cfg, &got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				i := 0
				for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
					i++
				}
				t.Errorf("written catalog differs from the generated files at byte %d:\ngot:  %q\nwant: %q",
					i, snippet(got.Bytes(), i), snippet(want.Bytes(), i))
			}
		})
	}
}

func snippet(b []byte, i int) []byte {
	return b[max(0, i-80):min(len(b), i+80)]
}
