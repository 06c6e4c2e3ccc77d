package filter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/compose"
)

var example = filepath.Join("..", "..", "..", "examples", "catalog")

func TestRun(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	res, err := Run(ctx, Options{Catalog: example, Packages: []compose.PackageSelection{{Name: "queue-operator", HeadsOnly: true}}, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bundles != 1 || !strings.Contains(out.String(), `"name": "queue-operator.v0.3.0"`) {
		t.Errorf("result %+v\n%s", res, out.String())
	}

	cfgFile := filepath.Join(t.TempDir(), "isc.yaml")
	if err := os.WriteFile(cfgFile, []byte("packages:\n- name: web-console\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := Run(ctx, Options{Catalog: example, ConfigFile: cfgFile, OutputDir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "web-console", "catalog.json")); err != nil {
		t.Error(err)
	}
	var ne *compose.NotEmptyError
	if _, err := Run(ctx, Options{Catalog: example, ConfigFile: cfgFile, OutputDir: dir}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second write: %v (%T)", err, ne)
	}
	if _, err := Run(ctx, Options{Catalog: example, ConfigFile: cfgFile, Packages: []compose.PackageSelection{{Name: "x"}}, Out: &out}); err == nil {
		t.Error("config and packages: no error")
	}
	if _, err := Run(ctx, Options{Catalog: example, ConfigFile: filepath.Join(dir, "nope.yaml"), Out: &out}); err == nil {
		t.Error("missing config: no error")
	}
}

func TestParsePackageArg(t *testing.T) {
	for in, want := range map[string]compose.PackageSelection{
		"etcd":              {Name: "etcd"},
		"etcd:alpha":        {Name: "etcd", Channels: []compose.ChannelSelection{{Name: "alpha"}}},
		"etcd:alpha,stable": {Name: "etcd", Channels: []compose.ChannelSelection{{Name: "alpha"}, {Name: "stable"}}},
	} {
		got, err := ParsePackageArg(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{":alpha", "etcd:", "etcd:a,,b"} {
		if _, err := ParsePackageArg(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	got := MergeSelections([]compose.PackageSelection{
		{Name: "a", Channels: []compose.ChannelSelection{{Name: "x"}}},
		{Name: "b"},
		{Name: "a", Channels: []compose.ChannelSelection{{Name: "y"}, {Name: "x"}}},
		{Name: "b", Channels: []compose.ChannelSelection{{Name: "z"}}},
	})
	want := []compose.PackageSelection{
		{Name: "a", Channels: []compose.ChannelSelection{{Name: "x"}, {Name: "y"}}},
		{Name: "b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v", got)
	}
}
