package catalogedit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ce "github.com/opmkit/opm/pkg/catalogedit"
)

const catalog = `schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v0.1.0
- name: foo.v0.2.0
  replaces: foo.v0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: example.com/foo:v0.1.0
properties:
- {type: olm.package, value: {packageName: foo, version: 0.1.0}}
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: example.com/foo:v0.2.0
properties:
- {type: olm.package, value: {packageName: foo, version: 0.2.0}}
`

func write(t *testing.T, content string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDryRunWritesNothing(t *testing.T) {
	dir, p := write(t, catalog)
	res, err := Promote(context.Background(), PromoteOptions{
		Common:  Common{Catalog: dir, DryRun: true},
		Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{"fast"}, Create: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written || len(res.Files) != 1 || !strings.Contains(res.Diff(), "+name: fast") {
		t.Fatalf("result: %+v\n%s", res, res.Diff())
	}
	if read(t, p) != catalog {
		t.Fatal("dry run wrote")
	}
	res, err = Promote(context.Background(), PromoteOptions{
		Common:  Common{Catalog: dir},
		Package: "foo", Bundle: "foo.v0.2.0", Channels: []string{"fast"}, Create: true,
	})
	if err != nil || !res.Written {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(read(t, p), "name: fast") {
		t.Fatal("not written")
	}
}

func TestInvalidCatalogNeedsForce(t *testing.T) {
	// a bundle in no channel
	broken := catalog + "---\nschema: olm.bundle\npackage: foo\nname: foo.v0.3.0\nimage: example.com/foo:v0.3.0\nproperties:\n- {type: olm.package, value: {packageName: foo, version: 0.3.0}}\n"
	dir, p := write(t, broken)
	opts := DeprecateOptions{Common: Common{Catalog: dir}, Target: ce.TargetBundle, Package: "foo", Names: []string{"foo.v0.1.0"}, Message: "old"}
	_, err := Deprecate(context.Background(), opts)
	if !IsInvalid(err) || !strings.Contains(err.Error(), "it does not validate") {
		t.Fatalf("got %v", err)
	}
	if read(t, p) != broken {
		t.Fatal("refusal wrote")
	}
	opts.Force = true
	res, err := Deprecate(context.Background(), opts)
	if err != nil || len(res.Problems) == 0 {
		t.Fatalf("%v %+v", err, res)
	}
	// promoting the stray bundle fixes the catalog
	res2, err := Promote(context.Background(), PromoteOptions{Common: Common{Catalog: dir, Force: true}, Package: "foo", Bundle: "foo.v0.3.0", Channels: []string{"stable"}})
	if err != nil || !res2.Written {
		t.Fatalf("%v %+v", err, res2)
	}
	if _, err := Deprecate(context.Background(), DeprecateOptions{Common: Common{Catalog: dir}, Target: ce.TargetPackage, Package: "foo", Message: "bye"}); err != nil {
		t.Fatal(err)
	}
}

func TestPruneNeedsOneBound(t *testing.T) {
	dir, _ := write(t, catalog)
	for _, o := range []PruneOptions{{}, {KeepLast: 1, Before: "1.0.0"}, {Before: "v1"}} {
		o.Common = Common{Catalog: dir}
		o.Package = "foo"
		if _, err := Prune(context.Background(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
