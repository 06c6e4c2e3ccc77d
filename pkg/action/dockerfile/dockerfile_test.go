package dockerfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const wantDefault = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM quay.io/operator-framework/opm:latest as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM quay.io/operator-framework/opm:latest
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
`

const wantScratch = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM example.com/opm:v1 as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD index /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL "a"="1"
LABEL "b"="x=y"
LABEL "q"="say \"hi\" \\o/"
`

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{
			name: "Success/Default",
			opts: Options{BaseImage: DefaultImage, BuilderImage: DefaultImage, IndexDir: "catalog"},
			want: wantDefault,
		},
		{
			name: "Success/ScratchBaseWithLabelsSortedAndQuoted",
			opts: Options{BaseImage: "scratch", BuilderImage: "example.com/opm:v1", IndexDir: "index",
				ExtraLabels: map[string]string{"b": "x=y", "a": "1", "q": `say "hi" \o/`}},
			want: wantScratch,
		},
		{
			name: "Success/EmptyLabelsMapAddsNothing",
			opts: Options{BaseImage: DefaultImage, BuilderImage: DefaultImage, IndexDir: "catalog", ExtraLabels: map[string]string{}},
			want: wantDefault,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Write(&b, tt.opts); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestWriteScratchBuilder(t *testing.T) {
	var b strings.Builder
	err := Write(&b, Options{BaseImage: DefaultImage, BuilderImage: "scratch", IndexDir: "x"})
	if !errors.Is(err, ErrScratchBuilder) || err.Error() != `invalid builder image: "scratch"` {
		t.Fatalf("got %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    map[string]string
		wantErr string
	}{
		{name: "Success/None", in: nil, want: map[string]string{}},
		{name: "Success/LastDuplicateWins", in: []string{"a.b=c", "x=1", "a.b=d"}, want: map[string]string{"a.b": "d", "x": "1"}},
		{name: "Success/ValueWithEquals", in: []string{"k=a=b"}, want: map[string]string{"k": "a=b"}},
		{name: "Success/EmptyValue", in: []string{"k="}, want: map[string]string{"k": ""}},
		{name: "Error/NoEquals", in: []string{"a=b", "novalue"}, wantErr: `invalid label "novalue"`},
		{name: "Error/EmptyKey", in: []string{"=v"}, wantErr: `invalid label "=v": empty key`},
		{name: "Error/LineBreak", in: []string{"k=a\nRUN rm -rf /"}, wantErr: `invalid label "k=a\nRUN rm -rf /": labels cannot contain line breaks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLabels(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, root, wantName, wantPath, wantErr string
	}{
		{name: "Success/Relative", root: "input", wantName: "input", wantPath: "input.Dockerfile"},
		{name: "Success/TrailingSlash", root: "a/catalog/", wantName: "catalog", wantPath: "a/catalog.Dockerfile"},
		{name: "Success/Absolute", root: "/x/y/index", wantName: "index", wantPath: "/x/y/index.Dockerfile"},
		{name: "Success/Unclean", root: "a/./b/../catalog", wantName: "catalog", wantPath: "a/catalog.Dockerfile"},
		{name: "Success/Dot", root: ".", wantName: filepath.Base(wd), wantPath: wd + ".Dockerfile"},
		{name: "Success/DotDot", root: "..", wantName: filepath.Base(filepath.Dir(wd)), wantPath: filepath.Dir(wd) + ".Dockerfile"},
		{name: "Error/FileSystemRoot", root: "/", wantErr: `cannot generate a Dockerfile for "/": the catalog directory needs a parent directory to hold its Dockerfile`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, path, err := Paths(tt.root)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if name != tt.wantName || path != tt.wantPath {
				t.Errorf("got (%q, %q), want (%q, %q)", name, path, tt.wantName, tt.wantPath)
			}
		})
	}
}

func TestEnsureNotExistAndCheckRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := EnsureNotExist(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing: %v", err)
	}
	err := EnsureNotExist(file)
	if !errors.Is(err, fs.ErrExist) || err.Error() != `path "`+file+`": file already exists` {
		t.Errorf("existing: %v", err)
	}
	// A dangling symlink is an existing name too: never write through it.
	link := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	if err := EnsureNotExist(link); !errors.Is(err, fs.ErrExist) {
		t.Errorf("dangling link: %v", err)
	}

	if err := CheckRoot(dir); err != nil {
		t.Errorf("dir: %v", err)
	}
	if err := CheckRoot(file); err == nil || err.Error() != `provided root path "`+file+`" is not a directory` {
		t.Errorf("file: %v", err)
	}
	if err := CheckRoot(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestWriteNew(t *testing.T) {
	t.Run("Success/CreatesWithUmaskedMode", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.Dockerfile")
		if err := WriteNew(p, []byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != "hello\n" {
			t.Fatalf("read %q, %v", b, err)
		}
		st, _ := os.Stat(p)
		if st.Mode().Perm()&0o600 != 0o600 {
			t.Errorf("mode %v", st.Mode())
		}
		assertOnly(t, dir, "c.Dockerfile")
	})
	t.Run("Error/ExistingFileUntouched", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.Dockerfile")
		if err := os.WriteFile(p, []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := WriteNew(p, []byte("theirs\n"))
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("got %v", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "mine\n" {
			t.Errorf("overwritten: %q", b)
		}
		assertOnly(t, dir, "c.Dockerfile")
	})
	t.Run("Error/MissingDirectory", func(t *testing.T) {
		dir := t.TempDir()
		if err := WriteNew(filepath.Join(dir, "nope", "c.Dockerfile"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("Success/ConcurrentWritersExactlyOneWins", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "c.Dockerfile")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = WriteNew(p, []byte(strings.Repeat("x", 1<<16)))
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, fs.ErrExist):
				t.Errorf("unexpected error %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d writers succeeded, want 1", ok)
		}
		assertOnly(t, dir, "c.Dockerfile")
	})
}

// assertOnly checks that dir holds exactly the named entries (no temporary
// files left behind).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

// FuzzLabels checks that whatever labels are accepted, the Dockerfile holds
// exactly one LABEL line per distinct key after the fixed part, each a
// well-formed pair of double-quoted words: no label can inject an
// instruction or break out of its quotes.
func FuzzLabels(f *testing.F) {
	for _, s := range []string{"a=b", "a.b=c=d", "k=", "=v", "novalue", `q="x"`, `b=\`, "k=a\nRUN x", "k=a\rb", "ü=ö"} {
		f.Add(s, "x=y")
	}
	f.Fuzz(func(t *testing.T, l1, l2 string) {
		labels, err := ParseLabels([]string{l1, l2})
		if err != nil {
			return
		}
		out := Render(Options{BaseImage: "scratch", BuilderImage: DefaultImage, IndexDir: "c", ExtraLabels: labels})
		_, extra, ok := strings.Cut(out, "# Set other custom labels\n")
		if !ok {
			t.Fatalf("no custom labels section:\n%s", out)
		}
		lines := strings.Split(strings.TrimSuffix(extra, "\n"), "\n")
		if len(lines) != len(labels) {
			t.Fatalf("%d label lines for %d labels:\n%s", len(lines), len(labels), extra)
		}
		for _, line := range lines {
			k, v, ok := parseLabelLine(line)
			if !ok {
				t.Fatalf("malformed line %q", line)
			}
			if want, found := labels[k]; !found || want != v {
				t.Fatalf("line %q decodes to %q=%q, labels %q", line, k, v, labels)
			}
		}
	})
}

// parseLabelLine decodes `LABEL "k"="v"` with backslash escapes, as a
// Dockerfile parser reads double-quoted words.
func parseLabelLine(line string) (k, v string, ok bool) {
	rest, ok := strings.CutPrefix(line, "LABEL ")
	if !ok {
		return "", "", false
	}
	word := func(s string) (string, string, bool) {
		if !strings.HasPrefix(s, `"`) {
			return "", "", false
		}
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 >= len(s) {
					return "", "", false
				}
				i++
				b.WriteByte(s[i])
			case '"':
				return b.String(), s[i+1:], true
			default:
				b.WriteByte(s[i])
			}
		}
		return "", "", false
	}
	k, rest, ok = word(rest)
	if !ok || !strings.HasPrefix(rest, "=") {
		return "", "", false
	}
	v, rest, ok = word(rest[1:])
	return k, v, ok && rest == ""
}
