package declcfg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// withWindow runs f with the decoder reading through a window of n bytes
// (growing as values need), instead of whole files.
func withWindow(t testing.TB, n int, f func()) {
	t.Helper()
	saveWhole, saveWin := maxWholeRead, windowSize
	maxWholeRead, windowSize = 0, n
	defer func() { maxWholeRead, windowSize = saveWhole, saveWin }()
	f()
}

// decodeAll decodes r (of size sizeHint, or -1 for a stream) as one file
// and describes every blob, or the error, in a string.
func decodeAll(r io.Reader, sizeHint int64) string {
	var sb strings.Builder
	err := decodeReader(r, sizeHint, 0, "f", func(n normalized, line, col int) error {
		fmt.Fprintf(&sb, "%d:%d %q %q %q %v %s\n", line, col, n.schema, n.pkg, n.name, n.hasKeys, n.blob)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&sb, "error: %v | %s\n", err, UpstreamMessage(err))
	}
	return sb.String()
}

var streamSeeds = []string{
	`{"schema":"a"}{"schema":"b"}` + "\n" + `{"schema":"c", "x": [1, 2.5e3, "s\u00e9", null, true]}`,
	"{\"schema\":\"a\"}\nschema: b\n---\nschema: c\n",
	"{\"schema\":\"a\"}\n---\nschema: b\n",
	"{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n---\n",
	"{\"schema\": \"olm.package\",\n \"name\": ,\n}",
	"{\"schema\": \"a\"}\n{\"schema\": \"b\",\n  \"n\": 12",
	"{\"schema\":\"a\",\"n\":123456789012345678901234}  {\"schema\":\"b\"} 5",
	"---\nschema: a\r\n---\r\nschema: b\n--- # c\n\nschema: c",
	"schema: a\nname: [x\n",
	"# only a comment\n",
	"---\n---\n",
	"schema: x\n--- bad\n",
	"\n\n   \n{\"schema\":\"late\"}",
	`{"schema":"x","deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}",
	"{\"Schema\":\"a\",\"schema\":\"b\"}",
	"{\"schema\":\"a\"}\"str\"",
	"{\"schema\":\"a\"}tru",
	"{\"schema\":\"a\"}" + strings.Repeat(" \n", 3000) + "---\nschema: b\n",
	"{\"schema\":\"a\"}" + strings.Repeat(" \n", 3000) + "schema: b\n",
	"{\"schema\":\"a\"}{\"schema\":\"b\"}" + strings.Repeat(" \n", 3000) + "{\"schema\":\"c\"}",
	strings.Repeat("\n", 5000) + "{\"schema\":\"a\"}",
	"schema: a\n" + strings.Repeat("# comment\n", 1000) + "---\nschema: b\n",
}

// TestStreamMatchesWhole checks that reading a file through a small window
// gives exactly what reading it whole gives: blobs, positions and errors.
func TestStreamMatchesWhole(t *testing.T) {
	for _, seed := range streamSeeds {
		data := []byte(seed)
		want := decodeAll(bytes.NewReader(data), int64(len(data)))
		// In memory (decodeStream, for WalkMetas and WalkFile).
		var sb strings.Builder
		if err := decodeStream(data, "f", func(n normalized, line, col int) error {
			fmt.Fprintf(&sb, "%d:%d %q %q %q %v %s\n", line, col, n.schema, n.pkg, n.name, n.hasKeys, n.blob)
			return nil
		}); err != nil {
			fmt.Fprintf(&sb, "error: %v | %s\n", err, UpstreamMessage(err))
		}
		if sb.String() != want {
			t.Errorf("in memory over %.60q:\ngot  %s\nwant %s", seed, sb.String(), want)
		}
		for _, n := range []int{1, 2, 3, 7, 64} {
			withWindow(t, n, func() {
				// A stream (size unknown): the window slides and grows.
				if got := decodeAll(iotest.HalfReader(bytes.NewReader(data)), -1); got != want {
					t.Errorf("window %d over stream %.60q:\ngot  %s\nwant %s", n, seed, got, want)
				}
				// A file: the window jumps to the rest of the file when
				// a value does not fit.
				if got := decodeAll(iotest.HalfReader(bytes.NewReader(data)), int64(len(data))); got != want {
					t.Errorf("window %d over file %.60q:\ngot  %s\nwant %s", n, seed, got, want)
				}
			})
		}
	}
}

// FuzzStream is TestStreamMatchesWhole over any input.
func FuzzStream(f *testing.F) {
	for _, s := range streamSeeds {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		if len(data) > 64<<10 {
			return
		}
		want := decodeAll(bytes.NewReader(data), int64(len(data)))
		withWindow(t, int(n%16)+1, func() {
			if got := decodeAll(iotest.OneByteReader(bytes.NewReader(data)), -1); got != want {
				t.Fatalf("window %d over %q:\ngot  %s\nwant %s", n%16+1, data, got, want)
			}
		})
	})
}

// TestStreamWindowLimit: a stream may be longer than the limit, one value
// or document may not.
func TestStreamWindowLimit(t *testing.T) {
	withWindow(t, 16, func() {
		blob := `{"schema":"x","pad":"` + strings.Repeat("p", 100) + `"}`
		many := strings.Repeat(blob+"\n", 100) // 13 KB of 130-byte values
		err := decodeReader(strings.NewReader(many), -1, 1000, "s", func(normalized, int, int) error { return nil })
		if err != nil {
			t.Fatalf("a long stream of small values: %v", err)
		}
		big := `{"schema":"x","pad":"` + strings.Repeat("p", 2000) + `"}`
		err = decodeReader(strings.NewReader(big), -1, 1000, "s", func(normalized, int, int) error { return nil })
		if !errors.Is(err, ErrFileTooLarge) || err.Error() != "s: a document or value larger than the limit of 1000 bytes on a single file" {
			t.Fatalf("one value over the limit: %v", err)
		}
		bigYAML := "schema: x\npad: " + strings.Repeat("p", 2000) + "\n"
		err = decodeReader(strings.NewReader(bigYAML), -1, 1000, "s", func(normalized, int, int) error { return nil })
		if !errors.Is(err, ErrFileTooLarge) {
			t.Fatalf("one document over the limit: %v", err)
		}
	})
}

func TestLoadReaderStopsWhenCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := LoadReaderContext(ctx, pr, "<stdin>")
		errc <- err
	}()
	if _, err := pw.Write([]byte("schema: a\n")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}
