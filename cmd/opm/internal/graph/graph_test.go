package graph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

const catalogYAML = `schema: olm.package
name: example
defaultChannel: stable
---
schema: olm.channel
package: example
name: stable
entries:
- name: example.v3.0.0
  skips: [example.v2.0.0]
- name: example.v2.0.0
  skipRange: '>=1.0.0 <2.0.0'
---
schema: olm.bundle
package: example
name: example.v2.0.0
image: quay.io/example/example:v2.0.0
properties:
- {type: olm.package, value: {packageName: example, version: 2.0.0}}
---
schema: olm.bundle
package: example
name: example.v3.0.0
image: quay.io/example/example:v3.0.0
properties:
- {type: olm.package, value: {packageName: example, version: 3.0.0}}
`

func writeCatalog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(catalogYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs opm graph with args and returns stdout, stderr and the exit
// code.
func run(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := root.Run(append([]string{"graph"}, args...), &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

func TestPath(t *testing.T) {
	dir := writeCatalog(t)
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int
		wantErr  string
	}{
		{name: "Success/v1 reaches 2.0.0", args: []string{"--from", "1.0.0", "--to", "2.0.0", "--semantics", "v1"},
			wantOut: "  1. example.v1.0.0 (1.0.0) -> example.v2.0.0 (2.0.0)  (skipRange(>=1.0.0 <2.0.0))\nReached version 2.0.0\n"},
		{name: "Success/classic does not", args: []string{"--from", "1.0.0", "--to", "2.0.0", "--semantics", "classic", "-o", "json"},
			wantOut: `"reached": false`, wantCode: cmdutil.ExitFailure},
		{name: "Error/to and version", args: []string{"--from", "1.0.0", "--to", "2.0.0", "--version", "<3", "--semantics", "v1"},
			wantCode: cmdutil.ExitUsage, wantErr: "[to version] were all set"},
		{name: "Error/bad output", args: []string{"--from", "1.0.0", "--semantics", "v1", "-o", "yaml"},
			wantCode: cmdutil.ExitUsage, wantErr: `invalid --output value "yaml", expected (text|json)`},
		{name: "Error/unknown to", args: []string{"--from", "1.0.0", "--to", "example.v9", "--semantics", "v1"},
			wantCode: cmdutil.ExitFailure, wantErr: `unknown bundle "example.v9" of package "example" (bundles: example.v2.0.0, example.v3.0.0); give a bundle name or a version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(append([]string{"path", dir}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d (stderr %q), want %d", code, errOut, tt.wantCode)
			}
			if tt.wantErr != "" && !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("stderr %q, want %q", errOut, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output\n%s\ndoes not contain\n%s", out, tt.wantOut)
			}
			if tt.wantCode == cmdutil.ExitFailure && tt.wantErr == "" && errOut != "" {
				t.Errorf("a path not reached should exit 1 silently, stderr %q", errOut)
			}
		})
	}
}

func TestShowAndSuccessors(t *testing.T) {
	dir := writeCatalog(t)
	out, errOut, code := run("show", dir, "-o", "dot")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, `"example/stable/example.v2.0.0" -> "example/stable/example.v3.0.0" [label="skips", style=dashed, color=red];`) {
		t.Errorf("dot output:\n%s", out)
	}
	out, errOut, code = run("successors", dir, "--from", "1.0.0")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.Contains(out, "stable   example.v2.0.0  2.0.0    skipRange(>=1.0.0 <2.0.0)  -      -        picked") {
		t.Errorf("successors output:\n%s", out)
	}
	_, errOut, code = run("show", dir, "-o", "json", "-p", "nope")
	if code != 1 || errOut != "Error: unknown package \"nope\" (packages: example)\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestUpgradeable(t *testing.T) {
	dir := writeCatalog(t)
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int
		wantErr  string
	}{
		{name: "Success/nothing blocks", args: []string{"--cluster-version", "4.18.3", "--installed", "example=2.0.0"},
			wantOut: "Upgradeable to 4.19: no installed bundle blocks it.\n"},
		{name: "Success/unknown bundle exits 1", args: []string{"--cluster-version", "4.18.3", "--installed", "example=1.0.0", "-o", "json"},
			wantOut: `"status": "unknown"`, wantCode: cmdutil.ExitFailure},
		{name: "Error/installed required", args: []string{"--cluster-version", "4.18.3"},
			wantCode: cmdutil.ExitUsage, wantErr: `required flag(s) "installed" not set`},
		{name: "Error/bad installed", args: []string{"--cluster-version", "4.18.3", "--installed", "example"},
			wantCode: cmdutil.ExitUsage, wantErr: `invalid --installed "example"`},
		{name: "Error/bad semantics", args: []string{"--cluster-version", "4.18.3", "--installed", "example=2.0.0", "--semantics", "v0"},
			wantCode: cmdutil.ExitUsage, wantErr: `invalid --semantics`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(append([]string{"upgradeable", dir}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d (stderr %q), want %d", code, errOut, tt.wantCode)
			}
			if tt.wantErr != "" && !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("stderr %q, want %q", errOut, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output\n%s\ndoes not contain\n%s", out, tt.wantOut)
			}
		})
	}
}
