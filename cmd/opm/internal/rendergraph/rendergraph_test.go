package rendergraph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/root"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	catalog := `{"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
{"schema": "olm.channel", "package": "foo", "name": "stable", "entries": [{"name": "foo.v1"}, {"name": "foo.v2", "replaces": "foo.v1", "skipRange": "bad"}]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v1", "image": "foo:1", "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}}]}
{"schema": "olm.bundle", "package": "foo", "name": "foo.v2", "image": "foo:2", "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": "2.0.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "foo.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ios := &cmdutil.IOStreams{Out: &out, ErrOut: &errOut}
	if code := root.Run([]string{"alpha", "render-graph", dir}, ios); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "foo"
  subgraph "foo"
    %% channel "stable"
    subgraph foo-stable["stable"]
      foo-stable-foo.v2["foo.v2"]
      foo-stable-foo.v1["foo.v1"]-- replace --> foo-stable-foo.v2["foo.v2"]
      foo-stable-foo.v1["foo.v1"]
    end
  end
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.HasPrefix(errOut.String(), `warning: ignoring invalid SkipRange for package/edge "foo"/"foo.v2": `) {
		t.Errorf("stderr = %q", errOut.String())
	}

	out.Reset()
	code := root.Run([]string{"alpha", "render-graph", dir, "--skip-tls-verify", "--use-http"}, ios)
	if code != cmdutil.ExitUsage || out.Len() != 0 {
		t.Errorf("conflicting TLS flags: exit %d, %d bytes written", code, out.Len())
	}
}
