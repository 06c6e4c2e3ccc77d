package serve

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// A small catalog exercising what the index keeps: two packages, a bundle
// in two channels with different edges, skips, a skipRange, deprecations,
// a YAML and a JSON manifest, CSV metadata, dependencies, custom blobs.

var (
	yamlCSV = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: foo.v1.0.0\n  annotations:\n    description: \"<b>&</b>\"\nspec:\n  version: 1.0.0\n  replicas: 1.0\n"
	jsonCRD = "{\n  \"kind\": \"CustomResourceDefinition\",\n  \"big\": 12345678901234567890\n}"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func testCatalog() fstest.MapFS {
	foo := `---
schema: olm.package
name: foo
defaultChannel: stable
description: Foo does things
icon: {base64data: aWNvbg==, mediatype: image/png}
---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v1.0.0
- name: foo.v1.1.0
  replaces: foo.v1.0.0
  skips: [foo.v0.9.0, foo.v0.9.0]
  skipRange: ">=0.9.0 <1.1.0"
---
schema: olm.channel
package: foo
name: fast
entries:
- name: foo.v1.1.0
- name: foo.v1.2.0
  replaces: foo.v1.1.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: ""
properties:
- {type: olm.package, value: {packageName: foo, version: 1.0.0}}
- {type: olm.gvk, value: {group: foo.io, version: v1, kind: Foo}}
- {type: olm.bundle.object, value: {data: ` + b64(yamlCSV) + `}}
- {type: olm.bundle.object, value: {data: ` + b64(jsonCRD) + `}}
---
schema: olm.bundle
package: foo
name: foo.v1.1.0
image: quay.io/foo/bundle:v1.1.0
relatedImages: [{name: op, image: quay.io/foo/op:v1.1.0}]
properties:
- {type: olm.package, value: {packageName: foo, version: 1.1.0}}
- {type: olm.gvk, value: {group: foo.io, version: v1, kind: Foo}}
- {type: olm.gvk.required, value: {group: bar.io, version: v1, kind: Bar}}
- {type: olm.package.required, value: {packageName: bar, versionRange: ">=1.0.0 <2.0.0"}}
- {type: example.prop, value: {z: 1.0, a: "<&>"}}
- {type: olm.csv.metadata, value: {displayName: Foo, provider: {name: Acme}, crdDescriptions: {}, apiServiceDefinitions: {}}}
---
schema: olm.bundle
package: foo
name: foo.v1.2.0
image: quay.io/foo/bundle:v1.2.0
properties:
- {type: olm.package, value: {packageName: foo, version: 1.2.0}}
- {type: olm.gvk, value: {group: foo.io, version: v2, kind: Foo}}
---
schema: olm.deprecations
package: foo
entries:
- {reference: {schema: olm.channel, name: fast}, message: fast is closed}
- {reference: {schema: olm.bundle, name: foo.v1.0.0}, message: old}
---
schema: example.custom
package: foo
name: first
data: {answer: 42}
---
schema: example.custom
name: packageless
`
	bar := `{"schema":"olm.package","name":"bar","defaultChannel":"alpha"}
{"schema":"olm.channel","package":"bar","name":"alpha","entries":[{"name":"bar.v1.0.0"}]}
{"schema":"olm.bundle","package":"bar","name":"bar.v1.0.0","image":"quay.io/bar/bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"bar","version":"1.0.0"}},{"type":"olm.gvk","value":{"group":"bar.io","version":"v1","kind":"Bar"}},{"type":"olm.gvk","value":{"group":"foo.io","version":"v1","kind":"Foo"}}]}
`
	return fstest.MapFS{
		"foo/catalog.yaml": {Data: []byte(foo)},
		"bar/catalog.json": {Data: []byte(bar)},
		"bar/README.md":    {Data: []byte("not fbc\n")},
		".indexignore":     {Data: []byte("README.md\n")},
	}
}

// buildTest builds the index of fsys with its data file in a temporary
// directory.
func buildTest(t testing.TB, fsys fstest.MapFS, http bool) *Index {
	t.Helper()
	x, _, err := BuildTemp(context.Background(), fsys, t.TempDir(), BuildOptions{Name: "catalog", HTTP: http})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func TestBuildIndex(t *testing.T) {
	x := buildTest(t, testCatalog(), false)
	if got, want := x.Stats(), (Stats{Packages: 2, Bundles: 4, Records: 5, Custom: 2}); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	// Records in ListBundles order: channel, package, bundle.
	var order []string
	for r := range x.Records() {
		order = append(order, x.ChannelOf(int32(r)).Name+"/"+x.PackageOf(int32(r)).Name+"/"+x.BundleOf(int32(r)).Name)
	}
	want := "alpha/bar/bar.v1.0.0 fast/foo/foo.v1.1.0 fast/foo/foo.v1.2.0 stable/foo/foo.v1.0.0 stable/foo/foo.v1.1.0"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("record order\n got %s\nwant %s", got, want)
	}
	p, ok := x.Package("foo")
	if !ok || p.DefaultChannel != "stable" || len(p.Channels) != 2 || p.Channels[0].Name != "fast" {
		t.Fatalf("package foo: %+v", p)
	}
	if !p.Channels[0].Deprecation.Set || p.Channels[0].Deprecation.Message != "fast is closed" {
		t.Errorf("channel deprecation %+v", p.Channels[0].Deprecation)
	}
	if got := x.BundleOf(p.Channels[0].Head).Name; got != "foo.v1.2.0" {
		t.Errorf("fast head %s", got)
	}
	if got := x.BundleOf(p.Channels[1].Head).Name; got != "foo.v1.1.0" {
		t.Errorf("stable head %s", got)
	}
	// The same bundle carries each channel's edges.
	_, stable, _ := p.Channel("stable")
	r, ok := x.RecordIn(stable, "foo.v1.1.0")
	if !ok {
		t.Fatal("foo.v1.1.0 not in stable")
	}
	if rec := x.Record(r); rec.Replaces != "foo.v1.0.0" || len(rec.Skips) != 2 || rec.SkipRange != ">=0.9.0 <1.1.0" {
		t.Errorf("stable record %+v", rec)
	}
	_, fast, _ := p.Channel("fast")
	r2, _ := x.RecordIn(fast, "foo.v1.1.0")
	if rec := x.Record(r2); rec.Replaces != "" || rec.Skips != nil || x.Record(r2).Bundle != x.Record(r).Bundle {
		t.Errorf("fast record %+v", rec)
	}
	if _, ok := x.RecordIn(fast, "foo.v1.0.0"); ok {
		t.Error("foo.v1.0.0 found in fast")
	}
	b := x.BundleOf(r)
	if b.Version != "1.1.0" || b.Image != "quay.io/foo/bundle:v1.1.0" {
		t.Errorf("bundle %+v", b)
	}
	var types []string
	for _, p := range b.Properties {
		types = append(types, p.Type+"="+p.Value)
	}
	if got, want := strings.Join(types, " "), `olm.package={"packageName":"foo","version":"1.1.0"} olm.gvk={"group":"foo.io","kind":"Foo","version":"v1"} olm.gvk.required={"group":"bar.io","kind":"Bar","version":"v1"} olm.package.required={"packageName":"bar","versionRange":">=1.0.0 <2.0.0"} example.prop={"a":"<&>","z":1}`; got != want {
		t.Errorf("properties\n got %s\nwant %s", got, want)
	}
	if len(b.Deps) != 2 || b.Deps[0] != (KV{"olm.gvk", `{"group":"bar.io","kind":"Bar","version":"v1"}`}) ||
		b.Deps[1] != (KV{"olm.package", `{"packageName":"bar","version":">=1.0.0 <2.0.0"}`}) {
		t.Errorf("dependencies %+v", b.Deps)
	}
	if got := x.Providers(GVK{"foo.io", "v1", "Foo"}); len(got) != 4 {
		t.Errorf("providers of foo.io/v1 Foo: %v", got)
	}
}

func TestObjectsAndStubCSV(t *testing.T) {
	x := buildTest(t, testCatalog(), false)
	p, _ := x.Package("foo")
	_, stable, _ := p.Channel("stable")

	r, _ := x.RecordIn(stable, "foo.v1.0.0")
	objs, csv, err := x.Objects(x.BundleOf(r))
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"annotations":{"description":"\u003cb\u003e\u0026\u003c/b\u003e"},"name":"foo.v1.0.0"},"spec":{"replicas":1,"version":"1.0.0"}}`
	if len(objs) != 2 || objs[0] != wantCSV || objs[1] != jsonCRD || csv != wantCSV {
		t.Errorf("objects %q, csv %q", objs, csv)
	}

	r, _ = x.RecordIn(stable, "foo.v1.1.0")
	objs, csv, err = x.Objects(x.BundleOf(r))
	if err != nil {
		t.Fatal(err)
	}
	wantStub := `{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","metadata":{"name":"foo.v1.1.0"},"spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"1.1.0","customresourcedefinitions":{},"apiservicedefinitions":{},"displayName":"Foo","description":"Foo does things","provider":{"name":"Acme"},"icon":[{"base64data":"aWNvbg==","mediatype":"image/png"}],"cleanup":{"enabled":false},"relatedImages":[{"name":"op","image":"quay.io/foo/op:v1.1.0"}]},"status":{"cleanup":{}}}`
	if csv != wantStub || len(objs) != 1 || objs[0] != wantStub {
		t.Errorf("stub CSV\n got %s\nwant %s\nobjects %q", csv, wantStub, objs)
	}

	r, _ = x.RecordIn(stable, "foo.v1.1.0")
	_ = r
	_, fast, _ := p.Channel("fast")
	r, _ = x.RecordIn(fast, "foo.v1.2.0")
	objs, csv, err = x.Objects(x.BundleOf(r))
	if err != nil || objs != nil || csv != "" {
		t.Errorf("a bundle without objects or metadata: %q %q %v", objs, csv, err)
	}

	blobs, err := x.CustomBlobs("example.custom", "foo")
	if err != nil || len(blobs) != 1 || string(blobs[0]) != `{"data":{"answer":42},"name":"first","package":"foo","schema":"example.custom"}` {
		t.Errorf("custom blobs of foo: %q %v", blobs, err)
	}
	blobs, _ = x.CustomBlobs("example.custom", "")
	if len(blobs) != 1 || !strings.Contains(string(blobs[0]), "packageless") {
		t.Errorf("package-less custom blobs: %q", blobs)
	}
}

func TestBuildRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"bundle in no channel": {map[string]string{"c.yaml": `---
schema: olm.package
name: p
defaultChannel: s
---
schema: olm.channel
package: p
name: s
entries: [{name: p.v1}]
---
schema: olm.bundle
package: p
name: p.v1
image: quay.io/p:v1
properties: [{type: olm.package, value: {packageName: p, version: 1.0.0}}]
---
schema: olm.bundle
package: p
name: p.v2
image: quay.io/p:v2
properties: [{type: olm.package, value: {packageName: p, version: 2.0.0}}]
`}, `build package index: process package "p": package "p", bundle "p.v2" not found in any channel entries (catalog/c.yaml:17:1)`},
		"custom schema with a slash": {map[string]string{"c.yaml": "schema: example.com/foo\n"},
			`catalog/c.yaml:1:1: invalid custom schema meta: invalid schema "example.com/foo": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$`},
		"custom package with a slash": {map[string]string{"c.json": `{"schema":"x","package":"a/b"}`},
			`invalid custom schema meta: invalid package "a/b"`},
		"not FBC": {map[string]string{"d/c.yaml": "foo: bar\n"}, "catalog/d/c.yaml:1:1: object '{\"foo\":\"bar\"}\n' is missing root schema field"},
		"bad bundle object": {map[string]string{"c.yaml": `---
schema: olm.package
name: p
defaultChannel: s
---
schema: olm.channel
package: p
name: s
entries: [{name: p.v1}]
---
schema: olm.bundle
package: p
name: p.v1
image: quay.io/p:v1
properties:
- {type: olm.package, value: {packageName: p, version: 1.0.0}}
- {type: olm.bundle.object, value: {data: "%%%"}}
`}, `read bundle objects: package "p", bundle "p.v1": parse property at index 1 as bundle object: illegal base64 data at input byte 0`},
		"YAML object that does not convert": {map[string]string{"c.yaml": `---
schema: olm.package
name: p
defaultChannel: s
---
schema: olm.channel
package: p
name: s
entries: [{name: p.v1}]
---
schema: olm.bundle
package: p
name: p.v1
image: quay.io/p:v1
properties:
- {type: olm.package, value: {packageName: p, version: 1.0.0}}
- {type: olm.bundle.object, value: {data: ` + b64("a: [\n") + `}}
`}, `read bundle objects: package "p", bundle "p.v1": convert bundle object property at index 1 to JSON: yaml: line 1: did not find expected node content`},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for p, d := range tc.files {
				fsys[p] = &fstest.MapFile{Data: []byte(d)}
			}
			dir := t.TempDir()
			_, _, err := BuildTemp(context.Background(), fsys, dir, BuildOptions{Name: "catalog"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestEmptyCatalog(t *testing.T) {
	x := buildTest(t, fstest.MapFS{".indexignore": {Data: []byte("*\n")}, "x.yaml": {Data: []byte("schema: olm.package\nname: x\n")}}, true)
	if s := x.Stats(); s != (Stats{}) {
		t.Errorf("stats %+v", s)
	}
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := BuildTemp(ctx, testCatalog(), t.TempDir(), BuildOptions{}); err == nil {
		t.Fatal("a cancelled build succeeded")
	}
}

func TestCatalogFilesStayInRoot(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("schema: olm.package\nname: secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, _, err = BuildTemp(context.Background(), root.FS(), t.TempDir(), BuildOptions{})
	if err == nil {
		t.Fatal("a link out of the catalog was followed")
	}
}
