package merge

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	example := filepath.Join("..", "..", "..", "examples", "catalog")
	cfg, err := render.Render(ctx, render.Options{Refs: []string{example}})
	if err != nil {
		t.Fatal(err)
	}
	// Split the example in two by package, merge it back: what rendering
	// it gives.
	tmp := t.TempDir()
	for name, pkgs := range map[string][]string{"a": {"cache-operator"}, "b": {"queue-operator", "web-console"}} {
		var sels []compose.PackageSelection
		for _, p := range pkgs {
			sels = append(sels, compose.PackageSelection{Name: p})
		}
		res, err := compose.Filter(cfg, compose.FilterOptions{Packages: sels})
		if err != nil {
			t.Fatal(err)
		}
		if err := declcfg.WriteFS(*res.Config, filepath.Join(tmp, name), declcfg.FormatJSON); err != nil {
			t.Fatal(err)
		}
	}
	var got, want bytes.Buffer
	if _, err := Run(ctx, Options{Refs: []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "b")}, Out: &got}); err != nil {
		t.Fatal(err)
	}
	if err := declcfg.WriteJSON(*cfg, &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("merged halves differ from the example:\n%s", got.String())
	}

	var ce *compose.ConflictError
	if _, err := Run(ctx, Options{Refs: []string{example, filepath.Join(tmp, "a")}, Out: &got}); !errors.As(err, &ce) {
		t.Errorf("overlap: %v", err)
	}
	if _, err := Run(ctx, Options{Refs: []string{"-", "-"}, Out: &got}); err == nil || !strings.Contains(err.Error(), "only once") {
		t.Errorf("stdin twice: %v", err)
	}
	if _, err := Run(ctx, Options{Refs: []string{example}}); err == nil {
		t.Error("no output: no error")
	}
}
