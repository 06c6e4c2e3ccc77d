package crd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// testCRD is a CRD in the shape controller-gen writes, with one field per
// kind of check.
const testCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10, format: int32}
              mode: {type: string, enum: [fast, slow], default: fast}
              name: {type: string, minLength: 2, maxLength: 5, pattern: '^[a-z]+$'}
              ratio: {type: number, exclusiveMaximum: true, maximum: 1, multipleOf: 0.25}
              port: {x-kubernetes-int-or-string: true}
              tags: {type: array, maxItems: 2, items: {type: string}}
              labels: {type: object, additionalProperties: {type: string}, maxProperties: 2}
              note: {type: string, nullable: true}
              created: {type: string, format: date-time}
              ip: {type: string, format: ipv4}
              raw: {type: object, x-kubernetes-preserve-unknown-fields: true}
              choice:
                type: object
                oneOf:
                - required: [a]
                - required: [b]
                properties:
                  a: {type: string}
                  b: {type: string}
              containers:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    pull: {type: string, default: Always}
`

func mustCRD(t testing.TB, doc string) *CRD {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func object(t testing.TB, doc string) map[string]any {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(js)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidate(t *testing.T) {
	c := mustCRD(t, testCRD)
	head := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	tests := []struct {
		name   string
		spec   string
		errs   []string // substrings of the errors, in order
		pruned []string
	}{
		{name: "valid", spec: "{size: 3, name: abc, ratio: 0.5, port: 80, tags: [a], labels: {x: 'y'}, note: null, created: '2024-01-02T03:04:05Z', ip: 10.0.0.1, raw: {any: [1, {b: 2}]}, choice: {a: x}, containers: [{name: c}]}"},
		{name: "int or string", spec: "{size: 3, port: http}"},
		{name: "required", spec: "{mode: slow}", errs: []string{".spec.size: required"}},
		{name: "type", spec: "{size: three}", errs: []string{".spec.size: must be of type integer, not string"}},
		{name: "integer from a float", spec: "{size: 2.5}", errs: []string{".spec.size: must be of type integer, not number"}},
		{name: "bounds", spec: "{size: 11, name: a, ratio: 1}", errs: []string{
			".spec.name: must be at least 2 characters long", ".spec.ratio: must be less than 1", ".spec.size: must be less than or equal to 10"}},
		{name: "pattern and maxLength", spec: "{size: 1, name: ABCDEF}", errs: []string{".spec.name: may not be longer than 5", `.spec.name: "ABCDEF" does not match the pattern ^[a-z]+$`}},
		{name: "multipleOf", spec: "{size: 1, ratio: 0.3}", errs: []string{".spec.ratio: must be a multiple of 0.25"}},
		{name: "enum", spec: "{size: 1, mode: medium}", errs: []string{`.spec.mode: unsupported value "medium": must be one of "fast", "slow"`}},
		{name: "int-or-string rejects a list", spec: "{size: 1, port: [1]}", errs: []string{".spec.port: must be an integer or a string"}},
		{name: "null", spec: "{size: null}", errs: []string{".spec.size: must be of type integer, not null"}},
		{name: "lists and maps", spec: "{size: 1, tags: [a, b, c], labels: {a: x, b: z, c: 1}}", errs: []string{
			".spec.labels: must have at most 2 properties", ".spec.labels.c: must be of type string", ".spec.tags: must have at most 2 items"}},
		{name: "formats", spec: "{size: 1, created: yesterday, ip: 300.1.1.1}", errs: []string{
			`.spec.created: "yesterday" is not a valid date-time`, `.spec.ip: "300.1.1.1" is not a valid ipv4`}},
		{name: "oneOf none", spec: "{size: 1, choice: {}}", errs: []string{".spec.choice: must validate against exactly one schema of oneOf, validates against 0"}},
		{name: "oneOf both", spec: "{size: 1, choice: {a: x, b: z}}", errs: []string{"validates against 2"}},
		{name: "pruned", spec: "{size: 1, extra: 1, containers: [{name: c, other: 2}], raw: {kept: 1}}",
			pruned: []string{".spec.containers[0].other", ".spec.extra"}},
		{name: "int32", spec: "{size: 1, containers: []}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Validate(context.Background(), object(t, head+"spec: "+tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range res.Errors {
				got = append(got, e.String())
			}
			if len(got) != len(tt.errs) {
				t.Fatalf("errors = %q, want %d like %q", got, len(tt.errs), tt.errs)
			}
			for i, want := range tt.errs {
				if !strings.Contains(got[i], want) {
					t.Errorf("error %d = %q, want it to contain %q", i, got[i], want)
				}
			}
			if strings.Join(res.Pruned, ",") != strings.Join(tt.pruned, ",") {
				t.Errorf("pruned = %q, want %q", res.Pruned, tt.pruned)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := mustCRD(t, testCRD)
	obj := object(t, "apiVersion: example.com/v1\nkind: Widget\nspec: {size: 1, containers: [{name: a}, {name: b, pull: Never}]}")
	got := c.Version("v1").Default(obj)
	js, _ := json.Marshal(got)
	want := `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"containers":[{"name":"a","pull":"Always"},{"name":"b","pull":"Never"}],"mode":"fast","size":1}}`
	if string(js) != want {
		t.Errorf("defaulted = %s\nwant        %s", js, want)
	}
	if _, ok := obj["spec"].(map[string]any)["mode"]; ok {
		t.Error("Default modified its argument")
	}
}

func TestValidateNotThisCRD(t *testing.T) {
	c := mustCRD(t, testCRD)
	for _, doc := range []string{
		"apiVersion: other.com/v1\nkind: Widget",
		"apiVersion: example.com/v2\nkind: Widget",
		"apiVersion: example.com/v1\nkind: Gadget",
	} {
		if _, err := c.Validate(context.Background(), object(t, doc)); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}

func TestValidateBounded(t *testing.T) {
	c := mustCRD(t, testCRD)
	deep := strings.Repeat(`{"a":`, MaxDepth+5) + "1" + strings.Repeat("}", MaxDepth+5)
	obj := object(t, `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":1,"raw":`+deep+`}}`)
	// unknown data is not walked: nothing to bound
	if res, err := c.Validate(context.Background(), obj); err != nil || !res.Valid() {
		t.Errorf("deep object under x-kubernetes-preserve-unknown-fields: %v %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var big []string
	for range 5000 {
		big = append(big, `{"name":"x"}`)
	}
	obj = object(t, `{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":1,"containers":[`+strings.Join(big, ",")+`]}}`)
	if _, err := c.Validate(ctx, obj); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestParseBounded(t *testing.T) {
	deep := strings.Repeat(`{"properties":{"a":`, MaxDepth+2) + "{}" + strings.Repeat("}}", MaxDepth+2)
	doc := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"},"spec":{"group":"b","versions":[{"name":"v1","schema":{"openAPIV3Schema":` + deep + `}}]}}`
	if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("deep schema: err = %v", err)
	}
}
