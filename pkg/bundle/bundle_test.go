package bundle

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

const testCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v0.2.0
  annotations:
    olm.skipRange: <0.2.0
spec:
  version: 0.2.0
  replaces: foo.v0.1.0
  skips: [foo.v0.1.1]
  customresourcedefinitions:
    owned:
    - name: foos.test.foo
      version: v1
      kind: Foo
    required:
    - name: bars.test.bar
      version: v1alpha1
      kind: Bar
  relatedImages:
  - name: operand
    image: quay.io/foo/operand:v1
  install:
    strategy: deployment
    spec:
      deployments:
      - name: foo
        spec:
          template:
            spec:
              initContainers:
              - image: quay.io/foo/init:v1
              containers:
              - image: quay.io/foo/operator:v1
              - image: quay.io/foo/operand:v1
`

const testCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.test.foo
spec:
  group: test.foo
  names:
    kind: Foo
    plural: foos
  versions:
  - name: v1
    served: true
  - name: v2
    served: false
`

const testAnnotations = `annotations:
  operators.operatorframework.io.bundle.package.v1: foo
  operators.operatorframework.io.bundle.channels.v1: beta, stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`

// testFS returns a valid bundle with files overridden (an empty string
// removes a file).
func testFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"manifests/foo.csv.yaml":    {Data: []byte(testCSV)},
		"manifests/foo.crd.yaml":    {Data: []byte(testCRD)},
		"metadata/annotations.yaml": {Data: []byte(testAnnotations)},
	}
	for name, data := range files {
		if data == "" {
			delete(fsys, name)
			continue
		}
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func propsOfType(props []property.Property, typ string) []string {
	var out []string
	for _, p := range props {
		if p.Type == typ {
			out = append(out, string(p.Value))
		}
	}
	return out
}

func typesOf(props []property.Property) []string {
	var out []string
	for _, p := range props {
		out = append(out, p.Type)
	}
	return out
}

func render(t *testing.T, fsys fstest.MapFS, image string) (*Bundle, *declcfg.Bundle) {
	t.Helper()
	b, err := ParseFS(context.Background(), fsys)
	if err != nil {
		t.Fatalf("ParseFS: %v", err)
	}
	db, err := b.Declcfg(image)
	if err != nil {
		t.Fatalf("Declcfg: %v", err)
	}
	return b, db
}

func TestParse(t *testing.T) {
	type check func(t *testing.T, b *Bundle, db *declcfg.Bundle)
	cases := []struct {
		name  string
		files map[string]string
		image string
		check check
	}{
		{
			name: "Success/Basic",
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if db.Name != "foo.v0.2.0" || db.Package != "foo" || db.Schema != "olm.bundle" {
					t.Errorf("got name %q package %q schema %q", db.Name, db.Package, db.Schema)
				}
				wantTypes := []string{"olm.bundle.object", "olm.bundle.object", "olm.gvk", "olm.gvk", "olm.gvk.required", "olm.package"}
				if got := typesOf(db.Properties); !reflect.DeepEqual(got, wantTypes) {
					t.Errorf("types = %v, want %v", got, wantTypes)
				}
				if got, want := propsOfType(db.Properties, "olm.gvk"), []string{
					`{"group":"test.foo","kind":"Foo","version":"v1"}`,
					`{"group":"test.foo","kind":"Foo","version":"v2"}`,
				}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.gvk = %v, want %v", got, want)
				}
				if got, want := propsOfType(db.Properties, "olm.gvk.required"), []string{`{"group":"test.bar","kind":"Bar","version":"v1alpha1"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.gvk.required = %v, want %v", got, want)
				}
				if got, want := propsOfType(db.Properties, "olm.package"), []string{`{"packageName":"foo","version":"0.2.0"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.package = %v, want %v", got, want)
				}
				if !reflect.DeepEqual(b.Channels, []string{"beta", "stable"}) || b.DefaultChannel != "stable" {
					t.Errorf("channels %v default %q", b.Channels, b.DefaultChannel)
				}
				// Objects: one per file, in file-name order (crd before csv).
				if len(db.Objects) != 2 || !strings.Contains(db.Objects[0], `"kind":"CustomResourceDefinition"`) {
					t.Errorf("objects = %v", db.Objects)
				}
				if db.CsvJSON != db.Objects[1] {
					t.Errorf("CsvJSON is not the CSV object")
				}
				// json.Marshal of the object: sorted keys, HTML escaped.
				if !strings.Contains(db.CsvJSON, `"olm.skipRange":"\u003c0.2.0"`) {
					t.Errorf("CSV JSON not HTML-escaped: %s", db.CsvJSON)
				}
				wantRI := []declcfg.RelatedImage{
					{Name: "operand", Image: "quay.io/foo/operand:v1"},
					{Image: "quay.io/foo/operator:v1"},
					{Image: "quay.io/foo/init:v1"},
				}
				if !reflect.DeepEqual(db.RelatedImages, wantRI) {
					t.Errorf("relatedImages = %v, want %v", db.RelatedImages, wantRI)
				}
				if r, _ := b.CSV.Replaces(); r != "foo.v0.1.0" {
					t.Errorf("replaces = %q", r)
				}
				if s, _ := b.CSV.Skips(); !reflect.DeepEqual(s, []string{"foo.v0.1.1"}) {
					t.Errorf("skips = %v", s)
				}
				if b.CSV.SkipRange() != "<0.2.0" {
					t.Errorf("skipRange = %q", b.CSV.SkipRange())
				}
			},
		},
		{
			name:  "Success/BundleImageAddedToRelatedImages",
			image: "quay.io/foo/bundle:v0.2.0",
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if db.Image != "quay.io/foo/bundle:v0.2.0" {
					t.Errorf("image = %q", db.Image)
				}
				if len(db.RelatedImages) != 4 || db.RelatedImages[1] != (declcfg.RelatedImage{Image: "quay.io/foo/bundle:v0.2.0"}) {
					t.Errorf("relatedImages = %v", db.RelatedImages)
				}
			},
		},
		{
			name: "Success/JSONManifestAndMultiDocument",
			files: map[string]string{
				"manifests/foo.crd.yaml": "",
				"manifests/a.json":       `  {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"big":12345678901234567,"f":1.0}}{"kind":"Ignored"}`,
				"manifests/b.yaml":       "---\nkind: Service\napiVersion: v1\nmetadata:\n  name: first\n---\nkind: Service\napiVersion: v1\nmetadata:\n  name: second\n",
				"manifests/foo.csv.yaml": strings.Replace(testCSV, "    owned:\n    - name: foos.test.foo\n      version: v1\n      kind: Foo\n", "", 1),
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if len(db.Objects) != 3 {
					t.Fatalf("got %d objects, want 3", len(db.Objects))
				}
				if want := `{"apiVersion":"v1","data":{"big":12345678901234567,"f":1},"kind":"ConfigMap","metadata":{"name":"a"}}`; db.Objects[0] != want {
					t.Errorf("JSON object = %s, want %s", db.Objects[0], want)
				}
				if !strings.Contains(db.Objects[1], `"name":"first"`) {
					t.Errorf("multi-document manifest: got %s, want the first document", db.Objects[1])
				}
			},
		},
		{
			name: "Success/OddFilesSkipped",
			files: map[string]string{
				// No apiVersion: still an object (upstream only needs kind).
				"manifests/z.csv.yaml":   strings.Replace(testCSV, "apiVersion: operators.coreos.com/v1alpha1\n", "", 1),
				"manifests/foo.csv.yaml": "",
				// A stray backup holding a second CSV comes later: ignored.
				"manifests/z.csv.yaml.bak": strings.Replace(testCSV, "foo.v0.2.0", "foo.v9.9.9", 1),
				// Not decodable, no kind, a dotfile, an empty file.
				"manifests/broken.yaml":  "kind: [unclosed\n",
				"manifests/nokind.yaml":  "apiVersion: v1\nmetadata: {}\n",
				"manifests/.hidden.yaml": "kind: Secret\n",
				"manifests/empty.yaml":   "# a license header\n---\nkind: Secret\n",
				"manifests/sub/x.yaml":   "kind: Secret\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if db.Name != "foo.v0.2.0" {
					t.Errorf("name = %q: the first CSV must win", db.Name)
				}
				if len(db.Objects) != 2 {
					t.Errorf("got %d objects, want 2 (crd, csv)", len(db.Objects))
				}
				if len(b.Warnings) != 4 {
					t.Errorf("warnings = %q, want 4", b.Warnings)
				}
			},
		},
		{
			name: "Success/PropertiesAndDependencies",
			files: map[string]string{
				"metadata/dependencies.yaml": "---\ndependencies:\n- type: olm.package\n  value:\n    packageName: bar\n    version: <0.1.0\n- type: olm.gvk\n  value: {group: test.bar, version: v1alpha1, kind: Bar}\n- type: olm.constraint\n  value:\n    cel:\n      rule: 'a && b < 3'\n",
				"metadata/properties.yaml":   "properties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.13\"\n- type: olm.package\n  value: {packageName: ignored, version: 9.9.9}\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				// Built values are not HTML-escaped; values decoded from
				// YAML files carry json.Marshal's escapes.
				if got, want := propsOfType(db.Properties, "olm.package.required"), []string{`{"packageName":"bar","versionRange":"<0.1.0"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.package.required = %v, want %v", got, want)
				}
				if got, want := propsOfType(db.Properties, "olm.constraint"), []string{`{"cel":{"rule":"a \u0026\u0026 b \u003c 3"}}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.constraint = %v, want %v", got, want)
				}
				if got := propsOfType(db.Properties, "olm.gvk.required"); len(got) != 1 {
					t.Errorf("olm.gvk.required not de-duplicated: %v", got)
				}
				// properties.yaml cannot override the package.
				if got, want := propsOfType(db.Properties, "olm.package"), []string{`{"packageName":"foo","version":"0.2.0"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.package = %v, want %v", got, want)
				}
				wantTypes := []string{"olm.bundle.object", "olm.bundle.object", "olm.constraint", "olm.gvk", "olm.gvk", "olm.gvk.required", "olm.maxOpenShiftVersion", "olm.package", "olm.package.required"}
				if got := typesOf(db.Properties); !reflect.DeepEqual(got, wantTypes) {
					t.Errorf("types = %v, want %v", got, wantTypes)
				}
			},
		},
		{
			name: "Success/PropertiesFileHoldingDependencies",
			files: map[string]string{
				"metadata/properties.yaml": "dependencies:\n- type: olm.package\n  value:\n    packageName: prometheus\n    version: \"0.47.0\"\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if b.DependenciesFile != "metadata/properties.yaml" || b.PropertiesFile != "" {
					t.Errorf("dependencies file %q, properties file %q", b.DependenciesFile, b.PropertiesFile)
				}
				if got := propsOfType(db.Properties, "olm.package.required"); len(got) != 1 {
					t.Errorf("olm.package.required = %v", got)
				}
			},
		},
		{
			name: "Success/MalformedDependenciesIgnored",
			files: map[string]string{
				"metadata/dependencies.yaml": "dependencies:\n  - type: olm.gvk\n   value: {\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if b.DependenciesFile != "" || len(b.Dependencies) != 0 {
					t.Errorf("a malformed dependencies file must be ignored, got %v", b.Dependencies)
				}
			},
		},
		{
			name: "Success/CSVAnnotationOverridesPackage",
			files: map[string]string{
				"manifests/foo.csv.yaml": strings.Replace(testCSV, "    olm.skipRange: <0.2.0\n", "    olm.properties: '[{\"type\": \"olm.package\", \"value\": {\"packageName\": \"foo\", \"version\": \"7.0.0\"}}, {\"type\":\"olm.label\",\"value\":{\"label\":\"a<b\"}}]'\n", 1) + "  release: \"2\"\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if got, want := propsOfType(db.Properties, "olm.package"), []string{`{"packageName":"foo","version":"7.0.0"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.package = %v, want %v (the annotation wins and drops the release)", got, want)
				}
				// Values from the CSV annotation keep their raw characters.
				if got, want := propsOfType(db.Properties, "olm.label"), []string{`{"label":"a<b"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.label = %v, want %v", got, want)
				}
			},
		},
		{
			name: "Success/ReleaseNumber",
			files: map[string]string{
				"manifests/foo.csv.yaml": testCSV + "  release: 3.0\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if got, want := propsOfType(db.Properties, "olm.package"), []string{`{"packageName":"foo","version":"0.2.0","release":"3"}`}; !reflect.DeepEqual(got, want) {
					t.Errorf("olm.package = %v, want %v", got, want)
				}
			},
		},
		{
			name: "Success/V1beta1CRDAndAPIServices",
			files: map[string]string{
				"manifests/foo.crd.yaml": "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nspec:\n  group: test.foo\n  version: v1\n  names: {kind: Foo, plural: foos}\n  versions:\n  - name: v1\n  - name: v1beta1\n",
				"manifests/foo.csv.yaml": testCSV + "  apiservicedefinitions:\n    owned:\n    - {group: api.foo, version: v1, kind: Thing, name: things}\n    required:\n    - {group: api.bar, version: v2, kind: Other, name: others}\n",
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				want := []string{
					`{"group":"api.foo","kind":"Thing","version":"v1"}`,
					`{"group":"test.foo","kind":"Foo","version":"v1"}`,
					`{"group":"test.foo","kind":"Foo","version":"v1beta1"}`,
				}
				if got := propsOfType(db.Properties, "olm.gvk"); !reflect.DeepEqual(got, want) {
					t.Errorf("olm.gvk = %v, want %v", got, want)
				}
				if got := propsOfType(db.Properties, "olm.gvk.required"); len(got) != 2 {
					t.Errorf("olm.gvk.required = %v", got)
				}
			},
		},
		{
			name: "Success/NonDeploymentStrategy",
			files: map[string]string{
				"manifests/foo.csv.yaml": strings.Replace(testCSV, "strategy: deployment", "strategy: other", 1),
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if len(db.RelatedImages) != 1 {
					t.Errorf("relatedImages = %v, want only the CSV's", db.RelatedImages)
				}
			},
		},
		{
			name: "Success/CRLFAndJSONMetadata",
			files: map[string]string{
				"metadata/annotations.yaml": `{"annotations": {"operators.operatorframework.io.bundle.package.v1": "foo", "operators.operatorframework.io.bundle.channels.v1": "alpha"}}`,
				"manifests/foo.crd.yaml":    strings.ReplaceAll(testCRD, "\n", "\r\n"),
			},
			check: func(t *testing.T, b *Bundle, db *declcfg.Bundle) {
				if b.Package != "foo" || !reflect.DeepEqual(b.Channels, []string{"alpha"}) {
					t.Errorf("package %q channels %v", b.Package, b.Channels)
				}
				if len(propsOfType(db.Properties, "olm.gvk")) != 2 {
					t.Errorf("CRLF CRD not read: %v", db.Properties)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, db := render(t, testFS(tc.files), tc.image)
			tc.check(t, b, db)
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string
		wantFile string // FileError.File, "" for none
		want     string // substring of the error
	}{
		{
			name:  "Error/NoObjects",
			files: map[string]string{"manifests/foo.csv.yaml": "", "manifests/foo.crd.yaml": "", "manifests/x.txt": "not: [valid"},
			want:  "no bundle objects found",
		},
		{
			name:  "Error/NoCSV",
			files: map[string]string{"manifests/foo.csv.yaml": ""},
			want:  "no csv in bundle",
		},
		{
			name:     "Error/OwnedCRDMissing",
			files:    map[string]string{"manifests/foo.crd.yaml": ""},
			wantFile: "manifests/foo.csv.yaml",
			want:     "manifests/foo.csv.yaml:13: error checking provided apis in bundle foo.v0.2.0: couldn't find test.foo/v1/Foo (foos) in bundle. found: map[]",
		},
		{
			name:     "Error/OwnedCRDWrongPlural",
			files:    map[string]string{"manifests/foo.crd.yaml": strings.Replace(testCRD, "plural: foos", "plural: foox", 1)},
			wantFile: "manifests/foo.csv.yaml",
			want:     "found: map[test.foo/v1/Foo (foox):{} test.foo/v2/Foo (foox):{}]",
		},
		{
			name:  "Error/NoAnnotations",
			files: map[string]string{"metadata/annotations.yaml": "annotations:\n  other: x\n"},
			want:  "Could not find annotations file",
		},
		{
			name:     "Error/MalformedGVKDependency",
			files:    map[string]string{"metadata/dependencies.yaml": "dependencies:\n- type: olm.label\n  value: {}\n- type: olm.gvk\n  value: [1]\n"},
			wantFile: "metadata/dependencies.yaml",
			want:     `metadata/dependencies.yaml:4: get properties for bundle "foo.v0.2.0": parse property[1] of type "olm.gvk": json: cannot unmarshal array`,
		},
		{
			name:     "Error/MalformedPropertyJSONFile",
			files:    map[string]string{"metadata/properties.json": "{\n  \"properties\": [\n    {\"type\": \"olm.gvk\", \"value\": \"x\"}\n  ]\n}\n"},
			wantFile: "metadata/properties.json",
			want:     `metadata/properties.json:3: get properties for bundle "foo.v0.2.0": parse property[0] of type "olm.gvk"`,
		},
		{
			name:     "Error/RelatedImagesWrongType",
			files:    map[string]string{"manifests/foo.csv.yaml": strings.Replace(testCSV, "  relatedImages:\n  - name: operand\n    image: quay.io/foo/operand:v1\n", "  relatedImages: x\n", 1)},
			wantFile: "manifests/foo.csv.yaml",
			want:     "manifests/foo.csv.yaml:20: json: cannot unmarshal string into Go value of type []bundle.relatedImage",
		},
		{
			name:     "Error/UnsupportedCRDVersion",
			files:    map[string]string{"manifests/foo.crd.yaml": strings.Replace(testCRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v2", 1)},
			wantFile: "manifests/foo.crd.yaml",
			want:     "unsupported CRD version apiextensions.k8s.io/v2",
		},
		{
			name:     "Error/CSVBadAnnotationType",
			files:    map[string]string{"manifests/foo.csv.yaml": strings.Replace(testCSV, "olm.skipRange: <0.2.0", "count: 3", 1)},
			wantFile: "manifests/foo.csv.yaml",
			want:     "decoding ClusterServiceVersion: json: cannot unmarshal number",
		},
		{
			name:     "Error/VersionNotString",
			files:    map[string]string{"manifests/foo.csv.yaml": strings.Replace(testCSV, "version: 0.2.0", "version: 2", 1)},
			wantFile: "manifests/foo.csv.yaml",
			want:     "manifests/foo.csv.yaml:8: failed to derive properties: json: cannot unmarshal number into Go value of type string",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseFS(context.Background(), testFS(tc.files))
			if err == nil {
				_, err = b.Declcfg("")
			}
			if err == nil {
				t.Fatalf("want error containing %q, got success", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			var fe *FileError
			if tc.wantFile != "" {
				if !errors.As(err, &fe) || fe.File != tc.wantFile {
					t.Errorf("error %q does not name %s", err, tc.wantFile)
				}
				if !strings.HasPrefix(err.Error(), tc.wantFile+":") {
					t.Errorf("error %q does not start with the file", err)
				}
			}
		})
	}
}

func TestBundleObjectProperty(t *testing.T) {
	for _, data := range []string{"", "{}", `{"a":"<&>"}`, strings.Repeat("x\u2028y", 1000)} {
		got := bundleObjectProperty([]byte(data))
		want := property.MustBuild(property.BundleObject{Data: []byte(data)})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bundleObjectProperty(%q) = %s, want %s", data, got.Value, want.Value)
		}
	}
}
