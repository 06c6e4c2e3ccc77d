package imagebuild

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/pkg/image"
)

const configsLabel = "operators.operatorframework.io.index.configs.v1"

var (
	entrypoint = []string{"/bin/opm"}
	cmd        = []string{"serve", "/configs", "--cache-dir=/tmp/cache"}
)

// baseImage returns a random one-layer image of mt for platform p, with a
// label, an entrypoint, a command and an environment.
func baseImage(t testing.TB, mt types.MediaType, p v1.Platform) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(img, mt)
	if mt == types.OCIManifestSchema1 {
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	cf.Config.Labels = map[string]string{"base": "yes", configsLabel: "/elsewhere"}
	cf.Config.Entrypoint = []string{"/bin/sh"}
	cf.Config.Cmd = []string{"-c", "true"}
	cf.Config.Env = []string{"PATH=/bin"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// openBase writes idx (or img) to a layout and opens it as a base.
func openBase(t testing.TB, item any, platforms ...v1.Platform) *image.Base {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	switch v := item.(type) {
	case v1.Image:
		err = p.AppendImage(v)
	case v1.ImageIndex:
		err = p.AppendIndex(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := image.NewSession(image.WithCacheDir("-"))
	t.Cleanup(func() { s.Close() })
	b, err := s.OpenBase(context.Background(), "oci:"+dir, platforms)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func catalogDir(t testing.TB) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"p/catalog.json": `{"schema":"olm.package","name":"p"}`})
	return dir
}

func TestCatalogScratch(t *testing.T) {
	created := time.Unix(1700000000, 0).UTC()
	b, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Labels: map[string]string{configsLabel: "/configs", "x": "1"}, Created: created, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	img, ok := b.Artifact.(*Image)
	if !ok {
		t.Fatalf("artifact is a %T", b.Artifact)
	}
	cf, _ := img.ConfigFile()
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	if !cf.Created.Time.Equal(created) || len(cf.History) != 1 || !cf.History[0].Created.Time.Equal(created) {
		t.Errorf("created %v, history %+v", cf.Created, cf.History)
	}
	if cf.Config.Entrypoint != nil || cf.Config.Cmd != nil {
		t.Errorf("scratch got entrypoint %q, cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
	want := map[string]string{configsLabel: "/configs", "x": "1"}
	if !reflect.DeepEqual(cf.Config.Labels, want) {
		t.Errorf("labels %v", cf.Config.Labels)
	}
	m, _ := img.Manifest()
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("manifest %+v", m)
	}
	if m.Annotations != nil {
		t.Errorf("scratch manifest annotations %v", m.Annotations)
	}
	// Several scratch platforms give an OCI index.
	plats := []v1.Platform{{OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	b3, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Platforms: plats, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	idx, ok := b3.Artifact.(*Index)
	if !ok || b3.MediaType != types.OCIImageIndex {
		t.Fatalf("artifact %T of %s", b3.Artifact, b3.MediaType)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 2 || im.Manifests[0].Platform.Architecture != "arm64" || im.Manifests[1].Platform.Architecture != "amd64" {
		t.Errorf("index %+v", im.Manifests)
	}
	if got := strings.Join(b3.Platforms(), " "); got != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %s", got)
	}
}

func TestCatalogOnBase(t *testing.T) {
	for _, mt := range []types.MediaType{types.DockerManifestSchema2, types.OCIManifestSchema1} {
		t.Run(string(mt), func(t *testing.T) {
			base := openBase(t, baseImage(t, mt, v1.Platform{OS: "linux", Architecture: "s390x"}))
			b, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Base: base, BaseName: "quay.io/x/opm:v1", Labels: map[string]string{configsLabel: "/configs", "x": "1"}, Entrypoint: entrypoint, Cmd: cmd, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			img := b.Artifact.(*Image)
			cf, _ := img.ConfigFile()
			bi := base.Images[0]
			if !reflect.DeepEqual(cf.Config.Entrypoint, entrypoint) || !reflect.DeepEqual(cf.Config.Cmd, cmd) {
				t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
			}
			want := map[string]string{"base": "yes", configsLabel: "/configs", "x": "1"}
			if !reflect.DeepEqual(cf.Config.Labels, want) {
				t.Errorf("labels %v", cf.Config.Labels)
			}
			if !reflect.DeepEqual(cf.Config.Env, []string{"PATH=/bin"}) || cf.Architecture != "s390x" {
				t.Errorf("base config lost: env %v arch %s", cf.Config.Env, cf.Architecture)
			}
			// Created is the caller's (zero: the Unix epoch), never the base's.
			if !cf.Created.Time.Equal(time.Unix(0, 0)) {
				t.Errorf("created %v", cf.Created)
			}
			if len(cf.RootFS.DiffIDs) != 2 || cf.RootFS.DiffIDs[0] != bi.Config.RootFS.DiffIDs[0] {
				t.Errorf("diff ids %v", cf.RootFS.DiffIDs)
			}
			m, _ := img.Manifest()
			if m.MediaType != mt || len(m.Layers) != 2 || m.Layers[0].Digest != bi.Manifest.Layers[0].Digest {
				t.Fatalf("manifest %+v", m)
			}
			wantLayer := types.OCILayer
			if mt == types.DockerManifestSchema2 {
				wantLayer = types.DockerLayer
				if m.Annotations != nil {
					t.Errorf("docker manifest with annotations %v", m.Annotations)
				}
			} else if m.Annotations[AnnotationBaseDigest] != bi.Digest.String() || m.Annotations[AnnotationBaseName] != "quay.io/x/opm:v1" {
				t.Errorf("annotations %v", m.Annotations)
			}
			if m.Layers[1].MediaType != wantLayer {
				t.Errorf("layer type %s", m.Layers[1].MediaType)
			}
			// The manifest and config are what the digests say.
			raw, _ := img.RawManifest()
			if d, _ := img.Digest(); d != sha(raw) {
				t.Error("manifest digest")
			}
			rc, _ := img.RawConfigFile()
			if m.Config.Digest != sha(rc) || m.Config.Size != int64(len(rc)) {
				t.Error("config digest")
			}
			var probe map[string]any
			if err := json.Unmarshal(raw, &probe); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCatalogOnIndex(t *testing.T) {
	plats := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}, {OS: "linux", Architecture: "ppc64le"}}
	var adds []mutate.IndexAddendum
	for _, p := range plats {
		p := p
		adds = append(adds, mutate.IndexAddendum{Add: baseImage(t, types.OCIManifestSchema1, p), Descriptor: v1.Descriptor{Platform: &p}})
	}
	// An attestation manifest, as buildkit adds: skipped.
	att, _ := random.Image(64, 1)
	adds = append(adds, mutate.IndexAddendum{Add: mutate.MediaType(att, types.OCIManifestSchema1), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}}})
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)

	base := openBase(t, idx)
	b, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Base: base, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out, ok := b.Artifact.(*Index)
	if !ok {
		t.Fatalf("artifact %T", b.Artifact)
	}
	im, _ := out.IndexManifest()
	if len(im.Manifests) != 3 {
		t.Fatalf("%d manifests", len(im.Manifests))
	}
	for i, d := range im.Manifests {
		if !reflect.DeepEqual(*d.Platform, plats[i]) {
			t.Errorf("manifest %d: platform %v, want %v", i, d.Platform, plats[i])
		}
		img, err := out.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.Architecture != plats[i].Architecture || !reflect.DeepEqual(cf.Config.Cmd, []string{"-c", "true"}) {
			t.Errorf("image %d is %s with cmd %q", i, cf.Architecture, cf.Config.Cmd)
		}
	}
	// Every platform carries the same catalog layer.
	l0, _ := b.Images[0].Layers()
	l2, _ := b.Images[2].Layers()
	d0, _ := l0[len(l0)-1].Digest()
	d2, _ := l2[len(l2)-1].Digest()
	if d0 != d2 {
		t.Error("platforms got different catalog layers")
	}
	// A narrowed base gives a narrowed index.
	narrow := openBase(t, idx, v1.Platform{OS: "linux", Architecture: "arm64"})
	b2, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Base: narrow, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if got := strings.Join(b2.Platforms(), " "); got != "linux/arm64/v8" || b2.MediaType != types.OCIImageIndex {
		t.Errorf("narrowed to %s (%s)", got, b2.MediaType)
	}
	// Narrowed to one platform, as asked: one image.
	b3, err := Catalog(context.Background(), CatalogOptions{Dir: catalogDir(t), Base: narrow, Platforms: []v1.Platform{{OS: "linux", Architecture: "arm64"}}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	if _, ok := b3.Artifact.(*Image); !ok || b3.MediaType != types.OCIManifestSchema1 {
		t.Errorf("one platform asked for gave a %T (%s)", b3.Artifact, b3.MediaType)
	}
}

func TestBundle(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"manifests/csv.yaml": "kind: ClusterServiceVersion", "metadata/annotations.yaml": "annotations: {}", "tests/scorecard/config.yaml": ""})
	labels := map[string]string{"operators.operatorframework.io.bundle.package.v1": "p"}
	b, err := Bundle(context.Background(), BundleOptions{Dir: dir, Labels: labels, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cf, _ := b.Images[0].ConfigFile()
	if !reflect.DeepEqual(cf.Config.Labels, labels) || cf.Config.Entrypoint != nil || cf.Config.Cmd != nil {
		t.Errorf("config %+v", cf.Config)
	}
	var names []string
	for _, e := range entries(t, b.Layer) {
		names = append(names, e.name)
	}
	if got := strings.Join(names, " "); got != "manifests/ manifests/csv.yaml metadata/ metadata/annotations.yaml" {
		t.Errorf("entries %s", got)
	}
}

func TestBundleLabels(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{name: "yaml", in: "annotations:\n  a: b\n  c: 'd e'\n  n: 1.10\n  t: true\n  z:\n", want: map[string]string{"a": "b", "c": "d e", "n": "1.10", "t": "true", "z": ""}},
		{name: "json", in: `{"annotations":{"a":"b","x.y/z":"1"}}`, want: map[string]string{"a": "b", "x.y/z": "1"}},
		{name: "first document", in: "annotations:\n  a: b\n---\nannotations:\n  c: d\n", want: map[string]string{"a": "b"}},
		{name: "alias", in: "x: &v hello\nannotations:\n  a: *v\n", want: map[string]string{"a": "hello"}},
		{name: "list", in: "annotations:\n  a:\n    - b\n", err: "x.yaml:3: annotation \"a\": the value must be a string"},
		{name: "none", in: "other: 1\n", err: "x.yaml: no annotations key"},
		{name: "empty", in: "annotations: {}\n", err: "x.yaml:1: no annotations"},
		{name: "not mapping", in: "annotations: [a]\n", err: "x.yaml:1: annotations is not a mapping"},
		{name: "broken", in: "annotations: [\n", err: "x.yaml: yaml:"},
		{name: "scalar doc", in: "hello\n", err: "not a mapping"},
		{name: "nul", in: "annotations:\n  a: \"b\\0\"\n", err: "a NUL byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BundleLabels([]byte(tc.in), "x.yaml")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzBundleLabels(f *testing.F) {
	for _, s := range []string{"annotations:\n  a: b\n", `{"annotations":{"a":"b"}}`, "annotations: [\n", "a: &x [*x]\n", "annotations:\n  a: *x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, err := BundleLabels(data, "f")
		if err != nil {
			return
		}
		if len(labels) == 0 {
			t.Fatal("no labels and no error")
		}
		for k, v := range labels {
			if k == "" || checkLabel(k, v) != nil {
				t.Fatalf("bad label %q=%q accepted", k, v)
			}
		}
	})
}

func TestEpochAndCreated(t *testing.T) {
	if e, err := Epoch(""); err != nil || !e.Equal(time.Unix(0, 0)) {
		t.Errorf("Epoch(\"\") = %v, %v", e, err)
	}
	if e, err := Epoch("1700000000"); err != nil || e.Unix() != 1700000000 {
		t.Errorf("Epoch = %v, %v", e, err)
	}
	for _, bad := range []string{"-1", "1.5", "x", "99999999999999"} {
		if _, err := Epoch(bad); err == nil {
			t.Errorf("Epoch(%q) accepted", bad)
		}
	}
	now := func() time.Time { return time.Date(2025, 6, 7, 8, 9, 10, 500, time.FixedZone("x", 3600)) }
	for in, want := range map[string]string{
		"now":                       "2025-06-07T07:09:10Z",
		"2024-05-01T12:00:00+02:00": "2024-05-01T10:00:00Z",
		"86400":                     "1970-01-02T00:00:00Z",
	} {
		got, err := ParseCreated(in, now)
		if err != nil || got.Format(time.RFC3339Nano) != want {
			t.Errorf("ParseCreated(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2024-05-01"} {
		if _, err := ParseCreated(bad, now); err == nil {
			t.Errorf("ParseCreated(%q) accepted", bad)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms([]string{"linux/amd64", " linux/arm64/v8 ", ""})
	if err != nil || len(got) != 2 || got[1].Variant != "v8" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"linux", "/amd64", "linux/", "linux/arm/v7/x", "linux/amd64:10.0"} {
		if _, err := ParsePlatforms([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseCreated(f *testing.F) {
	for _, s := range []string{"now", "0", "2024-05-01T12:00:00Z", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseCreated(s, func() time.Time { return time.Unix(5, 0) })
		if err == nil && got.Location() != time.UTC {
			t.Fatalf("%q: not UTC", s)
		}
	})
}
