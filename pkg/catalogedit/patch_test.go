package catalogedit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/validate"
)

// writeCatalog writes files under a new directory and returns it.
func writeCatalog(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editCatalog opens path, applies do, renders and returns the new
// contents by file name (deleted files map to "<deleted>").
func editCatalog(t *testing.T, path string, do func(*Catalog) error) map[string]string {
	t.Helper()
	ctx := context.Background()
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := do(c); err != nil {
		t.Fatal(err)
	}
	changes, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.ResultConfig(changes)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Template {
		res, err := validate.Validate(ctx, cfg, validate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed {
			t.Fatalf("result does not validate: %s", res.Message)
		}
	} else if p := c.checkTemplate(cfg); len(p) > 0 {
		t.Fatalf("result does not validate: %v", p)
	}
	out := map[string]string{}
	for _, ch := range changes {
		if ch.Action == ActionDeleted {
			out[ch.Name] = "<deleted>"
			continue
		}
		out[ch.Name] = string(ch.New)
	}
	return out
}

const yamlPkg = `---
# the foo operator
schema: olm.package
name: foo
defaultChannel: "stable"   # quoted, with a comment
---
schema: olm.channel
package: foo
name: stable
entries:
  # the first release
  - name: foo.v0.1.0
  - name: foo.v0.2.0
    replaces: foo.v0.1.0   # keep this comment
    x-note: kept
---
schema: olm.channel
package: foo
name: candidate
entries: [{name: foo.v0.2.0}]
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

func TestPatchYAMLKeepsCommentsAndStyle(t *testing.T) {
	dir := writeCatalog(t, map[string]string{"foo/index.yaml": yamlPkg})
	out := editCatalog(t, dir, func(c *Catalog) error {
		if err := c.SetDefaultChannel("foo", "candidate"); err != nil {
			return err
		}
		return c.Promote("foo", "foo.v0.1.0", "candidate", Edges{}, false)
	})
	got := out["foo/index.yaml"]
	want := strings.Replace(yamlPkg, `defaultChannel: "stable"   # quoted`, `defaultChannel: candidate   # quoted`, 1)
	// the flow-style list is re-emitted as a block list in the file's style
	want = strings.Replace(want, "entries: [{name: foo.v0.2.0}]\n", "entries:\n  - name: foo.v0.1.0\n  - name: foo.v0.2.0\n    skips:\n      - foo.v0.1.0\n", 1)
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPatchYAMLRemoveKeepsUnknownKeys(t *testing.T) {
	dir := writeCatalog(t, map[string]string{"foo/index.yaml": yamlPkg})
	out := editCatalog(t, dir, func(c *Catalog) error {
		_, err := c.RemoveBundles(context.Background(), "foo", []string{"foo.v0.1.0"}, RemoveOptions{})
		return err
	})
	got := out["foo/index.yaml"]
	for _, s := range []string{"x-note: kept", "# the foo operator", "# quoted, with a comment"} {
		if !strings.Contains(got, s) {
			t.Errorf("lost %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"name: foo.v0.1.0", "replaces:"} {
		if strings.Contains(got, s) {
			t.Errorf("still has %q:\n%s", s, got)
		}
	}
}

func TestPatchCRLF(t *testing.T) {
	in := strings.ReplaceAll(yamlPkg, "\n", "\r\n")
	dir := writeCatalog(t, map[string]string{"foo/index.yaml": in})
	out := editCatalog(t, dir, func(c *Catalog) error {
		return c.Deprecate("foo", TargetBundle, []string{"foo.v0.1.0"}, "old", false)
	})
	got := out["foo/index.yaml"]
	if !strings.HasPrefix(got, in) {
		t.Fatalf("existing bytes changed:\n%q", got)
	}
	if strings.Contains(strings.ReplaceAll(got, "\r\n", ""), "\n") {
		t.Errorf("a line ends without \\r\\n:\n%q", got[len(in):])
	}
}

const jsonPkg = `{"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "foo", "name": "stable", "entries": [
  {"name": "foo.v0.1.0"},
  {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0"}
]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v0.1.0", "image": "example.com/foo:v0.1.0",
 "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "0.1.0"}}]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v0.2.0", "image": "example.com/foo:v0.2.0",
 "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "0.2.0"}}]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v0.3.0", "image": "example.com/foo:v0.3.0",
 "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "0.3.0"}}]}
`

func TestPatchJSONCompact(t *testing.T) {
	// foo.v0.3.0 is in no channel: the catalog is invalid until it is
	// promoted; the edit is applied to it directly
	dir := writeCatalog(t, map[string]string{"foo/catalog.json": jsonPkg})
	out := editCatalog(t, dir, func(c *Catalog) error {
		return c.Promote("foo", "foo.v0.3.0", "stable", Edges{SkipRange: "<0.3.0"}, false)
	})
	want := strings.Replace(jsonPkg, `  {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0"}
]}`, `  {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0"},
  {"name": "foo.v0.3.0", "replaces": "foo.v0.2.0", "skipRange": "<0.3.0"}
]}`, 1)
	if got := out["foo/catalog.json"]; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPatchJSONTemplate(t *testing.T) {
	tmpl := `{
  "schema": "olm.template.basic",
  "entries": [
    {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"},
    {
      "schema": "olm.channel",
      "package": "foo",
      "name": "stable",
      "entries": [
        {"name": "foo.v0.1.0"}
      ]
    },
    {"schema": "olm.bundle", "image": "example.com/foo:v0.1.0"}
  ]
}
`
	dir := writeCatalog(t, map[string]string{"t.json": tmpl})
	out := editCatalog(t, filepath.Join(dir, "t.json"), func(c *Catalog) error {
		if err := c.Promote("foo", "foo.v0.1.0", "fast", Edges{}, true); err != nil {
			return err
		}
		return c.Deprecate("foo", TargetChannel, []string{"stable"}, "use fast", false)
	})
	got := out["t.json"]
	want := `{
  "schema": "olm.template.basic",
  "entries": [
    {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"},
    {
      "schema": "olm.channel",
      "package": "foo",
      "name": "stable",
      "entries": [
        {"name": "foo.v0.1.0"}
      ]
    },
    {
      "schema": "olm.channel",
      "package": "foo",
      "name": "fast",
      "entries": [
        {
          "name": "foo.v0.1.0"
        }
      ]
    },
    {"schema": "olm.bundle", "image": "example.com/foo:v0.1.0"},
    {"schema": "olm.deprecations", "package": "foo", "entries": [{"reference": {"schema": "olm.channel", "name": "stable"}, "message": "use fast"}]}
  ]
}
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPatchFallsBackToWholeBlob(t *testing.T) {
	// an anchor on an entry defeats the in-place patch: the blob is
	// written whole, and still reads back as intended
	in := `schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- &first
  name: foo.v0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: example.com/foo:v0.1.0
properties:
- type: olm.package
  value: {packageName: foo, version: 0.1.0}
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: example.com/foo:v0.2.0
properties:
- type: olm.package
  value: {packageName: foo, version: 0.2.0}
`
	dir := writeCatalog(t, map[string]string{"c.yaml": in})
	c, err := Open(context.Background(), filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Promote("foo", "foo.v0.2.0", "stable", Edges{}, false); err != nil {
		t.Fatal(err)
	}
	changes, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	got := string(changes[0].New)
	if !strings.Contains(got, "entries:\n- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n---\n") {
		t.Errorf("got:\n%s", got)
	}
	cfg, err := c.ResultConfig(changes)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Channels) != 1 || len(cfg.Channels[0].Entries) != 2 {
		t.Errorf("channels: %+v", cfg.Channels)
	}
}

func TestPatchListAtEndOfFileWithoutNewline(t *testing.T) {
	in := "schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.bundle\npackage: foo\nname: foo.v0.1.0\nimage: example.com/foo:v0.1.0\nproperties:\n- {type: olm.package, value: {packageName: foo, version: 0.1.0}}\n---\nschema: olm.bundle\npackage: foo\nname: foo.v0.2.0\nimage: example.com/foo:v0.2.0\nproperties:\n- {type: olm.package, value: {packageName: foo, version: 0.2.0}}\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v0.1.0"
	dir := writeCatalog(t, map[string]string{"c.yaml": in})
	out := editCatalog(t, dir, func(c *Catalog) error {
		return c.Promote("foo", "foo.v0.2.0", "stable", Edges{}, false)
	})
	if want := in + "\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n"; out["c.yaml"] != want {
		t.Errorf("got:\n%q\nwant:\n%q", out["c.yaml"], want)
	}
}

func TestSameValueRejectsTrailingJSON(t *testing.T) {
	if sameValue([]byte(`{"a":1} {"b":2}`), FormatJSON, &Object{Keys: []string{"a"}, Vals: []any{Number("1")}}) {
		t.Error("trailing value accepted")
	}
}

var _ = declcfg.SchemaPackage
