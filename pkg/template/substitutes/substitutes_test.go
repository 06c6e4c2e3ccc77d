package substitutes

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/template"
	"github.com/opmkit/opm/pkg/template/templatetest"
)

func bundle(name, version string) string {
	return fmt.Sprintf(`- {schema: olm.bundle, name: foo.v%[1]s, package: foo, image: example.com/foo:%[2]s, properties: [{type: olm.package, value: {packageName: foo, version: %[2]s}}]}`, name, version) + "\n"
}

const entries = `entries:
- {schema: olm.package, name: foo, defaultChannel: stable}
- schema: olm.channel
  package: foo
  name: stable
  entries:
  - {name: foo.v1.0.0}
  - {name: foo.v1.0.1, replaces: foo.v1.0.0, skipRange: <1.0.1}
  - {name: foo.v1.1.0, replaces: foo.v1.0.1, skips: [foo.v1.0.0]}
- schema: olm.channel
  package: foo
  name: fast
  entries:
  - {name: foo.v1.0.1}
  - {name: foo.v1.1.0, skips: [foo.v1.0.1]}
`

func channels(cfg *declcfg.DeclarativeConfig) string {
	var b strings.Builder
	for _, c := range cfg.Channels {
		fmt.Fprintf(&b, "%s:", c.Name)
		for _, e := range c.Entries {
			fmt.Fprintf(&b, " %s", e.Name)
			if e.Replaces != "" {
				fmt.Fprintf(&b, "<%s", e.Replaces)
			}
			if len(e.Skips) > 0 {
				fmt.Fprintf(&b, "!%s", strings.Join(e.Skips, ","))
			}
			if e.SkipRange != "" {
				fmt.Fprintf(&b, "~%s", e.SkipRange)
			}
		}
		b.WriteString("\n")
	}
	return strings.ReplaceAll(b.String(), "foo.v", "")
}

// TestChained substitutes 1.0.1 by a release, then 1.1.0 by a release, then
// that release by a newer one.
func TestChained(t *testing.T) {
	src := "schema: olm.template.substitutes\n" + entries + bundle("1.0.0", "1.0.0") + bundle("1.0.1", "1.0.1") + bundle("1.1.0", "1.1.0") + `substitutions:
- {name: example.com/foo:1.0.1_1, base: foo.v1.0.1}
- {name: example.com/foo:1.1.0_2, base: foo.v1.1.0}
- {name: example.com/foo:1.1.0_3, base: foo-v1.1.0-2}
`
	tp, err := Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r templatetest.Renderer
	cfg, err := tp.Render(context.Background(), r.Render)
	if err != nil {
		t.Fatal(err)
	}
	want := `stable: 1.0.0 1.0.1 1.1.0 foo-v1.0.1-1<1.0.0!1.0.1~<1.0.1 foo-v1.1.0-2 foo-v1.1.0-3<foo-v1.0.1-1!1.0.0,1.0.1,1.1.0,foo-v1.1.0-2
fast: 1.0.1 1.1.0 foo-v1.0.1-1!1.0.1 foo-v1.1.0-2 foo-v1.1.0-3!foo-v1.0.1-1,1.1.0,foo-v1.1.0-2
`
	if got := channels(cfg); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(cfg.Bundles) != 6 {
		t.Errorf("%d bundles, want 6", len(cfg.Bundles))
	}
	if len(r.Calls) != 1 || len(r.Calls[0]) != 3 {
		t.Errorf("calls %v", r.Calls)
	}
}

func TestErrors(t *testing.T) {
	base := "schema: olm.template.substitutes\n" + entries + bundle("1.0.0", "1.0.0") + bundle("1.0.1", "1.0.1") + bundle("1.1.0", "1.1.0") + "substitutions:\n"
	for _, tc := range []struct{ subs, want string }{
		{"- {name: example.com/foo:1.0.1_1, base: foo.v1.0.1}\n- {name: example.com/foo:1.1.0_1, base: foo.v1.0.1}\n", `t.yaml:22: cannot reuse the same substitution base "foo.v1.0.1"`},
		{"- {name: example.com/foo:1.0.1_1, base: foo.v1.0.1}\n- {name: example.com/foo:1.0.1_1, base: foo.v1.0.0}\n", `t.yaml:22: cannot reuse the same substitution "example.com/foo:1.0.1_1" for different bases ("foo.v1.0.1" and "foo.v1.0.0")`},
		{"- {name: '', base: foo.v1.0.1}\n", `t.yaml:21: error processing substitution "foo.v1.0.1" -> "": substitution name cannot be empty`},
		{"- {name: x, base: ''}\n", `t.yaml:21: error processing substitution "" -> "x": substitution base cannot be empty`},
		{"- {name: x, base: x}\n", `substitution name and base cannot be the same`},
		{"- {name: example.com/foo:1.0.1_1, base: foo.v9}\n", `base bundle "foo.v9" does not exist in catalog`},
		{"- {name: example.com/foo:1.0.0_9, base: foo.v1.0.1}\n", `base bundle "foo.v1.0.1" is not less than substitute bundle "example.com/foo:1.0.0_9"`},
		{"- {name: example.com/missing:1, base: foo.v1.0.1}\n", `failed to render bundle image reference "example.com/missing:1": render reference "example.com/missing:1": manifest unknown`},
	} {
		tp, err := Parse([]byte(base+tc.subs), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var r templatetest.Renderer
		_, err = tp.Render(context.Background(), r.Render)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\ngot  %v\nwant %s", tc.subs, err, tc.want)
		}
	}
	tp, err := Parse([]byte("schema: olm.template.substitutes\nentries:\n- {schema: olm.channel, package: foo, name: x, entries: [{name: a}]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Render(context.Background(), (&templatetest.Renderer{}).Render); err == nil || !strings.HasPrefix(err.Error(), "t.yaml:2: entries are not valid FBC:") {
		t.Errorf("invalid entries: %v", err)
	}
}

func TestVersionRelease(t *testing.T) {
	pkg := func(v, rel string) []property.Property {
		return []property.Property{property.MustBuild(property.Package{PackageName: "p", Version: v, Release: rel})}
	}
	meta := property.Property{Type: property.TypeCSVMetadata, Value: []byte(`{"annotations":{"olm.substitutesFor":"p.v1.0.0"}}`)}
	for _, tc := range []struct {
		b    declcfg.Bundle
		want string
	}{
		{declcfg.Bundle{Properties: pkg("1.0.0", "")}, "1.0.0 "},
		{declcfg.Bundle{Properties: pkg("1.0.0", "2.a")}, "1.0.0 2.a"},
		// Build metadata without the annotation stays in the version.
		{declcfg.Bundle{Properties: pkg("1.0.0+3", "")}, "1.0.0+3 "},
		// The legacy encoding, from olm.csv.metadata or from the CSV.
		{declcfg.Bundle{Properties: append(pkg("1.0.0+3.x", ""), meta)}, "1.0.0 3.x"},
		{declcfg.Bundle{Properties: pkg("1.0.0+3", ""), CsvJSON: `{"metadata":{"annotations":{"olm.substitutesFor":"p.v1.0.0"}}}`}, "1.0.0 3"},
		// A release wins over build metadata.
		{declcfg.Bundle{Properties: append(pkg("1.0.0+3", "1"), meta)}, "1.0.0+3 1"},
	} {
		v, r, err := VersionRelease(&tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String() + " " + r.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestFromFBC(t *testing.T) {
	c, err := FromFBC([]byte(""), "empty")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.write(&b); err != nil {
		t.Fatal(err)
	}
	if want := "{\n    \"schema\": \"olm.template.substitutes\",\n    \"entries\": null,\n    \"substitutions\": []\n}\n"; b.String() != want {
		t.Errorf("got %q", b.String())
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("schema: olm.template.substitutes\n" + entries + bundle("1.0.1", "1.0.1") + "substitutions:\n- {name: example.com/foo:1.0.1_1, base: foo.v1.0.1}\n"))
	f.Add([]byte(`{"schema":"olm.template.substitutes","entries":[],"substitutions":[{"name":"a","base":"b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		cfg, err := tp.Render(context.Background(), (&templatetest.Renderer{}).Render)
		if err != nil {
			return
		}
		_ = declcfg.WriteJSON(*cfg, &bytes.Buffer{})
	})
}

func (c *Converted) write(b *bytes.Buffer) error { return template.WriteConverted(b, c, "json") }
