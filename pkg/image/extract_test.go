package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
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

// tarLayer is a layer of the given tar entries (regular files with
// bodies, directories when the name ends in "/").
func tarLayer(t *testing.T, names []string, body string) layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: n, Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644}
		if n[len(n)-1] == '/' {
			h = &tar.Header{Name: n, Typeflag: tar.TypeDir, Mode: 0o755}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	return layer{digest: "blocks", open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// TestExtractCountsBlocks: the extract limit counts at least one 4 KiB
// block per entry written, not only the bytes: 300,000 one-byte files
// (4.5 MB of image) take ~1.2 GB of disk blocks (issue 30 item 14).
func TestExtractCountsBlocks(t *testing.T) {
	names := []string{"configs/"}
	for i := range 300 {
		names = append(names, fmt.Sprintf("configs/f%03d", i))
	}
	extract := func(limit int64, names []string, body string) error {
		x, err := newExtractor(t.TempDir(), []string{"configs"}, Limits{Extract: limit})
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		return x.applyLayer(context.Background(), tarLayer(t, names, body))
	}
	// 301 entries of one block each: 1.2 MiB, over 1 MiB.
	err := extract(1<<20, names, "x")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1048576 bytes written (the extract limit; each entry counts as at least one 4 KiB block)") {
		t.Fatalf("300 one-byte files under a 1 MiB limit: %v", err)
	}
	// Within: 200 files and their directory.
	if err := extract(1<<20, names[:201], "x"); err != nil {
		t.Fatalf("200 one-byte files: %v", err)
	}
	// Files count their size rounded up to whole blocks: 2 files of
	// 4097 bytes are 16 KiB with the directory's block, over 15 KiB.
	body := strings.Repeat("y", 4097)
	if err := extract(15<<10, names[:3], body); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("blocks of large files: %v", err)
	}
	if err := extract(20<<10, names[:3], body); err != nil {
		t.Fatalf("20 KiB: %v", err)
	}
}
