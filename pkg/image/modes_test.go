package image_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/imagebuild"
)

// TestExtractFileModes: WithFileModes gives extracted entries their
// permission bits and sticky bit (never setuid or setgid); without it they
// are private to the caller.
func TestExtractFileModes(t *testing.T) {
	ctx := context.Background()
	l, err := imagebuild.FilesLayer(ctx, []imagebuild.File{
		{Path: "bin", Mode: fs.ModeDir | 0o755},
		{Path: "bin/tool", Mode: 0o755 | fs.ModeSetuid, Data: []byte("x")},
		{Path: "etc", Mode: fs.ModeDir | 0o750},
		{Path: "etc/conf", Mode: 0o640, Data: []byte("y")},
		{Path: "tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{Path: "ro", Mode: fs.ModeDir | 0o555},
		{Path: "ro/file", Mode: 0o444, Data: []byte("z")},
	}, imagebuild.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	dir := registrytest.Layout(t, img)
	for _, keep := range []bool{true, false} {
		var opts []image.Option
		if keep {
			opts = append(opts, image.WithFileModes())
		}
		opened, err := image.Open(ctx, "oci:"+dir, opts...)
		if err != nil {
			t.Fatal(err)
		}
		dst := t.TempDir()
		if err := opened.Extract(ctx, dst); err != nil {
			t.Fatal(err)
		}
		opened.Close()
		want := map[string]fs.FileMode{"bin": fs.ModeDir | 0o755, "bin/tool": 0o755, "etc": fs.ModeDir | 0o750, "etc/conf": 0o640,
			"tmp": fs.ModeDir | fs.ModeSticky | 0o777, "ro": fs.ModeDir | 0o555, "ro/file": 0o444}
		if !keep {
			want = map[string]fs.FileMode{"bin": fs.ModeDir | 0o700, "bin/tool": 0o600, "etc": fs.ModeDir | 0o700, "etc/conf": 0o600,
				"tmp": fs.ModeDir | 0o700, "ro": fs.ModeDir | 0o700, "ro/file": 0o600}
		}
		for p, m := range want {
			fi, err := os.Lstat(filepath.Join(dst, p))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode() & (fs.ModeDir | fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid); got != m {
				t.Errorf("keep modes %v: %s is %v, want %v", keep, p, got, m)
			}
		}
		// Let TempDir's cleanup remove it.
		_ = os.Chmod(filepath.Join(dst, "ro"), 0o755)
	}
}
