package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

func pos(line int) declcfg.Position {
	return declcfg.Position{File: "catalog.yaml", Line: line, Column: 1}
}

func pkg(name, def string, line int) declcfg.Package {
	return declcfg.Package{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: def, Pos: pos(line)}
}

func ch(p, name string, line int, entries ...declcfg.ChannelEntry) declcfg.Channel {
	return declcfg.Channel{Schema: declcfg.SchemaChannel, Package: p, Name: name, Entries: entries, Pos: pos(line)}
}

func pkgProp(p, v string) property.Property {
	return property.MustBuild(property.Package{PackageName: p, Version: v})
}

func bundle(p, name, version string, line int) declcfg.Bundle {
	return declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: p, Name: name, Image: "quay.io/x/" + name + ":1",
		Properties: []property.Property{pkgProp(p, version)}, Pos: pos(line)}
}

// valid is a small valid catalog: package foo, channel stable a <- b, and
// channel fast with b.
func valid() declcfg.DeclarativeConfig {
	return declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{pkg("foo", "stable", 1)},
		Channels: []declcfg.Channel{
			ch("foo", "stable", 5, declcfg.ChannelEntry{Name: "foo.v0.1.0"}, declcfg.ChannelEntry{Name: "foo.v0.2.0", Replaces: "foo.v0.1.0"}),
			ch("foo", "fast", 12, declcfg.ChannelEntry{Name: "foo.v0.2.0"}),
		},
		Bundles: []declcfg.Bundle{bundle("foo", "foo.v0.1.0", "0.1.0", 20), bundle("foo", "foo.v0.2.0", "0.2.0", 30)},
	}
}

func TestConvertToModel(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *declcfg.DeclarativeConfig)
		wantErr string
		code    string
		line    int
	}{
		{name: "Success/valid", mutate: func(*declcfg.DeclarativeConfig) {}},
		{name: "Success/short image names are fine", mutate: func(c *declcfg.DeclarativeConfig) { c.Bundles[0].Image = "busybox" }},
		{name: "Success/bundle objects replace the image", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Image = ""
			c.Bundles[0].Properties = append(c.Bundles[0].Properties, property.MustBuild(property.BundleObject{Data: []byte(`{}`)}))
		}},
		{name: "Success/release with normalized name", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[1].Properties = []property.Property{property.MustBuild(property.Package{PackageName: "foo", Version: "0.2.0", Release: "1.alpha"})}
			c.Bundles[1].Name = "foo-v0.2.0-1.alpha"
			c.Channels[0].Entries[1].Name = "foo-v0.2.0-1.alpha"
			c.Channels[1].Entries[0].Name = "foo-v0.2.0-1.alpha"
		}},
		{name: "Error/package with no name", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages = append(c.Packages, pkg("", "", 40))
		}, wantErr: "config contains package with no name", code: CodePackageNoName, line: 40},
		{name: "Error/duplicate package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages = append(c.Packages, pkg("foo", "", 40))
		}, wantErr: `duplicate package "foo"`, code: CodePackageDuplicate, line: 40},
		{name: "Error/package name not a label", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages = append(c.Packages, pkg("Foo_Bar", "", 40))
		}, wantErr: `invalid package name "Foo_Bar": [a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]`,
			code: CodePackageNameInvalid, line: 40},
		{name: "Error/package name with dots", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages = append(c.Packages, pkg("foo.bar", "", 40))
		}, wantErr: `invalid package name "foo.bar": [must not contain dots]`, code: CodePackageNameInvalid, line: 40},
		{name: "Error/package name too long", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages = append(c.Packages, pkg(strings.Repeat("a", 64), "", 40))
		}, wantErr: `invalid package name "` + strings.Repeat("a", 64) + `": [must be no more than 63 characters]`, code: CodePackageNameInvalid, line: 40},
		{name: "Error/channel of unknown package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels = append(c.Channels, ch("bar", "x", 40))
		}, wantErr: `unknown package "bar" for channel "x"`, code: CodeChannelUnknownPackage, line: 40},
		{name: "Error/channel with empty package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels = append(c.Channels, ch("", "x", 40))
		}, wantErr: `unknown package "" for channel "x"`, code: CodeChannelUnknownPackage, line: 40},
		{name: "Error/channel with no name", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels = append(c.Channels, ch("foo", "", 40))
		}, wantErr: `package "foo" contains channel with no name`, code: CodeChannelNoName, line: 40},
		{name: "Error/duplicate channel", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels = append(c.Channels, ch("foo", "fast", 40))
		}, wantErr: `package "foo" has duplicate channel "fast"`, code: CodeChannelDuplicate, line: 40},
		{name: "Error/duplicate entry", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[1].Entries = append(c.Channels[1].Entries, declcfg.ChannelEntry{Name: "foo.v0.2.0"})
		}, wantErr: `invalid package "foo", channel "fast": duplicate entry "foo.v0.2.0"`, code: CodeChannelDuplicateEntry, line: 12},
		{name: "Error/bundle without package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Package = ""
		}, wantErr: `package name must be set for bundle "foo.v0.1.0"`, code: CodeBundleNoPackage, line: 20},
		{name: "Error/bundle of unknown package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Package = "bar"
		}, wantErr: `unknown package "bar" for bundle "foo.v0.1.0"`, code: CodeBundleUnknownPackage, line: 20},
		{name: "Error/duplicate bundle", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles = append(c.Bundles, bundle("foo", "foo.v0.1.0", "0.1.0", 40))
		}, wantErr: `package "foo" has duplicate bundle "foo.v0.1.0"`, code: CodeBundleDuplicate, line: 40},
		{name: "Error/bad property", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = append(c.Bundles[0].Properties, property.Property{Type: "olm.gvk", Value: json.RawMessage(`{"group":1}`)})
		}, wantErr: `parse properties for bundle "foo.v0.1.0": parse property[1] of type "olm.gvk": json: cannot unmarshal number into Go struct field GVK.group of type string`,
			code: CodeBundlePropertiesInvalid, line: 20},
		{name: "Error/no olm.package property", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = nil
		}, wantErr: `package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 0`, code: CodeBundlePackagePropCount, line: 20},
		{name: "Error/two olm.package properties", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = append(c.Bundles[0].Properties, pkgProp("foo", "0.1.0"))
		}, wantErr: `package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 2`, code: CodeBundlePackagePropCount, line: 20},
		{name: "Error/olm.package of another package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{pkgProp("bar", "0.1.0")}
		}, wantErr: `package "foo" does not match "olm.package" property "bar"`, code: CodeBundlePackagePropMismatch, line: 20},
		{name: "Error/bad image", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Image = "Quay.io/Foo:bad tag"
		}, wantErr: `package "foo" bundle "foo.v0.1.0" image: invalid image pull spec "Quay.io/Foo:bad tag": invalid reference format: repository name must be lowercase`,
			code: CodeBundleImageInvalid, line: 20},
		{name: "Error/bad related image", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].RelatedImages = []declcfg.RelatedImage{{Name: "a", Image: ""}, {Name: "b", Image: "quay.io/x@sha256:abc"}}
		}, wantErr: `package "foo" bundle "foo.v0.1.0" relatedImages[1].image: invalid image pull spec "quay.io/x@sha256:abc": invalid reference format`,
			code: CodeBundleRelatedImageInvalid, line: 20},
		{name: "Error/v prefix", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{pkgProp("foo", "v0.1.0")}
		}, wantErr: `error parsing bundle "foo.v0.1.0" version "v0.1.0": Invalid character(s) found in major number "v0"`, code: CodeBundleVersionInvalid, line: 20},
		{name: "Error/four part version", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{pkgProp("foo", "0.1.0.1")}
		}, wantErr: `error parsing bundle "foo.v0.1.0" version "0.1.0.1": Invalid character(s) found in patch number "0.1"`, code: CodeBundleVersionInvalid, line: 20},
		{name: "Error/empty version", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{pkgProp("foo", "")}
		}, wantErr: `error parsing bundle "foo.v0.1.0" version "": Version string empty`, code: CodeBundleVersionInvalid, line: 20},
		{name: "Error/bad release", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{property.MustBuild(property.Package{PackageName: "foo", Version: "0.1.0", Release: "!!!"})}
		}, wantErr: `error parsing bundle "foo.v0.1.0" release version "!!!": invalid release "!!!": segment 0: Invalid character(s) found in prerelease "!!!"`,
			code: CodeBundleReleaseInvalid, line: 20},
		{name: "Error/bundle in no channel", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles = append(c.Bundles, bundle("foo", "foo.v0.3.0", "0.3.0", 40))
		}, wantErr: `package "foo", bundle "foo.v0.3.0" not found in any channel entries`, code: CodeBundleNotInChannel, line: 40},
		{name: "Error/entries without bundle in the last channel", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[1].Entries = append(c.Channels[1].Entries, declcfg.ChannelEntry{Name: "foo.v0.4.0"}, declcfg.ChannelEntry{Name: "foo.v0.3.0"})
		}, wantErr: `no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.3.0 foo.v0.4.0]`, code: CodeChannelEntryNoBundle, line: 12},
		{name: "Error/entry without bundle in an earlier channel reaches the tree", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[0].Entries = append(c.Channels[0].Entries, declcfg.ChannelEntry{Name: "foo.v0.3.0", Replaces: "foo.v0.2.0"})
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── invalid bundle \"foo.v0.3.0\":\n            ├── must be exactly one property with type \"olm.package\"\n            └── bundle image must be set",
			code: CodeBundlePackagePropMissing, line: 5},
		{name: "Error/deprecation without package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Pos: pos(50)}}
		}, wantErr: `package name must be set for deprecation item 0`, code: CodeDeprecationNoPackage, line: 50},
		{name: "Error/deprecation of unknown package", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecations, Package: "bar", Pos: pos(50)}}
		}, wantErr: `cannot apply deprecations to an unknown package "bar"`, code: CodeDeprecationUnknownPackage, line: 50},
		{name: "Error/two deprecations", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50)}, {Package: "foo", Pos: pos(60)}}
		}, wantErr: `expected a maximum of one deprecation per package: "foo"`, code: CodeDeprecationDuplicate, line: 60},
		{name: "Error/deprecation entry without schema", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{{Message: "m"}}}}
		}, wantErr: `schema must be set for deprecation entry [0] for package "foo"`, code: CodeDeprecationNoSchema, line: 50},
		{name: "Error/duplicate deprecation entry", mutate: func(c *declcfg.DeclarativeConfig) {
			e := declcfg.DeprecationEntry{Reference: declcfg.PackageScopedReference{Schema: "olm.bundle", Name: "foo.v0.1.0"}, Message: "m"}
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{e, e}}}
		}, wantErr: `duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.bundle", Name:"foo.v0.1.0"} for package "foo"`, code: CodeDeprecationDuplicateEntry, line: 50},
		{name: "Error/deprecated bundle not found", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{{Reference: declcfg.PackageScopedReference{Schema: "olm.bundle", Name: "x"}, Message: "m"}}}}
		}, wantErr: `cannot deprecate bundle "x" for package "foo": bundle not found`, code: CodeDeprecationBundleNotFound, line: 50},
		{name: "Error/deprecated channel not found", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{{Reference: declcfg.PackageScopedReference{Schema: "olm.channel", Name: "x"}, Message: "m"}}}}
		}, wantErr: `cannot deprecate channel "x" for package "foo": channel not found`, code: CodeDeprecationChannelMissing, line: 50},
		{name: "Error/deprecated package with a name", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{{Reference: declcfg.PackageScopedReference{Schema: "olm.package", Name: "x"}, Message: "m"}}}}
		}, wantErr: `package name must be empty for deprecated package "foo" (specified "x")`, code: CodeDeprecationPackageNamed, line: 50},
		{name: "Error/deprecation of unknown schema", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{{Reference: declcfg.PackageScopedReference{Schema: "olm.foo", Name: "x"}, Message: "m"}}}}
		}, wantErr: `cannot deprecate object declcfg.PackageScopedReference{Schema:"olm.foo", Name:"x"} referenced by entry 0 for package "foo": object schema unknown`,
			code: CodeDeprecationSchemaUnknown, line: 50},

		// The model validation tree.
		{name: "Error/default channel not set", mutate: func(c *declcfg.DeclarativeConfig) { c.Packages[0].DefaultChannel = "" },
			wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── default channel must be set", code: CodePackageNoDefaultChannel, line: 1},
		{name: "Error/missing default channel is added empty", mutate: func(c *declcfg.DeclarativeConfig) { c.Packages[0].DefaultChannel = "beta" },
			wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"beta\":\n        └── channel must contain at least one bundle", code: CodeChannelEmpty, line: 1},
		{name: "Error/package without channels", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Packages[0].DefaultChannel = ""
			c.Channels, c.Bundles = nil, nil
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    ├── default channel must be set\n    └── package must contain at least one channel", code: CodePackageNoDefaultChannel, line: 1},
		{name: "Error/multiple heads", mutate: func(c *declcfg.DeclarativeConfig) { c.Channels[0].Entries[1].Replaces = "" },
			wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0", code: CodeChannelMultipleHeads, line: 5},
		{name: "Error/cycle", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[0].Entries = append(c.Channels[0].Entries, declcfg.ChannelEntry{Name: "foo.v0.3.0", Replaces: "foo.v0.2.0"})
			c.Channels[0].Entries[0].Replaces = "foo.v0.2.0"
			c.Channels[1].Entries = append(c.Channels[1].Entries, declcfg.ChannelEntry{Name: "foo.v0.3.0", Replaces: "foo.v0.2.0"})
			c.Bundles = append(c.Bundles, bundle("foo", "foo.v0.3.0", "0.3.0", 40))
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── detected cycle in replaces chain of upgrade graph: foo.v0.2.0 -> foo.v0.1.0 -> foo.v0.2.0", code: CodeChannelCycle, line: 5},
		{name: "Error/no head", mutate: func(c *declcfg.DeclarativeConfig) { c.Channels[0].Entries[0].Replaces = "foo.v0.2.0" },
			wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── no channel head found in graph", code: CodeChannelNoHead, line: 5},
		{name: "Error/stranded", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[0].Entries = append(c.Channels[0].Entries, declcfg.ChannelEntry{Name: "foo.v0.3.0", Replaces: "foo.v0.2.0", Skips: []string{"foo.v0.2.0"}})
			c.Channels[1].Entries[0].Name = "foo.v0.3.0"
			c.Bundles = append(c.Bundles, bundle("foo", "foo.v0.3.0", "0.3.0", 40))
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── channel contains one or more stranded bundles: foo.v0.1.0", code: CodeChannelStranded, line: 5},
		{name: "Error/bundle checks", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Channels[0].Entries[1].Skips = []string{"foo.v0.0.1", ""}
			c.Channels[0].Entries[1].SkipRange = "not-a-range"
			c.Channels[1].Entries[0].Skips = []string{"foo.v0.0.1", ""}
			c.Channels[1].Entries[0].SkipRange = "not-a-range"
			c.Bundles[1].Image = ""
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n" +
			"    ├── invalid channel \"fast\":\n    │   └── invalid bundle \"foo.v0.2.0\":\n    │       ├── skip[1] is empty\n    │       ├── invalid skipRange \"not-a-range\": Could not get version from string: \"not-a-range\"\n    │       └── bundle image must be set\n" +
			"    └── invalid channel \"stable\":\n        └── invalid bundle \"foo.v0.2.0\":\n            ├── skip[1] is empty\n            ├── invalid skipRange \"not-a-range\": Could not get version from string: \"not-a-range\"\n            └── bundle image must be set",
			code: CodeBundleSkipEmpty, line: 30},
		{name: "Error/duplicate versions", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[1].Properties = []property.Property{pkgProp("foo", "0.1.0")}
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── duplicate versions found in bundles: [{0.1.0: [foo.v0.1.0, foo.v0.2.0]}]", code: CodePackageDuplicateVersions, line: 1},
		{name: "Error/build metadata distinguishes versions", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[0].Properties = []property.Property{pkgProp("foo", "0.1.0+1")}
			c.Bundles[1].Properties = []property.Property{pkgProp("foo", "0.1.0+2")}
			c.Packages = append(c.Packages, pkg("bar", "", 60))
		}, wantErr: "invalid index:\n└── invalid package \"bar\":\n    ├── default channel must be set\n    └── package must contain at least one channel", code: CodePackageNoDefaultChannel, line: 60},
		{name: "Error/release name not normalized", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Bundles[1].Properties = []property.Property{property.MustBuild(property.Package{PackageName: "foo", Version: "0.2.0+b", Release: "1"})}
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n" +
			"    ├── invalid channel \"fast\":\n    │   └── invalid bundle \"foo.v0.2.0\":\n    │       ├── name \"foo.v0.2.0\" does not match normalized name \"foo-v0.2.0+b-1\"\n    │       └── cannot use build metadata in version with a release version\n" +
			"    └── invalid channel \"stable\":\n        └── invalid bundle \"foo.v0.2.0\":\n            ├── name \"foo.v0.2.0\" does not match normalized name \"foo-v0.2.0+b-1\"\n            └── cannot use build metadata in version with a release version",
			code: CodeBundleNameNotNormalized, line: 30},
		{name: "Error/deprecation without message", mutate: func(c *declcfg.DeclarativeConfig) {
			c.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{
				{Reference: declcfg.PackageScopedReference{Schema: "olm.package"}},
				{Reference: declcfg.PackageScopedReference{Schema: "olm.channel", Name: "fast"}, Message: "use stable"},
			}}}
		}, wantErr: "invalid index:\n└── invalid package \"foo\":\n    └── invalid deprecation: message must be set", code: CodeDeprecationNoMessage, line: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid()
			tt.mutate(&cfg)
			m, err := ConvertToModel(cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ConvertToModel() error = %v", err)
				}
				if len(m) == 0 {
					t.Fatal("ConvertToModel() returned an empty model")
				}
				return
			}
			if err == nil {
				t.Fatalf("ConvertToModel() error = nil, want %q", tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Fatalf("ConvertToModel() error =\n%s\nwant\n%s", err, tt.wantErr)
			}
			issues := Issues(err)
			if len(issues) == 0 {
				t.Fatal("no issues")
			}
			first := issues[0]
			if first.Code != tt.code || first.Pos.Line != tt.line || first.Pos.File != "catalog.yaml" {
				t.Errorf("first issue = %+v, want code %s at catalog.yaml:%d", first, tt.code, tt.line)
			}
		})
	}
}

func TestConvertCollectsEveryIssue(t *testing.T) {
	cfg := valid()
	cfg.Packages = append(cfg.Packages, pkg("foo", "", 40), pkg("Bad", "", 41))
	cfg.Channels = append(cfg.Channels, ch("nope", "x", 42))
	cfg.Bundles[0].Image = "Bad Image"
	cfg.Bundles = append(cfg.Bundles, bundle("foo", "foo.v0.9.0", "0.9.0", 43))
	_, issues := Convert(cfg)
	var got []string
	for _, is := range issues {
		got = append(got, fmt.Sprintf("%s@%d", is.Code, is.Pos.Line))
	}
	want := []string{CodePackageDuplicate + "@40", CodePackageNameInvalid + "@41", CodeChannelUnknownPackage + "@42", CodeBundleImageInvalid + "@20", CodeBundleNotInChannel + "@43"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("issues = %v, want %v", got, want)
	}
	// The first issue is what ConvertToModel reports.
	_, err := ConvertToModel(cfg)
	var re *RuleError
	if !errors.As(err, &re) || re.Message != issues[0].Message {
		t.Errorf("ConvertToModel() error = %v, want %q", err, issues[0].Message)
	}
}

func TestModelFields(t *testing.T) {
	cfg := valid()
	cfg.Deprecations = []declcfg.Deprecation{{Package: "foo", Pos: pos(50), Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: "olm.bundle", Name: "foo.v0.2.0"}, Message: "old"},
	}}}
	m, err := ConvertToModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := m["foo"]
	if p.DefaultChannel != p.Channels["stable"] {
		t.Error("default channel not linked")
	}
	for _, chName := range []string{"stable", "fast"} {
		b := p.Channels[chName].Bundles["foo.v0.2.0"]
		if b.Version.String() != "0.2.0" || b.Image != "quay.io/x/foo.v0.2.0:1" || b.Deprecation == nil || b.Deprecation.Message != "old" || b.Pos.Line != 30 || b.Channel.Name != chName {
			t.Errorf("%s bundle = %+v", chName, b)
		}
	}
	if b := p.Channels["stable"].Bundles["foo.v0.2.0"]; b.Replaces != "foo.v0.1.0" || b.EntryPos.Line != 5 {
		t.Errorf("stable entry = %+v", b)
	}
}

func TestRelease(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "1", want: "1"},
		{in: "1.alpha-2", want: "1.alpha-2"},
		{in: "!!!", wantErr: `invalid release "!!!": segment 0: Invalid character(s) found in prerelease "!!!"`},
		{in: "1.01", wantErr: `invalid release "1.01": segment 1: Numeric PreRelease version must not contain leading zeroes "01"`},
		{in: "1..2", wantErr: `invalid release "1..2": segment 1: Prerelease is empty`},
		{in: strings.Repeat("1", 21), wantErr: `invalid release "` + strings.Repeat("1", 21) + `": exceeds maximum length of 20 characters`},
	}
	for _, tt := range tests {
		name := "Success/" + tt.in
		if tt.wantErr != "" {
			name = "Error/" + tt.in
		}
		t.Run(name, func(t *testing.T) {
			r, err := NewRelease(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("NewRelease() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || r.String() != tt.want {
				t.Fatalf("NewRelease() = %q, %v", r, err)
			}
		})
	}
	a, _ := NewRelease("1")
	b, _ := NewRelease("2")
	c, _ := NewRelease("1.1")
	if a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(c) >= 0 || Release(nil).Compare(a) >= 0 || a.Compare(a) != 0 {
		t.Error("Release.Compare order wrong")
	}
}

func TestParseProperties(t *testing.T) {
	big := strings.Repeat("QUJD", 20000) // > one chunk
	tests := []struct {
		name  string
		value string
	}{
		{"Success/compact", `{"data":"eyJhIjoxfQ=="}`},
		{"Success/large", `{"data":"` + big + `"}`},
		{"Success/null", `{"data":null}`},
		{"Success/extra key", `{"data":"eyJhIjoxfQ==","x":1}`},
		{"Error/bad base64", `{"data":"!!!!"}`},
		{"Error/bad base64 late", `{"data":"` + big + `A!AA"}`},
		{"Error/padding inside", `{"data":"` + strings.Repeat("QQ==", 9000) + `"}`},
		{"Error/not a string", `{"data":1}`},
		{"Error/not json", `{"data":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := []property.Property{pkgProp("foo", "1.0.0"), {Type: property.TypeBundleObject, Value: json.RawMessage(tt.value)}}
			_, wantErr := property.Parse(props)
			got, err := parseProperties(props)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("parseProperties() error = %v, want %v", err, wantErr)
			}
			if err == nil && (len(got.BundleObjects) != 1 || len(got.Packages) != 1) {
				t.Fatalf("parseProperties() = %+v", got)
			}
		})
	}
}

// TestValidateInternalRules checks the model invariants a conversion never
// breaks, on hand-built models.
func TestValidateInternalRules(t *testing.T) {
	p := &Package{Name: "", Channels: map[string]*Channel{}}
	other := &Package{Name: "other"}
	ch := &Channel{Name: "", Bundles: map[string]*Bundle{}}
	p.Channels["key"] = ch
	p.DefaultChannel = &Channel{Name: "ghost"}
	wrongCh := &Channel{Name: "elsewhere", Package: other}
	b := &Bundle{Name: "", Channel: wrongCh, Package: p, Image: "x"}
	orphan := &Bundle{Name: "orphan", Image: "x"}
	ch.Bundles["bkey"] = b
	ch.Bundles["orphan"] = orphan
	err := Model{"": p}.Validate()
	got := map[string]bool{}
	for _, is := range Issues(err) {
		got[is.Code] = true
	}
	for _, code := range []string{CodePackageNameEmpty, CodePackageChannelKey, CodePackageChannelLink, CodePackageDefaultNotFound,
		CodeChannelNameEmpty, CodeChannelNoPackage, CodeChannelBundleKey, CodeChannelBundleLink,
		CodeBundleNameEmpty, CodeBundleChannelUnset, CodeBundlePackageUnset, CodeBundlePackageChannel} {
		if !got[code] {
			t.Errorf("no %s issue in\n%v", code, err)
		}
	}
}
