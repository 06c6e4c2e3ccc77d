package olmv1

import (
	"context"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// metaBundle is an olm.bundle whose olm.csv.metadata supports modes.
func metaBundle(name, version, modes string, extra ...string) string {
	var im []string
	for _, m := range strings.Split(modes, ",") {
		im = append(im, `{"type":"`+m+`","supported":true}`)
	}
	props := `{"type":"olm.package","value":{"packageName":"app","version":"` + version + `"}},` +
		`{"type":"olm.csv.metadata","value":{"apiServiceDefinitions":{},"crdDescriptions":{},"installModes":[` + strings.Join(im, ",") + `]}}`
	for _, e := range extra {
		props += "," + e
	}
	return `{"schema":"olm.bundle","package":"app","name":"` + name + `","image":"quay.io/example/app:` + version + `","properties":[` + props + `]}` + "\n"
}

func packageReport(t *testing.T, fbc string) *PackageReport {
	t.Helper()
	cfg, err := declcfg.LoadReaderContext(context.Background(), strings.NewReader(fbc), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]*Verdict{}
	for i := range cfg.Bundles {
		b, _ := FromDeclcfg(&cfg.Bundles[i])
		verdicts[b.Name] = Check(b, DefaultGates())
	}
	g, err := graph.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := CheckPackage(context.Background(), g.Package("app"), verdicts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPicks checks what a ClusterExtension installs: the highest version
// of its channels, deprecated bundles last, even when OLM v1 refuses it.
func TestPicks(t *testing.T) {
	fbc := `{"schema":"olm.package","name":"app","defaultChannel":"stable"}
{"schema":"olm.channel","package":"app","name":"stable","entries":[{"name":"app.v1.0.0"},{"name":"app.v1.1.0","replaces":"app.v1.0.0"},{"name":"app.v1.2.0","replaces":"app.v1.1.0"}]}
{"schema":"olm.channel","package":"app","name":"fast","entries":[{"name":"app.v1.1.0"},{"name":"app.v2.0.0","replaces":"app.v1.1.0"}]}
{"schema":"olm.deprecations","package":"app","entries":[{"reference":{"schema":"olm.bundle","name":"app.v1.2.0"},"message":"broken"}]}
` + metaBundle("app.v1.0.0", "1.0.0", "AllNamespaces") +
		metaBundle("app.v1.1.0", "1.1.0", "AllNamespaces") +
		metaBundle("app.v1.2.0", "1.2.0", "AllNamespaces") +
		metaBundle("app.v2.0.0", "2.0.0", "OwnNamespace")
	r := packageReport(t, fbc)
	if r.Pick != "app.v2.0.0" || r.Installable(r.Pick) {
		t.Errorf("package pick = %s (installable %v), want the refused app.v2.0.0", r.Pick, r.Installable(r.Pick))
	}
	picks := map[string]string{}
	for _, c := range r.Channels {
		picks[c.Name] = c.Pick
	}
	if picks["stable"] != "app.v1.1.0" || picks["fast"] != "app.v2.0.0" {
		t.Errorf("channel picks = %v, want stable: app.v1.1.0 (1.2.0 is deprecated), fast: app.v2.0.0", picks)
	}
	var fast ChannelReport
	for _, c := range r.Channels {
		if c.Name == "fast" {
			fast = c
		}
	}
	if len(fast.Upgrades) != 1 || fast.Upgrades[0].From != "app.v1.1.0" || fast.Upgrades[0].V1 != "app.v2.0.0" || !fast.Upgrades[0].Refused {
		t.Errorf("fast upgrades = %+v, want app.v1.1.0 -> app.v2.0.0 refused", fast.Upgrades)
	}
	sum := NewSummary(DefaultGates())
	sum.Add(r)
	if sum.Packages != 1 || sum.PackagesInstallable != 0 || sum.Channels != 2 || sum.ChannelsInstallable != 1 ||
		sum.DefaultChannelsInstallable != 1 || sum.Bundles != 4 || sum.BundlesInstallable != 3 || sum.UpgradesRefused != 1 ||
		len(sum.Reasons) != 1 || sum.Reasons[0] != (ReasonCount{CodeAllNamespacesUnsupported, 1}) {
		t.Errorf("summary = %+v", sum)
	}
}

// TestUpgradeDiffers: from app.v1.0.0, OLM classic upgrades to the head,
// app.v1.1.0; OLM v1 ranks the installed bundle above its deprecated
// successor and stays.
func TestUpgradeDiffers(t *testing.T) {
	fbc := `{"schema":"olm.package","name":"app","defaultChannel":"stable"}
{"schema":"olm.channel","package":"app","name":"stable","entries":[{"name":"app.v1.0.0"},{"name":"app.v1.1.0","replaces":"app.v1.0.0"}]}
{"schema":"olm.deprecations","package":"app","entries":[{"reference":{"schema":"olm.bundle","name":"app.v1.1.0"},"message":"broken"}]}
` + metaBundle("app.v1.0.0", "1.0.0", "AllNamespaces") +
		metaBundle("app.v1.1.0", "1.1.0", "AllNamespaces")
	r := packageReport(t, fbc)
	ups := r.Channels[0].Upgrades
	if len(ups) != 1 || ups[0].From != "app.v1.0.0" || ups[0].Classic != "app.v1.1.0" || ups[0].V1 != "" || ups[0].Stays == "" || ups[0].Refused {
		t.Fatalf("upgrades = %+v, want app.v1.0.0: classic app.v1.1.0, OLM v1 stays", ups)
	}
}

// TestUnreadableBundleObject: an olm.bundle.object that does not decode
// is a refusal at that property, not a failure to check.
func TestUnreadableBundleObject(t *testing.T) {
	b, at := FromDeclcfg(&declcfg.Bundle{Name: "app.v1.0.0", Properties: []property.Property{
		{Type: property.TypePackage, Value: []byte(`{"packageName":"app","version":"1.0.0"}`)},
		{Type: property.TypeBundleObject, Value: []byte(`{"data":"!!!"}`)},
	}})
	if len(at) != 0 || b.Objects == nil {
		t.Fatalf("objects %v at %v", b.Objects, at)
	}
	v := Check(b, DefaultGates())
	if v.Installable || len(v.Issues) < 1 || v.Issues[0].Code != CodeManifestInvalid || v.Issues[0].Property != 1 {
		t.Errorf("verdict %+v", v)
	}
}
