package sqlite

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/property"
)

// The test databases in testdata/schema (NAME.db.gz) are written by this
// file: one
// catalog (two packages, two channels, skips, a skipRange, an icon,
// provided and required APIs, related images, a package dependency) as
// upstream's loader of each schema version would have written it, from
// version 0 to 13, plus variants at version 13. `go test ./pkg/sqlite -run
// TestDatabasesCurrent -update` writes them; without -update the test
// checks that the committed files (gzipped) are what this code writes.
var update = flag.Bool("update", false, "rewrite testdata/schema/*.db")

// testBundle describes one bundle of the test catalog.
type testBundle struct {
	name, pkg, version, replaces, skipRange, image string
	skips, channels                                []string
	owned, required                                []crdKey // CRDs
	ownedAPIs                                      []apiKey // API services
	relatedImages                                  []string
	operatorImage                                  string
	icon                                           bool
	props, deps                                    []TypedValue
}

type crdKey struct{ plural, group, version, kind string }
type apiKey struct{ name, group, version, kind string }

func (k crdKey) name() string { return k.plural + "." + k.group }

// etcd is the API the catalog's first package owns and the second requires.
var etcd = crdKey{"etcdclusters", "etcd.database.coreos.com", "v1beta2", "EtcdCluster"}

func testBundles() []testBundle {
	return []testBundle{
		{
			name: "etcdoperator.v0.6.1", pkg: "etcd", version: "0.6.1", image: "quay.io/test/etcd-bundle:0.6.1",
			channels: []string{"alpha"}, owned: []crdKey{etcd}, operatorImage: "quay.io/coreos/etcd-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2",
		},
		{
			name: "etcdoperator.v0.9.0", pkg: "etcd", version: "0.9.0", replaces: "etcdoperator.v0.6.1", image: "quay.io/test/etcd-bundle:0.9.0",
			channels: []string{"alpha", "beta"}, owned: []crdKey{etcd, {"etcdbackups", "etcd.database.coreos.com", "v1beta2", "EtcdBackup"}},
			operatorImage: "quay.io/coreos/etcd-operator@sha256:db563baa8194fcfe39d1df744ed70024b0f1f9e9b55b5923c2f3a413c44dc6b8",
		},
		{
			name: "etcdoperator.v0.9.2", pkg: "etcd", version: "0.9.2", replaces: "etcdoperator.v0.9.0", image: "quay.io/test/etcd-bundle:0.9.2",
			skips: []string{"etcdoperator.v0.9.1", "etcdoperator.v0.6.1"}, skipRange: ">=0.6.0 <0.9.2",
			channels: []string{"alpha"}, owned: []crdKey{etcd, {"etcdbackups", "etcd.database.coreos.com", "v1beta2", "EtcdBackup"}},
			ownedAPIs:     []apiKey{{"v1beta2.etcd.example.com", "etcd.example.com", "v1beta2", "EtcdStatus"}},
			operatorImage: "quay.io/coreos/etcd-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2",
			relatedImages: []string{"quay.io/coreos/etcd@sha256:3816b6daf9b66d6ced6f0f966314e2d4f894982c6b1493061502f8c2bf86ac84"},
			icon:          true,
			props:         []TypedValue{{valid("olm.maxOpenShiftVersion"), valid(`"4.8"`)}},
		},
		{
			name: "prometheusoperator.0.15.0", pkg: "prometheus", version: "0.15.0", image: "quay.io/test/prometheus-bundle:0.15.0",
			channels: []string{"preview"}, owned: []crdKey{{"prometheuses", "monitoring.coreos.com", "v1", "Prometheus"}},
			operatorImage: "quay.io/coreos/prometheus-operator@sha256:0e92dd9b5789c4b13d53e1319d0a6375bcca4caaf0d698af61198061222a576d",
		},
		{
			name: "prometheusoperator.0.22.2", pkg: "prometheus", version: "0.22.2", replaces: "prometheusoperator.0.15.0", image: "quay.io/test/prometheus-bundle:0.22.2",
			channels: []string{"preview"}, owned: []crdKey{{"prometheuses", "monitoring.coreos.com", "v1", "Prometheus"}}, required: []crdKey{etcd},
			operatorImage: "quay.io/coreos/prometheus-operator@sha256:3daa69a8c6c2f1d35dcf1fe48a7cd8b230e55f5229a1ded438f687debade5bcf",
			relatedImages: []string{"quay.io/coreos/prometheus-config-reloader:v0.22.2", "quay.io/coreos/configmap-reload:v0.0.1"},
			icon:          true,
			deps:          []TypedValue{{valid("olm.package"), valid(`{"packageName":"etcd","version":">=0.9.0"}`)}},
		},
	}
}

// csvJSON writes the bundle's CSV as upstream stored it: compact JSON,
// keys sorted, a newline after.
func (tb testBundle) csv() map[string]any {
	var owned, required []any
	for _, k := range tb.owned {
		owned = append(owned, map[string]any{"name": k.name(), "version": k.version, "kind": k.kind, "displayName": k.kind})
	}
	for _, k := range tb.required {
		required = append(required, map[string]any{"name": k.name(), "version": k.version, "kind": k.kind})
	}
	spec := map[string]any{
		"displayName": tb.pkg + " operator",
		"version":     tb.version,
		"customresourcedefinitions": map[string]any{
			"owned": owned,
		},
		"install": map[string]any{
			"strategy": "deployment",
			"spec": map[string]any{"deployments": []any{map[string]any{
				"name": tb.pkg + "-operator",
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": "operator", "image": tb.operatorImage}},
				}}},
			}}},
		},
		"installModes": []any{map[string]any{"type": "OwnNamespace", "supported": true}},
	}
	if required != nil {
		spec["customresourcedefinitions"].(map[string]any)["required"] = required
	}
	if tb.ownedAPIs != nil {
		var apis []any
		for _, a := range tb.ownedAPIs {
			apis = append(apis, map[string]any{"name": a.name, "group": a.group, "version": a.version, "kind": a.kind, "deploymentName": tb.pkg + "-operator"})
		}
		spec["apiservicedefinitions"] = map[string]any{"owned": apis}
	}
	if tb.replaces != "" {
		spec["replaces"] = tb.replaces
	}
	if tb.skips != nil {
		spec["skips"] = tb.skips
	}
	if tb.relatedImages != nil {
		var ris []any
		for i, img := range tb.relatedImages {
			ris = append(ris, map[string]any{"name": fmt.Sprintf("image%d", i), "image": img})
		}
		spec["relatedImages"] = ris
	}
	if tb.icon {
		// an SVG, base64 with spaces in it (upstream strips them on a second try)
		spec["icon"] = []any{map[string]any{"base64data": "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxMCAxMCI+ PHJlY3Qgd2lkdGg9IjEwIiBoZWlnaHQ9IjEwIi8+PC9zdmc+", "mediatype": "image/svg+xml"}}
	}
	annotations := map[string]any{"capabilities": "Basic Install"}
	if tb.skipRange != "" {
		annotations["olm.skipRange"] = tb.skipRange
	}
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata":   map[string]any{"name": tb.name, "namespace": "placeholder", "annotations": annotations},
		"spec":       spec,
	}
}

// encode is upstream's unstructured JSON encoding: json.Encoder, so keys
// sorted, HTML escaped, a newline after.
func encode(v any) string {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		panic(err)
	}
	return buf.String()
}

func (tb testBundle) crds() []map[string]any {
	var out []map[string]any
	for _, k := range tb.owned {
		out = append(out, map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": k.name()},
			"spec": map[string]any{
				"group": k.group, "scope": "Namespaced",
				"names":    map[string]any{"kind": k.kind, "plural": k.plural},
				"versions": []any{map[string]any{"name": k.version, "served": true, "storage": true}},
			},
		})
	}
	return out
}

// row is the operatorbundle row of the bundle.
func (tb testBundle) row() *Bundle {
	csv := encode(tb.csv())
	manifests := csv
	for _, crd := range tb.crds() {
		manifests += encode(crd)
	}
	b := &Bundle{
		Name:           tb.name,
		CSV:            valid(csv),
		Manifests:      valid(manifests),
		Path:           valid(tb.image),
		Version:        valid(tb.version),
		SkipRange:      valid(tb.skipRange),
		Replaces:       valid(tb.replaces),
		Skips:          valid(strings.Join(tb.skips, ",")),
		SubstitutesFor: valid(""),
	}
	// properties: the provided APIs, then the bundle's own
	for _, k := range tb.owned {
		v, _ := json.Marshal(property.GVK{Group: k.group, Kind: k.kind, Version: k.version})
		b.Properties = append(b.Properties, TypedValue{valid("olm.gvk"), valid(string(v))})
	}
	for _, a := range tb.ownedAPIs {
		v, _ := json.Marshal(property.GVK{Group: a.group, Kind: a.kind, Version: a.version})
		b.Properties = append(b.Properties, TypedValue{valid("olm.gvk"), valid(string(v))})
	}
	b.Properties = append(b.Properties, tb.props...)
	b.Dependencies = append(b.Dependencies, tb.deps...)
	for _, k := range tb.required {
		v, _ := json.Marshal(property.GVK{Group: k.group, Kind: k.kind, Version: k.version})
		b.Dependencies = append(b.Dependencies, TypedValue{valid("olm.gvk"), valid(string(v))})
	}
	return b
}

func (tb testBundle) images() []string {
	out := []string{tb.image, tb.operatorImage}
	return append(out, tb.relatedImages...)
}

// testContents is the test catalog, loaded as upstream's replaces mode
// loads it.
func testContents(t testing.TB, bundles []testBundle) *Contents {
	c := NewContents()
	heads := map[string]map[string]testBundle{}
	var pkgs []string
	for _, tb := range bundles {
		if err := c.AddBundle(tb.row(), tb.images()); err != nil {
			t.Fatal(err)
		}
		if heads[tb.pkg] == nil {
			heads[tb.pkg] = map[string]testBundle{}
			pkgs = append(pkgs, tb.pkg)
		}
		for _, ch := range tb.channels {
			heads[tb.pkg][ch] = tb // later bundles are newer
		}
	}
	for _, pkg := range pkgs {
		var hs []Head
		var names []string
		for ch := range heads[pkg] {
			names = append(names, ch)
		}
		sort.Strings(names)
		for _, ch := range names {
			hs = append(hs, Head{Channel: ch, Bundle: heads[pkg][ch].name})
		}
		if err := c.SetPackageChannels(pkg, names[0], hs); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// apiRows are the api tables' rows of a bundle.
type apiRow struct {
	group, version, kind, plural string
	required                     bool
}

func (tb testBundle) apis() []apiRow {
	var out []apiRow
	for _, k := range tb.owned {
		out = append(out, apiRow{k.group, k.version, k.kind, k.plural, false})
	}
	for _, a := range tb.ownedAPIs {
		out = append(out, apiRow{a.group, a.version, a.kind, a.name, false})
	}
	for _, k := range tb.required {
		out = append(out, apiRow{k.group, k.version, k.kind, k.plural, true})
	}
	return out
}

// writeDB writes the contents as a database of schema version v: the
// tables and columns of that version, filled as upstream's loader of that
// version filled them.
func writeDB(t testing.TB, path string, v int, c *Contents, bundles []testBundle) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 0; i <= v; i++ {
		if err := steps[i](ctx, tx); err != nil {
			t.Fatalf("schema step %d: %v", i, err)
		}
	}
	exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version bigint NOT NULL, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)`)
	exec(`INSERT INTO schema_migrations(version, timestamp) VALUES (?, '2021-01-01 00:00:00')`, v)

	byName := map[string]testBundle{}
	for _, tb := range bundles {
		byName[tb.name] = tb
	}
	names := sortedNames(c.Bundles)
	for _, n := range names {
		b := c.Bundles[n]
		cols := []string{"name", "csv", "bundle"}
		vals := []any{b.Name, b.CSV, b.Manifests}
		if v >= 2 {
			cols, vals = append(cols, "bundlepath"), append(vals, b.Path)
		}
		if v >= 5 {
			cols, vals = append(cols, "version", "skiprange"), append(vals, b.Version, b.SkipRange)
		}
		if v >= 7 {
			cols, vals = append(cols, "replaces", "skips"), append(vals, b.Replaces, b.Skips)
		}
		if v >= 11 {
			cols, vals = append(cols, "substitutesfor"), append(vals, b.SubstitutesFor)
		}
		exec(`INSERT INTO operatorbundle(`+strings.Join(cols, ", ")+`) VALUES (?`+strings.Repeat(", ?", len(cols)-1)+`)`, vals...)
		if v >= 1 {
			for _, img := range c.RelatedImages[n] {
				exec(`INSERT INTO related_image(image, operatorbundle_name) VALUES (?, ?)`, img, n)
			}
		}
		if v >= 9 {
			for _, p := range b.Properties {
				exec(`INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`, p.Type, p.Value, n, b.Version, b.Path)
			}
		}
		if v >= 8 {
			for _, d := range b.Dependencies {
				exec(`INSERT INTO dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`, d.Type, d.Value, n, b.Version, b.Path)
			}
		}
		if v >= 12 && b.Deprecated() {
			exec(`INSERT INTO deprecated(operatorbundle_name) VALUES (?)`, n)
		}
	}
	// the package first, its default channel once its channels are there:
	// at version 0 the default channel is a foreign key to the channel
	for _, pn := range c.PackageOrder {
		p := c.Packages[pn]
		exec(`INSERT INTO package(name) VALUES (?)`, p.Name)
		for _, ch := range p.Channels {
			exec(`INSERT INTO channel(name, package_name, head_operatorbundle_name) VALUES (?, ?, ?)`, ch.Name, p.Name, ch.Head)
		}
		exec(`UPDATE package SET default_channel = ? WHERE name = ?`, p.DefaultChannel, p.Name)
	}
	for _, e := range c.Entries {
		exec(`INSERT INTO channel_entry(entry_id, channel_name, package_name, operatorbundle_name, replaces, depth) VALUES (?, ?, ?, ?, ?, ?)`,
			e.ID, e.Channel, e.Package, e.Bundle, e.Replaces, e.Depth)
	}
	// APIs: by channel entry before version 6, by bundle from 6 on
	for _, n := range names {
		tb, ok := byName[n]
		if !ok {
			continue
		}
		b := c.Bundles[n]
		for _, a := range tb.apis() {
			if a.required && v < 3 {
				continue
			}
			exec(`INSERT OR REPLACE INTO api(group_name, version, kind, plural) VALUES (?, ?, ?, ?)`, a.group, a.version, a.kind, a.plural)
			table := "api_provider"
			if a.required {
				table = "api_requirer"
			}
			if v >= 6 {
				exec(`INSERT INTO `+table+`(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)`,
					a.group, a.version, a.kind, n, b.Version, b.Path)
				continue
			}
			for _, e := range c.Entries {
				if e.Bundle.String == n {
					exec(`INSERT OR IGNORE INTO `+table+`(group_name, version, kind, channel_entry_id) VALUES (?, ?, ?, ?)`, a.group, a.version, a.kind, e.ID)
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
}

// databases are the test databases by file name.
func databases(t testing.TB) map[string]func(path string) {
	out := map[string]func(string){}
	for v := 0; v <= LatestVersion; v++ {
		out[fmt.Sprintf("v%02d.db", v)] = func(path string) {
			bs := testBundles()
			writeDB(t, path, v, testContents(t, bs), bs)
		}
	}
	// a deprecated bundle: upstream leaves it out, and its channel stops
	// there
	out["v13-deprecated.db"] = func(path string) {
		bs := testBundles()
		bs[3].props = append(bs[3].props, TypedValue{valid("olm.deprecated"), valid("{}")})
		writeDB(t, path, LatestVersion, testContents(t, bs), bs)
	}
	return out
}

func TestDatabasesCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "schema")
	for name, write := range databases(t) {
		tmp := filepath.Join(t.TempDir(), name)
		write(tmp)
		got, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".gz")
		if *update {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(got)
			zw.Close()
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := readGz(t, path); !bytes.Equal(got, want) {
			t.Errorf("%s differs from what gen_test.go writes (run with -update)", path)
		}
	}
}

// ReadGz is readGz for the external test package (sqlite_test).
var ReadGz = readGz

// readGz reads a gzipped file.
func readGz(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
