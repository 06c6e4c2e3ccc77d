package migrations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

const csvJSON = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion",` +
	`"metadata":{"name":"foo.v1.0.0","annotations":{"b":"2","a":"x \u003c y"},"labels":{"l":"v"},"creationTimestamp":null},` +
	`"spec":{"version":"1.0.0","displayName":"Foo","description":"<b>foo</b>","provider":{"name":"Acme"},` +
	`"customresourcedefinitions":{"owned":[{"name":"foos.test","version":"v1","kind":"Foo","specDescriptors":[{"path":"size","value":{"a":"\u003c"}}]}]},` +
	`"installModes":[{"type":"AllNamespaces","supported":true}],"keywords":["k"],"maturity":"stable",` +
	`"nativeAPIs":[{"group":"","version":"v1","kind":"Pod"}],"install":{"strategy":"deployment"}}}`

func TestCSVMetadata(t *testing.T) {
	cases := []struct {
		name    string
		csv     string
		want    string
		wantErr string
	}{
		{
			name: "Success/FieldOrderAndEscaping",
			csv:  csvJSON,
			// Struct order; maps sorted; strings not HTML-escaped, raw
			// descriptor values kept as they were.
			want: `{"annotations":{"a":"x < y","b":"2"},"apiServiceDefinitions":{},` +
				`"crdDescriptions":{"owned":[{"name":"foos.test","version":"v1","kind":"Foo","specDescriptors":[{"path":"size","value":{"a":"\u003c"}}]}]},` +
				`"description":"<b>foo</b>","displayName":"Foo","installModes":[{"type":"AllNamespaces","supported":true}],` +
				`"keywords":["k"],"labels":{"l":"v"},"maturity":"stable","nativeAPIs":[{"group":"","version":"v1","kind":"Pod"}],"provider":{"name":"Acme"}}`,
		},
		{
			name: "Success/Empty",
			csv:  `{"kind":"ClusterServiceVersion","metadata":{"name":"x"},"spec":{}}`,
			want: `{"apiServiceDefinitions":{},"crdDescriptions":{},"provider":{}}`,
		},
		{
			// Upstream's ActionDescriptor has no value field: a value
			// written in the CSV is dropped; spec and status descriptors
			// keep theirs.
			name: "Success/ActionDescriptorValueDropped",
			csv: `{"kind":"ClusterServiceVersion","spec":{"customresourcedefinitions":{"owned":[{"name":"foos.test","version":"v1","kind":"Foo",` +
				`"statusDescriptors":[{"path":"s","value":1}],"actionDescriptors":[{"path":"a","value":2,"x-descriptors":["x"]}]}]}}}`,
			want: `{"apiServiceDefinitions":{},"crdDescriptions":{"owned":[{"name":"foos.test","version":"v1","kind":"Foo",` +
				`"statusDescriptors":[{"path":"s","value":1}],"actionDescriptors":[{"path":"a","x-descriptors":["x"]}]}]},"provider":{}}`,
		},
		{
			name:    "Error/BadVersion",
			csv:     `{"kind":"ClusterServiceVersion","spec":{"version":"not.a.version.at.all"}}`,
			wantErr: "decoding ClusterServiceVersion",
		},
		{
			name:    "Error/BadKeywords",
			csv:     `{"kind":"ClusterServiceVersion","spec":{"keywords":"one"}}`,
			wantErr: "cannot unmarshal string",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := CSVMetadata([]byte(tc.csv))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != property.TypeCSVMetadata || string(p.Value) != tc.want {
				t.Errorf("got %s %s\nwant %s", p.Type, p.Value, tc.want)
			}
		})
	}
}

func bundleObject(data string) property.Property {
	return property.MustBuild(property.BundleObject{Data: []byte(data)})
}

func TestMigrate(t *testing.T) {
	pkg := property.MustBuild(property.Package{PackageName: "foo", Version: "1.0.0"})
	obj := bundleObject(csvJSON)
	meta, err := CSVMetadata([]byte(csvJSON))
	if err != nil {
		t.Fatal(err)
	}
	// A YAML CSV, as upstream's own declcfg load tests embed one.
	yamlObj := bundleObject("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: b\nspec:\n  version: 1.0.0\n  displayName: B <b>\n")
	yamlMeta, err := CSVMetadata([]byte(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"b"},"spec":{"displayName":"B \u003cb\u003e","version":"1.0.0"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		level   string
		in      declcfg.Bundle
		want    []property.Property
		wantErr string
	}{
		{
			name:  "Success/Converts",
			level: LevelBundleObjectToCSVMetadata,
			in:    declcfg.Bundle{Name: "b", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{pkg, obj, obj}},
			want:  []property.Property{pkg, meta},
		},
		{
			name:  "Success/AllLevel",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{pkg, obj}},
			want:  []property.Property{pkg, meta},
		},
		{
			name:  "Success/NoneLevel",
			level: LevelNone,
			in:    declcfg.Bundle{Name: "b", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{pkg, obj}},
			want:  []property.Property{pkg, obj},
		},
		{
			name:  "Success/NoImageSkipped",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", CsvJSON: csvJSON, Properties: []property.Property{pkg, obj}},
			want:  []property.Property{pkg, obj},
		},
		{
			name:  "Success/ExistingMetadataSkipped",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", Image: "img", CsvJSON: csvJSON, Properties: []property.Property{pkg, obj, meta}},
			want:  []property.Property{pkg, obj, meta},
		},
		{
			name:  "Success/LoadedCatalogBundle",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", Image: "img", Properties: []property.Property{pkg, obj}},
			want:  []property.Property{pkg, meta},
		},
		{
			name:  "Success/LoadedCatalogBundleYAMLObject",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", Image: "img", Properties: []property.Property{pkg, yamlObj}},
			want:  []property.Property{pkg, yamlMeta},
		},
		{
			name:    "Error/LoadedCatalogBundleBadYAMLObject",
			level:   LevelAll,
			in:      declcfg.Bundle{Name: "b", Package: "foo", Image: "img", Properties: []property.Property{pkg, bundleObject("kind: [\n")}},
			wantErr: `migration "bundle-object-to-csv-metadata": read bundle objects: package "foo", bundle "b": convert bundle object property at index 1 to JSON: yaml: line 1: did not find expected node content`,
		},
		{
			name:  "Success/NoCSVObject",
			level: LevelAll,
			in:    declcfg.Bundle{Name: "b", Image: "img", Properties: []property.Property{pkg, bundleObject(`{"kind":"Secret"}`)}},
			want:  []property.Property{pkg, bundleObject(`{"kind":"Secret"}`)},
		},
		{
			name:    "Error/UnknownLevel",
			level:   "bogus",
			in:      declcfg.Bundle{Name: "b"},
			wantErr: `unknown migration level "bogus"`,
		},
		{
			name:    "Error/BadCSV",
			level:   LevelAll,
			in:      declcfg.Bundle{Name: "b", Image: "img", CsvJSON: `{"spec":{"version":1}}`, Properties: []property.Property{pkg, obj}},
			wantErr: `bundle "b": decoding ClusterServiceVersion`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{tc.in}}
			err := Migrate(cfg, tc.level)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Bundles[0].Properties; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("properties:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, level := range []string{"", "none", "bundle-object-to-csv-metadata", "all"} {
		if err := Check(level); err != nil {
			t.Errorf("Check(%q) = %v", level, err)
		}
	}
	if err := Check("bogus"); err == nil || err.Error() != `unknown migration level "bogus"` {
		t.Errorf("Check(bogus) = %v", err)
	}
}
