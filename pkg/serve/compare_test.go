package serve

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// edited returns the test catalog with one replacement made in file.
func edited(t *testing.T, file, old, new string) fstest.MapFS {
	t.Helper()
	fsys := testCatalog()
	s := string(fsys[file].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s has no %q", file, old)
	}
	fsys[file] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
	return fsys
}

func TestCompare(t *testing.T) {
	ctx := context.Background()
	base := buildTest(t, testCatalog(), true)

	// The same catalog, its data file laid out in another order (files
	// parsed one at a time, in reverse order of size): no difference.
	serial, _, err := BuildTemp(ctx, testCatalog(), t.TempDir(), BuildOptions{HTTP: true, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	hashed, err := Build(ctx, testCatalog(), BuildOptions{HTTP: true, HashOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]*Index{{base, serial}, {serial, base}, {base, base}, {base, hashed}, {serial, hashed}} {
		d, err := Compare(ctx, pair[0], pair[1])
		if err != nil || !d.Empty() {
			t.Fatalf("same catalog: %v %v", d.List, err)
		}
	}

	for _, tc := range []struct {
		name          string
		file, old, nw string
		want          string
	}{
		{"image", "foo/catalog.yaml", "image: quay.io/foo/bundle:v1.2.0", "image: evil.io/foo/bundle:v1.2.0",
			`package "foo", bundle "foo.v1.2.0": image: the cache has "evil.io/foo/bundle:v1.2.0", the catalog "quay.io/foo/bundle:v1.2.0"`},
		{"skips", "foo/catalog.yaml", "- name: foo.v1.2.0\n  replaces: foo.v1.1.0", "- name: foo.v1.2.0\n  replaces: foo.v1.1.0\n  skips: [x]",
			`package "foo", channel "fast", bundle "foo.v1.2.0": skips: the cache has "x", the catalog ""`},
		{"manifests", "foo/catalog.yaml", "{type: olm.bundle.object, value: {data: " + b64(jsonCRD) + "}}", "{type: olm.bundle.object, value: {data: " + b64(strings.Replace(jsonCRD, "12345678901234567890", "12345678901234567891", 1)) + "}}",
			`package "foo", bundle "foo.v1.0.0": manifests (olm.bundle.object): the cache's differ from the catalog's`},
		{"custom", "foo/catalog.yaml", "data: {answer: 42}", "data: {answer: 43}",
			`custom blobs of schema "example.custom", package "foo"[0]: the cache's differ from the catalog's`},
		{"package", "bar/catalog.json", `"defaultChannel":"alpha"}`, `"defaultChannel":"alpha","description":"x"}`,
			`package "bar": description: the cache has "x", the catalog ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := buildTest(t, edited(t, tc.file, tc.old, tc.nw), true)
			for _, against := range []*Index{base, hashed} {
				d, err := Compare(ctx, other, against)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.List) == 0 || d.List[0] != tc.want {
					t.Errorf("differences %q\nwant first %s", d.List, tc.want)
				}
				if !strings.Contains(strings.Join(d.List, "\n"), "the HTTP API's catalog") {
					t.Errorf("the HTTP data: %q", d.List)
				}
			}
		})
	}

	if _, err := Compare(ctx, hashed, base); err == nil {
		t.Error("a HashOnly index compared as the cache's")
	}

	// Another catalog altogether: counted beyond MaxDifferences.
	empty := buildTest(t, fstest.MapFS{}, false)
	d, err := Compare(ctx, empty, base)
	if err != nil {
		t.Fatal(err)
	}
	if d.Empty() || !strings.HasPrefix(d.String(), `package "bar", channel "alpha", bundle "bar.v1.0.0": in the catalog, not in the cache (and `) {
		t.Errorf("empty cache: %s", d)
	}
}
