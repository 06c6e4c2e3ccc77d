package catalogedit

import (
	"os"
	"path/filepath"
	"testing"
)

// benchFile reads a large conformance catalog file.
func benchFile(b *testing.B, rel string) []byte {
	data, err := os.ReadFile(filepath.Join(conformanceDir, "catalog", rel))
	if err != nil {
		b.Skip("conformance suite not found")
	}
	return data
}

// BenchmarkScanYAML scans a 1.3 MB YAML catalog file (blob ranges only).
func BenchmarkScanYAML(b *testing.B) {
	data := benchFile(b, "community-operators-prod-v4.20/input/hive-operator/catalog.yaml")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Scan(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanJSON scans a 1.7 MB JSON catalog file.
func BenchmarkScanJSON(b *testing.B) {
	data := benchFile(b, "mtv-fbc-v4.20/input/mtv-operator/catalog.json")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Scan(data); err != nil {
			b.Fatal(err)
		}
	}
}
