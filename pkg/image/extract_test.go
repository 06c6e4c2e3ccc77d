package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// zeros is an endless reader.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestCancelLongReads: cancelling the context stops an extraction that
// reads an endless layer (a 1 TiB entry of zeros), promptly.
func TestCancelLongReads(t *testing.T) {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	tw.WriteHeader(&tar.Header{Name: "usr/big", Typeflag: tar.TypeReg, Size: 1 << 40, Mode: 0o644})
	x, err := newExtractor(t.TempDir(), []string{"configs"}, Limits{Uncompressed: 1 << 50})
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	l := layer{digest: "endless", open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(hdr.Bytes()), zeros{})), nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err = x.applyLayer(ctx, l)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}
