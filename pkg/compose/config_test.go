package compose

import (
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
	got, err := ParseFilterConfig(strings.NewReader(isc), "registry.example.com/index:v4.18")
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
	got, err = ParseFilterConfig(strings.NewReader(full), "whatever")
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
	} {
		_, err := ParseFilterConfig(strings.NewReader(tt.in), "c")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, err := ParseFilterConfig(strings.NewReader(strings.Repeat("#", MaxConfigSize+1)), "c"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("size: %v", err)
	}
}

func FuzzParseFilterConfig(f *testing.F) {
	f.Add("kind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: c\n    packages:\n    - name: a\n      channels:\n      - name: b\n        minVersion: 1.0.0\n")
	f.Add("full: true\npackages:\n- name: a\n  maxVersion: 2.0.0\n")
	f.Add("packages: [{name: a, channels: [{name: x}, {name: y, maxVersion: '1'}]}]")
	f.Add("a: &a [*a]")
	f.Fuzz(func(t *testing.T, in string) {
		sels, err := ParseFilterConfig(strings.NewReader(in), "c")
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
