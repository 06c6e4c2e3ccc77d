package manifests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ceCatalog writes a catalog with one package per install mode
// combination (each bundle's olm.csv.metadata), a package with a
// dependency, and a package whose newest bundle OLM v1 refuses.
func ceCatalog(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	add := func(pkg, version, modes, extra string) {
		var im []string
		for _, m := range strings.Split(modes, ",") {
			im = append(im, `{"type":"`+m+`","supported":true}`)
		}
		b.WriteString(`{"schema":"olm.bundle","package":"` + pkg + `","name":"` + pkg + `.v` + version + `","image":"quay.io/example/` + pkg + `:v` + version + `","properties":[` +
			`{"type":"olm.package","value":{"packageName":"` + pkg + `","version":"` + version + `"}},` +
			`{"type":"olm.csv.metadata","value":{"apiServiceDefinitions":{},"crdDescriptions":{},"installModes":[` + strings.Join(im, ",") + `]}}` + extra + `]}` + "\n")
	}
	pkg := func(name string, versions ...string) {
		b.WriteString(`{"schema":"olm.package","name":"` + name + `","defaultChannel":"stable"}` + "\n")
		var entries []string
		prev := ""
		for _, v := range versions {
			e := `{"name":"` + name + `.v` + v + `"`
			if prev != "" {
				e += `,"replaces":"` + prev + `"`
			}
			entries = append(entries, e+"}")
			prev = name + ".v" + v
		}
		b.WriteString(`{"schema":"olm.channel","package":"` + name + `","name":"stable","entries":[` + strings.Join(entries, ",") + `]}` + "\n")
	}
	for name, modes := range map[string]string{
		"all": "AllNamespaces", "allown": "AllNamespaces,OwnNamespace", "own": "OwnNamespace",
		"single": "SingleNamespace", "ownsingle": "OwnNamespace,SingleNamespace", "multi": "MultiNamespace",
	} {
		pkg(name, "1.0.0")
		add(name, "1.0.0", modes, "")
	}
	pkg("dep", "1.0.0")
	add("dep", "1.0.0", "AllNamespaces", `,{"type":"olm.gvk.required","value":{"group":"example.com","kind":"Thing","version":"v1"}}`)
	pkg("newer", "1.0.0", "2.0.0")
	add("newer", "1.0.0", "AllNamespaces", "")
	add("newer", "2.0.0", "OwnNamespace", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestClusterExtension generates the ClusterExtension of each install mode
// combination and validates it against the ClusterExtension CRD's schema:
// the experimental one (which has spec.config) always, the standard one
// when there is no config.
func TestClusterExtension(t *testing.T) {
	dir := ceCatalog(t)
	standard := crdValidator(t, "clusterextension-crd-standard.yaml")
	experimental := crdValidator(t, "clusterextension-crd-experimental.yaml")
	gate := []string{"SingleOwnNamespaceInstallSupport=true"}
	for _, tc := range []struct {
		o     ClusterExtensionOptions
		watch string // the watchNamespace written ("" for no config)
		err   string // a refusal, instead
	}{
		{o: ClusterExtensionOptions{Package: "all"}},
		{o: ClusterExtensionOptions{Package: "all", Channels: []string{"stable"}, Version: ">=1.0.0, <2", Name: "all-ext", Namespace: "ops"}},
		{o: ClusterExtensionOptions{Package: "all", WatchNamespace: "x"}, err: "supports AllNamespaces only"},
		{o: ClusterExtensionOptions{Package: "allown"}},
		{o: ClusterExtensionOptions{Package: "allown", WatchNamespace: "allown"}, watch: "allown"},
		{o: ClusterExtensionOptions{Package: "own"}, err: "OLM v1 refuses own.v1.0.0"},
		{o: ClusterExtensionOptions{Package: "own", FeatureGates: gate}, watch: "own"},
		{o: ClusterExtensionOptions{Package: "own", FeatureGates: gate, WatchNamespace: "other"}, err: "supports OwnNamespace only"},
		{o: ClusterExtensionOptions{Package: "single", FeatureGates: gate}, err: "give the namespace it watches"},
		{o: ClusterExtensionOptions{Package: "single", FeatureGates: gate, WatchNamespace: "single"}, err: "watches another namespace"},
		{o: ClusterExtensionOptions{Package: "single", FeatureGates: gate, WatchNamespace: "team-a"}, watch: "team-a"},
		{o: ClusterExtensionOptions{Package: "ownsingle", FeatureGates: gate}, watch: "ownsingle"},
		{o: ClusterExtensionOptions{Package: "ownsingle", FeatureGates: gate, Namespace: "ops", WatchNamespace: "team-a"}, watch: "team-a"},
		{o: ClusterExtensionOptions{Package: "multi", FeatureGates: gate}, err: "installs bundles that support AllNamespaces, OwnNamespace or SingleNamespace"},
		{o: ClusterExtensionOptions{Package: "dep"}, err: "declares a dependency"},
		{o: ClusterExtensionOptions{Package: "newer"}, err: "OLM v1 installs newer.v1.0.0 (1.0.0): pin it with --version 1.0.0"},
		{o: ClusterExtensionOptions{Package: "newer", Version: "1.0.0"}},
		{o: ClusterExtensionOptions{Package: "newer", Version: "3.x"}, err: `has no bundle in any channel with a version in "3.x"`},
		{o: ClusterExtensionOptions{Package: "newer", Channels: []string{"stabel"}}, err: `did you mean "stable"?`},
		{o: ClusterExtensionOptions{Package: "nope"}, err: `unknown package "nope"`},
	} {
		tc.o.Catalog = dir
		res, err := ClusterExtension(context.Background(), tc.o)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc.o, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.o, err)
			continue
		}
		obj := decode(t, res.YAML)
		if errs := experimental(obj); len(errs) > 0 {
			t.Errorf("%+v: fails the experimental CRD's schema: %v\n%s", tc.o, errs, res.YAML)
		}
		spec := obj["spec"].(map[string]any)
		cfg, _ := spec["config"].(map[string]any)
		got := ""
		if cfg != nil {
			got, _ = cfg["inline"].(map[string]any)["watchNamespace"].(string)
		} else if errs := standard(obj); len(errs) > 0 {
			t.Errorf("%+v: fails the standard CRD's schema: %v\n%s", tc.o, errs, res.YAML)
		}
		if got != tc.watch {
			t.Errorf("%+v: watchNamespace %q, want %q\n%s", tc.o, got, tc.watch, res.YAML)
		}
	}
	// spec.config is a field of the experimental CRD only: the standard
	// one would prune it (or, with strict field validation, refuse it).
	for file, want := range map[string]bool{"clusterextension-crd-standard.yaml": false, "clusterextension-crd-experimental.yaml": true} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		crd := decode(t, data)
		spec := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
		if _, ok := spec["config"]; ok != want {
			t.Errorf("%s: spec.config defined %v, want %v", file, ok, want)
		}
	}
	// The validator is not a no-op.
	res, err := ClusterExtension(context.Background(), ClusterExtensionOptions{Catalog: dir, Package: "own", FeatureGates: gate})
	if err != nil {
		t.Fatal(err)
	}
	obj := decode(t, res.YAML)
	obj["spec"].(map[string]any)["source"].(map[string]any)["sourceType"] = "Image"
	if errs := experimental(obj); len(errs) == 0 {
		t.Error("sourceType Image passes the experimental CRD's schema")
	}
}

func TestClusterExtensionUsage(t *testing.T) {
	for _, o := range []ClusterExtensionOptions{
		{Package: "Bad_Package"},
		{Package: "app", Channels: []string{"-x"}},
		{Package: "app", Namespace: "Ops"},
		{Package: "app", Version: "not a range"},
		{Package: "app", FeatureGates: []string{"Nope=true"}},
		{Package: "app", Version: strings.Repeat("1", 65)},
	} {
		_, err := ClusterExtension(context.Background(), o)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

func TestClusterExtensionOutput(t *testing.T) {
	res, err := ClusterExtension(context.Background(), ClusterExtensionOptions{Catalog: ceCatalog(t), Package: "ownsingle", Channels: []string{"stable"},
		Version: "~1.0", Namespace: "ops", FeatureGates: []string{"SingleOwnNamespaceInstallSupport=true"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata:
  name: ownsingle
spec:
  config:
    configType: Inline
    inline:
      watchNamespace: ops
  namespace: ops
  source:
    catalog:
      channels:
      - stable
      packageName: ownsingle
      version: ~1.0
    sourceType: Catalog
`
	if string(res.YAML) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.YAML, want)
	}
	if res.Bundle.Name != "ownsingle.v1.0.0" || len(res.Notes) < 2 {
		t.Errorf("bundle %s, notes %q", res.Bundle.Name, res.Notes)
	}
}
