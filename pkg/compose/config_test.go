package compose

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFilterConfig(t *testing.T) {
	const isc = `kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
storageConfig:
  local:
    path: /tmp/x
mirror:
  platform:
    channels:
    - name: stable-4.18
  operators:
  - catalog: registry.example.com/other:v1
    packages:
    - name: nothing
  - catalog: registry.example.com/index:v4.18
    packages:
    - name: acm
      defaultChannel: release-2.13
      channels:
      - name: release-2.13
        minVersion: 2.13.1
      - name: release-2.12
    - name: web-terminal
    - name: etcd
      minVersion: 0.9.2
      channels:
      - name: alpha
`
	got, err := ParseFilterConfig(strings.NewReader(isc), "registry.example.com/index:v4.18", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []PackageSelection{
		{Name: "acm", DefaultChannel: "release-2.13", Channels: []ChannelSelection{
			{Name: "release-2.13", MinVersion: "2.13.1"},
			{Name: "release-2.12", HeadsOnly: true},
		}},
		{Name: "web-terminal", HeadsOnly: true},
		{Name: "etcd", MinVersion: "0.9.2", Channels: []ChannelSelection{{Name: "alpha"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	full := "full: true\npackages:\n- name: a\n- name: b\n  channels:\n  - name: stable\n"
	got, err = ParseFilterConfig(strings.NewReader(full), "whatever", "")
	if err != nil {
		t.Fatal(err)
	}
	want = []PackageSelection{{Name: "a"}, {Name: "b", Channels: []ChannelSelection{{Name: "stable"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("full: got %+v", got)
	}
}

func TestParseFilterConfigErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "empty configuration"},
		{"- a\n", "line 1: expected a mapping at the top"},
		{"kind: Pod\n", `line 1: kind "Pod", expected ImageSetConfiguration`},
		{"kind: ImageSetConfiguration\n", "no mirror section"},
		{"kind: ImageSetConfiguration\nmirror:\n  operators: []\n", "no mirror.operators entries"},
		{"kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: a\n    packages: [{name: x}]\n  - catalog: b\n    packages: [{name: y}]\n", `2 mirror.operators entries (a, b) and none is for "c"`},
		{"packages:\n- name: a\n  minBundle: a.v1\n", `line 3: packages[0]: field "minBundle" is not supported (supported: name, channels, minVersion, maxVersion, defaultChannel)`},
		{"packages:\n- name: a\n  channels:\n  - name: x\n    bundles: []\n", `line 5: packages[0].channels[0]: field "bundles" is not supported`},
		{"packages:\n- channels: []\n", "line 2: packages[0] has no name"},
		{"packages: {}\n", "line 1: packages is not a list"},
		{"packages: []\n", "packages is empty"},
		{"full: maybe\npackages:\n- name: a\n", "line 1: full:"},
		{"packages:\n- name: [a]\n", "line 2: packages[0]:"},
		{"catalog: x\n", "no packages to keep"},
		// An ImageSetConfiguration without kind and apiVersion is still
		// one: its mirror section is read, not ignored.
		{"mirror:\n  operators:\n  - catalog: a\n    packages: [{name: x}]\n  - catalog: b\n    packages: [{name: y}]\n", `line 3: 2 mirror.operators entries (a, b) and none is for "c"`},
		{"packages:\n- name: a\nmirror:\n  operators: []\n", `line 1: top level: field "packages" belongs under mirror.operators[]`},
		{"kind: ImageSetConfiguration\nmirror:\n  packages: [{name: a}]\n", `line 3: mirror: field "packages" belongs under mirror.operators[]`},
		{"operators:\n- catalog: c\n  packages: [{name: a}]\n", `line 1: top level: field "operators" belongs under mirror`},
		{"packages: [{name: a}]\nmirrors: {}\n", `line 2: top level: field "mirrors" is not supported (supported: catalog, full, packages, targetCatalog, targetName, targetTag)`},
		{"kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: c\n    skipDependencies: true\n    packages: [{name: a}]\n", `line 5: mirror.operators[0]: field "skipDependencies" is not supported`},
		{"kind: ImageSetConfiguration\napiVersion: v1\nmirror: {}\n", `line 2: apiVersion "v1", expected mirror.openshift.io/v2alpha1 (or v1alpha2)`},
	} {
		_, err := ParseFilterConfig(strings.NewReader(tt.in), "c", "")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, err := ParseFilterConfig(strings.NewReader(strings.Repeat("#", MaxConfigSize+1)), "c", ""); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("size: %v", err)
	}
}

// TestParseFilterConfigEntry: the entry is chosen by the filtered catalog,
// or explicitly (a local copy of a catalog named otherwise in the file).
func TestParseFilterConfigEntry(t *testing.T) {
	const two = "mirror:\n  platform: {channels: []}\n  operators:\n  - catalog: reg/a:v1\n    targetCatalog: mirror/a\n    packages: [{name: x}]\n  - catalog: reg/b:v1\n    packages: [{name: y}]\n"
	for _, tt := range []struct {
		in, catalog, entry string
		want               string // selected package, or the error
	}{
		{two, "reg/b:v1", "", "y"},
		{two, "./local-copy", "reg/a:v1", "x"},
		{two, "reg/b:v1", "reg/a:v1", "x"},
		{two, "./local-copy", "", `line 4: 2 mirror.operators entries (reg/a:v1, reg/b:v1) and none is for "./local-copy"`},
		{two, "./local-copy", "reg/c:v1", `line 4: no mirror.operators entry is for catalog "reg/c:v1" (entries: reg/a:v1, reg/b:v1)`},
		// A lone entry is used whatever its catalog, unless one is chosen.
		{"mirror:\n  operators:\n  - catalog: reg/a:v1\n    packages: [{name: x}]\n", "./local-copy", "", "x"},
		{"mirror:\n  operators:\n  - catalog: reg/a:v1\n    packages: [{name: x}]\n", "./local-copy", "reg/b:v1", `no mirror.operators entry is for catalog "reg/b:v1" (entries: reg/a:v1)`},
		{"catalog: reg/a:v1\npackages: [{name: x}]\n", "./local-copy", "reg/a:v1", "x"},
		{"catalog: reg/a:v1\npackages: [{name: x}]\n", "./local-copy", "reg/b:v1", `line 1: no mirror.operators entry is for catalog "reg/b:v1" (entries: reg/a:v1)`},
	} {
		sels, err := ParseFilterConfig(strings.NewReader(tt.in), tt.catalog, tt.entry)
		got := ""
		if err != nil {
			got = err.Error()
			var ee *ConfigEntryError
			if !errors.As(err, &ee) {
				t.Errorf("%s %s: error %T, want a *ConfigEntryError", tt.catalog, tt.entry, err)
			}
		} else if len(sels) == 1 {
			got = sels[0].Name
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("catalog %s, entry %q: got %q, want %q", tt.catalog, tt.entry, got, tt.want)
		}
	}
}

func FuzzParseFilterConfig(f *testing.F) {
	f.Add("kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: c\n    packages:\n    - name: a\n      channels:\n      - name: b\n        minVersion: 1.0.0\n")
	f.Add("full: true\npackages:\n- name: a\n  maxVersion: 2.0.0\n")
	f.Add("packages: [{name: a, channels: [{name: x}, {name: y, maxVersion: '1'}]}]")
	f.Add("a: &a [*a]")
	f.Fuzz(func(t *testing.T, in string) {
		sels, err := ParseFilterConfig(strings.NewReader(in), "c", "")
		if err != nil {
			return
		}
		for _, s := range sels {
			if s.Name == "" {
				t.Fatalf("selection without a name from %q", in)
			}
			for _, c := range s.Channels {
				if c.Name == "" {
					t.Fatalf("channel without a name from %q", in)
				}
			}
		}
	})
}
