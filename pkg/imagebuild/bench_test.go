package imagebuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkBuildLayer builds the catalog layer of the largest conformance
// catalog (read, tar, gzip, hash): MB/s of catalog files.
func BenchmarkBuildLayer(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "shared", "conformance", "catalog", "community-operators-prod-v4.20", "input")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("skipping: no conformance catalog at %s", dir)
	}
	var size int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return err
	})
	b.SetBytes(size)
	tmp := b.TempDir()
	for b.Loop() {
		l, err := BuildLayer(context.Background(), dir, []Tree{{Src: ".", Dst: "configs"}}, LayerOptions{TempDir: tmp})
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
