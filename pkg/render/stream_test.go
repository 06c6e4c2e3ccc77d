package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opmkit/opm/internal/gencatalog"
	"github.com/opmkit/opm/pkg/declcfg"
)

// whole renders refs the way Write does when it cannot stream.
func whole(t *testing.T, refs []string, format declcfg.Format) (string, error) {
	t.Helper()
	cfg, err := Render(context.Background(), Options{Refs: refs})
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := declcfg.Write(*cfg, &buf, format); err != nil {
		t.Fatal(err)
	}
	return buf.String(), nil
}

func streamed(t *testing.T, refs []string, format declcfg.Format) (string, error) {
	t.Helper()
	if !streamable(Options{Refs: refs}) {
		t.Fatalf("%q is not streamable", refs)
	}
	var buf bytes.Buffer
	err := Write(context.Background(), Options{Refs: refs}, &buf, format)
	if err != nil && buf.Len() > 0 {
		t.Errorf("%q: output written before the error %v", refs, err)
	}
	return buf.String(), err
}

func compareStreamed(t *testing.T, refs []string) {
	t.Helper()
	for _, format := range []declcfg.Format{declcfg.FormatJSON, declcfg.FormatYAML} {
		want, werr := whole(t, refs, format)
		got, gerr := streamed(t, refs, format)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%q %s: error %v, want %v", refs, format, gerr, werr)
			continue
		}
		if got != want {
			t.Errorf("%q %s: streamed output differs from the whole render (%d and %d bytes)", refs, format, len(got), len(want))
		}
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestWriteStreamMatchesRender(t *testing.T) {
	// Packages spread over files and interleaved within one; blobs of no
	// package; duplicate names; YAML and JSON; a second reference that
	// adds to a package of the first.
	a := writeTree(t, map[string]string{
		"z.yaml": "schema: olm.package\nname: b\n---\nschema: olm.channel\npackage: a\nname: s\nentries: [{name: a.v1}]\n---\nschema: custom\nname: loose\n" +
			"---\nschema: olm.bundle\npackage: b\nname: b.v2\nimage: x\nrelatedImages: [{name: z, image: z}, {name: a, image: a}]\nproperties: [{type: olm.bundle.object, value: {data: e30=}}, {type: olm.package, value: {packageName: b, version: 2.0.0}}]\n",
		"a/a.json": `{"schema":"olm.package","name":"a"}{"schema":"olm.bundle","package":"a","name":"a.v1","image":"x"}` + "\n" +
			`{"schema":"olm.bundle","package":"b","name":"b.v1","image":"x"}{"schema":"olm.channel","package":"b","name":"s"}{"schema":"olm.bundle","package":"","name":"nopkg"}` +
			`{"schema":"olm.deprecations","package":"a","entries":[]}{"schema":"custom","package":"a","v":1}{"schema":"alpha","package":"a"}`,
		"m/mixed.json": "{\"schema\":\"olm.package\",\"name\":\"m\"}\nschema: olm.channel\npackage: m\nname: s\n",
		"x.yaml":       "---\n---\n",
	})
	b := writeTree(t, map[string]string{
		"c.yaml": "schema: olm.bundle\npackage: a\nname: a.v0\nimage: y\n---\nschema: olm.package\nname: a\n",
	})
	compareStreamed(t, []string{a})
	compareStreamed(t, []string{a, b})
	compareStreamed(t, []string{b, a, b})

	// A generated catalog: many packages, one file each.
	gen := filepath.Join(t.TempDir(), "gen")
	if _, err := gencatalog.Generate(context.Background(), gen, gencatalog.Options{Packages: 12, Bundles: 4, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	compareStreamed(t, []string{gen})

	// Errors: the first bad file's, and nothing written.
	bad := writeTree(t, map[string]string{"a.yaml": "schema: olm.package\nname: a\n", "b.json": `{"schema":`, "c.yaml": "name: x\n"})
	compareStreamed(t, []string{bad})
	compareStreamed(t, []string{a, bad})
}

func TestWriteStreamConformance(t *testing.T) {
	root := "../../../shared/conformance"
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", root)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() || IsBundleDir(dir) {
			continue
		}
		compareStreamed(t, []string{dir})
		n++
	}
	t.Logf("%d catalogs", n)
}

func TestStreamable(t *testing.T) {
	dir := t.TempDir()
	bundle := writeTree(t, map[string]string{"manifests/csv.yaml": "", "metadata/annotations.yaml": ""})
	for _, tc := range []struct {
		opts Options
		want bool
	}{
		{Options{Refs: []string{dir}}, true},
		{Options{Refs: []string{dir, dir}, MigrationLevel: "none"}, true},
		{Options{Refs: []string{dir}, MigrationLevel: "all"}, false},
		{Options{Refs: []string{dir}, WithChannels: true}, false},
		{Options{Refs: []string{dir}, AllowedRefMask: RefDCImage}, false},
		{Options{Refs: []string{dir, bundle}}, false},
		{Options{Refs: []string{dir, "quay.io/x/y:1"}}, false},
		{Options{}, false},
	} {
		if got := streamable(tc.opts); got != tc.want {
			t.Errorf("streamable(%+v) = %v", tc.opts, got)
		}
	}
}

func TestOrderedGroups(t *testing.T) {
	ctx := context.Background()
	var got []string
	var inFlight, most atomic.Int32
	err := orderedGroups(ctx, 50, 3, func(_ context.Context, i int) ([]byte, error) {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		defer inFlight.Add(-1)
		return []byte(fmt.Sprint(i)), nil
	}, func(b []byte) error {
		got = append(got, string(b))
		return nil
	})
	if err != nil || len(got) != 50 || got[0] != "0" || got[49] != "49" || strings.Join(got, ",") != seq(50) {
		t.Fatalf("got %v, %v", got, err)
	}
	if most.Load() > 3 {
		t.Errorf("%d produced at once, want at most 3", most.Load())
	}

	boom := errors.New("boom")
	err = orderedGroups(ctx, 20, 2, func(_ context.Context, i int) ([]byte, error) {
		if i == 7 {
			return nil, boom
		}
		return nil, nil
	}, func([]byte) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("producer error: %v", err)
	}
	calls := 0
	err = orderedGroups(ctx, 20, 2, func(context.Context, int) ([]byte, error) { return nil, nil }, func([]byte) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls != 3 {
		t.Errorf("consumer error: %v after %d calls", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = orderedGroups(cctx, 20, 2, func(ctx context.Context, i int) ([]byte, error) { return nil, ctx.Err() }, func([]byte) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func seq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return strings.Join(s, ",")
}
