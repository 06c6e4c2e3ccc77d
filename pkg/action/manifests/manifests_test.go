package manifests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/pkg/crd"
)

// The manifests are validated against the CRDs' schemas (testdata: the
// parts of the real CatalogSource and ClusterCatalog CRDs that opm writes,
// transcribed, their sources named there) with pkg/crd, which validates an
// object as the API server does on create: its version's OpenAPI schema
// (types, required fields, enums, bounds, patterns) after the schema's
// defaults. The CRDs' CEL rules (x-kubernetes-validations, kept in the
// transcription) are not evaluated by it: the one opm could break, no
// pollIntervalMinutes with a digest, is refused by ClusterCatalog itself
// (TestRefused).

// crdValidator returns a function validating an object against the CRD in
// file: the reasons the API server would refuse it.
func crdValidator(t *testing.T, file string) func(obj map[string]any) []crd.FieldError {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := crd.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	return func(obj map[string]any) []crd.FieldError {
		res, err := c.Validate(context.Background(), obj)
		if err != nil {
			return []crd.FieldError{{Field: ".", Message: err.Error()}}
		}
		return res.Errors
	}
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

const digestRef = "quay.io/example/catalog@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func ptr[T any](v T) *T { return &v }

func TestCatalogSourceSchema(t *testing.T) {
	validate := crdValidator(t, "catalogsource-crd.yaml")
	for _, o := range []Options{
		{Image: "quay.io/example/catalog:v1"},
		{Image: digestRef, Name: "ops", Namespace: "openshift-marketplace", DisplayName: "Ops", Publisher: "Example", Priority: ptr[int32](-400)},
		{Image: "quay.io/example/catalog:v1", SecurityContextConfig: "legacy", PollInterval: 30 * time.Minute, MemoryTarget: "50Mi",
			ImageTemplate: "quay.io/example/catalog:v{kube_major_version}.{kube_minor_version}.{kube_patch_version}"},
		{Image: digestRef, ExtractContent: true},
		{Image: digestRef, ExtractContent: true, CatalogDir: "/catalog", CacheDir: "/var/cache/opm"},
	} {
		out, err := CatalogSource(o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if errs := validate(decode(t, out)); len(errs) > 0 {
			t.Errorf("%+v: the CatalogSource fails the CRD's schema: %v\n%s", o, errs, out)
		}
	}
	// The validator is not a no-op.
	bad := decode(t, must(CatalogSource(Options{Image: digestRef, ExtractContent: true})))
	pod := bad["spec"].(map[string]any)["grpcPodConfig"].(map[string]any)
	pod["securityContextConfig"] = "privileged"
	delete(pod["extractContent"].(map[string]any), "catalogDir")
	pod["memoryTarget"] = "fifty"
	if errs := validate(bad); len(errs) != 3 {
		t.Errorf("a broken CatalogSource: %d errors, want 3: %v", len(errs), errs)
	}
}

func TestClusterCatalogSchema(t *testing.T) {
	validate := crdValidator(t, "clustercatalog-crd.yaml")
	for _, o := range []Options{
		{Image: "quay.io/example/catalog:v1"},
		{Image: digestRef, Name: "ops", Priority: ptr[int32](10), AvailabilityMode: "Unavailable"},
		{Image: "registry.example.com:5000/team/catalog:v1.2", PollInterval: 15 * time.Minute, Priority: ptr[int32](-2147483648)},
	} {
		out, err := ClusterCatalog(o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if errs := validate(decode(t, out)); len(errs) > 0 {
			t.Errorf("%+v: the ClusterCatalog fails the CRD's schema: %v\n%s", o, errs, out)
		}
	}
	// The validator is not a no-op.
	bad := decode(t, must(ClusterCatalog(Options{Image: digestRef})))
	spec := bad["spec"].(map[string]any)
	spec["availabilityMode"] = "Sometimes"
	spec["priority"] = int64(1) << 40
	spec["source"].(map[string]any)["image"].(map[string]any)["pollIntervalMinutes"] = int64(0)
	if errs := validate(bad); len(errs) != 4 { // the priority is out of bounds and no int32
		t.Errorf("a broken ClusterCatalog: %d errors, want 4: %v", len(errs), errs)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestCatalogSourceOutput(t *testing.T) {
	out, err := CatalogSource(Options{
		Image: "quay.io/example/my-catalog:v1", Namespace: "openshift-marketplace", Publisher: "Example", Priority: ptr[int32](-100),
		PollInterval: 30 * time.Minute, ImageTemplate: "quay.io/example/my-catalog:v{kube_major_version}.{kube_minor_version}",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  annotations:
    olm.catalogImageTemplate: quay.io/example/my-catalog:v{kube_major_version}.{kube_minor_version}
  name: my-catalog
  namespace: openshift-marketplace
spec:
  displayName: my-catalog
  grpcPodConfig:
    securityContextConfig: restricted
  image: quay.io/example/my-catalog:v1
  priority: -100
  publisher: Example
  sourceType: grpc
  updateStrategy:
    registryPoll:
      interval: 30m0s
`
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		cc   bool
		want string
	}{
		{Options{}, false, "no image"},
		{Options{Image: "Quay.io/x y"}, false, "invalid image"},
		{Options{Image: digestRef, PollInterval: time.Minute}, false, "polling needs a tag"},
		{Options{Image: digestRef, PollInterval: time.Minute}, true, "polling needs a tag"},
		{Options{Image: "quay.io/x/c:v1", PollInterval: 90 * time.Second}, true, "whole number of minutes"},
		{Options{Image: "quay.io/x/c:v1", ImageTemplate: "quay.io/x/c:v1"}, false, "none of the placeholders"},
		{Options{Image: "quay.io/x/c:v1", ImageTemplate: "quay.io/x/c:v{kube_version}"}, false, "the placeholders are"},
		{Options{Image: "quay.io/x/c:v1", Namespace: "Bad_NS"}, false, "invalid namespace"},
		{Options{Image: "quay.io/x/c:v1", Name: "-x"}, true, "invalid name"},
		{Options{Image: "quay.io/x/c:v1", CacheDir: "/var/cache/opm"}, false, "give --extract-content too"},
		{Options{Image: "quay.io/x/c:v1", ExtractContent: true, CatalogDir: "configs"}, false, "absolute paths"},
		{Options{Image: "quay.io/x/c:v1", SecurityContextConfig: "privileged"}, false, "want restricted or legacy"},
		{Options{Image: "quay.io/x/c:v1", MemoryTarget: "lots"}, false, "a Kubernetes quantity"},
		{Options{Image: "quay.io/x/c:v1", AvailabilityMode: "Sometimes"}, true, "want Available or Unavailable"},
	} {
		gen := CatalogSource
		if tc.cc {
			gen = ClusterCatalog
		}
		_, err := gen(tc.o)
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error with %q", tc.o, err, tc.want)
		}
	}
}

// TestName: the name comes from the repository's last element, made a
// DNS-1123 label.
func TestName(t *testing.T) {
	for ref, want := range map[string]string{
		"quay.io/example/my-catalog:v1":                                                    "my-catalog",
		"quay.io/example/my_catalog.index:v1":                                              "my-catalog-index",
		"registry.example.com:5000/catalog@" + digestRef[len("quay.io/example/catalog@"):]: "catalog",
	} {
		out, err := ClusterCatalog(Options{Image: ref})
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(t, out)["metadata"].(map[string]any)["name"]; got != want {
			t.Errorf("%s: name %v, want %s", ref, got, want)
		}
	}
}
