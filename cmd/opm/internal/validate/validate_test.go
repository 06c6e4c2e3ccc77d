package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
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
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/foo/bundle:v0.1.0
properties:
  - type: olm.package
    value: {packageName: foo, version: 0.1.0}
`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "c.yaml"), []byte(strings.Replace(catalog, "defaultChannel: stable\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "Success/directory", args: []string{dir}},
		{name: "Success/json", args: []string{dir, "-o", "json"}, wantStdout: "{\n  \"passed\": true\n}\n"},
		{name: "Success/stdin", args: []string{"-", "-o", "json"}, stdin: catalog, wantStdout: "{\n  \"passed\": true\n}\n"},
		{name: "Error/invalid", args: []string{bad}, wantCode: 1, wantStderr: "invalid index:\n└── invalid package \"foo\":\n    └── default channel must be set (" + filepath.ToSlash(bad) + "/c.yaml:1:1)\n"},
		{name: "Error/stdin empty document", args: []string{"-", "-o", "json"}, stdin: "# nothing\n", wantCode: 1, wantStdout: `"message": "object '' is missing root schema field"`},
		{name: "Error/output", args: []string{dir, "-o", "xml"}, wantCode: 2},
		{name: "Error/missing", args: []string{filepath.Join(dir, "nope")}, wantCode: 1},
		{name: "Error/stdin without blobs", args: []string{"-"}, stdin: "", wantCode: 1, wantStderr: "Error: no blobs on standard input: nothing to validate (did the command before the pipe fail? run it with set -o pipefail)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			ios := &cmdutil.IOStreams{In: strings.NewReader(tt.stdin), Out: &out, ErrOut: &errOut}
			if got := root.Run(append([]string{"validate"}, tt.args...), ios); got != tt.wantCode {
				t.Fatalf("exit code = %d (stderr %q), want %d", got, errOut.String(), tt.wantCode)
			}
			if !strings.Contains(out.String(), tt.wantStdout) || (tt.wantStdout == "" && out.Len() > 0) {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantStdout)
			}
			if tt.wantStderr != "" && errOut.String() != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", errOut.String(), tt.wantStderr)
			}
		})
	}
}
