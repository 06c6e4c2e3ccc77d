package validate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
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
		opts       Options
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "Success/directory", opts: Options{Ref: dir}},
		{name: "Success/json", opts: Options{Ref: dir, Output: "json"}, wantStdout: "{\n  \"passed\": true\n}\n"},
		{name: "Success/stdin", opts: Options{Ref: "-", Output: "json"}, stdin: catalog, wantStdout: "{\n  \"passed\": true\n}\n"},
		{name: "Error/invalid", opts: Options{Ref: bad}, wantCode: 1, wantStderr: "invalid index:\n└── invalid package \"foo\":\n    └── default channel must be set (" + filepath.ToSlash(bad) + "/c.yaml:1:1)\n"},
		{name: "Error/stdin empty document", opts: Options{Ref: "-", Output: "json"}, stdin: "# nothing\n", wantCode: 1, wantStdout: `"message": "object '' is missing root schema field"`},
		{name: "Error/output", opts: Options{Ref: dir, Output: "xml"}, wantCode: 2},
		{name: "Error/missing", opts: Options{Ref: filepath.Join(dir, "nope")}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			opts := tt.opts
			opts.IO = &cmdutil.IOStreams{In: strings.NewReader(tt.stdin), Out: &out, ErrOut: &errOut}
			opts.Global = &cmdutil.GlobalOptions{}
			err := Run(context.Background(), &opts)
			if got := cmdutil.ExitCode(err); got != tt.wantCode {
				t.Fatalf("exit code = %d (%v), want %d", got, err, tt.wantCode)
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
