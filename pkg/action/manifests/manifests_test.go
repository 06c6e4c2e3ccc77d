package manifests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// The manifests are validated against the CRDs' schemas (testdata: the
// parts of the real CatalogSource and ClusterCatalog CRDs that opm writes,
// transcribed, their sources named there) with the API server's own
// validation: the OpenAPI schema (types, required fields, enums, bounds,
// patterns) and the CEL rules (x-kubernetes-validations) of
// k8s.io/apiextensions-apiserver, a test-only dependency, as the API
// server applies them on create.

// crdValidator returns a function validating an object against the first
// version of the CRD in file, with its apiVersion and kind.
func crdValidator(t *testing.T, file string) func(obj map[string]any) field.ErrorList {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	v := crd.Spec.Versions[0]
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	sv, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	celv := cel.NewValidator(ss, true, celconfig.PerCallLimit) // nil without rules
	apiVersion, kind := crd.Spec.Group+"/"+v.Name, crd.Spec.Names.Kind
	return func(obj map[string]any) field.ErrorList {
		var errs field.ErrorList
		if obj["apiVersion"] != apiVersion || obj["kind"] != kind {
			errs = append(errs, field.Invalid(field.NewPath("kind"), obj["kind"], "want "+apiVersion+" "+kind))
		}
		errs = append(errs, validation.ValidateCustomResource(nil, obj, sv)...)
		if celv != nil {
			celErrs, _ := celv.Validate(context.Background(), nil, ss, obj, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, celErrs...)
		}
		return errs
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
			t.Errorf("%+v: the CatalogSource fails the CRD's schema: %v\n%s", o, errs.ToAggregate(), out)
		}
	}
	// The validator is not a no-op.
	bad := decode(t, must(CatalogSource(Options{Image: digestRef, ExtractContent: true})))
	pod := bad["spec"].(map[string]any)["grpcPodConfig"].(map[string]any)
	pod["securityContextConfig"] = "privileged"
	delete(pod["extractContent"].(map[string]any), "catalogDir")
	pod["memoryTarget"] = "fifty"
	if errs := validate(bad); len(errs) != 3 {
		t.Errorf("a broken CatalogSource: %d errors, want 3: %v", len(errs), errs.ToAggregate())
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
			t.Errorf("%+v: the ClusterCatalog fails the CRD's schema: %v\n%s", o, errs.ToAggregate(), out)
		}
	}
	// The CEL rules are checked: a poll interval with a digest, a
	// reference with no tag or digest.
	bad := decode(t, must(ClusterCatalog(Options{Image: digestRef})))
	img := bad["spec"].(map[string]any)["source"].(map[string]any)["image"].(map[string]any)
	img["pollIntervalMinutes"] = int64(5)
	errs := validate(bad)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "cannot specify pollIntervalMinutes while using digest-based image") {
		t.Errorf("a digest polled: %v", errs.ToAggregate())
	}
	img["ref"] = "quay.io/example/catalog"
	delete(img, "pollIntervalMinutes")
	if errs := validate(bad); len(errs) != 1 || !strings.Contains(errs[0].Error(), "must end with a digest or a tag") {
		t.Errorf("a reference without tag: %v", errs.ToAggregate())
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
