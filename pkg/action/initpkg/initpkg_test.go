package initpkg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "icon.svg")
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readme, []byte("# Foo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	t.Run("Success/IconAndDescription", func(t *testing.T) {
		pkg, err := Run(ctx, Options{Name: "foo", DefaultChannel: "stable", IconFile: svg, DescriptionFile: readme})
		if err != nil {
			t.Fatal(err)
		}
		if pkg.Schema != "olm.package" || pkg.Name != "foo" || pkg.DefaultChannel != "stable" || pkg.Description != "# Foo\n" {
			t.Errorf("package = %+v", pkg)
		}
		if pkg.Icon == nil || pkg.Icon.MediaType != "image/svg+xml" {
			t.Errorf("icon = %+v", pkg.Icon)
		}
	})
	t.Run("Error/IconNotAnImage", func(t *testing.T) {
		_, err := Run(ctx, Options{Name: "foo", IconFile: readme})
		if err == nil || !strings.Contains(err.Error(), "not an image") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Error/MissingDescription", func(t *testing.T) {
		_, err := Run(ctx, Options{Name: "foo", DescriptionFile: filepath.Join(dir, "nope")})
		if err == nil || !strings.HasPrefix(err.Error(), "read description: ") {
			t.Fatalf("err = %v", err)
		}
	})
}
