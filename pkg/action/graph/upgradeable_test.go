package graph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/action"
)

// upgradeYAML: op.v1.0.0 (max "4.17") is replaced by op.v1.1.0 (max 4.18).
const upgradeYAML = `schema: olm.package
name: op
defaultChannel: stable
---
schema: olm.channel
package: op
name: stable
entries:
- name: op.v1.0.0
- name: op.v1.1.0
  replaces: op.v1.0.0
---
schema: olm.bundle
package: op
name: op.v1.0.0
image: quay.io/op/op:v1.0.0
properties:
- {type: olm.package, value: {packageName: op, version: 1.0.0}}
- {type: olm.maxOpenShiftVersion, value: "4.17"}
---
schema: olm.bundle
package: op
name: op.v1.1.0
image: quay.io/op/op:v1.1.0
properties:
- {type: olm.package, value: {packageName: op, version: 1.1.0}}
- {type: olm.maxOpenShiftVersion, value: 4.18}
`

func TestParseInstalled(t *testing.T) {
	tests := []struct {
		name               string
		installed, channel []string
		want               []InstalledOperator
		wantUsage          string
	}{
		{name: "Success/version, name and name@version", installed: []string{"a=1.0.0", "b=b.v2", "c=c.v3@3.0.0"}, channel: []string{"a=stable", "c=fast"},
			want: []InstalledOperator{{Package: "a", From: "1.0.0", Channels: []string{"stable"}}, {Package: "b", From: "b.v2"}, {Package: "c", From: "3.0.0", Bundle: "c.v3", Channels: []string{"fast"}}}},
		{name: "Error/none", wantUsage: "name at least one installed bundle"},
		{name: "Error/no equals", installed: []string{"a"}, wantUsage: `invalid --installed "a"`},
		{name: "Error/empty version", installed: []string{"a="}, wantUsage: `invalid --installed "a="`},
		{name: "Error/empty bundle", installed: []string{"a=@1.0.0"}, wantUsage: `invalid --installed "a=@1.0.0": expected PACKAGE=BUNDLE@VERSION`},
		{name: "Error/bad channel", installed: []string{"a=1"}, channel: []string{"stable"}, wantUsage: `invalid --channel "stable"`},
		{name: "Error/channel of another package", installed: []string{"a=1"}, channel: []string{"b=stable"}, wantUsage: `names package "b", which no --installed names`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInstalled(tt.installed, tt.channel)
			if tt.wantUsage != "" {
				var ue *action.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantUsage) {
					t.Fatalf("err = %v, want a usage error %q", err, tt.wantUsage)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestUpgradeable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(upgradeYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	base := UpgradeableOptions{Options: Options{Refs: []string{dir}}, Installed: []InstalledOperator{{Package: "op", From: "1.0.0"}}}
	ctx := context.Background()

	t.Run("Success/blocks, with the step that unblocks", func(t *testing.T) {
		for _, sem := range []string{"", "classic", "v1"} {
			o := base
			o.ClusterVersion, o.Semantics = "4.17.5", sem
			res, err := Upgradeable(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			j := res.JSON()
			if res.Upgradeable() || j.Upgradeable || j.NextMinorVersion != "4.18" || len(j.Operators) != 1 {
				t.Fatalf("%s: %+v", sem, j)
			}
			op := j.Operators[0]
			if op.Status != "blocks" || op.Action != "upgrade" || op.Target == nil || op.Target.Name != "op.v1.1.0" || len(op.Steps) != 1 || op.MaxOpenShiftVersion != "4.17" {
				t.Errorf("%s: operator = %+v", sem, op)
			}
			var buf bytes.Buffer
			if err := res.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "\nNot upgradeable to 4.18: op (blocks).\n") {
				t.Errorf("%s: text:\n%s", sem, buf.String())
			}
		}
	})
	t.Run("Success/nothing blocks", func(t *testing.T) {
		o := base
		o.ClusterVersion = "4.16.0"
		res, err := Upgradeable(ctx, o)
		if err != nil || !res.Upgradeable() || res.JSON().Operators[0].Action != "none" {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("Success/remove", func(t *testing.T) {
		o := base
		o.ClusterVersion = "4.18.1"
		res, err := Upgradeable(ctx, o)
		if err != nil || res.Upgradeable() || res.JSON().Operators[0].Action != "remove" {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	usage := []struct {
		name string
		opts func(o *UpgradeableOptions)
		want string
	}{
		{"Error/cluster version", func(o *UpgradeableOptions) { o.ClusterVersion = "x" }, "invalid --cluster-version"},
		{"Error/semantics", func(o *UpgradeableOptions) { o.ClusterVersion, o.Semantics = "4.18", "v2" }, "invalid --semantics"},
		{"Error/nothing installed", func(o *UpgradeableOptions) { o.ClusterVersion, o.Installed = "4.18", nil }, "name at least one installed bundle"},
		{"Error/classic takes one channel", func(o *UpgradeableOptions) {
			o.ClusterVersion = "4.18"
			o.Installed = []InstalledOperator{{Package: "op", From: "1.0.0", Channels: []string{"a", "b"}}}
		}, "OLM classic follows one channel"},
	}
	for _, tt := range usage {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.opts(&o)
			_, err := Upgradeable(ctx, o)
			var ue *action.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a usage error %q", err, tt.want)
			}
		})
	}
	t.Run("Error/unknown package", func(t *testing.T) {
		o := base
		o.ClusterVersion = "4.18"
		o.Installed = []InstalledOperator{{Package: "nope", From: "1.0.0"}}
		_, err := Upgradeable(ctx, o)
		var ue *action.UsageError
		if err == nil || errors.As(err, &ue) || err.Error() != `--installed nope: unknown package "nope" (packages: op)` {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestFromBundle(t *testing.T) {
	opts := Options{Refs: []string{writeCatalog(t)}}
	res, err := Path(context.Background(), PathOptions{Options: opts, From: "1.0.0", FromBundle: "example.v1.0.0", Semantics: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	j := res.JSON()
	if j.Paths[0].From.Name != "example.v1.0.0" || j.Paths[0].From.Assumed || !j.Paths[0].Reached {
		t.Errorf("json = %+v", j.Paths[0])
	}
	_, err = Successors(context.Background(), SuccessorsOptions{Options: opts})
	var ue *action.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("no --from: err = %v, want a usage error", err)
	}
}
