package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/declcfg"
)

const secret = "TOPSECRET-bundle-do-not-print"

// writeBundle writes the test bundle, with files overridden as testFS
// does, to dir/bundle beside a secret file dir/secret, and returns
// dir/bundle.
func writeBundle(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("kind: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "bundle")
	for name, f := range testFS(files) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks: %v", err)
	}
}

// parseBounded parses dir and fails the test if that takes more than 20s.
func parseBounded(t *testing.T, ctx context.Context, dir string) (*Bundle, error) {
	t.Helper()
	type result struct {
		b   *Bundle
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := ParseDir(ctx, dir)
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("ParseDir hung")
		return nil, nil
	}
}

func TestHostileBundleDirectories(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, root string)
		limit   int64
		wantErr string
		is      error
	}{
		{
			name: "ManifestLinkOutOfRoot",
			setup: func(t *testing.T, root string) {
				symlink(t, "../../secret", filepath.Join(root, "manifests/zz.yaml"))
			},
			wantErr: "manifests/zz.yaml: a symbolic link leads outside",
		},
		{
			name: "ManifestLinkChainOutOfRoot",
			setup: func(t *testing.T, root string) {
				symlink(t, "..", filepath.Join(root, "manifests/d"))
				symlink(t, "d/manifests/d/manifests/d/../../secret", filepath.Join(root, "manifests/zz.yaml"))
			},
			wantErr: "manifests/zz.yaml: a symbolic link leads outside",
		},
		{
			name: "AbsoluteLink",
			setup: func(t *testing.T, root string) {
				symlink(t, filepath.Join(filepath.Dir(root), "secret"), filepath.Join(root, "metadata/a.yaml"))
			},
			wantErr: "metadata/a.yaml: a symbolic link leads outside",
		},
		{
			name: "MetadataDirLinkOutOfRoot",
			setup: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "metadata")); err != nil {
					t.Fatal(err)
				}
				symlink(t, "..", filepath.Join(root, "metadata"))
			},
			wantErr: "error opening metadata directory: readdir metadata: a symbolic link leads outside",
		},
		{
			name: "FIFOInManifests",
			setup: func(t *testing.T, root string) {
				if err := syscall.Mkfifo(filepath.Join(root, "manifests/fifo.yaml"), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			},
			wantErr: "manifests/fifo.yaml: not a regular file (a named pipe)",
		},
		{
			name: "FIFOInMetadata",
			setup: func(t *testing.T, root string) {
				if err := syscall.Mkfifo(filepath.Join(root, "metadata/a-fifo"), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			},
			wantErr: "metadata/a-fifo: not a regular file (a named pipe)",
		},
		{
			name: "ManifestOverTheLimit",
			setup: func(t *testing.T, root string) {
				big := "kind: ConfigMap\ndata: {x: " + strings.Repeat("x", 4096) + "}\n"
				if err := os.WriteFile(filepath.Join(root, "manifests/big.yaml"), []byte(big), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			limit:   4096,
			wantErr: "manifests/big.yaml: file size 4.0 KiB is over the limit of 4 KiB on a single file",
			is:      declcfg.ErrFileTooLarge,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeBundle(t, nil)
			tc.setup(t, root)
			ctx := context.Background()
			if tc.limit > 0 {
				ctx = declcfg.WithMaxFileSize(ctx, tc.limit)
			}
			_, err := parseBounded(t, ctx, root)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v\nwant %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the secret leaked: %v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}

func TestLinksInsideTheBundleAreFollowed(t *testing.T) {
	root := writeBundle(t, nil)
	if err := os.Rename(filepath.Join(root, "manifests/foo.crd.yaml"), filepath.Join(root, "crd.yaml")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "../crd.yaml", filepath.Join(root, "manifests/foo.crd.yaml"))
	b, err := ParseDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Objects) != 2 {
		t.Errorf("got %d objects", len(b.Objects))
	}
}

func TestParseDirCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseDir(ctx, writeBundle(t, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// TestDeepNesting: nesting beyond the parsers' limit (10000) in any
// bundle file is refused with an error, never a crash, and quickly.
func TestDeepNesting(t *testing.T) {
	deepJSON := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepBlock := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteString(strings.Repeat(" ", i))
			sb.WriteString("a:\n")
		}
		return sb.String()
	}
	for _, tc := range []struct {
		name, file, data string
		wantErr          string
	}{
		{"ManifestFlow", "manifests/deep.yaml", "kind: ConfigMap\ndata: " + deepJSON(20000) + "\n", ""},
		{"ManifestJSON", "manifests/deep.json", `{"kind":"ConfigMap","data":` + deepJSON(20000) + "}", ""},
		{"ManifestFlowAndBlock", "manifests/deep.yaml", "kind: ConfigMap\ndata:\n" + deepBlock(100) + strings.Repeat(" ", 100) + "b: " + deepJSON(9950) + "\n", ""},
		// Upstream skips a metadata file it cannot decode, silently.
		{"Properties", "metadata/properties.yaml", "properties:\n- type: x\n  value: " + deepJSON(20000) + "\n", "-"},
		{"Annotations", "metadata/annotations.yaml", "annotations: " + deepJSON(20000) + "\n", "metadata: Could not find annotations file"},
		{"CSV", "manifests/foo.csv.yaml", testCSV + "  x: " + deepJSON(20000) + "\n", "manifests: no csv in bundle (skipped manifests/foo.csv.yaml: failed to decode manifest: error converting YAML to JSON: yaml: line 36: exceeded max depth of 10000)"},
		{"CSVPropertiesAnnotation", "manifests/foo.csv.yaml",
			strings.Replace(testCSV, "    olm.skipRange: <0.2.0\n", "    olm.properties: '"+deepJSON(20000)+"'\n", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			b, err := parseBounded(t, context.Background(), writeBundle(t, map[string]string{tc.file: tc.data}))
			if tc.wantErr == "-" {
				if err != nil || b.PropertiesFile != "" {
					t.Fatalf("got %v, properties from %q", err, b.PropertiesFile)
				}
			} else if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				if len(b.Warnings) == 0 {
					t.Errorf("no warning for the refused file")
				}
				for _, w := range b.Warnings {
					if strings.Contains(w, tc.file) && !strings.Contains(w, "exceeded max depth") {
						t.Errorf("warning %q does not say why", w)
					}
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
