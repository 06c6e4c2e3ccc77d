package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/action/dockerfile"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// conformanceDir is ../shared/conformance relative to the repository root.
const conformanceDir = "../../../../shared/conformance"

// conformanceCases returns the case directories of a conformance group,
// skipping the test when the suite is absent.
func conformanceCases(t *testing.T, group string) map[string]string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(conformanceDir, group, "*", "input"))
	if err != nil || len(inputs) == 0 {
		t.Skipf("skipping: no conformance inputs in %s (../shared/conformance is absent)", filepath.Join(conformanceDir, group))
	}
	out := map[string]string{}
	for _, in := range inputs {
		out[filepath.Base(filepath.Dir(in))] = filepath.Dir(in)
	}
	return out
}

func skipLargeUnderRace(t *testing.T, dir string, limit int64) {
	if raceEnabled && os.Getenv("OPM_E2E_ALL") == "" && dirSize(t, dir) > limit {
		t.Skipf("skipping an input over %d KiB under the race detector; run without -race or with OPM_E2E_ALL=1 to include it", limit>>10)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// repoName turns a case name into a repository path component.
func repoName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}

func renderJSON(t testing.TB, opts render.Options) ([]byte, error) {
	t.Helper()
	cfg, err := render.Render(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := declcfg.WriteJSON(*cfg, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), nil
}

// literal is a template that prints s.
func literal(t testing.TB, s string) *template.Template {
	tmpl, err := template.New("ref").Parse(strings.ReplaceAll(s, "{{", `{{"{{"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// isolateCredentials points every credential file at an empty directory,
// then REGISTRY_AUTH_FILE at file ("" = none).
func isolateCredentials(t *testing.T, file string) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
	t.Setenv("XDG_RUNTIME_DIR", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("REGISTRY_AUTH_FILE", file)
}

// roundTrip builds every conformance catalog and bundle, pushes it to
// host with reg, and checks that rendering the image equals rendering the
// directory, byte for byte (bundles with the image field set to the
// reference, as rendering a bundle image sets it).
func roundTrip(t *testing.T, host string, reg render.RegistryOptions) {
	catalogs := conformanceCases(t, "catalog")
	bundles := conformanceCases(t, "bundle")
	ctx := context.Background()
	t.Run("Catalogs", func(t *testing.T) {
		for name, c := range catalogs {
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(c, "input")
				skipLargeUnderRace(t, dir, 512<<10)
				ref := host + "/catalogs/" + repoName(name) + ":v1"
				opts := CatalogOptions{Options: Options{Dir: dir, Tags: []string{ref}, Registry: reg}, BaseImage: "scratch"}
				res, err := RunCatalog(ctx, opts)
				invalid := false
				if err != nil {
					if !strings.Contains(err.Error(), "use --skip-validate to build one anyway") {
						t.Fatal(err)
					}
					invalid = true
					opts.SkipValidate = true
					if res, err = RunCatalog(ctx, opts); err != nil {
						t.Fatal(err)
					}
				}
				if exit, err := os.ReadFile(filepath.Join(c, "validate.exit")); err == nil && (strings.TrimSpace(string(exit)) != "0") != invalid {
					t.Errorf("upstream validate exits %s, the build's validation failed: %v", strings.TrimSpace(string(exit)), invalid)
				}
				want, werr := renderJSON(t, render.Options{Refs: []string{dir}})
				got, err := renderJSON(t, render.Options{Refs: []string{ref}, Registry: reg})
				if werr != nil || err != nil {
					if (werr == nil) != (err == nil) {
						t.Fatalf("directory error %v, image error %v", werr, err)
					}
					return
				}
				if !bytes.Equal(got, want) {
					t.Errorf("image render differs from the directory render (%d and %d bytes)", len(got), len(want))
				}
				if !strings.HasPrefix(res.Digest, "sha256:") || res.Layer.Files == 0 {
					t.Errorf("result %+v", res)
				}
			})
		}
	})
	t.Run("Bundles", func(t *testing.T) {
		for name, c := range bundles {
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(c, "input")
				skipLargeUnderRace(t, dir, 256<<10)
				ref := host + "/bundles/" + repoName(name) + ":v1"
				want, werr := renderJSON(t, render.Options{Refs: []string{dir}, ImageRefTemplate: literal(t, ref)})
				_, err := RunBundle(ctx, BundleOptions{Options{Dir: dir, Tags: []string{ref}, Registry: reg}})
				if werr != nil || err != nil {
					if (werr == nil) != (err == nil) {
						t.Fatalf("directory render error %v, build error %v", werr, err)
					}
					return
				}
				got, err := renderJSON(t, render.Options{Refs: []string{ref}, Registry: reg})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("image render differs from the directory render (%d and %d bytes)", len(got), len(want))
				}
			})
		}
	})
}

// TestRoundTrip runs the round trip against the in-process registry.
func TestRoundTrip(t *testing.T) {
	reg := registrytest.New(t)
	roundTrip(t, reg.Host, render.RegistryOptions{CacheDir: t.TempDir()})
}

// TestRoundTripDistribution runs it against the real distribution
// registry, with TLS from a test CA and htpasswd auth, credentials from
// REGISTRY_AUTH_FILE; and checks that a base on the same registry is
// mounted, not downloaded, and the push errors.
func TestRoundTripDistribution(t *testing.T) {
	d := registrytest.Distribution(t)
	isolateCredentials(t, d.AuthFile)
	cache := t.TempDir()
	reg := render.RegistryOptions{CAFile: d.CAFile, CacheDir: cache}
	roundTrip(t, d.Host, reg)

	ctx := context.Background()
	cat := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, cat)
	t.Run("Success/MountBase", func(t *testing.T) {
		pushOpts, err := d.RemoteOptions()
		if err != nil {
			t.Fatal(err)
		}
		baseRef := d.Host + "/tools/opm:v1"
		base := testBase(t, v1.Platform{OS: "linux", Architecture: "amd64"})
		if err := registrytest.Push(ctx, baseRef, base, pushOpts...); err != nil {
			t.Fatal(err)
		}
		cache := t.TempDir()
		res, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{d.Host + "/catalogs/mounted:v1"}, Registry: render.RegistryOptions{CAFile: d.CAFile, CacheDir: cache}}, BaseImage: baseRef})
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := base.Layers()
		for _, l := range ls {
			h, _ := l.Digest()
			if _, err := os.Stat(filepath.Join(cache, "blobs", "sha256", h.Hex)); err == nil {
				t.Errorf("base layer %s was downloaded, not mounted", h)
			}
		}
		got, err := renderJSON(t, render.Options{Refs: []string{d.Host + "/catalogs/mounted@" + res.Digest}, Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := renderJSON(t, render.Options{Refs: []string{cat}})
		if !bytes.Equal(got, want) {
			t.Error("the mounted image renders differently")
		}
	})
	t.Run("Error/NoCredentials", func(t *testing.T) {
		isolateCredentials(t, "")
		_, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{d.Host + "/catalogs/denied:v1"}, Registry: render.RegistryOptions{CAFile: d.CAFile, CacheDir: "-"}}, BaseImage: "scratch"})
		checkErr(t, err, "writing "+d.Host+"/catalogs/denied:v1", "401 Unauthorized", "no credential file found")
	})
	t.Run("Error/UnknownCA", func(t *testing.T) {
		_, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{d.Host + "/catalogs/ca:v1"}, Registry: render.RegistryOptions{CacheDir: "-"}}, BaseImage: "scratch"})
		checkErr(t, err, "writing "+d.Host+"/catalogs/ca:v1", "certificate signed by unknown authority")
	})
	t.Run("Success/SkipTLSVerify", func(t *testing.T) {
		if _, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{d.Host + "/catalogs/insecure:v1"}, Registry: render.RegistryOptions{SkipTLSVerify: true, CacheDir: "-"}}, BaseImage: "scratch"}); err != nil {
			t.Fatal(err)
		}
	})
}

func checkErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not hold %q", err, w)
		}
	}
}

// writeCatalog writes a small valid catalog.
func writeCatalog(t testing.TB, dir string) {
	t.Helper()
	files := map[string]string{
		"foo/catalog.yaml": `---
schema: olm.package
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
image: quay.io/example/foo-bundle:v0.1.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 0.1.0
`,
		"README.md":    "not part of the catalog\n",
		".indexignore": "README.md\n",
	}
	for n, b := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// testBase is a one-layer base image for platform p, with a label, an
// entrypoint and a command of its own.
func testBase(t testing.TB, p v1.Platform) v1.Image {
	t.Helper()
	l, err := registrytest.Layer(registrytest.Entry{Name: "bin/", Type: '5'}, registrytest.Entry{Name: "bin/opm", Body: "#!/bin/sh\necho " + p.String()})
	if err != nil {
		t.Fatal(err)
	}
	img, err := registrytest.Image(map[string]string{"base.label": "kept"}, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Entrypoint, cf.Config.Cmd = []string{"/bin/sh"}, []string{"-c", "exit 1"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// configOf fetches the config of ref from the in-process registry.
func configOf(t testing.TB, ref string) (*v1.ConfigFile, *v1.Manifest) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return cf, m
}

// dockerfileSettings reads the final stage of a generated Dockerfile: its
// FROM, ENTRYPOINT, CMD and LABEL instructions.
func dockerfileSettings(t *testing.T, text string) (from string, entrypoint, cmd []string, labels map[string]string) {
	t.Helper()
	labels = map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		instr, rest, _ := strings.Cut(line, " ")
		switch instr {
		case "FROM":
			from, _, _ = strings.Cut(rest, " ")
			entrypoint, cmd, labels = nil, nil, map[string]string{}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s: %v", rest, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(rest), &cmd); err != nil {
				t.Fatalf("CMD %s: %v", rest, err)
			}
		case "LABEL":
			k, v, ok := strings.Cut(rest, "=")
			if !ok {
				t.Fatalf("LABEL %s", rest)
			}
			labels[strings.Trim(k, `"`)] = strings.Trim(v, `"`)
		}
	}
	return from, entrypoint, cmd, labels
}

// TestDockerfileVariants builds the catalog of every `generate dockerfile`
// flag variant of the conformance suite with the same flags and checks
// the image config against the Dockerfile upstream generated: the labels
// (the base's kept), the entrypoint and the command. The variants' base
// images cannot be pulled here: each is replaced by a test base under a
// local name. The builder image (-b) has no counterpart: no stage runs.
func TestDockerfileVariants(t *testing.T) {
	cases := conformanceCases(t, "dockerfile")
	reg := registrytest.New(t)
	ctx := context.Background()
	n := 0
	for name, c := range cases {
		created, err := os.ReadFile(filepath.Join(c, "generate.created.input.Dockerfile"))
		if err != nil {
			continue // a variant upstream refuses, or the refusal to overwrite
		}
		n++
		t.Run(name, func(t *testing.T) {
			args, err := os.ReadFile(filepath.Join(c, "generate.args"))
			if err != nil {
				t.Fatal(err)
			}
			// Without the serve cache, the image is the Dockerfile's (with
			// it, the command serves from the cache: TestServeCache).
			noCache := false
			opts := CatalogOptions{Options: Options{Dir: filepath.Join(c, "input"), Registry: render.RegistryOptions{CacheDir: t.TempDir()}}, BaseImage: dockerfile.DefaultImage, ServeCache: &noCache}
			list := strings.Split(strings.TrimSpace(string(args)), "\n")
			for i := 0; i < len(list); i++ {
				switch list[i] {
				case "-i", "--base-image":
					i++
					opts.BaseImage = list[i]
				case "-b", "--builder-image":
					i++
				case "-l", "--extra-labels":
					i++
					opts.ExtraLabels = append(opts.ExtraLabels, list[i])
				}
			}
			from, entrypoint, cmd, labels := dockerfileSettings(t, string(created))
			if from != opts.BaseImage {
				t.Fatalf("the Dockerfile's base is %s, the flags say %s", from, opts.BaseImage)
			}
			var base v1.Image
			if opts.BaseImage != "scratch" {
				base = testBase(t, v1.Platform{OS: "linux", Architecture: "amd64"})
				local := reg.Host + "/bases/" + repoName(opts.BaseImage) + ":v1"
				if err := registrytest.Push(ctx, local, base); err != nil {
					t.Fatal(err)
				}
				opts.BaseImage = local
			}
			ref := reg.Host + "/variants/" + repoName(name) + ":v1"
			opts.Tags = []string{ref}
			if _, err := RunCatalog(ctx, opts); err != nil {
				t.Fatal(err)
			}
			cf, m := configOf(t, ref)
			if !reflect.DeepEqual(cf.Config.Entrypoint, entrypoint) || !reflect.DeepEqual(cf.Config.Cmd, cmd) {
				t.Errorf("entrypoint %q cmd %q, the Dockerfile sets %q and %q", cf.Config.Entrypoint, cf.Config.Cmd, entrypoint, cmd)
			}
			want := labels
			if base != nil {
				want["base.label"] = "kept"
				bl, _ := base.Layers()
				if len(m.Layers) != len(bl)+1 {
					t.Errorf("%d layers on a base of %d", len(m.Layers), len(bl))
				}
			}
			if !reflect.DeepEqual(cf.Config.Labels, want) {
				t.Errorf("labels %v, want %v", cf.Config.Labels, want)
			}
		})
	}
	if n == 0 {
		t.Skip("skipping: no generate dockerfile variant with a Dockerfile in the suite")
	}
}

// TestReproducible builds one catalog twice, from two copies with other
// modes, times and creation order, a second apart, into two OCI archives:
// same digest, same archive bytes. A changed file, another
// SOURCE_DATE_EPOCH or --created changes the digest.
func TestReproducible(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	writeCatalog(t, a)
	writeCatalog(t, b)
	past := time.Now().Add(-240 * time.Hour)
	filepath.Walk(b, func(p string, fi os.FileInfo, _ error) error {
		if fi.Mode().IsRegular() {
			os.Chmod(p, 0o664)
		}
		return os.Chtimes(p, past, past)
	})
	build := func(dir, tag string, o Options) *Result {
		t.Helper()
		o.Dir, o.Tags = dir, []string{"oci-archive:" + filepath.Join(work, tag+".tar")}
		o.Registry.CacheDir = "-"
		res, err := RunCatalog(ctx, CatalogOptions{Options: o, BaseImage: "scratch"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	r1 := build(a, "one", Options{})
	time.Sleep(1100 * time.Millisecond)
	r2 := build(b, "two", Options{})
	if r1.Digest != r2.Digest || r1.Layer != r2.Layer {
		t.Fatalf("same catalog, different images:\n%+v\n%+v", r1, r2)
	}
	one, _ := os.ReadFile(filepath.Join(work, "one.tar"))
	two, _ := os.ReadFile(filepath.Join(work, "two.tar"))
	if !bytes.Equal(one, two) {
		t.Error("same image, different archives")
	}
	// A relative path and another working directory change nothing.
	t.Chdir(work)
	if r := build("a", "three", Options{}); r.Digest != r1.Digest {
		t.Error("a relative path changed the digest")
	}
	if r := build(a, "epoch", Options{SourceDateEpoch: "1700000000"}); r.Digest == r1.Digest || r.Layer.Digest == r1.Layer.Digest {
		t.Error("SOURCE_DATE_EPOCH did not change the image")
	}
	if r := build(a, "created", Options{Created: "2024-01-01T00:00:00Z"}); r.Digest == r1.Digest || r.Layer != r1.Layer {
		t.Error("--created should change the config only")
	}
	if err := os.WriteFile(filepath.Join(b, "foo", "catalog.yaml"), append(mustRead(t, filepath.Join(a, "foo", "catalog.yaml")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := build(b, "changed", Options{}); r.Digest == r1.Digest {
		t.Error("a changed file did not change the digest")
	}
	// On a base (an OCI layout), too.
	layoutDir := filepath.Join(work, "base")
	s := image.NewSession(image.WithCacheDir("-"))
	defer s.Close()
	dst, _ := image.ParseDestination("oci:"+layoutDir+":v1", false)
	if err := s.Write(ctx, dst, testBase(t, v1.Platform{OS: "linux", Architecture: "arm64"}), image.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var digests []string
	for _, tag := range []string{"b1", "b2"} {
		res, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: a, Tags: []string{"oci:" + filepath.Join(work, tag)}, Registry: render.RegistryOptions{CacheDir: "-"}}, BaseImage: "oci:" + layoutDir + ":v1"})
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, res.Digest)
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds on one base: %v", digests)
	}
}

func mustRead(t testing.TB, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMultiArchBase builds on an OCI index made here (three platforms and
// an attestation entry): an index of the same platforms, each image on its
// own base; --platform narrows it.
func TestMultiArchBase(t *testing.T) {
	reg := registrytest.New(t)
	ctx := context.Background()
	plats := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}, {OS: "linux", Architecture: "s390x"}}
	var adds []mutate.IndexAddendum
	bases := map[string]v1.Image{}
	for _, p := range plats {
		p := p
		img := testBase(t, p)
		bases[p.String()] = img
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	att, err := registrytest.Image(nil)
	if err != nil {
		t.Fatal(err)
	}
	adds = append(adds, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}}})
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	baseRef := reg.Host + "/tools/opm:multi"
	if err := registrytest.PushIndex(ctx, baseRef, idx); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, cat)
	reg0 := render.RegistryOptions{CacheDir: t.TempDir()}

	ref := reg.Host + "/catalogs/multi:v1"
	res, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{ref}, Registry: reg0}, BaseImage: baseRef})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Platforms, " "); got != "linux/amd64 linux/arm64/v8 linux/s390x" || res.MediaType != string(types.OCIImageIndex) {
		t.Fatalf("built %s (%s)", got, res.MediaType)
	}
	r, _ := name.ParseReference(ref)
	out, err := remote.Index(r)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := out.IndexManifest()
	if len(im.Manifests) != 3 {
		t.Fatalf("%d manifests", len(im.Manifests))
	}
	want, _ := renderJSON(t, render.Options{Refs: []string{cat}})
	for i, d := range im.Manifests {
		if !reflect.DeepEqual(*d.Platform, plats[i]) {
			t.Errorf("entry %d is %v, want %v", i, d.Platform, plats[i])
		}
		img, err := out.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.Architecture != plats[i].Architecture || !reflect.DeepEqual(cf.Config.Entrypoint, dockerfile.Entrypoint()) {
			t.Errorf("image %d: %s, entrypoint %q", i, cf.Architecture, cf.Config.Entrypoint)
		}
		ls, _ := img.Layers()
		bl, _ := bases[plats[i].String()].Layers()
		l0, _ := ls[0].Digest()
		b0, _ := bl[0].Digest()
		if len(ls) != 3 || l0 != b0 {
			t.Errorf("image %d is not on its platform's base with the catalog and the serve cache", i)
		}
		// The catalog and the cache layers are shared by every platform.
		for j := 1; j < len(ls) && j < 3; j++ {
			if d, _ := ls[j].Digest(); d.String() != []string{"", res.Layer.Digest, res.ServeCache.Layer.Digest}[j] {
				t.Errorf("image %d: layer %d is %s", i, j, d)
			}
		}
		// Each platform renders as the directory does.
		got, err := renderJSON(t, render.Options{Refs: []string{ref}, Registry: render.RegistryOptions{CacheDir: reg0.CacheDir, Platform: plats[i].String()}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("platform %s renders differently", plats[i])
		}
	}

	// --platform narrows: two give an index of two, one gives an image.
	res, err = RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{reg.Host + "/catalogs/multi:two"}, Platforms: []string{"linux/s390x", "linux/amd64"}, Registry: reg0}, BaseImage: baseRef})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Platforms, " "); got != "linux/amd64 linux/s390x" {
		t.Errorf("narrowed to %s", got)
	}
	tarFile := filepath.Join(t.TempDir(), "arm.tar")
	res, err = RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{"docker-archive:" + tarFile + ":example.com/cat:v1"}, Platforms: []string{"linux/arm64"}, Registry: reg0}, BaseImage: baseRef})
	if err != nil {
		t.Fatal(err)
	}
	if res.MediaType == string(types.OCIImageIndex) || strings.Join(res.Platforms, " ") != "linux/arm64/v8" {
		t.Errorf("one platform gave %s %v", res.MediaType, res.Platforms)
	}
	_, err = RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{reg.Host + "/x:v1"}, Platforms: []string{"linux/ppc64le"}, Registry: reg0}, BaseImage: baseRef})
	checkErr(t, err, "base image", "no image for platform linux/ppc64le in the index (it has linux/amd64, linux/arm64/v8, linux/s390x)")
	// An index cannot go to a docker archive.
	_, err = RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{"docker-archive:" + filepath.Join(t.TempDir(), "all.tar")}, Registry: reg0}, BaseImage: baseRef})
	checkErr(t, err, "a docker archive holds single-platform images")
}

// TestCmd checks that --cmd replaces the command on a base, and only it.
func TestCmd(t *testing.T) {
	reg := registrytest.New(t)
	ctx := context.Background()
	baseRef := reg.Host + "/tools/opm:v1"
	if err := registrytest.Push(ctx, baseRef, testBase(t, v1.Platform{OS: "linux", Architecture: "amd64"})); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(t.TempDir(), "catalog")
	writeCatalog(t, cat)
	ref := reg.Host + "/catalogs/cmd:v1"
	want := []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}
	if _, err := RunCatalog(ctx, CatalogOptions{Options: Options{Dir: cat, Tags: []string{ref}, Registry: render.RegistryOptions{CacheDir: t.TempDir()}}, BaseImage: baseRef, Cmd: want}); err != nil {
		t.Fatal(err)
	}
	cf, _ := configOf(t, ref)
	if !reflect.DeepEqual(cf.Config.Cmd, want) || !reflect.DeepEqual(cf.Config.Entrypoint, dockerfile.Entrypoint()) {
		t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
	}
}

// TestBundle checks the bundle image: labels from the annotations, one
// layer with manifests/ and metadata/, the digest file.
func TestBundle(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"manifests/foo.csv.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v0.1.0
spec:
  version: 0.1.0
`,
		"metadata/annotations.yaml": `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: foo
  operators.operatorframework.io.bundle.channels.v1: stable,fast
  operators.operatorframework.io.bundle.channel.default.v1: stable
  com.example.count: 3
`,
		"tests/scorecard/config.yaml": "kind: Configuration\n",
	}
	for n, b := range files {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(b), 0o644)
	}
	reg := registrytest.New(t)
	ref := reg.Host + "/bundles/foo:v0.1.0"
	digestFile := filepath.Join(t.TempDir(), "digest")
	os.WriteFile(digestFile, []byte("old"), 0o644)
	res, err := RunBundle(context.Background(), BundleOptions{Options{Dir: dir, Tags: []string{ref}, DigestFile: digestFile, Registry: render.RegistryOptions{CacheDir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(mustRead(t, digestFile)); got != res.Digest {
		t.Errorf("digest file %q, digest %s", got, res.Digest)
	}
	cf, m := configOf(t, ref)
	want := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         "foo",
		"operators.operatorframework.io.bundle.channels.v1":        "stable,fast",
		"operators.operatorframework.io.bundle.channel.default.v1": "stable",
		"com.example.count": "3",
	}
	if !reflect.DeepEqual(cf.Config.Labels, want) {
		t.Errorf("labels %v", cf.Config.Labels)
	}
	if len(m.Layers) != 1 || cf.OS != "linux" || cf.Architecture != "amd64" || cf.Config.Entrypoint != nil {
		t.Errorf("manifest %+v config %+v", m, cf)
	}
	got, err := renderJSON(t, render.Options{Refs: []string{ref}, Registry: render.RegistryOptions{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := renderJSON(t, render.Options{Refs: []string{dir}, ImageRefTemplate: literal(t, ref)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("image render differs:\n%s\n%s", got, wantJSON)
	}
}

// TestErrors checks the refusals: usage errors, a directory that is not a
// catalog or bundle, an invalid catalog, an existing archive.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	cat := filepath.Join(work, "catalog")
	writeCatalog(t, cat)
	bad := filepath.Join(work, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "x.json"), []byte(`{"schema":"olm.bundle","name":"b","package":"nope"}`), 0o644)
	existing := filepath.Join(work, "exists.tar")
	os.WriteFile(existing, []byte("mine"), 0o644)
	layout := "oci:" + filepath.Join(work, "layout")
	for _, tc := range []struct {
		name  string
		opts  CatalogOptions
		usage bool
		want  []string
	}{
		{name: "NoTag", opts: CatalogOptions{Options: Options{Dir: cat}}, usage: true, want: []string{"no destination"}},
		{name: "BadTag", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{"busybox"}}}, usage: true, want: []string{"repository name must be canonical"}},
		{name: "DigestTag", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{"quay.io/x/y@sha256:" + strings.Repeat("0", 64)}}}, usage: true, want: []string{"push to a tag, not a digest"}},
		{name: "BadPlatform", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{layout}, Platforms: []string{"linux"}}}, usage: true, want: []string{`invalid platform "linux"`}},
		{name: "BadCreated", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{layout}, Created: "yesterday"}}, usage: true, want: []string{`invalid --created "yesterday"`}},
		{name: "BadLabel", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{layout}}, ExtraLabels: []string{"nolabel"}}, usage: true, want: []string{`invalid label "nolabel"`}},
		{name: "BadEpoch", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{layout}, SourceDateEpoch: "soon"}}, want: []string{`SOURCE_DATE_EPOCH="soon"`}},
		{name: "ScratchCmd", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{layout}}, BaseImage: "scratch", Cmd: []string{"serve"}}, usage: true, want: []string{"--cmd needs a base image"}},
		{name: "ArchiveTwice", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{"oci-archive:" + filepath.Join(work, "t.tar"), "oci-archive:" + filepath.Join(work, "t.tar") + ":v2"}}}, usage: true, want: []string{"written twice"}},
		{name: "Exists", opts: CatalogOptions{Options: Options{Dir: cat, Tags: []string{"oci-archive:" + existing}}, BaseImage: "scratch"}, want: []string{existing + " already exists (use --overwrite to replace it)"}},
		{name: "NoDir", opts: CatalogOptions{Options: Options{Dir: filepath.Join(work, "missing"), Tags: []string{layout}}}, want: []string{"no such file or directory"}},
		{name: "Invalid", opts: CatalogOptions{Options: Options{Dir: bad, Tags: []string{layout}}, BaseImage: "scratch"}, want: []string{`invalid catalog "` + bad + `"`, "use --skip-validate to build one anyway"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Registry.CacheDir = "-"
			_, err := RunCatalog(ctx, tc.opts)
			checkErr(t, err, tc.want...)
			var ue *UsageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error: %v, want %v", errors.As(err, &ue), tc.usage)
			}
		})
	}
	if b := mustRead(t, existing); string(b) != "mine" {
		t.Error("an existing archive was replaced")
	}
	if _, err := os.Stat(filepath.Join(work, "layout")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a failed build wrote its layout")
	}
	// Bundles.
	_, err := RunBundle(ctx, BundleOptions{Options{Dir: cat, Tags: []string{layout}, Registry: render.RegistryOptions{CacheDir: "-"}}})
	checkErr(t, err, "is not a bundle directory: it needs manifests/ and metadata/")
	nb := filepath.Join(work, "nobundle")
	os.MkdirAll(filepath.Join(nb, "manifests"), 0o755)
	os.MkdirAll(filepath.Join(nb, "metadata"), 0o755)
	_, err = RunBundle(ctx, BundleOptions{Options{Dir: nb, Tags: []string{layout}, Registry: render.RegistryOptions{CacheDir: "-"}}})
	checkErr(t, err, "bundle "+nb)
}
