package render

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
)

// conformanceDir is ../shared/conformance relative to the repository root.
const conformanceDir = "../../../shared/conformance"

// conformanceInputs returns the input directories of a conformance group,
// skipping the test when the suite is absent.
func conformanceInputs(t *testing.T, group string) map[string]string {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(conformanceDir, group, "*", "input"))
	if err != nil || len(cases) == 0 {
		t.Skipf("skipping: no conformance inputs in %s (../shared/conformance is absent)", filepath.Join(conformanceDir, group))
	}
	out := map[string]string{}
	for _, c := range cases {
		out[filepath.Base(filepath.Dir(c))] = c
	}
	return out
}

// repoName turns a case name into a repository path component.
func repoName(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, s)
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

// TestRenderImageDistribution pushes every conformance bundle and catalog
// as an image to a real distribution registry (TLS with a test CA, htpasswd
// auth) and checks that rendering the image equals rendering the directory
// (with the image field set to the reference, for bundles).
func TestRenderImageDistribution(t *testing.T) {
	bundles := conformanceInputs(t, "bundle")
	catalogs := conformanceInputs(t, "catalog")
	d := registrytest.Distribution(t)
	pushOpts, err := d.RemoteOptions()
	if err != nil {
		t.Fatal(err)
	}
	isolateCredentials(t, d.AuthFile)
	reg := RegistryOptions{CAFile: d.CAFile, CacheDir: t.TempDir()}
	ctx := context.Background()

	t.Run("Bundles", func(t *testing.T) {
		for name, dir := range bundles {
			t.Run(name, func(t *testing.T) {
				skipLargeUnderRace(t, dir, 256<<10)
				ref := d.Host + "/bundles/" + repoName(name) + ":v1"
				img, err := registrytest.DirImage(dir, "", map[string]string{BundlePackageLabel: "x"})
				if err != nil {
					t.Fatal(err)
				}
				if err := registrytest.Push(ctx, ref, img, pushOpts...); err != nil {
					t.Fatal(err)
				}
				want, err := renderJSON(t, Options{Refs: []string{dir}, ImageRefTemplate: literal(t, ref)})
				if err != nil {
					if strings.Contains(err.Error(), "not supported yet") {
						t.Skipf("skipping: bundle directories do not render yet: %v", err)
					}
					if _, ierr := renderJSON(t, Options{Refs: []string{ref}, Registry: reg}); ierr == nil {
						t.Fatalf("the directory fails (%v) but the image renders", err)
					}
					return
				}
				got, err := renderJSON(t, Options{Refs: []string{ref}, Registry: reg})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("image render differs from the directory render (%d and %d bytes)", len(got), len(want))
				}
			})
		}
	})
	t.Run("Catalogs", func(t *testing.T) {
		for name, dir := range catalogs {
			t.Run(name, func(t *testing.T) {
				skipLargeUnderRace(t, dir, 512<<10)
				ref := d.Host + "/catalogs/" + repoName(name) + ":latest"
				img, err := registrytest.DirImage(dir, "configs", map[string]string{ConfigsLabel: "/configs"})
				if err != nil {
					t.Fatal(err)
				}
				if err := registrytest.Push(ctx, ref, img, pushOpts...); err != nil {
					t.Fatal(err)
				}
				want, werr := renderJSON(t, Options{Refs: []string{dir}})
				got, err := renderJSON(t, Options{Refs: []string{ref}, Registry: reg})
				if werr != nil || err != nil {
					if (werr == nil) != (err == nil) {
						t.Fatalf("directory error %v, image error %v", werr, err)
					}
					return
				}
				if !bytes.Equal(got, want) {
					t.Errorf("image render differs from the directory render (%d and %d bytes)", len(got), len(want))
				}
			})
		}
	})

	// Registry access faults against the real server.
	anyBundle := ""
	for name, dir := range bundles {
		if dirSize(t, dir) <= 256<<10 {
			anyBundle = d.Host + "/bundles/" + repoName(name) + ":v1"
			break
		}
	}
	t.Run("Error/NoCredentials", func(t *testing.T) {
		isolateCredentials(t, "")
		_, err := renderJSON(t, Options{Refs: []string{anyBundle}, Registry: RegistryOptions{CAFile: d.CAFile, CacheDir: "-"}})
		var want = []string{"pulling " + anyBundle, "UNAUTHORIZED", "no credential file found"}
		checkErr(t, err, want...)
	})
	t.Run("Error/UnknownCA", func(t *testing.T) {
		_, err := renderJSON(t, Options{Refs: []string{anyBundle}, Registry: RegistryOptions{CacheDir: "-"}})
		checkErr(t, err, "pulling "+anyBundle, "certificate signed by unknown authority")
	})
	t.Run("Success/SkipTLSVerify", func(t *testing.T) {
		privateTemp(t)
		_, err := renderJSON(t, Options{Refs: []string{anyBundle}, Registry: RegistryOptions{SkipTLSVerify: true, CacheDir: "-"}})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Error/WrongPassword", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "auth.json")
		os.WriteFile(bad, []byte(`{"auths":{"`+d.Host+`":{"auth":"b3BtOndyb25n"}}}`), 0o600)
		isolateCredentials(t, bad)
		_, err := renderJSON(t, Options{Refs: []string{anyBundle}, Registry: RegistryOptions{CAFile: d.CAFile, CacheDir: "-"}})
		checkErr(t, err, "pulling "+anyBundle, "credentials looked up in "+bad)
	})
}

// TestImageCredentialSources checks each place credentials come from
// against the real registry: the docker config, a docker credential
// helper, podman's auth.json, and REGISTRY_AUTH_FILE over the others.
func TestImageCredentialSources(t *testing.T) {
	d := registrytest.Distribution(t)
	pushOpts, err := d.RemoteOptions()
	if err != nil {
		t.Fatal(err)
	}
	ref := d.Host + "/creds/bundle:v1"
	img, err := registrytest.DirImage(filepath.Join("testdata", "image", "bundle"), "", map[string]string{BundlePackageLabel: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if err := registrytest.Push(context.Background(), ref, img, pushOpts...); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(d.AuthFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(`{"auths":{"` + d.Host + `":{"auth":"b3BtOndyb25n"}}}`)
	write := func(t *testing.T, p string, b []byte, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home string)
		err   string
	}{
		{name: "Success/DockerConfig", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".docker", "config.json"), good, 0o600)
		}},
		{name: "Success/CredentialHelper", setup: func(t *testing.T, home string) {
			bin := filepath.Join(home, "bin")
			write(t, filepath.Join(bin, "docker-credential-opmtest"), []byte("#!/bin/sh\ncat >/dev/null\necho '{\"ServerURL\":\"\",\"Username\":\""+d.Username+"\",\"Secret\":\""+d.Password+"\"}'\n"), 0o700)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			write(t, filepath.Join(home, ".docker", "config.json"), []byte(`{"credHelpers":{"`+d.Host+`":"opmtest"}}`), 0o600)
		}},
		{name: "Success/PodmanAuth", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, "containers", "auth.json"), good, 0o600)
		}},
		{name: "Success/RegistryAuthFileFirst", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".docker", "config.json"), bad, 0o600)
			t.Setenv("REGISTRY_AUTH_FILE", d.AuthFile)
		}},
		{name: "Error/WrongCredentials", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".docker", "config.json"), bad, 0o600)
		}, err: "credentials looked up in "},
		{name: "Error/BrokenConfig", setup: func(t *testing.T, home string) {
			write(t, filepath.Join(home, ".docker", "config.json"), []byte("{"), 0o600)
		}, err: "reading credentials from "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateCredentials(t, "")
			tc.setup(t, os.Getenv("HOME"))
			privateTemp(t)
			_, err := renderJSON(t, Options{Refs: []string{ref}, Registry: RegistryOptions{CAFile: d.CAFile, CacheDir: "-"}})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, "pulling "+ref, tc.err)
		})
	}
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
	if errors.Is(err, context.Canceled) {
		t.Errorf("unexpected cancel: %v", err)
	}
}

// skipLargeUnderRace skips inputs over limit bytes under the race detector,
// which slows their renders tenfold, unless OPM_E2E_ALL is set.
func skipLargeUnderRace(t *testing.T, dir string, limit int64) {
	if raceEnabled && os.Getenv("OPM_E2E_ALL") == "" && dirSize(t, dir) > limit {
		t.Skipf("skipping an input over %d KiB under the race detector; run without -race or with OPM_E2E_ALL=1 to include it", limit>>10)
	}
}

// dirSize returns the total size of the regular files under dir.
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
