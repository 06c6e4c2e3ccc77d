package diff

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/declcfg"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	example := filepath.Join("..", "..", "..", "examples", "catalog")
	cfg, err := compose.Load(ctx, example, compose.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// NEW: the example with web-console 2.1.0 pulled, written as a file.
	res, err := compose.Filter(cfg, compose.FilterOptions{Packages: []compose.PackageSelection{{Name: "web-console", MaxVersion: "2.0.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "new")
	if err := declcfg.WriteFS(*res.Config, dir, declcfg.FormatYAML); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Options{Old: example, New: filepath.Join(dir, "web-console", "catalog.yaml"), Fragment: true, FailOn: compose.FailOnKinds})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range rep.Failures {
		kinds = append(kinds, string(f.Kind))
	}
	if strings.Join(kinds, ",") != "removed,heads,paths,pruned" {
		t.Errorf("failures %+v", rep.Failures)
	}
	if _, err := Run(ctx, Options{Old: "-", New: "-"}); err == nil {
		t.Error("both on stdin: no error")
	}
	if _, err := Run(ctx, Options{Old: example, New: example, Semantics: "v0"}); err == nil {
		t.Error("bad semantics: no error")
	}
	if _, err := Run(ctx, Options{Old: "./missing", New: example}); err == nil || !strings.Contains(err.Error(), "old catalog: stat ./missing") {
		t.Errorf("missing: %v", err)
	}
}
