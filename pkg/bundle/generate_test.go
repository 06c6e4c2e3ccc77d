package bundle

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

func TestDetectMediaType(t *testing.T) {
	csv := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"RegistryV1", map[string]string{"a.yaml": "kind: ConfigMap\n", "b.yaml": csv}, MediaTypeRegistryV1},
		{"RegistryV1JSON", map[string]string{"a.json": `{"kind":"ClusterServiceVersion","metadata":{"name":"a"}}`}, MediaTypeRegistryV1},
		{"Plain", map[string]string{"crd.yaml": "kind: CustomResourceDefinition\n", "junk.txt": "not: [yaml"}, MediaTypePlain},
		{"Helm", map[string]string{"Chart.yaml": "name: mychart\n", "b.yaml": csv}, MediaTypeHelm},
		{"ChartWithoutName", map[string]string{"Chart.yaml": "version: 1\n", "b.yaml": csv}, MediaTypeRegistryV1},
		{"SubdirectoriesSkipped", map[string]string{"sub/csv.yaml": csv, "a.yaml": "kind: ConfigMap\n"}, MediaTypePlain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range tc.files {
				fsys[k] = &fstest.MapFile{Data: []byte(v)}
			}
			got, err := DetectMediaType(fsys)
			if err != nil || got != tc.want {
				t.Errorf("DetectMediaType = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := DetectMediaType(fstest.MapFS{"sub/a.yaml": &fstest.MapFile{}}); err != ErrNoManifestFiles {
		t.Errorf("no files: %v", err)
	}
}

func TestAnnotationsFiles(t *testing.T) {
	a := Annotations{MediaType: MediaTypeRegistryV1, Package: "p", Channels: "stable,beta"}
	wantYAML := `annotations:
  operators.operatorframework.io.bundle.channels.v1: stable,beta
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: p
`
	if got := string(a.YAML()); got != wantYAML {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, wantYAML)
	}
	// A path with a space takes COPY's JSON form.
	got := string(a.Dockerfile("scratch", "my bundle/manifests", "my bundle/metadata"))
	want := `FROM scratch

LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=p
LABEL operators.operatorframework.io.bundle.channels.v1=stable,beta

COPY ["my bundle/manifests", "/manifests/"]
COPY ["my bundle/metadata", "/metadata/"]
`
	if got != want {
		t.Errorf("Dockerfile:\n%s\nwant:\n%s", got, want)
	}
}

func TestAnnotationsCheck(t *testing.T) {
	for _, tc := range []struct {
		a    Annotations
		want string
	}{
		{Annotations{Package: "p", Channels: "a,b", DefaultChannel: "b"}, ""},
		{Annotations{Package: "", Channels: "a"}, "empty package name"},
		{Annotations{Package: "p", Channels: ""}, "no channels"},
		{Annotations{Package: "p", Channels: "a,,b"}, `channels "a,,b": empty channel name`},
		{Annotations{Package: "p\nRUN rm -rf /", Channels: "a"}, "white space or control characters"},
		{Annotations{Package: "p", Channels: "a", DefaultChannel: "b"}, `default channel "b" is not one of the channels (a)`},
	} {
		err := tc.a.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}

func TestCheckAnnotations(t *testing.T) {
	want := Annotations{MediaType: MediaTypeRegistryV1, Package: "p", Channels: "stable"}
	if err := CheckAnnotations(want.YAML(), want); err != nil {
		t.Errorf("same: %v", err)
	}
	extra := append(want.YAML(), "  com.example/other: x\n"...)
	if err := CheckAnnotations(extra, want); err != nil {
		t.Errorf("extra keys: %v", err)
	}
	other := Annotations{MediaType: MediaTypePlain, Package: "p", Channels: "stable"}
	err := CheckAnnotations(other.YAML(), Annotations{MediaType: MediaTypeRegistryV1, Package: "p", Channels: "stable", DefaultChannel: "stable"})
	wantErr := `operators.operatorframework.io.bundle.channel.default.v1 is missing there; operators.operatorframework.io.bundle.mediatype.v1 is "plain" there, "registry+v1" generated`
	if err == nil || err.Error() != wantErr {
		t.Errorf("got %v\nwant %s", err, wantErr)
	}
}

func TestInferFromPackageDir(t *testing.T) {
	csv := func(name, extra string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("kind: ClusterServiceVersion\nmetadata:\n  name: " + name + "\nspec:\n" + extra)}
	}
	fsys := fstest.MapFS{
		"README.md":          &fstest.MapFile{Data: []byte("# not a manifest\n")},
		"p.package.yaml":     &fstest.MapFile{Data: []byte("packageName: p\nchannels:\n- {name: stable, currentCSV: p.v3}\n- {name: fast, currentCSV: p.v4}\n- {name: old, currentCSV: p.v1}\n")},
		"1/csv.yaml":         csv("p.v1", ""),
		"2/csv.yaml":         csv("p.v2", "  replaces: p.v1\n"),
		"3/csv.yaml":         csv("p.v3", "  replaces: p.v2\n  skips: [p.v2.1]\n"),
		"4/csv.yaml":         csv("p.v4", "  skips: [p.v2]\n"),
		"metadata/a.yaml":    &fstest.MapFile{Data: []byte("annotations: {}\n")}, // no CSV: passed over
		"2.1/csv.yaml":       csv("p.v2.1", ""),
		"unrelated/csv.json": &fstest.MapFile{Data: []byte(`{"kind":"ClusterServiceVersion","metadata":{"name":"q.v9"}}`)},
	}
	for _, tc := range []struct {
		csv  string
		want string
	}{
		{"p.v1", "fast,old,stable"}, // fast: p.v4 skips p.v2, which replaces p.v1
		{"p.v2", "fast,stable"},
		{"p.v2.1", "stable"},
		{"p.v4", "fast"},
		{"q.v9", ""},
	} {
		info, err := InferFromPackageDir(fsys, tc.csv)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(info.Channels, ","); got != tc.want || info.Package != "p" || info.File != "p.package.yaml" || info.DefaultChannel != "" {
			t.Errorf("%s: %+v, want channels %s", tc.csv, info, tc.want)
		}
	}
	one := fstest.MapFS{"p.yaml": &fstest.MapFile{Data: []byte("packageName: p\nchannels: [{name: only, currentCSV: p.v1}]\n")}}
	if info, err := InferFromPackageDir(one, "p.v1"); err != nil || info.DefaultChannel != "only" {
		t.Errorf("a single channel is the default: %+v %v", info, err)
	}
	if _, err := InferFromPackageDir(fstest.MapFS{"a.yaml": &fstest.MapFile{Data: []byte("a: b\n")}}, "x"); err == nil {
		t.Error("no package manifest: no error")
	}
}

// FuzzAnnotations: annotations that pass Check round-trip through their
// file (CheckAnnotations agrees with what YAML wrote), and their
// Dockerfile has one instruction per line, none injected; CheckAnnotations
// never panics on an arbitrary file.
func FuzzAnnotations(f *testing.F) {
	f.Add("p", "stable,beta", "stable", "annotations: {a: b}")
	f.Add("p\nRUN x", "a", "", "- x")
	f.Add("p", "yes,no,1.0", "no", "annotations:\n  operators.operatorframework.io.bundle.package.v1: [x]\n")
	f.Fuzz(func(t *testing.T, pkg, channels, def, existing string) {
		_ = CheckAnnotations([]byte(existing), Annotations{Package: pkg, Channels: channels})
		a := Annotations{MediaType: MediaTypeRegistryV1, Package: pkg, Channels: channels, DefaultChannel: def}
		if a.Check() != nil {
			return
		}
		if err := CheckAnnotations(a.YAML(), a); err != nil {
			t.Fatalf("%+v: its own file disagrees: %v\n%s", a, err, a.YAML())
		}
		lines := strings.Split(strings.TrimSuffix(string(a.Dockerfile("scratch", "m", "d")), "\n"), "\n")
		want := 11
		if def == "" {
			want = 10
		}
		if len(lines) != want {
			t.Fatalf("%+v: %d Dockerfile lines, want %d:\n%s", a, len(lines), want, strings.Join(lines, "\n"))
		}
	})
}

// TestDockerfileHostilePaths: a directory name holding a line break, a
// control character or a quote cannot add a Dockerfile line or end the
// COPY's string: the path is a JSON string of COPY's exec form, which
// reads back as the path (issue 30 item 11).
func TestDockerfileHostilePaths(t *testing.T) {
	a := Annotations{MediaType: MediaTypeRegistryV1, Package: "p", Channels: "stable"}
	for _, dir := range []string{
		"x\nRUN touch /pwned\n#/manifests",
		"x\rRUN evil",
		"x\u2028RUN evil",
		"x\x00y\x1b[31m",
		`x", "/etc/"] ["y`,
		`back\slash`,
		"\u0085next line",
	} {
		df := string(a.Dockerfile("scratch", dir, "metadata"))
		lines := strings.Split(strings.TrimSuffix(df, "\n"), "\n")
		last := lines[len(lines)-2]
		if len(lines) != 10 || !strings.HasPrefix(last, "COPY [") {
			t.Errorf("%q: Dockerfile has lines %q", dir, lines)
			continue
		}
		if strings.IndexFunc(last, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 }) >= 0 {
			t.Errorf("%q: raw control or line-separator character in %q", dir, last)
		}
		var args []string
		if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "COPY ")), &args); err != nil || len(args) != 2 || args[0] != dir || args[1] != "/manifests/" {
			t.Errorf("%q: %q reads back as %q (%v)", dir, last, args, err)
		}
	}
	if err := DockerfilePath("a\xffb"); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := DockerfilePath("a\nb"); err != nil {
		t.Errorf("a line break is escaped, not refused: %v", err)
	}
	// Ordinary paths keep upstream's plain form, byte for byte.
	if got := string(a.Dockerfile("scratch", "manifests/", "metadata/")); !strings.HasSuffix(got, "\nCOPY manifests/ /manifests/\nCOPY metadata/ /metadata/\n") {
		t.Errorf("plain form lost:\n%s", got)
	}
}
