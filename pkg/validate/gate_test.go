package validate

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/ocpversion"
)

// gateCatalog is a package of three bundles: v1.0.0 carries its CSV as an
// olm.bundle.object (claims v4.12-v4.14, a Secret and a NetworkPolicy),
// v1.1.0 and v1.2.0 olm.csv.metadata (v1.1.0 claims v4.12, minKubeVersion
// 1.30.0; v1.2.0 olm.maxOpenShiftVersion 4.15), with tags and digests, a
// lifecycle blob and a channel entry that skips itself.
var gateCatalog = func() string {
	obj := func(s string) string {
		return fmt.Sprintf("{data: %s}", b64(s))
	}
	csv := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"bar.v1.0.0","annotations":{"com.redhat.openshift.versions":"v4.12-v4.14"}},"spec":{"minKubeVersion":"1.25.0"}}`
	return `schema: olm.package
name: bar
defaultChannel: stable
---
schema: olm.channel
package: bar
name: stable
entries:
  - name: bar.v1.0.0
  - name: bar.v1.1.0
    replaces: bar.v1.0.0
  - name: bar.v1.2.0
    replaces: bar.v1.1.0
    skips: [bar.v1.2.0]
---
schema: olm.bundle
package: bar
name: bar.v1.0.0
image: registry.redhat.io/acme/bar-bundle@sha256:` + strings.Repeat("a", 64) + `
properties:
  - type: olm.package
    value: {packageName: bar, version: 1.0.0}
  - type: olm.bundle.object
    value: ` + obj(csv) + `
  - type: olm.bundle.object
    value: ` + obj(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`) + `
  - type: olm.bundle.object
    value: ` + obj(`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np"}}`) + `
relatedImages:
  - {name: op, image: "quay.io/acme/bar:v1.0.0"}
---
schema: olm.bundle
package: bar
name: bar.v1.1.0
image: quay.io/acme/bar-bundle:v1.1.0
properties:
  - type: olm.package
    value: {packageName: bar, version: 1.1.0}
  - type: olm.csv.metadata
    value: {minKubeVersion: 1.30.0, annotations: {com.redhat.openshift.versions: "v4.12"}}
---
schema: olm.bundle
package: bar
name: bar.v1.2.0
image: quay.io/acme/bar-bundle:v1.2.0
properties:
  - type: olm.package
    value: {packageName: bar, version: 1.2.0}
  - type: olm.csv.metadata
    value: {annotations: {com.redhat.openshift.versions: "v4.99-v4.1"}}
  - type: olm.maxOpenShiftVersion
    value: "4.15"
---
schema: io.openshift.operators.lifecycles.v1alpha1
package: bar
versions:
  - name: "1.0"
    phases: [{name: Full support, startDate: "2024-01-01", endDate: "2024-12-31"}]
    platformCompatibility: [{name: openshift, versions: ["4.12", "4.14"]}]
  - name: "1.1"
    phases: [{name: Full support, startDate: "2025-01-01", endDate: "2024-12-31"}]
`
}()

func b64(s string) string {
	return fmt.Sprintf("%q", encodeBase64(s))
}

func gateResult(t *testing.T, catalog string, o *GateOptions) []string {
	t.Helper()
	res := validateText(t, catalog, Options{Gate: o})
	var out []string
	for _, f := range res.Findings {
		if _, ok := GateRuleByCode(f.Code); !ok {
			continue
		}
		out = append(out, fmt.Sprintf("%d %s %s %s: %s", f.Line, f.Severity, f.Code, f.Path, f.Message))
	}
	sort.Strings(out)
	return out
}

func allOn(level Severity) map[string]Severity {
	m := map[string]Severity{}
	for _, r := range GateRules {
		m[r.Code] = level
	}
	return m
}

func TestGateRules(t *testing.T) {
	target := ocpversion.Version{Major: 4, Minor: 16}
	kube, _ := ocpversion.Kube(target)
	o := &GateOptions{Levels: allOn(SeverityError), Target: &target, Kube: &kube,
		BundleRegistries: []string{"registry.redhat.io/"}, RelatedImageRegistries: []string{"registry.redhat.io/"}}
	got := gateResult(t, gateCatalog, o)
	for _, l := range got {
		t.Log(l)
	}
	want := []string{
		CodeReplacesItself, CodeBundleImageDigest, CodeBundleImageRegistry, CodeRelatedImageDigest, CodeRelatedImageRegistry,
		CodeMetadataFormat, CodeMaxOpenShiftBelow, CodeMinKubeAboveTarget, CodeObjectKind, CodeVersionsExcludeTarget,
		CodeVersionsInvalid, CodeVersionsWider, CodeMinKubeConflict, CodeLifecycleInvalid, CodeLifecycleVersion,
		CodeLifecyclePlatform, CodeGateNotChecked,
	}
	joined := strings.Join(got, "\n")
	for _, c := range want {
		if !strings.Contains(joined, " "+c+" ") {
			t.Errorf("no %s finding", c)
		}
	}

	// Rules that are off report nothing; without a target, the target
	// rules say they were not checked, once.
	o = &GateOptions{Levels: map[string]Severity{CodeMetadataFormat: SeverityError, CodeReplacesItself: SeverityWarning, CodeGateNotChecked: SeverityWarning}}
	got = gateResult(t, gateCatalog, o)
	want2 := []string{
		"0 warning release-not-checked : no target OpenShift version: bundle-metadata-format not checked",
		`14 warning bundle-replaces-itself entries[2].skips[0]: bundle "bar.v1.2.0" skips itself, so channel "stable" has no head OLM can find`,
	}
	if strings.Join(got, "\n") != strings.Join(want2, "\n") {
		t.Errorf("without a target:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}

	// A target opm does not know the Kubernetes version of.
	five := ocpversion.Version{Major: 5, Minor: 0}
	o = &GateOptions{Levels: map[string]Severity{CodeMinKubeAboveTarget: SeverityError, CodeGateNotChecked: SeverityWarning}, Target: &five}
	got = gateResult(t, gateCatalog, o)
	if len(got) != 1 || !strings.Contains(got[0], "the Kubernetes version of OpenShift 5.0 is unknown to opm: min-kube-version-above-target not checked") {
		t.Errorf("unknown Kubernetes version: %q", got)
	}
}

func TestGateCatalogEmpty(t *testing.T) {
	o := &GateOptions{Levels: map[string]Severity{CodeCatalogEmpty: SeverityError}}
	empty := "schema: olm.package\nname: foo\ndefaultChannel: stable\n"
	got := gateResult(t, empty, o)
	if len(got) != 1 || !strings.Contains(got[0], "the catalog has no package with a bundle") {
		t.Errorf("empty catalog: %q", got)
	}
	if got := gateResult(t, base, o); len(got) != 0 {
		t.Errorf("base catalog: %q", got)
	}
}

func encodeBase64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
