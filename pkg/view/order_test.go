package view_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/view"
)

// TestVersionOrder: the package page lists channels (and each bundle's
// channels) in version order, stable-3.6 before stable-3.10, as every
// listing of opm does.
func TestVersionOrder(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("schema: olm.package\nname: quay\ndefaultChannel: stable-3.10\n")
	for _, ch := range []string{"stable-3.10", "stable-3.6", "stable-3.9"} {
		b.WriteString("---\nschema: olm.channel\npackage: quay\nname: " + ch + "\nentries:\n  - name: quay.v3.6.0\n")
	}
	b.WriteString("---\nschema: olm.bundle\npackage: quay\nname: quay.v3.6.0\nimage: example.com/quay:v3.6.0\nproperties:\n  - type: olm.package\n    value: {packageName: quay, version: 3.6.0}\n")
	if err := os.WriteFile(filepath.Join(dir, "quay.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, nil, dir)
	var pd view.PackageData
	if err := json.NewDecoder(get(t, s, "", "/api/packages/quay").Body).Decode(&pd); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range pd.ChannelRows {
		got = append(got, r.Name)
	}
	want := "stable-3.6 stable-3.9 stable-3.10"
	if strings.Join(got, " ") != want {
		t.Errorf("channels %s, want %s", strings.Join(got, " "), want)
	}
	if len(pd.BundleRows) != 1 || strings.Join(pd.BundleRows[0].Channels, " ") != want {
		t.Errorf("bundle rows %+v, want one in channels %s", pd.BundleRows, want)
	}
}
