package manifest

import (
	"bytes"
	"testing"
)

// A size taken from the cache is the size compressing gives.
func TestCompressedSizeCached(t *testing.T) {
	a := bytes.Repeat([]byte("apiVersion: v1\nkind: ConfigMap\n"), 1000)
	b := []byte("kind: Secret\n")
	for range 2 {
		for _, d := range [][]byte{a, b} {
			if got, want := compressedSize(d), gzipBase64Size(d); got != want {
				t.Fatalf("compressedSize = %d, compressing gives %d", got, want)
			}
		}
	}
}
