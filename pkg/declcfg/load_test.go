package declcfg

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"b/catalog.yaml": {Data: []byte(`---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v0.1.0
---
# leading comment
Schema: olm.bundle
Package: foo
Name: foo.v0.1.0
Image: quay.io/foo/foo:v0.1.0
`)},
		"a/other.json":   {Data: []byte(`{"schema":"custom","package":"foo","z":1}{"schema":"custom2"}`)},
		"a/.indexignore": {Data: []byte("README.md\n")},
		"a/README.md":    {Data: []byte("not fbc\n")},
		"empty.yaml":     {Data: []byte("")},
		"seps.yaml":      {Data: []byte("---\n---\n")},
	}
	cfg, err := LoadFS(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Packages) != 1 || len(cfg.Channels) != 1 || len(cfg.Bundles) != 1 || len(cfg.Others) != 2 {
		t.Fatalf("unexpected counts: %+v", cfg)
	}
	if got := cfg.Bundles[0]; got.Image != "quay.io/foo/foo:v0.1.0" || got.Pos.String() != "b/catalog.yaml:12:1" {
		t.Errorf("bundle %q at %s", got.Image, got.Pos)
	}
	if got := cfg.Others[0]; got.Pos.String() != "a/other.json:1:1" || string(got.Blob) != `{"package":"foo","schema":"custom","z":1}` {
		t.Errorf("other %s at %s", got.Blob, got.Pos)
	}
	if got := cfg.Others[1].Pos.String(); got != "a/other.json:1:42" {
		t.Errorf("second value at %s", got)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		pos      string
		upstream string
	}{
		{"Error/StrayReadme", map[string]string{"README.md": "not fbc\n"}, "README.md:1",
			"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {} at offset 9 (indicated by <==)\n \"not fbc\" <== "},
		{"Error/MalformedYAML", map[string]string{"c.yaml": "schema: olm.package\nname: foo\n---\njunk: [\n"}, "c.yaml:4",
			"error converting YAML to JSON: yaml: line 1: did not find expected node content"},
		{"Error/MalformedJSONStream", map[string]string{"c.json": "{\"schema\":\"a\"}\n{\"schema\":\"b\"}\n---\n"}, "c.json:3:2",
			"invalid character '-' in numeric literal"},
		{"Error/MissingSchema", map[string]string{"c.yaml": "name: foo\n"}, "c.yaml:1:1",
			"object '{\"name\":\"foo\"}\n' is missing root schema field"},
		{"Error/CommentOnlyDocument", map[string]string{"c.yaml": "# nothing\n"}, "c.yaml:1:1",
			"object '' is missing root schema field"},
		{"Error/NonStringSchemaJSON", map[string]string{"c.json": `{"schema": 5}`}, "c.json:1:1",
			"expected value for key \"schema\" to be a string, got number 5"},
		{"Error/NonStringSchemaYAML", map[string]string{"c.yaml": "schema: 5\n"}, "c.yaml:1",
			"error unmarshaling JSON: while decoding JSON: expected value for key \"schema\" to be a string, got number 5"},
		{"Error/NullName", map[string]string{"c.yaml": "schema: x\nname:\n"}, "c.yaml:1",
			"error unmarshaling JSON: while decoding JSON: expected value for key \"name\" to be a string, got null"},
		{"Error/CaseDuplicateKeys", map[string]string{"c.yaml": "schema: olm.package\nSchema: olm.bundle\n"}, "c.yaml:1",
			"error unmarshaling JSON: while decoding JSON: duplicate keys for key \"schema\": [Schema schema]"},
		{"Error/BadSeparator", map[string]string{"c.yaml": "schema: a\n--- x\n"}, "c.yaml:2",
			"invalid Yaml document separator: x"},
		{"Error/TypedParse", map[string]string{"c.yaml": "schema: olm.bundle\nimage: 5\n"}, "c.yaml:1:1",
			"parse bundle: json: cannot unmarshal number into Go struct field Bundle.image of type string"},
		{"Error/BundleObjectNotYAML", map[string]string{"c.yaml": "schema: olm.bundle\npackage: p\nname: b\nproperties:\n- {type: olm.bundle.object, value: {data: a2luZDogWwo=}}\n"}, "c.yaml:1:1",
			`read bundle objects: package "p", bundle "b": convert bundle object property at index 0 to JSON: yaml: line 1: did not find expected node content`},
		{"Error/BundleObjectNotObject", map[string]string{"c.yaml": "schema: olm.bundle\npackage: p\nname: b\nproperties:\n- {type: olm.package, value: {}}\n- {type: olm.bundle.object, value: [1]}\n"}, "c.yaml:1:1",
			`read bundle objects: package "p", bundle "b": parse property at index 1 as bundle object: json: cannot unmarshal array into Go value of type property.BundleObject`},
		{"Error/BundleObjectBadBase64Start", map[string]string{"c.json": `{"schema":"olm.bundle","package":"p","name":"b","properties":[{"type":"olm.bundle.object","value":{"data":"e*"}}]}`}, "c.json:1:1",
			`read bundle objects: package "p", bundle "b": parse property at index 0 as bundle object: illegal base64 data at input byte 1`},
		{"Error/FirstBadFileWins", map[string]string{"a.yaml": "name: x\n", "b.yaml": "junk: [\n"}, "a.yaml:1:1",
			"object '{\"name\":\"x\"}\n' is missing root schema field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range tc.files {
				fsys[k] = &fstest.MapFile{Data: []byte(v)}
			}
			_, err := LoadFS(context.Background(), fsys)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want a *LoadError, got %T %v", err, err)
			}
			if got := le.Pos.String(); !strings.HasPrefix(got, tc.pos) {
				t.Errorf("position %s, want %s", got, tc.pos)
			}
			if got := UpstreamMessage(err); got != tc.upstream {
				t.Errorf("message\ngot  %q\nwant %q", got, tc.upstream)
			}
			if !strings.HasPrefix(err.Error(), le.Pos.String()+": ") {
				t.Errorf("error %q does not start with its position", err)
			}
		})
	}
}

func TestCutBlob(t *testing.T) {
	whole := strings.Repeat("a", maxQuotedBlob)
	if got := cutBlob([]byte(whole)); got != whole {
		t.Errorf("a blob of %d bytes is cut: %q", maxQuotedBlob, got)
	}
	long := strings.Repeat("a", maxQuotedBlob+1)
	if got, want := cutBlob([]byte(long)), strings.Repeat("a", quotedBlobStart)+"... (57 more bytes)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A cut never splits a character: "é" (2 bytes) straddling the cut
	// moves it back one byte.
	split := strings.Repeat("a", quotedBlobStart-1) + "é" + strings.Repeat("b", 100)
	got := cutBlob([]byte(split))
	if want := strings.Repeat("a", quotedBlobStart-1) + "... (102 more bytes)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !utf8.ValidString(got) {
		t.Errorf("cut is not valid UTF-8: %q", got)
	}
}

func TestLoadErrorQuotesLongObjectCut(t *testing.T) {
	doc := "name: foo\ndescription: " + strings.Repeat("x", 1<<20) + "\n"
	_, err := LoadReader(strings.NewReader(doc), "csv.yaml")
	msg := UpstreamMessage(err)
	if len(msg) > 300 {
		t.Fatalf("message of %d bytes", len(msg))
	}
	if !strings.HasPrefix(msg, `object '{"description":"xxx`) || !strings.HasSuffix(msg, " more bytes)\n' is missing root schema field") {
		t.Errorf("message %q", msg)
	}
}

func TestJSONThenYAMLFallback(t *testing.T) {
	// One JSON value followed by YAML: upstream reads the rest of the file,
	// from just after the JSON value, as YAML.
	cfg, err := LoadReader(strings.NewReader("{\"schema\":\"a\"}\nschema: b\n"), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Others) != 2 || cfg.Others[1].Schema != "b" {
		t.Fatalf("got %+v", cfg.Others)
	}
	// With a separator, the newline after the JSON value forms a document
	// of its own, which decodes to an empty blob: upstream fails with
	// "object '' is missing root schema field". The JSON error that sent
	// the decoder to YAML is what is reported.
	_, err = LoadReader(strings.NewReader("{\"schema\":\"a\"}\n---\nschema: b\n"), "x.json")
	if err == nil || err.Error() != "x.json:2:2: invalid character '-' in numeric literal" {
		t.Fatalf("got %v", err)
	}
}

func TestWriteJSON(t *testing.T) {
	cfg, err := LoadReader(strings.NewReader(`
schema: olm.package
name: foo
defaultChannel: stable
icon: {base64data: aGVsbG8=, mediatype: image/png}
---
schema: olm.channel
package: foo
name: stable
---
schema: olm.bundle
package: foo
name: foo.v1
image: ""
properties:
- {type: olm.package, value: {version: 1.0.0, packageName: foo}}
relatedImages: [{image: a}]
---
schema: other
a: "<&>"
---
schema: olm.deprecations
package: foo
entries: [{reference: {schema: olm.package}, message: gone}]
`), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	want := `{
    "schema": "olm.package",
    "name": "foo",
    "defaultChannel": "stable",
    "icon": {
        "base64data": "aGVsbG8=",
        "mediatype": "image/png"
    }
}
{
    "schema": "olm.channel",
    "name": "stable",
    "package": "foo",
    "entries": null
}
{
    "schema": "olm.bundle",
    "name": "foo.v1",
    "package": "foo",
    "image": "",
    "properties": [
        {
            "type": "olm.package",
            "value": {
                "packageName": "foo",
                "version": "1.0.0"
            }
        }
    ],
    "relatedImages": [
        {
            "name": "",
            "image": "a"
        }
    ]
}
{
    "schema": "olm.deprecations",
    "package": "foo",
    "entries": [
        {
            "reference": {
                "schema": "olm.package"
            },
            "message": "gone"
        }
    ]
}
{
    "a": "<&>",
    "schema": "other"
}
`
	if buf.String() != want {
		t.Errorf("got:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteYAML(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "---\ndefaultChannel: stable\nicon:\n  base64data: aGVsbG8=\n  mediatype: image/png\nname: foo\nschema: olm.package\n---\n") {
		t.Errorf("yaml:\n%s", buf.String())
	}
}

// FuzzLoad feeds arbitrary files to the decoder: it must never panic, and
// every failure must be a positioned *LoadError.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"schema: olm.package\nname: foo\n",
		"{\"schema\":\"olm.bundle\",\"properties\":[{\"type\":\"olm.package\",\"value\":{}}]}\n{\"schema\":\"x\"}",
		"---\n# c\n---\nschema: olm.channel\nentries: [{name: a, skips: [b]}]\n",
		"{\"schema\":\"a\"}\n---\nschema: b\n",
		"not fbc",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := LoadReader(bytes.NewReader(data), "f")
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || le.Pos.File != "f" {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteJSON(*cfg, &buf); err != nil {
			t.Fatalf("write: %v", err)
		}
	})
}
