package manifest

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

const csvYAML = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v0.1.0
  annotations:
    capabilities: Basic Install
spec:
  displayName: Foo
  version: 0.1.0
  installModes:
  - type: OwnNamespace
    supported: true
  - type: AllNamespaces
    supported: false
  install:
    strategy: deployment
    spec:
      permissions:
      - serviceAccountName: foo
        rules:
        - apiGroups: [""]
          resources: [configmaps]
          verbs: [get]
      deployments:
      - name: foo-operator
        spec:
          replicas: 1
          template:
            spec:
              serviceAccountName: foo
              containers:
              - name: manager
                image: quay.io/foo/foo:v0.1.0
                resources:
                  requests: {cpu: 10m}
  customresourcedefinitions:
    owned:
    - name: foos.example.com
      version: v1
      kind: Foo
`

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: foos, kind: Foo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests/foo.clusterserviceversion.yaml": {Data: []byte(csvYAML)},
		"manifests/foos.crd.yaml":                  {Data: []byte(crdYAML)},
		"manifests/.hidden":                        {Data: []byte("x")},
		"metadata/annotations.yaml":                {Data: []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n  operators.operatorframework.io.bundle.channels.v1: stable,fast\n")},
		"metadata/dependencies.yaml":               {Data: []byte("dependencies:\n- type: olm.package\n  value: {packageName: bar, version: '>=1.0.0'}\n")},
	}
	b, err := LoadFS(context.Background(), fsys, "foo")
	if err != nil {
		t.Fatal(err)
	}
	if !b.HasManifestsDir || !b.HasMetadataDir || len(b.Manifests) != 2 || len(b.Skipped) != 1 {
		t.Fatalf("dirs %v %v, %d manifests, %d skipped", b.HasManifestsDir, b.HasMetadataDir, len(b.Manifests), len(b.Skipped))
	}
	if b.CSV == nil || b.CSVErr != nil {
		t.Fatalf("CSV %v: %v", b.CSV, b.CSVErr)
	}
	c := b.CSV
	if c.Name != "foo.v0.1.0" || c.Spec.DisplayName != "Foo" || c.Spec.VersionParsed.String() != "0.1.0" {
		t.Errorf("CSV view: %q %q %v", c.Name, c.Spec.DisplayName, c.Spec.VersionParsed)
	}
	if len(c.Spec.InstallModes) != 2 || c.Spec.InstallModes[0].Type != InstallModeOwnNamespace {
		t.Errorf("install modes %+v", c.Spec.InstallModes)
	}
	d := c.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(d) != 1 || d[0].Spec.Template.Spec.Containers[0].Image != "quay.io/foo/foo:v0.1.0" || len(d[0].Spec.Raw) == 0 {
		t.Errorf("deployments %+v", d)
	}
	if got := c.Locate("spec.install.spec.deployments[0].spec.template.spec.containers[0].image"); got.String() != "manifests/foo.clusterserviceversion.yaml:33:24" {
		t.Errorf("position %s", got)
	}
	if got := c.OwnedCRDKeys(); len(got) != 1 || got[0].String() != "example.com/v1, Kind=Foo" {
		t.Errorf("owned %v", got)
	}
	if len(b.CRDs) != 1 || b.CRDs[0].Err != nil || b.CRDs[0].StorageVersion() != "v1" || b.CRDs[0].Versions[0].Schema == nil {
		t.Errorf("CRDs %+v", b.CRDs)
	}
	if b.Package() != "foo" || len(b.Annotations.Channels()) != 2 {
		t.Errorf("annotations %+v", b.Annotations)
	}
	if b.Dependencies == nil || len(b.Dependencies.Items) != 1 || b.Dependencies.Items[0].Line != 2 {
		t.Errorf("dependencies %+v", b.Dependencies)
	}
	if s := b.Size(); s.Bytes != int64(len(csvYAML)+len(crdYAML)+1) || s.Compressed == 0 || s.Compressed > b.CompressedBound() {
		t.Errorf("size %+v, bound %d", s, b.CompressedBound())
	}
}

func TestFromDeclcfg(t *testing.T) {
	obj := func(s string) property.Property {
		v, _ := json.Marshal(property.BundleObject{Data: []byte(s)})
		return property.Property{Type: property.TypeBundleObject, Value: v}
	}
	db := &declcfg.Bundle{Name: "foo.v0.1.0", Package: "foo", Properties: []property.Property{
		{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"foo","version":"0.1.0"}`)},
		obj(csvYAML), obj(crdYAML),
	}}
	b, err := FromDeclcfg(db)
	if err != nil {
		t.Fatal(err)
	}
	if b.CSV == nil || len(b.CRDs) != 1 || b.Manifests[0].Property != 1 || b.Package() != "foo" {
		t.Fatalf("%+v", b)
	}
	if p := b.CSV.Locate("spec"); p.IsValid() {
		t.Errorf("a catalog object has a file position: %s", p)
	}
}
