package bundlevalidate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/validate"
)

const testCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v0.1.0
  annotations:
    alm-examples: '[]'
spec:
  displayName: Foo
  version: 0.1.0
  minKubeVersion: 1.25.0
  installModes:
  - type: OwnNamespace
    supported: true
  - type: AllNamespaces
    supported: ALLMODES
  install:
    strategy: deployment
    spec:
      deployments:
      - name: foo
        spec:
          selector:
            matchLabels: {app: foo}
          template:
            metadata:
              labels: {app: foo}
            spec:
              containers:
              - name: foo
                image: quay.io/acme/foo:v0.1.0
`

const testAnnotations = `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: foo
  operators.operatorframework.io.bundle.channels.v1: stable
`

// writeBundle writes a bundle directory at dir; allNamespaces says
// whether its CSV supports the AllNamespaces install mode.
func writeBundle(t *testing.T, dir string, allNamespaces bool) {
	t.Helper()
	csv := strings.Replace(testCSV, "ALLMODES", map[bool]string{true: "true", false: "false"}[allNamespaces], 1)
	for name, data := range map[string]string{
		"manifests/foo.clusterserviceversion.yaml": csv,
		"metadata/annotations.yaml":                testAnnotations,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunCommunityLayout validates a directory of bundles in the
// community layout: one report per bundle, in path order.
func TestRunCommunityLayout(t *testing.T) {
	root := t.TempDir()
	writeBundle(t, filepath.Join(root, "operators", "foo", "0.1.0"), true)
	writeBundle(t, filepath.Join(root, "operators", "foo", "0.2.0"), false)
	res, err := Run(context.Background(), Options{Refs: []string{root}, Positions: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reports) != 2 {
		t.Fatalf("got %d reports, want 2", len(res.Reports))
	}
	for i, want := range []string{"0.1.0", "0.2.0"} {
		if !strings.HasSuffix(res.Reports[i].FilePrefix, "/foo/"+want+"/") {
			t.Errorf("report %d is of %s, want the bundle %s", i, res.Reports[i].FilePrefix, want)
		}
	}
	if !res.Passed() {
		t.Errorf("the bundles do not pass: %+v", res.Findings.Findings)
	}
}

// TestRunOLMv1 checks --olm-v1: a bundle without AllNamespaces is refused
// by OLM v1 (an error at the CSV's installModes), and installable with a
// watchNamespace once SingleOwnNamespaceInstallSupport is on (a warning).
func TestRunOLMv1(t *testing.T) {
	dir := t.TempDir()
	writeBundle(t, dir, false)
	find := func(res *Result, code string) *validate.Finding {
		for i, f := range res.Findings.Findings {
			if f.Code == code {
				return &res.Findings.Findings[i]
			}
		}
		return nil
	}

	res, err := Run(context.Background(), Options{Refs: []string{dir}, Positions: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() || find(res, olmv1.CodeAllNamespacesUnsupported) != nil {
		t.Fatalf("without OLMv1 the bundle should pass with no OLM v1 finding: %+v", res.Findings.Findings)
	}

	gates := olmv1.DefaultGates()
	res, err = Run(context.Background(), Options{Refs: []string{dir}, Positions: true, OLMv1: &gates})
	if err != nil {
		t.Fatal(err)
	}
	f := find(res, olmv1.CodeAllNamespacesUnsupported)
	if f == nil || res.Passed() {
		t.Fatalf("want an %s error, got %+v", olmv1.CodeAllNamespacesUnsupported, res.Findings.Findings)
	}
	wantFile := filepath.ToSlash(filepath.Clean(dir)) + "/manifests/foo.clusterserviceversion.yaml"
	if f.Severity != validate.SeverityError || f.File != wantFile || f.Line != 12 || f.Column != 3 || f.Help == "" {
		t.Errorf("got %s %s:%d:%d (help %q), want an error at %s:12:3 (the install modes) with help", f.Severity, f.File, f.Line, f.Column, f.Help, wantFile)
	}

	gates.SingleOwnNamespace = true
	res, err = Run(context.Background(), Options{Refs: []string{dir}, Positions: true, OLMv1: &gates})
	if err != nil {
		t.Fatal(err)
	}
	if f := find(res, olmv1.CodeWatchNamespace); f == nil || f.Severity != validate.SeverityWarning || !res.Passed() {
		t.Errorf("with %s on, want a %s warning and a pass, got %+v", olmv1.GateSingleOwnNamespace, olmv1.CodeWatchNamespace, res.Findings.Findings)
	}
}
