package crd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse feeds Parse arbitrary JSON: it must return a CRD or an error,
// never panic, and a CRD it returns must compare with itself without a
// change and with the test CRD without an error.
func FuzzParse(f *testing.F) {
	js, _ := yaml.YAMLToJSON([]byte(testCRD))
	f.Add(js)
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"},"spec":{"version":"v1","validation":{"openAPIV3Schema":{"properties":{"a":{"items":[{"type":"string"}],"additionalProperties":true}}}}}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"},"spec":{"versions":[{"name":"v1","served":true,"schema":{"openAPIV3Schema":{"oneOf":[{"required":["a"]}],"not":{},"dependencies":{"a":["b"],"c":{}},"enum":[1,"x",null]}}}]}}`))
	base, err := Parse(js)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		ctx := context.Background()
		same, err := Compare(ctx, c, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range same {
			if !ch.Safe {
				t.Fatalf("a CRD compared with itself: %s", ch.Message)
			}
		}
		if _, err := Compare(ctx, base, c); err != nil {
			t.Fatal(err)
		}
		if _, err := Compare(ctx, c, base); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzValidate validates arbitrary JSON objects against the test CRD: no
// panic, and the same result twice.
func FuzzValidate(f *testing.F) {
	c := mustCRD(f, testCRD)
	f.Add(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":3,"mode":"slow","choice":{"a":"x"}}}`)
	f.Add(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":"x","port":[1],"tags":[1,2,3],"note":null,"labels":{"a":1}}}`)
	f.Add(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"ratio":1e400,"created":"x","ip":"::1"}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) != nil || obj == nil {
			return
		}
		obj["apiVersion"], obj["kind"] = "example.com/v1", "Widget"
		a, err := c.Validate(context.Background(), obj)
		if err != nil {
			return
		}
		b, err := c.Validate(context.Background(), obj)
		if err != nil || len(a.Errors) != len(b.Errors) || len(a.Pruned) != len(b.Pruned) {
			t.Fatalf("not deterministic: %v / %v (%v)", a, b, err)
		}
	})
}
