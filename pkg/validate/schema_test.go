package validate

import (
	"strings"
	"testing"
)

// TestBuiltinSchemas checks opm's CUE schemas on good and bad values of
// every blob schema and known property type.
func TestBuiltinSchemas(t *testing.T) {
	s, err := LoadSchemas("")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.compile()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		blob    bool // #Blobs instead of #PropertyValues
		key     string
		value   string
		wantErr string // substring of "path: message"; "" = valid
	}{
		{name: "Success/package", blob: true, key: "olm.package", value: `{"schema":"olm.package","name":"foo","defaultChannel":"stable","icon":{"base64data":"aGk=","mediatype":"image/png"}}`},
		{name: "Error/package unknown field", blob: true, key: "olm.package", value: `{"schema":"olm.package","name":"foo","Icon":{}}`, wantErr: "Icon: field not allowed"},
		{name: "Error/package icon without mediatype", blob: true, key: "olm.package", value: `{"schema":"olm.package","name":"foo","icon":{"base64data":"aGk="}}`, wantErr: "icon.mediatype: field is required but not present"},
		{name: "Success/channel", blob: true, key: "olm.channel", value: `{"schema":"olm.channel","name":"s","package":"foo","entries":[{"name":"a","replaces":"b","skips":["c"],"skipRange":"<1.0.0"}]}`},
		{name: "Success/channel no entries", blob: true, key: "olm.channel", value: `{"schema":"olm.channel","name":"s","package":"foo","entries":[]}`},
		{name: "Error/channel entry skips not a list", blob: true, key: "olm.channel", value: `{"schema":"olm.channel","name":"s","package":"foo","entries":[{"name":"a","skips":"b"}]}`, wantErr: "entries[0].skips: conflicting values \"b\" and [...string]"},
		{name: "Success/bundle", blob: true, key: "olm.bundle", value: `{"schema":"olm.bundle","name":"a","package":"foo","image":"x","relatedImages":[{"name":"","image":"y"}]}`},
		{name: "Error/bundle related image without image", blob: true, key: "olm.bundle", value: `{"schema":"olm.bundle","name":"a","image":"x","relatedImages":[{"name":"n"}]}`, wantErr: "relatedImages[0].image: field is required"},
		{name: "Success/deprecations", blob: true, key: "olm.deprecations", value: `{"schema":"olm.deprecations","package":"foo","entries":[{"reference":{"schema":"olm.bundle","name":"a"},"message":"m"}]}`},
		{name: "Error/deprecation reference schema", blob: true, key: "olm.deprecations", value: `{"schema":"olm.deprecations","package":"foo","entries":[{"reference":{"schema":"olm.foo"},"message":"m"}]}`, wantErr: "entries[0].reference.schema: conflicting values \"olm.bundle\" and \"olm.foo\"; conflicting values \"olm.channel\" and \"olm.foo\"; conflicting values \"olm.package\" and \"olm.foo\""},

		{name: "Success/olm.package", key: "olm.package", value: `{"packageName":"foo","version":"1.0.0","release":"1"}`},
		{name: "Error/olm.package version number", key: "olm.package", value: `{"packageName":"foo","version":1}`, wantErr: "version: conflicting values 1 and string"},
		{name: "Success/olm.gvk", key: "olm.gvk", value: `{"group":"a","kind":"B","version":"v1"}`},
		{name: "Error/olm.gvk missing kind", key: "olm.gvk", value: `{"group":"a","version":"v1"}`, wantErr: "kind: field is required but not present"},
		{name: "Success/olm.gvk.required", key: "olm.gvk.required", value: `{"group":"a","kind":"B","version":"v1"}`},
		{name: "Success/olm.package.required", key: "olm.package.required", value: `{"packageName":"bar","versionRange":">=1.0.0"}`},
		{name: "Error/olm.package.required", key: "olm.package.required", value: `{"packageName":"bar"}`, wantErr: "versionRange: field is required"},
		{name: "Success/olm.bundle.object", key: "olm.bundle.object", value: `{"data":"e30="}`},
		{name: "Success/olm.csv.metadata", key: "olm.csv.metadata", value: `{"annotations":{"a":"b"},"apiServiceDefinitions":{},"crdDescriptions":{"owned":[]},"displayName":"X","installModes":[{"type":"OwnNamespace","supported":true}],"keywords":["k"],"links":[{"name":"n","url":"u"}],"maintainers":[{"name":"n","email":"e"}],"maturity":"alpha","provider":{"name":"p"}}`},
		{name: "Error/olm.csv.metadata install mode", key: "olm.csv.metadata", value: `{"installModes":[{"type":"OwnNamespace","supported":"yes"}]}`, wantErr: "installModes[0].supported"},
		{name: "Success/olm.constraint gvk", key: "olm.constraint", value: `{"failureMessage":"m","gvk":{"group":"a","kind":"B","version":"v1"}}`},
		{name: "Success/olm.constraint cel", key: "olm.constraint", value: `{"cel":{"rule":"properties.exists(p, p.type == 'x')"}}`},
		{name: "Success/olm.constraint compound", key: "olm.constraint", value: `{"all":{"constraints":[{"package":{"packageName":"p","versionRange":">=1.0.0"}},{"not":{"constraints":[{"gvk":{"group":"a","kind":"B","version":"v1"}}]}}]}}`},
		{name: "Error/olm.constraint two kinds", key: "olm.constraint", value: `{"cel":{"rule":"true"},"gvk":{"group":"a","kind":"B","version":"v1"}}`, wantErr: "exactly one of gvk, package, cel, all, any or not, found 2"},
		{name: "Error/olm.constraint nested", key: "olm.constraint", value: `{"any":{"constraints":[{"package":{"packageName":"p"}}]}}`, wantErr: "any.constraints[0].package.versionRange: field is required"},
		{name: "Error/olm.constraint unknown kind", key: "olm.constraint", value: `{"foo":{}}`, wantErr: "foo: field not allowed"},
		{name: "Success/olm.maxOpenShiftVersion string", key: "olm.maxOpenShiftVersion", value: `"4.12"`},
		{name: "Success/olm.maxOpenShiftVersion number", key: "olm.maxOpenShiftVersion", value: `4.12`},
		{name: "Error/olm.maxOpenShiftVersion", key: "olm.maxOpenShiftVersion", value: `{"v":"4.12"}`, wantErr: "conflicting values"},
		{name: "Error/olm.channel old form", key: "olm.channel", value: `{"name":"alpha"}`, wantErr: "name: field not allowed"},
		{name: "Success/olm.label", key: "olm.label", value: `{"label":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, kind := c.properties, "p"
			if tt.blob {
				table, kind = c.blobs, "b"
			}
			def, ok := c.def(table, kind, tt.key)
			if !ok {
				t.Fatalf("no schema for %s", tt.key)
			}
			var msgs []string
			for _, e := range trimPath(c.check(def, []byte(tt.value)), 2) {
				msgs = append(msgs, e.Path+": "+e.Message)
			}
			got := strings.Join(msgs, "\n")
			if tt.wantErr == "" {
				if got != "" {
					t.Fatalf("errors:\n%s", got)
				}
				return
			}
			if !strings.Contains(got, tt.wantErr) {
				t.Fatalf("errors:\n%s\nwant one containing %q", got, tt.wantErr)
			}
			// The shape check agrees.
			sc := &schemaChecker{c: c}
			if errs := sc.builtin(kind+":"+tt.key, def, []byte(tt.value)); len(errs) == 0 {
				t.Errorf("shape check accepted %s", tt.value)
			}
		})
	}
	if _, ok := c.def(c.properties, "p", "com.example.unknown"); ok {
		t.Error("unknown property types have a schema")
	}
	if _, ok := c.def(c.custom, "c", "olm.bundle"); ok {
		t.Error("#Custom has entries without --schema-dir")
	}
}

func BenchmarkSchemaCheck(b *testing.B) {
	s, _ := LoadSchemas("")
	c, _ := s.compile()
	def, _ := c.def(c.blobs, "b", "olm.bundle")
	data := []byte(`{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"quay.io/foo/bar:v0.1.0","relatedImages":[{"name":"a","image":"quay.io/a/b:1"},{"name":"b","image":"quay.io/a/c:1"}]}`)
	for b.Loop() {
		if errs := c.check(def, data); errs != nil {
			b.Fatal(errs)
		}
	}
}
