package bundle

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestPropertyShapes renders every shape of property entry upstream
// accepts in metadata/properties.yaml (and dependencies.yaml, and the CSV's
// olm.properties annotation) and checks the rendered property. An entry
// without a value renders as "value": null, as upstream renders it; an
// olm.gvk or olm.package without one is the zero value of its type.
func TestPropertyShapes(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		typ              string
		want             []string // rendered values of typ
	}{
		{"MissingValue", "metadata/properties.yaml", "properties:\n- type: olm.maxOpenShiftVersion\n", "olm.maxOpenShiftVersion", []string{"null"}},
		{"NullValue", "metadata/properties.yaml", "properties:\n- type: x\n  value: null\n", "x", []string{"null"}},
		{"TildeValue", "metadata/properties.yaml", "properties:\n- type: x\n  value: ~\n", "x", []string{"null"}},
		{"EmptyValue", "metadata/properties.yaml", "properties:\n- type: x\n  value:\n", "x", []string{"null"}},
		{"MissingAndNullAreOne", "metadata/properties.yaml", "properties:\n- type: x\n- type: x\n  value: null\n", "x", []string{"null"}},
		{"QuotedString", "metadata/properties.yaml", "properties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.13\"\n", "olm.maxOpenShiftVersion", []string{`"4.13"`}},
		{"Float", "metadata/properties.yaml", "properties:\n- type: olm.maxOpenShiftVersion\n  value: 4.13\n", "olm.maxOpenShiftVersion", []string{`4.13`}},
		{"Integer", "metadata/properties.yaml", "properties:\n- type: x\n  value: 10\n", "x", []string{`10`}},
		{"BigInteger", "metadata/properties.yaml", "properties:\n- type: x\n  value: 12345678901234567890\n", "x", []string{`12345678901234567890`}},
		{"Bool", "metadata/properties.yaml", "properties:\n- type: x\n  value: true\n", "x", []string{`true`}},
		{"YAML11Yes", "metadata/properties.yaml", "properties:\n- type: x\n  value: yes\n", "x", []string{`true`}},
		{"Object", "metadata/properties.yaml", "properties:\n- type: olm.label\n  value: {label: a<b}\n", "olm.label", []string{`{"label":"a\u003cb"}`}}, // YAML goes through json.Marshal, HTML escaping included, as upstream

		{"Array", "metadata/properties.yaml", "properties:\n- type: x\n  value: [1, b, {c: d}]\n", "x", []string{`[1,"b",{"c":"d"}]`}},
		{"CaseInsensitiveKeys", "metadata/properties.yaml", "properties:\n- Type: x\n  VALUE: 1\n", "x", []string{`1`}},
		{"JSONFile", "metadata/properties.json", `{"properties":[{"type":"x"},{"type":"y","value":{"b":1,"a":2}}]}`, "x", []string{"null"}},
		{"JSONFileObject", "metadata/properties.json", `{"properties":[{"type":"y","value":{"b":1, "a":2}}]}`, "y", []string{`{"b":1, "a":2}`}}, // kept as written; the writer compacts it

		{"GVKWithoutValue", "metadata/properties.yaml", "properties:\n- type: olm.gvk\n", "olm.gvk",
			[]string{`{"group":"","kind":"","version":""}`, `{"group":"test.foo","kind":"Foo","version":"v1"}`, `{"group":"test.foo","kind":"Foo","version":"v2"}`}},
		{"PackageWithoutValueLosesToAnnotations", "metadata/properties.yaml", "properties:\n- type: olm.package\n", "olm.package", []string{`{"packageName":"foo","version":"0.2.0"}`}},
		{"DependencyLabelWithoutValue", "metadata/dependencies.yaml", "dependencies:\n- type: olm.label\n", "olm.label", []string{"null"}},
		{"DependencyGVKNullValue", "metadata/dependencies.yaml", "dependencies:\n- type: olm.gvk\n  value: null\n", "olm.gvk.required",
			[]string{`{"group":"","kind":"","version":""}`, `{"group":"test.bar","kind":"Bar","version":"v1alpha1"}`}},
		{"CSVAnnotationWithoutValue", "manifests/foo.csv.yaml",
			strings.Replace(testCSV, "    olm.skipRange: <0.2.0\n", "    olm.properties: '[{\"type\": \"x\"}]'\n", 1), "x", []string{"null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, db := render(t, testFS(map[string]string{tc.file: tc.data}), "")
			got := propsOfType(db.Properties, tc.typ)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s values = %v, want %v", tc.typ, got, tc.want)
			}
		})
	}
}

// TestDependencyWithoutValue: an olm.gvk or olm.package dependency written
// without a value fails as upstream, which parses the missing value as
// empty JSON (an explicit null is the zero value, as above).
func TestDependencyWithoutValue(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"GVK", "dependencies:\n- type: olm.gvk\n",
			`metadata/dependencies.yaml:2: get properties for bundle "foo.v0.2.0": parse property[0] of type "olm.gvk": unexpected end of JSON input`},
		{"Package", "dependencies:\n- type: olm.label\n- type: olm.package\n",
			`metadata/dependencies.yaml:3: get properties for bundle "foo.v0.2.0": parse property[1] of type "olm.package": unexpected end of JSON input`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseFS(context.Background(), testFS(map[string]string{"metadata/dependencies.yaml": tc.data}))
			if err != nil {
				t.Fatalf("ParseFS: %v", err)
			}
			_, err = b.Declcfg("")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Declcfg error = %v, want %s", err, tc.want)
			}
		})
	}
}

// TestPropertyWithoutValueThroughParseDir is the case of issue 10 item 12
// on disk: a certified bundle's properties.yaml entry without a value.
func TestPropertyWithoutValueThroughParseDir(t *testing.T) {
	dir := writeBundle(t, map[string]string{"metadata/properties.yaml": "properties:\n  - type: olm.maxOpenShiftVersion\n"})
	b, err := ParseDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.Declcfg("")
	if err != nil {
		t.Fatalf("Declcfg: %v", err)
	}
	if got := propsOfType(db.Properties, "olm.maxOpenShiftVersion"); !reflect.DeepEqual(got, []string{"null"}) {
		t.Errorf("got %v", got)
	}
}
