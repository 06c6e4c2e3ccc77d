package catalogedit

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
)

// chanCatalog writes a one-package catalog whose bundles are named
// p.v<version> and whose channel "c" has the given entries ("name
// replaces=x skips=y,z range=r", versions taken from the names).
func chanCatalog(t *testing.T, entries ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("schema: olm.package\nname: p\ndefaultChannel: c\n---\nschema: olm.channel\npackage: p\nname: c\nentries:\n")
	var names []string
	for _, e := range entries {
		f := strings.Fields(e)
		names = append(names, f[0])
		fmt.Fprintf(&b, "- name: %s\n", f[0])
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "replaces":
				fmt.Fprintf(&b, "  replaces: %s\n", v)
			case "skips":
				b.WriteString("  skips:\n")
				for _, s := range strings.Split(v, ",") {
					fmt.Fprintf(&b, "  - %s\n", s)
				}
			case "range":
				fmt.Fprintf(&b, "  skipRange: '%s'\n", strings.ReplaceAll(v, "_", " "))
			}
		}
	}
	for _, n := range names {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: p\nname: %s\nimage: example.com/p:%s\nproperties:\n- {type: olm.package, value: {packageName: p, version: %s}}\n",
			n, strings.TrimPrefix(n, "p.v"), strings.TrimPrefix(n, "p.v"))
	}
	return writeCatalog(t, map[string]string{"p.yaml": b.String()})
}

func entriesString(es []declcfg.ChannelEntry) string {
	var out []string
	for _, e := range es {
		s := e.Name
		if e.Replaces != "" {
			s += " replaces=" + e.Replaces
		}
		if len(e.Skips) > 0 {
			s += " skips=" + strings.Join(e.Skips, ",")
		}
		if e.SkipRange != "" {
			s += " range=" + strings.ReplaceAll(e.SkipRange, " ", "_")
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func TestRemoveRestitches(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
		remove  []string
		drop    bool
		want    string
		lost    []string
		kept    []string
	}{
		{
			name:    "middle of the chain",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0"},
			remove:  []string{"p.v1.1.0"},
			drop:    true,
			want:    "p.v1.0.0; p.v1.2.0 replaces=p.v1.0.0",
			lost:    []string{"c: installs of p.v1.1.0 (removed) have no upgrade left"},
		},
		{
			name:    "middle, keeping its edges (the default)",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0"},
			remove:  []string{"p.v1.1.0"},
			want:    "p.v1.0.0; p.v1.2.0 replaces=p.v1.0.0 skips=p.v1.1.0",
			kept:    []string{"c: installs of p.v1.1.0 (removed) still upgrade to p.v1.2.0"},
		},
		{
			name:    "tail",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0"},
			remove:  []string{"p.v1.0.0"},
			drop:    true,
			want:    "p.v1.1.0; p.v1.2.0 replaces=p.v1.1.0",
			lost:    []string{"c: installs of p.v1.0.0 (removed) have no upgrade left"},
		},
		{
			name:    "tail covered by a skipRange",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0 range=<1.2.0"},
			remove:  []string{"p.v1.0.0"},
			drop:    true,
			want:    "p.v1.1.0; p.v1.2.0 replaces=p.v1.1.0 range=<1.2.0",
			kept:    []string{"c: installs of p.v1.0.0 (removed) still upgrade to p.v1.2.0"},
		},
		{
			name:    "skipped entry",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.0.0 skips=p.v1.1.0"},
			remove:  []string{"p.v1.1.0"},
			drop:    true,
			want:    "p.v1.0.0; p.v1.2.0 replaces=p.v1.0.0",
			lost:    []string{"c: installs of p.v1.1.0 (removed) have no upgrade left"},
		},
		{
			name:    "head replacing and skipping",
			entries: []string{"p.v1.0.0", "p.v1.1.0", "p.v1.2.0 replaces=p.v1.0.0 skips=p.v1.1.0"},
			remove:  []string{"p.v1.2.0"},
			want:    "p.v1.0.0; p.v1.1.0 skips=p.v1.0.0",
		},
		{
			name:    "two in a row",
			entries: []string{"p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0 skips=p.v0.9.0", "p.v1.3.0 replaces=p.v1.2.0"},
			remove:  []string{"p.v1.1.0", "p.v1.2.0"},
			drop:    true,
			want:    "p.v1.0.0; p.v1.3.0 replaces=p.v1.0.0 skips=p.v0.9.0",
			lost:    []string{"c: installs of p.v1.1.0 (removed) have no upgrade left", "c: installs of p.v1.2.0 (removed) have no upgrade left"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := chanCatalog(t, tc.entries...)
			var lost []LostPath
			var kept []string
			out := editCatalog(t, filepath.Join(dir, "p.yaml"), func(c *Catalog) error {
				var err error
				lost, err = c.RemoveBundles(context.Background(), "p", tc.remove, RemoveOptions{DropEdges: tc.drop})
				for _, k := range c.KeptPaths() {
					kept = append(kept, k.Message)
				}
				return err
			})
			if !slices.Equal(kept, tc.kept) {
				t.Errorf("kept paths: %q, want %q", kept, tc.kept)
			}
			cfg, err := declcfg.LoadReader(strings.NewReader(out["p.yaml"]), "p.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := entriesString(cfg.Channels[0].Entries); got != tc.want {
				t.Errorf("entries:\n got %s\nwant %s", got, tc.want)
			}
			var msgs []string
			for _, l := range lost {
				msgs = append(msgs, l.Message)
			}
			if !slices.Equal(msgs, tc.lost) {
				t.Errorf("lost paths: %q, want %q", msgs, tc.lost)
			}
			for _, n := range tc.remove {
				if strings.Contains(out["p.yaml"], "name: "+n+"\n") {
					t.Errorf("%s still in the file", n)
				}
			}
		})
	}
}

func TestRemoveRefusals(t *testing.T) {
	dir := chanCatalog(t, "p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0")
	c, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		pkg   string
		names []string
		want  string
	}{
		{"q", []string{"p.v1.0.0"}, `unknown package "q"`},
		{"p", []string{"p.v9.0.0"}, `unknown bundle "p.v9.0.0" of package "p"; did you mean "p.v1.0.0"?`},
		{"p", []string{"v9.0.0"}, `unknown bundle "v9.0.0" of package "p" (bundles: p.v1.0.0, p.v1.1.0); no bundle has version 9.0.0`},
		{"p", []string{"p.v1.0.0", "p.v1.1.0"}, `would leave package "p" without bundles`},
	} {
		_, err := c.RemoveBundles(context.Background(), tc.pkg, tc.names, RemoveOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.names, err, tc.want)
		}
	}
}

func TestPromoteRefusals(t *testing.T) {
	dir := chanCatalog(t, "p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0")
	c, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		bundle, channel string
		e               Edges
		want            string
	}{
		{"p.v1.0.0", "c", Edges{}, `bundle "p.v1.0.0" is already in channel "c"`},
		{"p.v1.0.0", "fast", Edges{}, `unknown channel "fast" of package "p" (channels: c); add --create to create it`},
		{"p.v2.0.0", "c", Edges{}, `unknown bundle "p.v2.0.0" of package "p"; did you mean "p.v1.0.0"?`},
		{"v1.0.0", "c", Edges{}, `bundle "p.v1.0.0" is already in channel "c"`}, // a version names the bundle
		{"p.v1.0.0", "c", Edges{SkipRange: "not a range"}, `invalid skip range`},
	} {
		err := c.Promote("p", tc.bundle, tc.channel, tc.e, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s to %s: got %v, want %q", tc.bundle, tc.channel, err, tc.want)
		}
	}
	if changes, err := c.Render(); err != nil || len(changes) != 0 {
		t.Errorf("refusals changed something: %v %v", changes, err)
	}
}

func TestPromoteTwoHeadsRefused(t *testing.T) {
	dir := chanCatalog(t, "p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0")
	c, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Promote("p", "p.v1.2.0", "d", Edges{}, true); err != nil {
		t.Fatal(err)
	}
	// p.v1.0.0 replacing nothing in d: two heads
	err = c.Promote("p", "p.v1.0.0", "d", Edges{Replaces: "p.v0.9.0"}, false)
	if err == nil || !strings.Contains(err.Error(), "two or more heads (p.v1.0.0, p.v1.2.0)") {
		t.Fatalf("got %v", err)
	}
}

// TestRemoveKeepsEdgesByDefault: without DropEdges, every removed bundle
// that had an upgrade keeps one (issue 34 item 2).
func TestRemoveKeepsEdgesByDefault(t *testing.T) {
	dir := chanCatalog(t, "p.v1.0.0", "p.v1.1.0 replaces=p.v1.0.0", "p.v1.2.0 replaces=p.v1.1.0 skips=p.v0.9.0", "p.v1.3.0 replaces=p.v1.2.0")
	var lost []LostPath
	var kept []KeptPath
	out := editCatalog(t, filepath.Join(dir, "p.yaml"), func(c *Catalog) error {
		var err error
		lost, err = c.RemoveBundles(context.Background(), "p", []string{"p.v1.0.0", "p.v1.1.0", "p.v1.2.0"}, RemoveOptions{})
		kept = c.KeptPaths()
		return err
	})
	if len(lost) != 0 || len(kept) != 3 {
		t.Fatalf("lost %+v, kept %+v\n%s", lost, kept, out["p.yaml"])
	}
	for _, k := range kept {
		if !slices.Equal(k.To, []string{"p.v1.3.0"}) {
			t.Errorf("%+v", k)
		}
	}
}
