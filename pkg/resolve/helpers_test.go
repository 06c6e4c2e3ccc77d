package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// fbc builds a catalog for tests.
type fbc struct {
	cfg declcfg.DeclarativeConfig
}

func newFBC() *fbc { return &fbc{} }

func (f *fbc) pkg(name, defaultChannel string) *fbc {
	f.cfg.Packages = append(f.cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: defaultChannel})
	return f
}

// channel adds a channel; each entry is "name", "name<replaced",
// "name<replaced|skip1,skip2" or "name<replaced|skips|range".
func (f *fbc) channel(pkg, name string, entries ...string) *fbc {
	ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name}
	for _, e := range entries {
		var ce declcfg.ChannelEntry
		n, rest, _ := strings.Cut(e, "<")
		ce.Name = n
		parts := strings.Split(rest, "|")
		ce.Replaces = parts[0]
		if len(parts) > 1 && parts[1] != "" {
			ce.Skips = strings.Split(parts[1], ",")
		}
		if len(parts) > 2 {
			ce.SkipRange = parts[2]
		}
		ch.Entries = append(ch.Entries, ce)
	}
	f.cfg.Channels = append(f.cfg.Channels, ch)
	return f
}

func (f *fbc) bundle(pkg, name, version string, props ...property.Property) *fbc {
	all := []property.Property{property.MustBuild(property.Package{PackageName: pkg, Version: version})}
	all = append(all, props...)
	f.cfg.Bundles = append(f.cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: pkg, Name: name, Image: "img/" + name, Properties: all})
	return f
}

func (f *fbc) config() *declcfg.DeclarativeConfig { return &f.cfg }

func provides(group, version, kind string) property.Property {
	return property.MustBuild(property.GVK{Group: group, Version: version, Kind: kind})
}

func requiresGVK(group, version, kind string) property.Property {
	return property.MustBuild(property.GVKRequired{Group: group, Version: version, Kind: kind})
}

func requiresPkg(pkg, rng string) property.Property {
	return property.MustBuild(property.PackageRequired{PackageName: pkg, VersionRange: rng})
}

func constraint(js string) property.Property {
	return raw(property.TypeConstraint, js)
}

func raw(typ, js string) property.Property {
	if !json.Valid([]byte(js)) {
		panic("invalid JSON: " + js)
	}
	return property.Property{Type: typ, Value: json.RawMessage(js)}
}

func deprecated() property.Property { return raw(property.TypeDeprecated, `{}`) }

func cat(name string, prio int, f *fbc) Catalog {
	return Catalog{Name: name, Priority: prio, Config: f.config()}
}

func subs(specs ...string) []Subscription {
	var out []Subscription
	for _, s := range specs {
		var sb Subscription
		rest, csv, _ := strings.Cut(s, "@")
		sb.StartingCSV = csv
		sb.Package, sb.Channel, _ = strings.Cut(rest, ":")
		out = append(out, sb)
	}
	return out
}

func installed(specs ...string) []Installed {
	var out []Installed
	for _, s := range specs {
		c, b, _ := strings.Cut(s, "/")
		out = append(out, Installed{Catalog: c, Bundle: b})
	}
	return out
}

func mustResolve(t *testing.T, cats []Catalog, req Request) *Result {
	t.Helper()
	res, err := Resolve(context.Background(), cats, req)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return res
}

// installSet renders the install list as "catalog/bundle" in order.
func installSet(res *Result) string {
	var out []string
	for _, in := range res.Install {
		out = append(out, in.Catalog+"/"+in.Bundle)
	}
	return strings.Join(out, " ")
}

// wantInstall checks a resolvable result's install list, in order.
func wantInstall(t *testing.T, res *Result, want string) {
	t.Helper()
	if !res.Resolvable {
		t.Fatalf("not resolvable, want %q\nerror: %s\nconflicts:\n%s", want, res.Error, conflictText(res))
	}
	if got := installSet(res); got != want {
		t.Fatalf("install = %q, want %q", got, want)
	}
}

func conflictText(res *Result) string {
	var b strings.Builder
	for _, c := range res.Conflicts {
		fmt.Fprintf(&b, "  [%s] %s\n", c.Kind, c.Message)
	}
	return b.String()
}

// wantConflicts checks an unsatisfiable result's explanation.
func wantConflicts(t *testing.T, res *Result, want ...string) {
	t.Helper()
	if res.Resolvable {
		t.Fatalf("resolvable (%s), want unsatisfiable", installSet(res))
	}
	if res.Error != "" {
		t.Fatalf("error %q, want conflicts", res.Error)
	}
	var got []string
	for _, c := range res.Conflicts {
		got = append(got, "["+c.Kind+"] "+c.Message)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("conflicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func wantError(t *testing.T, res *Result, substr string) {
	t.Helper()
	if res.Resolvable {
		t.Fatalf("resolvable (%s), want error %q", installSet(res), substr)
	}
	if !strings.Contains(res.Error, substr) {
		t.Fatalf("error = %q (conflicts %v), want it to contain %q", res.Error, res.Conflicts, substr)
	}
}

func declDeprecation(pkg, bundle string) declcfg.Deprecation {
	return declcfg.Deprecation{Schema: declcfg.SchemaDeprecations, Package: pkg, Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: bundle}, Message: "deprecated"},
	}}
}

func asInputError(err error, target **InputError) bool { return errors.As(err, target) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
