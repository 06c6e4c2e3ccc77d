package render

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/pkg/model"
)

// TestWithChannelsValidates checks that --with-channels output for a
// consistent set of bundles passes upstream's model validation: the
// node-healthcheck bundles of the corpus and a synthetic three-bundle chain
// with skips.
func TestWithChannelsValidates(t *testing.T) {
	root := t.TempDir()
	synthetic := []string{
		writeBundle(t, root, testBundle{pkg: "foo", version: "0.1.0", channels: "stable,fast", defaultChannel: "stable"}),
		writeBundle(t, root, testBundle{pkg: "foo", version: "0.2.0", replaces: "foo.v0.1.0", channels: "stable,fast", defaultChannel: "stable"}),
		writeBundle(t, root, testBundle{pkg: "foo", version: "0.3.0", skips: []string{"foo.v0.2.0"}, replaces: "foo.v0.1.0", skipRange: "<0.3.0", channels: "fast", defaultChannel: "stable"}),
	}
	var nhc []string
	for _, v := range []string{"0.7.0", "0.8.0"} {
		nhc = append(nhc, filepath.Join(conformanceBundleDir, "node-healthcheck-operator@"+v, "input"))
	}
	cases := []struct {
		name string
		refs []string
	}{
		{name: "Success/Synthetic", refs: synthetic},
		{name: "Success/NodeHealthCheck", refs: nhc},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.refs[0]); err != nil {
				t.Skipf("input not available (%v)", err)
			}
			cfg, err := Render(context.Background(), Options{Refs: tc.refs, WithChannels: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := model.ConvertToModel(*cfg); err != nil {
				t.Fatalf("output does not validate: %v", err)
			}
		})
	}
}
