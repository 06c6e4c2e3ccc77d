package serve

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/pkg/api"
)

// TestGetBundleThatReplacesHighest: of several bundles that replace or skip
// the name, the highest version answers (upstream picks one at random),
// not the first by name as text (p.v2.11.0 sorts before p.v2.25.0 and
// p.v2.3.0).
func TestGetBundleThatReplacesHighest(t *testing.T) {
	bundle := func(v string) string {
		return "---\nschema: olm.bundle\npackage: p\nname: p.v" + v + "\nimage: quay.io/p/b:v" + v +
			"\nproperties:\n- {type: olm.package, value: {packageName: p, version: " + v + "}}\n"
	}
	catalog := `---
schema: olm.package
name: p
defaultChannel: stable
---
schema: olm.channel
package: p
name: stable
entries:
- name: p.v2.0.0
- name: p.v2.3.0
  replaces: p.v2.0.0
- name: p.v2.11.0
  replaces: p.v2.3.0
  skips: [p.v2.0.0]
- name: p.v2.25.0
  replaces: p.v2.11.0
  skips: [p.v2.0.0]
` + bundle("2.0.0") + bundle("2.3.0") + bundle("2.11.0") + bundle("2.25.0")
	x := buildTest(t, fstest.MapFS{"c.yaml": &fstest.MapFile{Data: []byte(catalog)}}, false)
	s := &RegistryServer{Index: x}
	for _, tc := range []struct{ name, want string }{
		{"p.v2.0.0", "p.v2.25.0"}, // replaced by 2.3.0, skipped by 2.11.0 and 2.25.0
		{"p.v2.3.0", "p.v2.11.0"},
		{"p.v2.11.0", "p.v2.25.0"},
	} {
		b, err := s.GetBundleThatReplaces(context.Background(), &api.GetReplacementRequest{CsvName: tc.name, PkgName: "p", ChannelName: "stable"})
		if err != nil || b.CsvName != tc.want {
			t.Errorf("GetBundleThatReplaces(%s) = %v, %v; want %s", tc.name, b.GetCsvName(), err, tc.want)
		}
	}
}
