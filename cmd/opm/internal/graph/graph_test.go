package graph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
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

func streams() (*cmdutil.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

func TestRunPath(t *testing.T) {
	dir := writeCatalog(t)
	tests := []struct {
		name     string
		opts     Options
		wantOut  string
		wantCode int
		wantErr  string
	}{
		{name: "Success/v1 reaches 2.0.0", opts: Options{From: "1.0.0", To: "2.0.0", Semantics: "v1", Output: "text"},
			wantOut: "  1. 1.0.0 -> example.v2.0.0 (2.0.0)  (skipRange(>=1.0.0 <2.0.0))\nReached: reached version 2.0.0\n"},
		{name: "Success/classic does not", opts: Options{From: "1.0.0", To: "2.0.0", Semantics: "classic", Output: "json"},
			wantOut: `"reached": false`, wantCode: cmdutil.ExitFailure},
		{name: "Error/to and version", opts: Options{From: "1.0.0", To: "2.0.0", Version: "<3", Semantics: "v1", Output: "text"},
			wantCode: cmdutil.ExitUsage, wantErr: "--to and --version cannot be used together"},
		{name: "Error/bad output", opts: Options{From: "1.0.0", Semantics: "v1", Output: "yaml"},
			wantCode: cmdutil.ExitUsage, wantErr: `invalid --output value "yaml", expected (text|json)`},
		{name: "Error/unknown to", opts: Options{From: "1.0.0", To: "example.v9", Semantics: "v1", Output: "text"},
			wantCode: cmdutil.ExitFailure, wantErr: `package "example" has no bundle named "example.v9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, out, _ := streams()
			opts := tt.opts
			opts.IO = ios
			opts.Refs = []string{dir}
			err := RunPath(context.Background(), &opts)
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output\n%s\ndoes not contain\n%s", out, tt.wantOut)
			}
			var ee *cmdutil.ExitError
			if tt.wantCode == cmdutil.ExitFailure && tt.wantErr == "" && (!errors.As(err, &ee) || cmdutil.ShouldPrint(err)) {
				t.Errorf("a path not reached should exit 1 silently, got %v", err)
			}
		})
	}
}

func TestRunShowAndSuccessors(t *testing.T) {
	dir := writeCatalog(t)
	ios, out, _ := streams()
	if err := RunShow(context.Background(), &Options{IO: ios, Refs: []string{dir}, Output: "dot"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"example/stable/example.v2.0.0" -> "example/stable/example.v3.0.0" [label="skips", style=dashed, color=red];`) {
		t.Errorf("dot output:\n%s", out)
	}
	ios, out, _ = streams()
	if err := RunSuccessors(context.Background(), &Options{IO: ios, Refs: []string{dir}, From: "1.0.0", Output: "text"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "stable   example.v2.0.0  2.0.0    skipRange(>=1.0.0 <2.0.0)  -      -        picked") {
		t.Errorf("successors output:\n%s", out)
	}
	ios, _, _ = streams()
	err := RunShow(context.Background(), &Options{IO: ios, Refs: []string{dir}, Output: "json", Packages: []string{"nope"}})
	if err == nil || err.Error() != `no package "nope" in the catalog (packages: example)` {
		t.Errorf("error = %v", err)
	}
}
