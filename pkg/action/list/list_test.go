package list

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/render"
)

func bundleObject(t *testing.T, obj string) string {
	t.Helper()
	return `{"type":"olm.bundle.object","value":{"data":"` + base64.StdEncoding.EncodeToString([]byte(obj)) + `"}}`
}

// testCatalog has two packages: foo's head carries a CSV with a display
// name (as olm.bundle.object), bar's carries olm.csv.metadata only.
func testCatalog(t *testing.T) fstest.MapFS {
	csv := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"foo.v0.2.0"},"spec":{"displayName":"Foo Operator"}}`
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"}}`
	return fstest.MapFS{
		"foo/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0","skipRange":"<0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0","skips":["foo.v0.1.1","foo.v0.1.2"],"skipRange":">=0.1.0 <0.2.0"}]}
{"schema":"olm.channel","name":"beta","package":"foo","entries":[{"name":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"example.com/foo:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"example.com/foo:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}},` + bundleObject(t, crd) + `,` + bundleObject(t, csv) + `]}
`)},
		"bar/catalog.yaml": {Data: []byte(`---
schema: olm.package
name: bar
defaultChannel: alpha
---
schema: olm.channel
name: alpha
package: bar
entries:
- name: bar.v1.0.0
---
schema: olm.bundle
name: bar.v1.0.0
package: bar
image: example.com/bar:v1.0.0
properties:
- type: olm.package
  value: {packageName: bar, version: 1.0.0}
- type: olm.csv.metadata
  value: {displayName: Bar Operator, apiServiceDefinitions: {}, crdDescriptions: {}, provider: {}}
`)},
	}
}

func loadModel(t *testing.T, fsys fstest.MapFS) model.Model {
	t.Helper()
	cfg, err := declcfg.LoadFS(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.ConvertToModel(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPackages(t *testing.T) {
	got := Packages(loadModel(t, testCatalog(t)))
	want := []Package{
		{Name: "bar", DisplayName: "", DefaultChannel: "alpha"},
		{Name: "foo", DisplayName: "Foo Operator", DefaultChannel: "stable"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var buf bytes.Buffer
	if err := WritePackages(&buf, got); err != nil {
		t.Fatal(err)
	}
	wantTable := "" +
		"NAME  DISPLAY NAME  DEFAULT CHANNEL\n" +
		"bar                 alpha\n" +
		"foo   Foo Operator  stable\n"
	if buf.String() != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), wantTable)
	}
}

func TestChannels(t *testing.T) {
	m := loadModel(t, testCatalog(t))
	tests := []struct {
		name    string
		pkg     string
		want    []Channel
		table   string
		wantErr string
	}{
		{
			name: "Success/All",
			want: []Channel{
				{Package: "bar", Name: "alpha", Head: "bar.v1.0.0"},
				{Package: "foo", Name: "beta", Head: "foo.v0.1.0"},
				{Package: "foo", Name: "stable", Head: "foo.v0.2.0"},
			},
			table: "" +
				"PACKAGE  CHANNEL  HEAD\n" +
				"bar      alpha    bar.v1.0.0\n" +
				"foo      beta     foo.v0.1.0\n" +
				"foo      stable   foo.v0.2.0\n",
		},
		{
			name: "Success/OnePackage",
			pkg:  "bar",
			want: []Channel{{Package: "bar", Name: "alpha", Head: "bar.v1.0.0"}},
			table: "" +
				"PACKAGE  CHANNEL  HEAD\n" +
				"bar      alpha    bar.v1.0.0\n",
		},
		{name: "Error/UnknownPackage", pkg: "baz", wantErr: `unknown package "baz"; did you mean "bar"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Channels(m, tt.pkg)
			if tt.wantErr != "" {
				var nf *NotFoundError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &nf) {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			var buf bytes.Buffer
			if err := WriteChannels(&buf, got); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.table {
				t.Errorf("table:\n%s\nwant:\n%s", buf.String(), tt.table)
			}
		})
	}
}

// TestChannelHeadErrors builds channels a validated model never has, to
// check the ERROR cell and that packages without a head show no name.
func TestChannelHeadErrors(t *testing.T) {
	p := &model.Package{Name: "p", Channels: map[string]*model.Channel{}}
	multi := &model.Channel{Package: p, Name: "multi", Bundles: map[string]*model.Bundle{}}
	for _, n := range []string{"b", "a"} {
		multi.Bundles[n] = &model.Bundle{Package: p, Channel: multi, Name: n}
	}
	cycle := &model.Channel{Package: p, Name: "cycle", Bundles: map[string]*model.Bundle{
		"x": {Package: p, Name: "x", Replaces: "y"},
		"y": {Package: p, Name: "y", Replaces: "x"},
	}}
	p.Channels["multi"], p.Channels["cycle"] = multi, cycle
	p.DefaultChannel = multi
	m := model.Model{"p": p}

	rows, err := Channels(m, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteChannels(&buf, rows); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"PACKAGE  CHANNEL  HEAD\n" +
		"p        cycle    ERROR: no channel head found in graph\n" +
		"p        multi    ERROR: multiple channel heads found in graph: a, b\n"
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
	if got := Packages(m); len(got) != 1 || got[0].DisplayName != "" || got[0].DefaultChannel != "multi" {
		t.Errorf("packages: %+v", got)
	}
}

func TestBundles(t *testing.T) {
	m := loadModel(t, testCatalog(t))
	got, err := Bundles(m, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Bundle{
		{Package: "bar", Channel: "alpha", Name: "bar.v1.0.0", Version: "1.0.0", Skips: []string{}, Image: "example.com/bar:v1.0.0"},
		{Package: "foo", Channel: "beta", Name: "foo.v0.1.0", Version: "0.1.0", Skips: []string{}, Image: "example.com/foo:v0.1.0"},
		{Package: "foo", Channel: "stable", Name: "foo.v0.1.0", Version: "0.1.0", Skips: []string{}, SkipRange: "<0.1.0", Image: "example.com/foo:v0.1.0"},
		{Package: "foo", Channel: "stable", Name: "foo.v0.2.0", Version: "0.2.0", Replaces: "foo.v0.1.0", Skips: []string{"foo.v0.1.1", "foo.v0.1.2"}, SkipRange: ">=0.1.0 <0.2.0", Image: "example.com/foo:v0.2.0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	var buf bytes.Buffer
	if err := WriteBundles(&buf, got); err != nil {
		t.Fatal(err)
	}
	wantTable := "" +
		"PACKAGE  CHANNEL  BUNDLE      REPLACES    SKIPS                  SKIP RANGE      IMAGE\n" +
		"bar      alpha    bar.v1.0.0                                                     example.com/bar:v1.0.0\n" +
		"foo      beta     foo.v0.1.0                                                     example.com/foo:v0.1.0\n" +
		"foo      stable   foo.v0.1.0                                     <0.1.0          example.com/foo:v0.1.0\n" +
		"foo      stable   foo.v0.2.0  foo.v0.1.0  foo.v0.1.1,foo.v0.1.2  >=0.1.0 <0.2.0  example.com/foo:v0.2.0\n"
	if buf.String() != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), wantTable)
	}

	one, err := Bundles(m, "bar")
	if err != nil || len(one) != 1 || one[0].Name != "bar.v1.0.0" {
		t.Errorf("bar: %+v, %v", one, err)
	}
	if _, err := Bundles(m, "baz"); err == nil || err.Error() != `unknown package "baz"; did you mean "bar"?` {
		t.Errorf("baz: %v", err)
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range testCatalog(t) {
		write("good/"+name, string(f.Data))
	}
	write("bundle/manifests/csv.yaml", "kind: ClusterServiceVersion\n")
	write("bundle/metadata/annotations.yaml", "annotations: {}\n")
	write("invalid/c.json", `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"example.com/foo:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"example.com/foo:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}}]}
`)
	write("file.json", "{}")

	t.Run("Success/Directory", func(t *testing.T) {
		m, err := Load(ctx, filepath.Join(tmp, "good"), render.RegistryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 {
			t.Errorf("packages: %v", m)
		}
	})
	t.Run("Error/BundleDirectory", func(t *testing.T) {
		ref := filepath.Join(tmp, "bundle")
		_, err := Load(ctx, ref, render.RegistryOptions{})
		if err == nil || err.Error() != `cannot list non-index "`+ref+`"` {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("Error/File", func(t *testing.T) {
		ref := filepath.Join(tmp, "file.json")
		_, err := Load(ctx, ref, render.RegistryOptions{})
		if err == nil || err.Error() != `cannot list non-index "`+ref+`"` {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("Error/InvalidCatalog", func(t *testing.T) {
		_, err := Load(ctx, filepath.Join(tmp, "invalid"), render.RegistryOptions{})
		want := "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"stable\":\n        └── multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0"
		if err == nil || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})
	t.Run("Error/LoadErrorNamesFile", func(t *testing.T) {
		write("broken/x.json", "{\"schema\": 5}\n")
		_, err := Load(ctx, filepath.Join(tmp, "broken"), render.RegistryOptions{})
		if err == nil || !strings.Contains(err.Error(), "x.json:1") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	for name, f := range testCatalog(t) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	tests := []struct {
		name     string
		opts     Options
		wantRows int
		wantHead string
		wantErr  string
	}{
		{name: "Success/Packages", opts: Options{What: WhatPackages, Ref: dir}, wantRows: 2, wantHead: "NAME"},
		{name: "Success/ChannelsOfFoo", opts: Options{What: WhatChannels, Ref: dir, Package: "foo"}, wantRows: 2, wantHead: "PACKAGE  CHANNEL"},
		{name: "Success/Bundles", opts: Options{What: WhatBundles, Ref: dir}, wantRows: 4, wantHead: "PACKAGE  CHANNEL  BUNDLE"},
		{name: "Error/UnknownPackage", opts: Options{What: WhatBundles, Ref: dir, Package: "nope"}, wantErr: `unknown package "nope"`},
		{name: "Error/UnknownList", opts: Options{What: "widgets", Ref: dir}, wantErr: `unknown list "widgets"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(ctx, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := reflect.ValueOf(res.Rows()).Len(); n != tt.wantRows {
				t.Errorf("%d rows, want %d", n, tt.wantRows)
			}
			var buf bytes.Buffer
			if err := res.WriteTable(&buf); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(buf.String(), tt.wantHead) || strings.Count(buf.String(), "\n") != tt.wantRows+1 {
				t.Errorf("table:\n%s", buf.String())
			}
		})
	}
}
