package semver

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/template/templatetest"
)

// summary writes channels one per line: "name: entry[<replaces][!skips,...] ...".
func summary(cfg *declcfg.DeclarativeConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "default %s\n", cfg.Packages[0].DefaultChannel)
	for _, c := range cfg.Channels {
		fmt.Fprintf(&b, "%s:", c.Name)
		for _, e := range c.Entries {
			fmt.Fprintf(&b, " %s", strings.TrimPrefix(e.Name, "foo.v"))
			if e.Replaces != "" {
				fmt.Fprintf(&b, "<%s", strings.TrimPrefix(e.Replaces, "foo.v"))
			}
			if len(e.Skips) > 0 {
				fmt.Fprintf(&b, "!%s", strings.ReplaceAll(strings.Join(e.Skips, ","), "foo.v", ""))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func list(name string, versions ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n  bundles:\n", name)
	for _, v := range versions {
		fmt.Fprintf(&b, "  - image: example.com/foo:%s\n", v)
	}
	return b.String()
}

func renderSummary(t *testing.T, src string) string {
	t.Helper()
	tp, err := Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r templatetest.Renderer
	cfg, err := tp.Render(context.Background(), r.Render)
	if err != nil {
		t.Fatal(err)
	}
	return summary(cfg)
}

func TestGenerate(t *testing.T) {
	candidate := list("candidate", "0.1.0", "0.1.1", "0.2.0", "0.2.1", "0.3.0", "1.0.0", "1.1.0", "2.0.0-alpha", "2.0.0")
	stable := list("stable", "0.2.1", "1.0.0", "1.1.0")
	for _, tc := range []struct{ name, head, want string }{
		{"minor by default", "", `default stable-v1.1
candidate-v0.1: 0.1.0 0.1.1!0.1.0
candidate-v0.2: 0.2.0 0.2.1<0.1.1!0.1.0,0.2.0
candidate-v0.3: 0.3.0<0.2.1!0.1.0,0.1.1,0.2.0
candidate-v1.0: 1.0.0
candidate-v1.1: 1.1.0<1.0.0
candidate-v2.0: 2.0.0-alpha 2.0.0!2.0.0-alpha
stable-v0.2: 0.2.1
stable-v1.0: 1.0.0
stable-v1.1: 1.1.0<1.0.0
`},
		{"major", "generateMajorChannels: true\n", `default stable-v1
candidate-v0: 0.1.0 0.1.1!0.1.0 0.2.0 0.2.1<0.1.1!0.1.0,0.2.0 0.3.0<0.2.1!0.1.0,0.1.1,0.2.0
candidate-v1: 1.0.0 1.1.0<1.0.0
candidate-v2: 2.0.0-alpha 2.0.0!2.0.0-alpha
stable-v0: 0.2.1
stable-v1: 1.0.0 1.1.0<1.0.0
`},
		{"both, minor preferred", "generateMajorChannels: true\ngenerateMinorChannels: true\n", `default stable-v1.1
candidate-v0: 0.1.0 0.1.1!0.1.0 0.2.0 0.2.1<0.1.1!0.1.0,0.2.0 0.3.0<0.2.1!0.1.0,0.1.1,0.2.0
candidate-v0.1: 0.1.0 0.1.1!0.1.0
candidate-v0.2: 0.2.0 0.2.1<0.1.1!0.1.0,0.2.0
candidate-v0.3: 0.3.0<0.2.1!0.1.0,0.1.1,0.2.0
candidate-v1: 1.0.0 1.1.0<1.0.0
candidate-v1.0: 1.0.0
candidate-v1.1: 1.1.0<1.0.0
candidate-v2: 2.0.0-alpha 2.0.0!2.0.0-alpha
candidate-v2.0: 2.0.0-alpha 2.0.0!2.0.0-alpha
stable-v0: 0.2.1
stable-v0.2: 0.2.1
stable-v1: 1.0.0 1.1.0<1.0.0
stable-v1.0: 1.0.0
stable-v1.1: 1.1.0<1.0.0
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderSummary(t, "schema: olm.semver\n"+tc.head+candidate+stable)
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestDefaultChannelTies: when one bundle creates both the major and the
// minor channel, the preference decides.
func TestDefaultChannelTies(t *testing.T) {
	for pref, want := range map[string]string{"major": "stable-v1", "minor": "stable-v1.0"} {
		src := fmt.Sprintf("schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ndefaultChannelTypePreference: %s\n%s", pref, list("stable", "1.0.0", "1.0.1"))
		if got := strings.SplitN(renderSummary(t, src), "\n", 2)[0]; got != "default "+want {
			t.Errorf("%s: %s, want %s", pref, got, want)
		}
	}
	// A higher archetype wins over a higher version.
	src := "schema: olm.semver\n" + list("candidate", "3.0.0") + list("fast", "1.0.0")
	if got := strings.SplitN(renderSummary(t, src), "\n", 2)[0]; got != "default fast-v1.0" {
		t.Errorf("archetype: %s", got)
	}
}

// TestDeterministic: the order of the lists does not change the output
// (upstream's varies with Go map order in places).
func TestDeterministic(t *testing.T) {
	versions := []string{"0.1.0", "0.1.1", "0.1.2", "0.2.0", "0.10.0", "0.9.0", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0", "3.0.0+meta", "10.0.0"}
	render := func(vs []string) string {
		src := "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n" + list("candidate", vs...) + list("stable", "0.1.0", "1.0.1", "0.2.0")
		tp, err := Parse([]byte(src), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var r templatetest.Renderer
		cfg, err := tp.Render(context.Background(), r.Render)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := declcfg.WriteJSON(*cfg, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := render(versions)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		vs := append([]string(nil), versions...)
		rng.Shuffle(len(vs), func(a, b int) { vs[a], vs[b] = vs[b], vs[a] })
		if got := render(vs); got != first {
			t.Fatalf("order %v changes the output", vs)
		}
	}
}

func TestPackageMetadata(t *testing.T) {
	tp, err := Parse([]byte("schema: olm.semver\n"+list("stable", "1.0.0", "1.1.0")), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r templatetest.Renderer
	cfg, err := tp.Render(context.Background(), r.Render)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Packages[0]
	if p.Name != "foo" || p.DefaultChannel != "stable-v1.1" || p.Description != "about foo.v1.1.0" || p.Icon == nil || string(p.Icon.Data) != "icon" || p.Icon.MediaType != "image/png" {
		t.Errorf("package %+v", p)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"schema: olm.semver\nstable:\n  bundles:\n  - image: a\n    name: x\n", `t.yaml:5: unknown field "name"`},
		{"schema: olm.semver\ngenerateMajorChannels: maybe\n", "t.yaml:2: generateMajorChannels: cannot use a string here, want a bool"},
		{"schema: olm.semver\nschema: olm.semver\n", `t.yaml:1: error converting YAML to JSON: yaml: unmarshal errors:`},
		{"schema: olm.template.basic\n", `t.yaml:1: unknown schema "olm.template.basic", should be "olm.semver"`},
		{"schema: olm.semver\ndefaultChannelTypePreference: major\n", "t.yaml:2: schema attribute mismatch: DefaultChannelTypePreference set to 'major'"},
		{"schema: olm.semver\ngenerateMajorChannels: true\ndefaultChannelTypePreference: minor\n", "t.yaml:3: schema attribute mismatch: DefaultChannelTypePreference set to 'minor'"},
		{"schema: olm.semver\ndefaultChannelTypePreference: patch\n", `t.yaml:2: unknown DefaultChannelTypePreference: "patch"`},
		{"- a\n", "t.yaml:1: a template is an object, not a array"},
	} {
		_, err := Parse([]byte(tc.in), "t.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"schema: olm.semver\n", "t.yaml:1: no bundles specified or no bundles could be rendered"},
		{"schema: olm.semver\n" + list("fast", "1.0.0", "1.0.0"), `t.yaml:5: duplicate bundle name "foo.v1.0.0" in fast (image example.com/foo:1.0.0)`},
		{"schema: olm.semver\n" + list("fast", "1.0.0") + "  - image: example.com/missing:1\n", `t.yaml:5: bundle image "example.com/missing:1": render reference "example.com/missing:1": manifest unknown`},
		{"schema: olm.semver\n" + list("fast", "1.0.0") + "  - image: example.com/bar:1.0.0\n", `t.yaml:5: bundle "bar.v1.0.0" (image example.com/bar:1.0.0) belongs to package "bar", not to this package: "foo"`},
		{"schema: olm.semver\n" + list("fast", "1.0.0", "1.0"), `t.yaml:5: bundle "foo.v1.0" (image example.com/foo:1.0) has invalid version "1.0": No Major.Minor.Patch elements found`},
		{"schema: olm.semver\n" + list("fast", "1.0.0+a", "1.0.0+b"), `t.yaml:5: encountered bundle versions which differ only by build metadata`},
		{"schema: olm.semver\n" + list("fast", "1.0.0_1", "1.0.0_2"), `t.yaml:5: bundles "foo-v1.0.0-2" and "foo-v1.0.0-1" have the same version "1.0.0", which cannot be ordered`},
	} {
		tp, err := Parse([]byte(tc.in), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var r templatetest.Renderer
		_, err = tp.Render(context.Background(), r.Render)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\ngot  %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("schema: olm.semver\ngenerateMajorChannels: true\n" + list("candidate", "0.1.0", "1.0.0") + list("stable", "1.0.0")))
	f.Add([]byte(`{"Schema":"olm.semver","Stable":{"Bundles":[{"Image":"example.com/foo:1.2.3-rc.1+b"}]}}`))
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
		if len(cfg.Packages) != 1 {
			t.Fatalf("%d packages", len(cfg.Packages))
		}
		_ = declcfg.WriteJSON(*cfg, &bytes.Buffer{})
	})
}
