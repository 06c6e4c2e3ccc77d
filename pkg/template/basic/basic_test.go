package basic

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/template"
	"github.com/opmkit/opm/pkg/template/templatetest"
)

const tmpl = `schema: olm.template.basic
entries:
- schema: olm.package
  name: foo
  defaultChannel: stable
- schema: olm.bundle
  image: example.com/foo:1.1.0
- schema: olm.channel
  package: foo
  name: stable
  entries:
  - name: foo.v1.0.0
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
- schema: olm.bundle
  name: ignored
  image: example.com/foo:1.0.0
- schema: olm.bundle
  image: example.com/foo:1.1.0
- schema: example.com/custom
  z: 1
  a: [x]
`

func TestRender(t *testing.T) {
	tp, err := Parse([]byte(tmpl), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r templatetest.Renderer
	cfg, err := tp.Render(context.Background(), r.Render)
	if err != nil {
		t.Fatal(err)
	}
	// One call for every image, in order, duplicates included.
	if got := strings.Join(r.Calls[0], " "); len(r.Calls) != 1 || got != "example.com/foo:1.1.0 example.com/foo:1.0.0 example.com/foo:1.1.0" {
		t.Errorf("calls %v", r.Calls)
	}
	var names []string
	for _, b := range cfg.Bundles {
		names = append(names, b.Name)
	}
	if got := strings.Join(names, " "); got != "foo.v1.1.0 foo.v1.0.0 foo.v1.1.0" {
		t.Errorf("bundles %s", got)
	}
	if len(cfg.Packages) != 1 || len(cfg.Channels) != 1 || len(cfg.Others) != 1 || string(cfg.Others[0].Blob) != `{"a":["x"],"schema":"example.com/custom","z":1}` {
		t.Errorf("other blobs: %+v", cfg)
	}
	if cfg.Channels[0].Pos.Line != 8 {
		t.Errorf("channel position %v, want line 8", cfg.Channels[0].Pos)
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"missing image", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/foo:1.0.0\n- schema: olm.bundle\n  image: example.com/missing:1\n",
			`t.yaml:5: olm.bundle "example.com/missing:1": render reference "example.com/missing:1": manifest unknown`},
		{"not a bundle", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/catalog:1\n",
			`t.yaml:3: olm.bundle "example.com/catalog:1": render reference "example.com/catalog:1": cannot render declarative config image: not allowed (a template bundle must name a bundle image)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := Parse([]byte(tc.in), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var r templatetest.Renderer
			_, err = tp.Render(context.Background(), r.Render)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			var te *template.Error
			if !errors.As(err, &te) || te.File != "t.yaml" {
				t.Errorf("not a positioned error: %#v", err)
			}
		})
	}

	// Full bundles are refused before any image is rendered.
	tp, err := Parse([]byte("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/foo:1.0.0\n- schema: olm.bundle\n  image: example.com/foo:1.1.0\n  package: foo\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r templatetest.Renderer
	if _, err := tp.Render(context.Background(), r.Render); err == nil || !strings.HasPrefix(err.Error(), `t.yaml:5: olm.bundle "example.com/foo:1.1.0": unexpected fields present in basic template bundle`) {
		t.Errorf("got %v", err)
	}
	if len(r.Calls) != 0 {
		t.Errorf("images rendered before the check: %v", r.Calls)
	}

	// A renderer that fails as a whole.
	tp, _ = Parse([]byte(tmpl), "t.yaml")
	boom := errors.New("boom")
	if _, err := tp.Render(context.Background(), func(context.Context, []string) ([]render.Rendered, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("got %v", err)
	}
}

func TestFromFBC(t *testing.T) {
	in := `{"schema":"olm.package","name":"foo"}
{"schema":"olm.bundle","name":"foo.v1","package":"foo","image":"example.com/foo:1","properties":[]}
{"schema":"x","b":"<&>","a":1.50}
`
	c, err := FromFBC([]byte(in), "in.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := template.WriteConverted(&b, c, "json"); err != nil {
		t.Fatal(err)
	}
	want := `{
    "schema": "olm.template.basic",
    "entries": [
        {
            "name": "foo",
            "schema": "olm.package"
        },
        {
            "schema": "olm.bundle",
            "image": "example.com/foo:1"
        },
        {
            "a": 1.5,
            "b": "\u003c\u0026\u003e",
            "schema": "x"
        }
    ]
}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if _, err := FromFBC([]byte(`{"schema":"olm.bundle","properties":"x"}`), "in.json"); err == nil || !strings.Contains(err.Error(), "in.json:1:1: parse bundle:") {
		t.Errorf("bad bundle: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(tmpl))
	f.Add([]byte(`{"schema":"olm.template.basic","entries":[{"schema":"olm.bundle","image":"example.com/foo:1.0.0"},null]}`))
	f.Add([]byte("schema: olm.template.basic\nentries:\n- schema: olm.channel\n  entries: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		var r templatetest.Renderer
		cfg, err := tp.Render(context.Background(), r.Render)
		if err != nil {
			return
		}
		_ = declcfg.WriteJSON(*cfg, &bytes.Buffer{})
	})
}

func FuzzFromFBC(f *testing.F) {
	f.Add([]byte("schema: olm.package\nname: foo\n---\nschema: olm.bundle\nimage: x\n"))
	f.Add([]byte(`{"schema":"olm.bundle","image":"x"}{"schema":"y"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := FromFBC(data, "fuzz")
		if err != nil {
			return
		}
		for _, format := range []string{"json", "yaml"} {
			err := template.WriteConverted(&bytes.Buffer{}, c, format)
			// YAML cannot hold every text JSON can (control characters
			// such as U+007F): that is an error upstream too, and it says
			// what to do.
			if err != nil && (format != "yaml" || declcfg.YAMLHint(err) == "") {
				t.Fatalf("%s: %v", format, err)
			}
		}
	})
}
