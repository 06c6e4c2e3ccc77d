package graph

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// pkgOf builds a one-package catalog from explicit bundles and channels.
func pkgOf(t *testing.T, name, defaultChannel string, bundles []declcfg.Bundle, channels []declcfg.Channel, deprecated ...string) *PackageGraph {
	t.Helper()
	cfg := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: defaultChannel}},
		Bundles:  bundles, Channels: channels,
	}
	if len(deprecated) > 0 {
		d := declcfg.Deprecation{Schema: declcfg.SchemaDeprecations, Package: name}
		for _, b := range deprecated {
			d.Entries = append(d.Entries, declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: b}, Message: "deprecated"})
		}
		cfg.Deprecations = append(cfg.Deprecations, d)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g.Package(name)
}

// withMax adds an olm.maxOpenShiftVersion property with the raw JSON value.
func withMax(b declcfg.Bundle, raw string) declcfg.Bundle {
	b.Properties = append(b.Properties, property.Property{Type: property.TypeMaxOpenShift, Value: json.RawMessage(raw)})
	return b
}

func onePath(t *testing.T, p *PackageGraph, in Installed, opts PathOptions) *Path {
	t.Helper()
	paths, err := p.Path(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 {
		t.Fatalf("got %d paths, want 1", len(paths))
	}
	return paths[0]
}

// Rule 1: the installed bundle is not in the catalog. replaces and skips
// match it by name, skipRange by version.
func TestInstalledNotInCatalog(t *testing.T) {
	// op.v1.0.0 and op.v1.0.5 were pruned; the entries still name them.
	// op.v1.1.5 is off the replaces chain (skipped by the head) and
	// replaces op.v1.0.0: only OLM v1 takes it.
	p := catalog(t, "op", "stable", map[string][]declcfg.ChannelEntry{"stable": {
		{Name: "op.v1.1.0", Replaces: "op.v1.0.0"},
		{Name: "op.v1.1.5", Replaces: "op.v1.0.0"},
		{Name: "op.v1.2.0", Replaces: "op.v1.1.0", Skips: []string{"op.v1.0.5", "op.v1.1.5"}},
	}})
	tests := []struct {
		name, from, bundle string
		sem                Semantics
		want               string
		reached            bool
	}{
		{name: "Success/assumed name, replaces, classic", from: "1.0.0", sem: Classic, want: "op.v1.0.0 -> op.v1.1.0 -> op.v1.2.0", reached: true},
		{name: "Success/assumed name, replaces, v1", from: "1.0.0", sem: V1, want: "op.v1.0.0 -> op.v1.1.5 -> op.v1.2.0", reached: true},
		{name: "Success/assumed name, skips, classic", from: "1.0.5", sem: Classic, want: "op.v1.0.5 -> op.v1.2.0", reached: true},
		{name: "Success/assumed name, skips, v1", from: "1.0.5", sem: V1, want: "op.v1.0.5 -> op.v1.2.0", reached: true},
		{name: "Success/given name, classic", from: "1.0.7", bundle: "op.v1.0.5", sem: Classic, want: "op.v1.0.5 -> op.v1.2.0", reached: true},
		{name: "Success/given name, v1", from: "1.0.7", bundle: "op.v1.0.5", sem: V1, want: "op.v1.0.5 -> op.v1.2.0", reached: true},
		{name: "Success/name without version, v1", bundle: "op.v1.0.0", sem: V1, want: "op.v1.0.0 -> op.v1.1.5 -> op.v1.2.0", reached: true},
		{name: "Success/unknown name matches nothing, classic", from: "1.0.5", bundle: "other.v1.0.5", sem: Classic, want: "other.v1.0.5"},
		{name: "Success/unknown name matches nothing, v1", from: "1.0.5", bundle: "other.v1.0.5", sem: V1, want: "other.v1.0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := p.ResolveInstalled(tt.from, tt.bundle)
			if err != nil {
				t.Fatal(err)
			}
			got := onePath(t, p, in, PathOptions{Semantics: tt.sem})
			if steps(got) != tt.want || got.Reached != tt.reached {
				t.Errorf("path = %s (reached %v: %s), want %s (reached %v)", steps(got), got.Reached, got.Reason, tt.want, tt.reached)
			}
		})
	}

	t.Run("Success/the assumption is reported", func(t *testing.T) {
		in, err := p.ResolveInstalled("1.0.0", "")
		if err != nil {
			t.Fatal(err)
		}
		want := `assumed installed bundle name "op.v1.0.0": no bundle of package "op" has version 1.0.0, and its bundles are named op.v<version>`
		if !in.Assumed || in.Note != want {
			t.Errorf("note = %q (assumed %v), want %q", in.Note, in.Assumed, want)
		}
		if in, _ := p.ResolveInstalled("1.1.0", ""); in.Assumed || in.Note != "" {
			t.Errorf("a catalog bundle is assumed: %+v", in)
		}
		if in, _ := p.ResolveInstalled("1.0.0", "op.v1.0.0"); in.Assumed {
			t.Errorf("a given name is assumed: %+v", in)
		}
	})

	t.Run("Success/the naming pattern of the package's bundles", func(t *testing.T) {
		etcd := seedEtcd(t)
		in, _ := etcd.ResolveInstalled("0.8.0", "")
		if in.Name != "etcdoperator.v0.8.0" || !strings.Contains(in.Note, "its bundles are named etcdoperator.v<version>") {
			t.Errorf("etcd: %+v", in)
		}
		mixed := pkgOf(t, "mix", "s", []declcfg.Bundle{bundle("mix", "mix.v1.0.0", "1.0.0"), bundle("mix", "mix-operator.v1.1.0", "1.1.0")}, nil)
		in, _ = mixed.ResolveInstalled("0.9.0", "")
		if in.Name != "mix.v0.9.0" || !strings.Contains(in.Note, "its bundles follow no single <name>.v<version> pattern, so the name is mix.v<version>") {
			t.Errorf("mixed: %+v", in)
		}
	})

	t.Run("Success/the step from a missing bundle names it", func(t *testing.T) {
		in, _ := p.ResolveInstalled("1.0.0", "")
		got := onePath(t, p, in, PathOptions{Semantics: Classic})
		if got.Steps[0].From.Label() != "op.v1.0.0 (1.0.0)" || got.Steps[0].Edges[0].Kind != KindReplaces {
			t.Errorf("first step %s, edges %+v", got.Steps[0].From.Label(), got.Steps[0].Edges)
		}
		succ, err := p.Successors(in, nil)
		if err != nil || len(succ) != 2 {
			t.Fatalf("successors = %+v, %v", succ, err)
		}
	})

	errs := []struct{ name, from, bundle, want string }{
		{"Error/bundle with another version", "1.0.0", "op.v1.1.0", `package "op": bundle "op.v1.1.0" has version 1.1.0, not 1.0.0`},
		{"Error/missing bundle needs a version", "op.v1.1.0", "op.v1.0.0", `package "op" has no bundle named "op.v1.0.0", so --from must give its version: invalid version "op.v1.1.0": Invalid character(s) found in major number "op"`},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.ResolveInstalled(tt.from, tt.bundle)
			checkErr(t, err, tt.want)
		})
	}
}

// Rule 2: OLM v1 reads build metadata as a release when ordering; skipRange
// still ignores it.
func TestBuildMetadataOrdering(t *testing.T) {
	p := pkgOf(t, "op", "stable", []declcfg.Bundle{
		bundle("op", "op.b9", "1.0.0+9"),
		bundle("op", "op.b10", "1.0.0+10"),
		bundle("op", "op.v1.0.1", "1.0.1"),
	}, []declcfg.Channel{
		channel("op", "stable",
			declcfg.ChannelEntry{Name: "op.b9"},
			declcfg.ChannelEntry{Name: "op.b10", Replaces: "op.b9"}),
		channel("op", "next",
			declcfg.ChannelEntry{Name: "op.b9"},
			declcfg.ChannelEntry{Name: "op.v1.0.1", SkipRange: ">1.0.0 <1.0.1"}),
		channel("op", "down",
			declcfg.ChannelEntry{Name: "op.b10"},
			declcfg.ChannelEntry{Name: "op.b9", Replaces: "op.b10"}),
	})
	in := resolve(t, p, "1.0.0+9")
	for _, sem := range []Semantics{Classic, V1} {
		t.Run("Success/release upgrade "+string(sem), func(t *testing.T) {
			got := onePath(t, p, in, PathOptions{Semantics: sem, Channels: []string{"stable"}})
			if steps(got) != "op.b9 -> op.b10" || !got.Reached {
				t.Errorf("path = %s (%s)", steps(got), got.Reason)
			}
		})
		t.Run("Success/skipRange ignores build metadata "+string(sem), func(t *testing.T) {
			got := onePath(t, p, in, PathOptions{Semantics: sem, Channels: []string{"next"}})
			if steps(got) != "op.b9" || got.Reached {
				t.Errorf("path = %s (%s)", steps(got), got.Reason)
			}
		})
	}
	t.Run("Success/to a release", func(t *testing.T) {
		v := semver.MustParse("1.0.0+10")
		for _, sem := range []Semantics{Classic, V1} {
			got := onePath(t, p, in, PathOptions{Semantics: sem, Channels: []string{"stable"}, To: &v})
			if steps(got) != "op.b9 -> op.b10" || !got.Reached || got.Reason != "reached version 1.0.0+10" {
				t.Errorf("%s: path = %s (%s)", sem, steps(got), got.Reason)
			}
		}
	})
	t.Run("Success/a lower release is a downgrade for v1 only", func(t *testing.T) {
		from := resolve(t, p, "op.b10")
		if got := onePath(t, p, from, PathOptions{Semantics: Classic, Channels: []string{"down"}}); steps(got) != "op.b10 -> op.b9" {
			t.Errorf("classic: %s", steps(got))
		}
		if got := onePath(t, p, from, PathOptions{Semantics: V1, Channels: []string{"down"}}); steps(got) != "op.b10" || !got.Reached {
			t.Errorf("v1: %s (%s)", steps(got), got.Reason)
		}
		succ, _ := p.Successors(from, []string{"down"})
		if len(succ) != 1 || !succ[0].Lower || succ[0].V1 || !succ[0].Classic {
			t.Errorf("successors = %+v", succ)
		}
	})
	t.Run("Success/successors mark the release upgrade", func(t *testing.T) {
		succ, _ := p.Successors(in, []string{"stable"})
		if len(succ) != 1 || succ[0].Lower || !succ[0].V1 {
			t.Errorf("successors = %+v", succ)
		}
	})
	t.Run("Success/AllPairs orders releases", func(t *testing.T) {
		tab, err := p.AllPairs(V1, []string{"stable"})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(tab.Path("op.b9", "op.b10"), " "); got != "op.b9 op.b10" {
			t.Errorf("table path = %q", got)
		}
	})
}

func TestCompareRelease(t *testing.T) {
	order := []string{"1.0.0", "1.0.0+0", "1.0.0+2", "1.0.0+9", "1.0.0+10", "1.0.0+10.1", "1.0.0+10.a", "1.0.0+a", "1.0.0+b.1", "1.0.1-rc.1", "1.0.1", "1.0.1+1"}
	nodes := make([]*Node, len(order))
	for i, s := range order {
		nodes[i] = newNode("", semver.MustParse(s), "")
	}
	for i := range nodes {
		for j := range nodes {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := compareV1(nodes[i], nodes[j]); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	// Leading zeros compare numerically; an olm.package release wins over
	// no release.
	if c := compareV1(newNode("", semver.MustParse("1.0.0+010"), ""), newNode("", semver.MustParse("1.0.0+9"), "")); c != 1 {
		t.Errorf("+010 vs +9 = %d", c)
	}
	if c := compareV1(newNode("", semver.MustParse("1.0.0"), "2"), newNode("", semver.MustParse("1.0.0"), "")); c != 1 {
		t.Errorf("release 2 vs none = %d", c)
	}
}

// Rule 3: OLM v1 ranks the installed bundle among the candidates and
// deprecated bundles last; OLM classic ignores deprecations.
func TestDeprecatedSuccessors(t *testing.T) {
	chain := func(t *testing.T, deprecated ...string) *PackageGraph {
		return catalog(t, "op", "stable", map[string][]declcfg.ChannelEntry{"stable": {
			{Name: "op.v1.0.0"},
			{Name: "op.v1.1.0", Replaces: "op.v1.0.0"},
			{Name: "op.v1.2.0", Replaces: "op.v1.1.0", SkipRange: ">=1.0.0 <1.2.0"},
		}}, deprecated...)
	}
	tests := []struct {
		name       string
		deprecated []string
		from       string
		sem        Semantics
		want       string
		reason     string
	}{
		{name: "Success/classic ignores deprecations", deprecated: []string{"op.v1.1.0", "op.v1.2.0"}, from: "1.0.0", sem: Classic,
			want: "op.v1.0.0 -> op.v1.2.0", reason: `reached the head of channel "stable"`},
		{name: "Success/v1 stays when every successor is deprecated", deprecated: []string{"op.v1.1.0", "op.v1.2.0"}, from: "1.0.0", sem: V1,
			want:   "op.v1.0.0",
			reason: "stays: the only successors are deprecated (op.v1.1.0 (1.1.0), op.v1.2.0 (1.2.0)), and OLM v1 ranks op.v1.0.0 (1.0.0), which is not, above them"},
		{name: "Success/v1 takes the successor that is not deprecated", deprecated: []string{"op.v1.2.0"}, from: "1.0.0", sem: V1,
			want:   "op.v1.0.0 -> op.v1.1.0",
			reason: "stays: the only successors are deprecated (op.v1.2.0 (1.2.0)), and OLM v1 ranks op.v1.1.0 (1.1.0), which is not, above them"},
		{name: "Success/deprecated installed bundle moves to one that is not", deprecated: []string{"op.v1.0.0", "op.v1.2.0"}, from: "1.0.0", sem: V1,
			want: "op.v1.0.0 -> op.v1.1.0"},
		{name: "Success/deprecated installed bundle moves among deprecated ones", deprecated: []string{"op.v1.0.0", "op.v1.1.0", "op.v1.2.0"}, from: "1.0.0", sem: V1,
			want: "op.v1.0.0 -> op.v1.2.0", reason: "reached the newest version of channels stable"},
		{name: "Success/classic with a deprecated installed bundle", deprecated: []string{"op.v1.0.0", "op.v1.2.0"}, from: "1.0.0", sem: Classic,
			want: "op.v1.0.0 -> op.v1.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := chain(t, tt.deprecated...)
			got := onePath(t, p, resolve(t, p, tt.from), PathOptions{Semantics: tt.sem})
			if steps(got) != tt.want {
				t.Errorf("path = %s, want %s (%s)", steps(got), tt.want, got.Reason)
			}
			if tt.reason != "" && got.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", got.Reason, tt.reason)
			}
		})
	}

	t.Run("Success/stays with a target", func(t *testing.T) {
		p := chain(t, "op.v1.1.0", "op.v1.2.0")
		got := onePath(t, p, resolve(t, p, "1.0.0"), PathOptions{Semantics: V1, To: ver("1.2.0")})
		if got.Reached || !strings.HasPrefix(got.Reason, "stays: the only successors are deprecated") {
			t.Errorf("reached %v: %s", got.Reached, got.Reason)
		}
	})
	t.Run("Success/successors say v1 stays", func(t *testing.T) {
		p := chain(t, "op.v1.1.0", "op.v1.2.0")
		in := resolve(t, p, "1.0.0")
		succ, err := p.Successors(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range succ {
			if s.V1 {
				t.Errorf("v1 picks %s", s.Node.Name)
			}
		}
		if why := V1Stays(in, succ); !strings.HasPrefix(why, "stays: the only successors are deprecated") {
			t.Errorf("V1Stays = %q", why)
		}
		p = chain(t, "op.v1.2.0")
		in = resolve(t, p, "1.0.0")
		succ, _ = p.Successors(in, nil)
		if why := V1Stays(in, succ); why != "" {
			t.Errorf("V1Stays = %q", why)
		}
	})
	t.Run("Success/AllPairs agrees", func(t *testing.T) {
		p := chain(t, "op.v1.1.0", "op.v1.2.0")
		tab, err := p.AllPairs(V1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tab.Steps("op.v1.0.0", "op.v1.2.0") != -1 {
			t.Errorf("table moves onto a deprecated bundle: %v", tab.Path("op.v1.0.0", "op.v1.2.0"))
		}
	})
}

// Rule 4: olm.maxOpenShiftVersion and cluster upgrades.
func TestParseMaxOpenShiftVersion(t *testing.T) {
	ok := map[string]string{
		`"4.16"`: "4.16", `4.17`: "4.17", `"v4.16"`: "4.16", `" 4.16 "`: "4.16", `"4"`: "4.0",
		`"4.16.0"`: "4.16", `4.1`: "4.1", `4`: "4.0", `"4.08"`: "4.8",
	}
	for raw, want := range ok {
		v, err := ParseMaxOpenShiftVersion(json.RawMessage(raw))
		if err != nil || v.String() != want {
			t.Errorf("Success/%s: %v, %v; want %s", raw, v, err, want)
		}
	}
	bad := map[string]string{
		`""`:           `value is "" (an empty string), expected a version such as "4.16"`,
		`"4.16.1"`:     `"4.16.1" must give only <major>.<minor>, such as "4.16"`,
		`"4.16.0-rc1"`: `"4.16.0-rc1" must give only <major>.<minor>, such as "4.16"`,
		`"four"`:       `"four" is not a version such as "4.16"`,
		`"4.x"`:        `"4.x" is not a version such as "4.16"`,
		`true`:         `value true is neither a string nor a number, expected a version such as "4.16"`,
		`{"v":"4.16"}`: `value {"v":"4.16"} is neither a string nor a number, expected a version such as "4.16"`,
		`null`:         `value null is neither a string nor a number, expected a version such as "4.16"`,
		`-4.1`:         `"-4.1" is not a version such as "4.16"`,
		`1e2`:          `"1e2" is not a version such as "4.16"`,
		``:             `value is missing, expected a version such as "4.16"`,
	}
	for raw, want := range bad {
		_, err := ParseMaxOpenShiftVersion(json.RawMessage(raw))
		if err == nil || err.Error() != want {
			t.Errorf("Error/%s: %v, want %s", raw, err, want)
		}
	}
}

func TestNextMinor(t *testing.T) {
	for in, want := range map[string]string{"4.18.3": "4.19", "4.18.0-rc1": "4.19", "4.18.0-rc.1": "4.19", "4.18": "4.19", "v4.18.3": "4.19", "5.0.1": "5.1"} {
		if got, err := NextMinor(in); err != nil || got.String() != want {
			t.Errorf("NextMinor(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "four", "4.x"} {
		if _, err := NextMinor(in); err == nil {
			t.Errorf("NextMinor(%q): no error", in)
		}
	}
}

// upgradeCatalog: op.v1.0.0 (max 4.17) -> op.v1.1.0 (max 4.18) ->
// op.v1.2.0 (none) on the chain; op.v2.0.0 (none) off the chain
// (skipped by the head op.v3.0.0, max 4.17), skipRange-covering 1.x.
func upgradeCatalog(t *testing.T) *PackageGraph {
	return pkgOf(t, "op", "stable", []declcfg.Bundle{
		withMax(bundle("op", "op.v1.0.0", "1.0.0"), `"4.17"`),
		withMax(bundle("op", "op.v1.1.0", "1.1.0"), `4.18`),
		bundle("op", "op.v1.2.0", "1.2.0"),
		bundle("op", "op.v2.0.0", "2.0.0"),
		withMax(bundle("op", "op.v3.0.0", "3.0.0"), `"4.17"`),
		withMax(withMax(bundle("op", "op.v0.9.0", "0.9.0"), `"4.20"`), `"4.21"`),
	}, []declcfg.Channel{
		channel("op", "stable",
			declcfg.ChannelEntry{Name: "op.v0.9.0"},
			declcfg.ChannelEntry{Name: "op.v1.0.0", Replaces: "op.v0.9.0"},
			declcfg.ChannelEntry{Name: "op.v1.1.0", Replaces: "op.v1.0.0"},
			declcfg.ChannelEntry{Name: "op.v1.2.0", Replaces: "op.v1.1.0"}),
		channel("op", "fast",
			declcfg.ChannelEntry{Name: "op.v1.0.0"},
			declcfg.ChannelEntry{Name: "op.v2.0.0", SkipRange: ">=1.0.0 <2.0.0"},
			declcfg.ChannelEntry{Name: "op.v3.0.0", Replaces: "op.v1.0.0", Skips: []string{"op.v2.0.0"}}),
	})
}

func TestCheckClusterUpgrade(t *testing.T) {
	p := upgradeCatalog(t)
	next := func(s string) OpenShiftVersion {
		v, err := NextMinor(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name, from, cluster string
		sem                 Semantics
		channels            []string
		status              ClusterStatus
		target              string
		steps               int
		remove              bool
		unreachable         string
		reason, advice      string
	}{
		{name: "Success/no maximum", from: "1.2.0", cluster: "4.18.3", sem: Classic, status: ClusterOK,
			reason: "the installed bundle sets no olm.maxOpenShiftVersion"},
		{name: "Success/maximum at the next minor", from: "1.1.0", cluster: "4.17.9", sem: Classic, status: ClusterOK,
			reason: "the installed bundle's olm.maxOpenShiftVersion 4.18 allows 4.18"},
		{name: "Success/pre-release cluster", from: "1.1.0", cluster: "4.18.0-rc1", sem: Classic, status: ClusterBlocks, target: "op.v1.2.0", steps: 1,
			reason: "the installed bundle's olm.maxOpenShiftVersion 4.18 is below the cluster's next minor version 4.19"},
		{name: "Success/nearest that does not block classic", from: "1.0.0", cluster: "4.17.2", sem: Classic, status: ClusterBlocks, target: "op.v1.1.0", steps: 1,
			advice: `upgrade to op.v1.1.0 (1.1.0) (1 step in channel "stable" under OLM classic) before upgrading the cluster`},
		{name: "Success/nearest that does not block v1", from: "1.0.0", cluster: "4.17.2", sem: V1, channels: []string{"stable"}, status: ClusterBlocks, target: "op.v1.1.0", steps: 1},
		{name: "Success/two steps", from: "1.0.0", cluster: "4.18.3", sem: Classic, status: ClusterBlocks, target: "op.v1.2.0", steps: 2,
			advice: `upgrade to op.v1.2.0 (1.2.0) (2 steps in channel "stable" under OLM classic) before upgrading the cluster`},
		{name: "Success/classic must remove", from: "1.0.0", cluster: "4.18.3", sem: Classic, channels: []string{"fast"}, status: ClusterBlocks, remove: true, unreachable: "op.v2.0.0",
			advice: `no bundle of channel "fast" that allows 4.19 is reachable under OLM classic: remove the operator before upgrading the cluster`},
		{name: "Success/v1 reaches the bundle classic cannot", from: "1.0.0", cluster: "4.18.3", sem: V1, channels: []string{"fast"}, status: ClusterBlocks, target: "op.v2.0.0", steps: 1,
			advice: `upgrade to op.v2.0.0 (2.0.0) (1 step in channel "fast" under OLM v1, with spec.version bounded to "<=2.0.0") before upgrading the cluster`},
		{name: "Success/v1 over every channel", from: "1.0.0", cluster: "4.18.3", sem: V1, status: ClusterBlocks, target: "op.v2.0.0", steps: 1},
		{name: "Success/malformed maximum blocks", from: "0.9.0", cluster: "4.10.0", sem: Classic, status: ClusterBlocks, target: "op.v1.0.0", steps: 1,
			reason: `the installed bundle's olm.maxOpenShiftVersion is malformed (2 olm.maxOpenShiftVersion properties, expected at most 1), which OLM treats as blocking`},
		{name: "Success/unknown bundle", from: "1.0.5", cluster: "4.18.3", sem: Classic, status: ClusterUnknown, unreachable: "op.v1.2.0",
			reason: "the installed bundle is not in the catalog, so its olm.maxOpenShiftVersion is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := p.ResolveInstalled(tt.from, "")
			if err != nil {
				t.Fatal(err)
			}
			chk, err := p.CheckClusterUpgrade(context.Background(), in, next(tt.cluster), tt.sem, tt.channels)
			if err != nil {
				t.Fatal(err)
			}
			if chk.Status != tt.status || chk.Remove != tt.remove {
				t.Errorf("status %s remove %v, want %s %v (%s; %s)", chk.Status, chk.Remove, tt.status, tt.remove, chk.Reason, chk.Advice)
			}
			target, n := "", 0
			if chk.Target != nil {
				target, n = chk.Target.Name, len(chk.Path.Steps)
			}
			if target != tt.target || n != tt.steps {
				t.Errorf("target %q in %d steps, want %q in %d", target, n, tt.target, tt.steps)
			}
			var un []string
			for _, u := range chk.Unreachable {
				un = append(un, u.Name)
			}
			if got := strings.Join(un, ","); got != tt.unreachable {
				t.Errorf("unreachable = %s, want %s", got, tt.unreachable)
			}
			if tt.reason != "" && chk.Reason != tt.reason {
				t.Errorf("reason = %q\nwant     %q", chk.Reason, tt.reason)
			}
			if tt.advice != "" && chk.Advice != tt.advice {
				t.Errorf("advice = %q\nwant     %q", chk.Advice, tt.advice)
			}
		})
	}
	t.Run("Error/classic follows one channel", func(t *testing.T) {
		_, err := p.CheckClusterUpgrade(context.Background(), resolve(t, p, "1.0.0"), next("4.18.0"), Classic, []string{"stable", "fast"})
		checkErr(t, err, `package "op": OLM classic follows one channel, got 2 (stable, fast)`)
	})
}

// BenchmarkCheckClusterUpgrade2000: in the 2,000-entry benchmark channel,
// every bundle but the newest 100 blocks 4.19; the check runs from the
// oldest bundle (the most candidates and the longest walks).
func BenchmarkCheckClusterUpgrade2000(b *testing.B) {
	p := benchChannel(b, 2000)
	max := OpenShiftVersion{Major: 4, Minor: 18}
	for i, e := range p.Channel("stable").Entries {
		if i < 1900 {
			p.Nodes[e.Name].MaxOpenShift = &max
		}
	}
	in := installedFrom(p.Nodes["op.v1.0.0"])
	for _, sem := range []Semantics{Classic, V1} {
		b.Run(string(sem), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				chk, err := p.CheckClusterUpgrade(context.Background(), in, OpenShiftVersion{Major: 4, Minor: 19}, sem, nil)
				if err != nil || chk.Target == nil {
					b.Fatalf("%v %+v", err, chk)
				}
			}
		})
	}
}
