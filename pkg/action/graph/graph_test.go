package graph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/action"
)

const catalogYAML = `schema: olm.package
name: example
defaultChannel: stable
---
schema: olm.channel
package: example
name: stable
entries:
- name: example.v3.0.0
  skips: [example.v2.0.0]
- name: example.v2.0.0
  skipRange: '>=1.0.0 <2.0.0'
---
schema: olm.bundle
package: example
name: example.v2.0.0
image: quay.io/example/example:v2.0.0
properties:
- {type: olm.package, value: {packageName: example, version: 2.0.0}}
---
schema: olm.bundle
package: example
name: example.v3.0.0
image: quay.io/example/example:v3.0.0
properties:
- {type: olm.package, value: {packageName: example, version: 3.0.0}}
`

func writeCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(catalogYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPath(t *testing.T) {
	opts := Options{Refs: []string{writeCatalog(t)}}
	ctx := context.Background()
	tests := []struct {
		name      string
		opts      PathOptions
		wantUsage string
		reached   bool
		wantText  string
	}{
		{name: "Success/ClassicToHead", opts: PathOptions{Options: opts, From: "2.0.0"}, reached: true,
			wantText: "Package \"example\", channel stable, classic semantics, from example.v2.0.0 (2.0.0):\n  1. example.v2.0.0 (2.0.0) -> example.v3.0.0 (3.0.0)  (skips)\n"},
		{name: "Success/V1ToNewest", opts: PathOptions{Options: opts, From: "1.0.0", To: "3.0.0", Semantics: "v1"}, reached: true},
		{name: "Success/ClassicNotReached", opts: PathOptions{Options: opts, From: "1.0.0", To: "2.0.0"}, reached: false},
		{name: "Error/ToAndVersion", opts: PathOptions{Options: opts, From: "1.0.0", To: "2.0.0", Version: "<3"}, wantUsage: "--to and --version cannot be used together"},
		{name: "Error/Semantics", opts: PathOptions{Options: opts, From: "1.0.0", Semantics: "v2"}, wantUsage: "invalid --semantics"},
		{name: "Error/Version", opts: PathOptions{Options: opts, From: "1.0.0", Version: ">=foo"}, wantUsage: "invalid --version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Path(ctx, tt.opts)
			if tt.wantUsage != "" {
				var ue *action.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantUsage) {
					t.Fatalf("err = %v, want a usage error %q", err, tt.wantUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Reached() != tt.reached {
				t.Errorf("reached = %v, want %v", res.Reached(), tt.reached)
			}
			var buf bytes.Buffer
			if err := res.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(buf.String(), tt.wantText) {
				t.Errorf("text:\n%s\nwant prefix:\n%s", buf.String(), tt.wantText)
			}
			if j := res.JSON(); len(j.Paths) != len(res.Paths) || j.Paths[0].Reached != res.Paths[0].Reached {
				t.Errorf("json = %+v", j)
			}
		})
	}
}

func TestSuccessors(t *testing.T) {
	res, err := Successors(context.Background(), SuccessorsOptions{Options: Options{Refs: []string{writeCatalog(t)}}, From: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	j := res.JSON()
	if j.Package != "example" || j.From.Version != "1.0.0" || len(j.Successors) != 1 {
		t.Fatalf("json = %+v", j)
	}
	s := j.Successors[0]
	// example.v2.0.0 is skipped by the head, so it is off the replaces chain.
	if s.Bundle != "example.v2.0.0" || s.ChainIndex != nil || !s.V1 || s.Classic || s.Edges[0].Range != ">=1.0.0 <2.0.0" {
		t.Errorf("successor = %+v (chain %v)", s, s.ChainIndex)
	}
}

func TestOnePackage(t *testing.T) {
	dir := writeCatalog(t)
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(strings.ReplaceAll(catalogYAML, "example", "other")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Successors(context.Background(), SuccessorsOptions{Options: Options{Refs: []string{dir}}, From: "1.0.0"})
	var ue *action.UsageError
	if !errors.As(err, &ue) || err.Error() != "the catalog has 2 packages; choose one with --package (packages: example, other)" {
		t.Errorf("err = %v", err)
	}
}
