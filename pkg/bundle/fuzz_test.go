package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/pkg/declcfg"
)

// FuzzDecodeObject feeds arbitrary manifest bytes to the YAMLOrJSON object
// decoder: it must not panic, and what it accepts must marshal to JSON that
// decodes back to an object with a kind.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		testCSV, testCRD,
		`{"kind":"A","n":1e400}`,
		"{\"kind\":\"A\"}\n---\nkind: B\n",
		"---\nkind: A\nx: 12345678901234567890\n",
		"kind: A\n---x\n",
		"kind: A\r\nv: !!binary aGVsbG8=\r\n",
		"                               {\"kind\":\"A\"}",
		"- 1\n- 2\n",
		"kind: A\nx: -0.0\ny: 1e21\nz: 18446744073709551615\nw: -0\nv: 0.1\n",
		"kind: A\n? [a, b]\n: c\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, js, err := decodeObject(data)
		sobj, sjs, serr := decodeObjectSlow(data)
		same := func() bool {
			return (err == nil) == (serr == nil) && string(js) == string(sjs) && reflect.DeepEqual(obj, sobj)
		}
		// Keys that stringify alike (1 and "1") make upstream's result
		// random: the fast path's must be one of the outcomes.
		for i := 0; i < 50 && !same(); i++ {
			sobj, sjs, serr = decodeObjectSlow(data)
		}
		if !same() {
			t.Fatalf("fast and slow paths differ:\n fast %v %s %v\n slow %v %s %v", obj, js, err, sobj, sjs, serr)
		}
		if err != nil || obj == nil {
			return
		}
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("accepted object does not marshal: %v", err)
		}
		if string(out) != string(js) {
			t.Fatalf("returned JSON differs from json.Marshal of the object:\n%s\n%s", js, out)
		}
		var back map[string]any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("marshalled object does not decode: %v", err)
		}
		if k, _ := back["kind"].(string); k == "" {
			t.Fatalf("accepted object without kind: %s", out)
		}
	})
}

// FuzzParseFS parses a bundle whose CSV and metadata files are arbitrary: it
// must not panic, and a parsed bundle must build its olm.bundle blob or fail
// with an error.
func FuzzParseFS(f *testing.F) {
	// Small seeds: seeded with the full test CSV, the fuzzer made no
	// progress here (no new executions after the seeds); FuzzDecodeObject
	// covers full manifests.
	const csv = "kind: ClusterServiceVersion\nmetadata: {name: a}\nspec: {version: 1.0.0, replaces: b}\n"
	f.Add([]byte(csv), []byte("annotations: {operators.operatorframework.io.bundle.package.v1: p}"), []byte("dependencies: [{type: olm.gvk, value: {group: g, kind: K, version: v1}}]"))
	f.Add([]byte(csv), []byte(`{"annotations":{"operators.operatorframework.io.bundle.channels.v1":"c"}}`), []byte("properties: [{type: olm.package, value: 1}]"))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: null\n"), []byte("annotations: {operators.operatorframework.io.bundle.package.v1: p}"), []byte("dependencies: [{type: olm.package, value: null}]"))
	f.Fuzz(func(t *testing.T, csv, annotations, extra []byte) {
		fsys := fstest.MapFS{
			"manifests/csv.yaml":         {Data: csv},
			"metadata/annotations.yaml":  {Data: annotations},
			"metadata/dependencies.yaml": {Data: extra},
		}
		b, err := ParseFS(context.Background(), fsys)
		if err != nil {
			return
		}
		if _, err := b.Declcfg("img"); err != nil {
			return
		}
		if _, err := b.PackageProperty(); err != nil {
			t.Fatalf("Declcfg succeeded but PackageProperty failed: %v", err)
		}
	})
}

// FuzzMetadata parses bundles whose metadata files (annotations,
// properties, dependencies) are arbitrary: parsing must not panic, and a
// rendered bundle must write as valid JSON (every property value
// included: a property without a value is null).
func FuzzMetadata(f *testing.F) {
	f.Add([]byte(testAnnotations), []byte("properties:\n- type: olm.maxOpenShiftVersion\n"), []byte("dependencies:\n- type: olm.label\n"))
	f.Add([]byte(testAnnotations), []byte(`{"properties":[{"type":"x","value":{"b":1, "a":[2]}}]}`), []byte("dependencies: [{type: olm.gvk}, {type: olm.package, value: {packageName: p, version: '>1'}}]"))
	f.Add([]byte(`{"annotations":{"operators.operatorframework.io.bundle.package.v1":"p"}}`), []byte("properties:\n- Type: t\n  VALUE: yes\n- type: olm.package\n"), []byte("---\n---\n"))
	f.Add([]byte("annotations: [[[["), []byte("properties: {}"), []byte("dependencies: ~"))
	f.Fuzz(func(t *testing.T, annotations, properties, dependencies []byte) {
		fsys := testFS(map[string]string{
			"metadata/annotations.yaml": string(annotations),
		})
		fsys["metadata/properties.yaml"] = &fstest.MapFile{Data: properties}
		fsys["metadata/dependencies.yaml"] = &fstest.MapFile{Data: dependencies}
		b, err := ParseFS(context.Background(), fsys)
		if err != nil {
			return
		}
		db, err := b.Declcfg("")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := declcfg.WriteJSON(declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{*db}}, &buf); err != nil {
			t.Fatalf("write: %v", err)
		}
		dec := json.NewDecoder(&buf)
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("rendered invalid JSON (%v):\n%s", err, buf.String())
			}
		}
	})
}
