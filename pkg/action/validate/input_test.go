package validate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
)

func TestLooksLikeImage(t *testing.T) {
	for ref, want := range map[string]bool{
		"quay.io/acme/catalog:v1":                        true,
		"localhost:5000/catalog":                         true,
		"acme/catalog@sha256:" + strings.Repeat("a", 64): true,
		"oci:./layout":                                   true,
		"oci-archive:c.tar":                              true,
		"docker-archive:c.tar":                           true,
		"catalog":                                        false, // a mistyped directory, not docker.io/library/catalog
		"./catalog":                                      false,
		"/abs/catalog":                                   false,
		"../catalog":                                     false,
		"Bad Ref:x":                                      false,
	} {
		if got := looksLikeImage(ref); got != want {
			t.Errorf("looksLikeImage(%q) = %v, want %v", ref, got, want)
		}
	}
}

const base = `schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v0.1.0
  - name: foo.v0.2.0
    replaces: foo.v0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/foo/bundle:v0.1.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 0.1.0}
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: quay.io/foo/bundle:v0.2.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 0.2.0}
`

func TestLoadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ref := range []string{file} {
		cfg, err := LoadInput(ctx, ref, nil, render.RegistryOptions{})
		if err != nil || len(cfg.Bundles) != 2 || cfg.Bundles[0].Pos.File != file {
			t.Errorf("LoadInput(%s) = %v, %v", ref, cfg, err)
		}
	}
	cfg, err := LoadInput(ctx, "-", strings.NewReader(base), render.RegistryOptions{})
	if err != nil || cfg.Packages[0].Pos.File != StdinName {
		t.Errorf("LoadInput(-) = %v, %v", cfg, err)
	}
	_, err = LoadInput(ctx, bad, nil, render.RegistryOptions{})
	var le *declcfg.LoadError
	if !errors.As(err, &le) || !IsContentError(err) {
		t.Errorf("LoadInput(bad) error = %v, want a content error", err)
	}
	_, err = LoadInput(ctx, filepath.Join(dir, "nope"), nil, render.RegistryOptions{})
	if !errors.Is(err, fs.ErrNotExist) || IsContentError(err) {
		t.Errorf("LoadInput(missing) error = %v, want not-exist", err)
	}
	if _, err := LoadInput(ctx, "-", nil, render.RegistryOptions{}); err == nil {
		t.Error("LoadInput(-) without stdin succeeded")
	}
	for _, in := range []string{"", "---\n"} {
		_, err := LoadInput(ctx, "-", strings.NewReader(in), render.RegistryOptions{})
		if !errors.Is(err, ErrNoBlobs) || IsContentError(err) {
			t.Errorf("LoadInput(-) on %q: error = %v, want ErrNoBlobs", in, err)
		}
	}
}
