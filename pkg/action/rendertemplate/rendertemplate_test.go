package rendertemplate

import (
	"context"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/template"
	"github.com/opmkit/opm/pkg/template/templatetest"
)

func TestRun(t *testing.T) {
	var r templatetest.Renderer
	for _, tc := range []struct {
		typ      template.Type
		in, want string
	}{
		{"", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/foo:1.0.0\n", "basic"},
		{"", "schema: olm.semver\nstable:\n  bundles:\n  - image: example.com/foo:1.0.0\n", "semver"},
		{"", `{"schema": "olm.template.substitutes", "entries": []}`, "substitutes"},
		{template.Basic, "schema: olm.template.basic\n", "basic"},
	} {
		res, err := Run(context.Background(), Options{Type: tc.typ, Input: strings.NewReader(tc.in), Name: "t.yaml", Renderer: r.Render})
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if string(res.Type) != tc.want {
			t.Errorf("%q: type %s, want %s", tc.in, res.Type, tc.want)
		}
	}
	if len(r.Calls) != 2 {
		t.Errorf("renderer calls %v", r.Calls)
	}
}

func TestRunErrors(t *testing.T) {
	var r templatetest.Renderer
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Input: strings.NewReader(""), Name: "t.yaml"}, "auto-detecting template type: t.yaml: empty input: no YAML or JSON document"},
		{Options{Type: template.Basic, Input: strings.NewReader("")}, "rendering template: <stdin>: empty input: no YAML or JSON document"},
		{Options{Input: strings.NewReader("schema: x"), Name: "t.yaml"}, "auto-detecting template type: t.yaml:1: unknown template schema: x"},
		{Options{Type: template.Semver, Input: strings.NewReader("schema: olm.semver"), Name: "t.yaml"}, "rendering template: t.yaml:1: no bundles specified or no bundles could be rendered"},
		{Options{Type: "composite", Input: strings.NewReader("schema: x"), Name: "t.yaml"}, `rendering template: invalid template type "composite", must be one of: [basic semver substitutes]`},
		{Options{Input: strings.NewReader("schema: x"), MigrationLevel: "bogus"}, `unknown migration level "bogus"`},
	} {
		tc.opts.Renderer = r.Render
		_, err := Run(context.Background(), tc.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	if len(r.Calls) != 0 {
		t.Errorf("renderer called: %v", r.Calls)
	}
}
