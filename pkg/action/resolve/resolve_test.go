package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/resolve"
)

func TestParseCatalog(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CatalogSpec
		err  string
	}{
		{in: "c=./dir", want: CatalogSpec{Name: "c", Ref: "./dir"}},
		{in: "c=./dir:10", want: CatalogSpec{Name: "c", Ref: "./dir", Priority: 10}},
		{in: "c=./dir:-3", want: CatalogSpec{Name: "c", Ref: "./dir", Priority: -3}},
		{in: "ops=quay.io/org/index:v4.20", want: CatalogSpec{Name: "ops", Ref: "quay.io/org/index:v4.20"}},
		{in: "ops=localhost:5000/index", want: CatalogSpec{Name: "ops", Ref: "localhost:5000/index"}},
		// A numeric tag needs an explicit priority after it.
		{in: "ops=quay.io/org/index:4:0", want: CatalogSpec{Name: "ops", Ref: "quay.io/org/index:4"}},
		{in: "ops=quay.io/org/index:4", want: CatalogSpec{Name: "ops", Ref: "quay.io/org/index", Priority: 4}},
		{in: "c=dir=x", want: CatalogSpec{Name: "c", Ref: "dir=x"}},
		{in: "./dir", err: "want NAME=DIR[:PRIORITY]"},
		{in: "=./dir", err: "the name must be"},
		{in: "a/b=./dir", err: "the name must be"},
		{in: "c=", err: "no directory or image"},
		{in: "c=:5", err: "no directory or image"},
		{in: "c=dir:99999999999999999999", err: "priority"},
	} {
		got, err := ParseCatalog(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCatalog(%q) = %+v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCatalog(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSubscription(t *testing.T) {
	for _, tc := range []struct {
		in, pkg, ch, csv, err string
	}{
		{in: "etcd", pkg: "etcd"},
		{in: "etcd:alpha", pkg: "etcd", ch: "alpha"},
		{in: "etcd@etcd.v0.9.2", pkg: "etcd", csv: "etcd.v0.9.2"},
		{in: "etcd:alpha@etcd.v0.9.2", pkg: "etcd", ch: "alpha", csv: "etcd.v0.9.2"},
		{in: "etcd:4.x:stable", pkg: "etcd", ch: "4.x:stable"},
		{in: ":alpha", err: "want PACKAGE"},
		{in: "", err: "want PACKAGE"},
		{in: "etcd:", err: "empty channel"},
		{in: "etcd@", err: "empty starting bundle"},
	} {
		got, err := ParseSubscription(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSubscription(%q) = %+v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Package != tc.pkg || got.Channel != tc.ch || got.StartingCSV != tc.csv || got.Name != tc.in {
			t.Errorf("ParseSubscription(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if _, err := ParseInstalled("c"); err == nil {
		t.Error("ParseInstalled(c) succeeded")
	}
	if in, err := ParseInstalled("c/b.v1"); err != nil || in != (resolve.Installed{Catalog: "c", Bundle: "b.v1"}) {
		t.Errorf("ParseInstalled(c/b.v1) = %+v, %v", in, err)
	}
}

const catalogJSON = `{"schema": "olm.package", "name": "db", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "db", "name": "stable", "entries": [{"name": "db.v1"}, {"name": "db.v2", "replaces": "db.v1"}]}
{"schema": "olm.bundle", "package": "db", "name": "db.v1", "image": "db:1", "properties": [{"type": "olm.package", "value": {"packageName": "db", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "package": "db", "name": "db.v2", "image": "db:2", "properties": [{"type": "olm.package", "value": {"packageName": "db", "version": "2.0.0"}}]}
`

func writeCatalog(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(catalogJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunUsageErrors(t *testing.T) {
	dir := writeCatalog(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Subscribe: []string{"db"}}, "at least one --catalog is required"},
		{Options{Catalogs: []string{"c=" + dir}}, "nothing to resolve"},
		{Options{Catalogs: []string{"c=" + dir, "c=" + dir}, Subscribe: []string{"db"}}, `catalog "c" is given twice`},
		{Options{Catalogs: []string{"c=" + dir}, Installed: []string{"x/db.v1"}}, `no --catalog named "x"`},
	} {
		_, err := Run(context.Background(), tc.opts)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v, want a UsageError with %q", tc.opts, err, tc.want)
		}
	}
}

// TestRunInputErrors: what is found by reading the catalogs is not a
// usage error (exit 1, not 2).
func TestRunInputErrors(t *testing.T) {
	dir := writeCatalog(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Catalogs: []string{"c=" + dir}, Installed: []string{"c/db.v9"}}, `unknown bundle "db.v9" in catalog "c"`},
		{Options{Catalogs: []string{"c=" + filepath.Join(dir, "missing")}, Subscribe: []string{"db"}}, "load catalog c:"},
	} {
		_, err := Run(context.Background(), tc.opts)
		var ue *UsageError
		if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v, want a plain error with %q", tc.opts, err, tc.want)
		}
	}
}

func TestRunDirectory(t *testing.T) {
	dir := writeCatalog(t)
	res, err := Run(context.Background(), Options{Catalogs: []string{"c=" + dir}, Installed: []string{"c/db.v1"}, Subscribe: []string{"db"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resolvable || len(res.Install) != 1 || res.Install[0].Bundle != "db.v2" || res.Install[0].Replaces != "db.v1" {
		t.Fatalf("result = %+v", res)
	}
}

// A catalog may be an image, rendered as other commands render one.
func TestRunImage(t *testing.T) {
	reg := registrytest.New(t)
	dir := writeCatalog(t)
	ref := reg.Host + "/catalog:v1"
	img, err := registrytest.DirImage(dir, "configs", map[string]string{render.ConfigsLabel: "/configs"})
	if err != nil {
		t.Fatal(err)
	}
	if err := registrytest.Push(context.Background(), ref, img); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{
		Catalogs:  []string{"img=" + ref + ":5"},
		Subscribe: []string{"db@db.v1"},
		Registry:  render.RegistryOptions{CacheDir: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resolvable || len(res.Install) != 1 || res.Install[0].Catalog != "img" || res.Install[0].Bundle != "db.v1" {
		t.Fatalf("result = %+v", res)
	}
}
