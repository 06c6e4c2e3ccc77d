package registriesconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

const sample = `# a typical disconnected-cluster file
unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
short-name-mode = "enforcing"

[[registry]]
prefix = "quay.io/opmkit-conformance"
location = "127.0.0.1:5000/opmkit-conformance/"
insecure = true

[[registry]]
location = "registry.example.com"

[[registry.mirror]]
location = "mirror-a.example.com"

[[registry.mirror]]
location = "mirror-b.example.com:8443/cache"
insecure = true
pull-from-mirror = "digest-only"

[[registry]]
prefix = "docker.io/library"
location = "hub-cache.example.com/library"
mirror-by-digest-only = true

[[registry.mirror]]
location = "digests.example.com/library"

[[registry]]
prefix = "*.blocked.example"
blocked = true

[aliases]
"fedora" = "registry.fedoraproject.org/fedora"
`

func TestParse(t *testing.T) {
	c, err := Parse([]byte(sample), "r.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Registry{
		{Prefix: "quay.io/opmkit-conformance", Location: "127.0.0.1:5000/opmkit-conformance", Insecure: true, Pos: Position{"r.conf", 5}},
		{Prefix: "registry.example.com", Location: "registry.example.com", Pos: Position{"r.conf", 10}, Mirrors: []Mirror{
			{Location: "mirror-a.example.com", Pos: Position{"r.conf", 13}},
			{Location: "mirror-b.example.com:8443/cache", Insecure: true, PullFromMirror: "digest-only", Pos: Position{"r.conf", 16}},
		}},
		{Prefix: "docker.io/library", Location: "hub-cache.example.com/library", MirrorByDigestOnly: true, Pos: Position{"r.conf", 21}, Mirrors: []Mirror{
			{Location: "digests.example.com/library", Pos: Position{"r.conf", 26}},
		}},
		{Prefix: "*.blocked.example", Blocked: true, Pos: Position{"r.conf", 29}},
	}
	if !reflect.DeepEqual(c.Registries, want) {
		t.Errorf("got  %+v\nwant %+v", c.Registries, want)
	}
}

func TestParseV1(t *testing.T) {
	c, err := Parse([]byte(`
[registries.search]
registries = ["docker.io"]
[registries.insecure]
registries = ["localhost:5000", "10.0.0.1:5000"]
[registries.block]
registries = ["evil.example.com", "localhost:5000"]
`), "v1.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []Registry{
		{Prefix: "localhost:5000", Location: "localhost:5000", Insecure: true, Blocked: true, Pos: Position{File: "v1.conf"}},
		{Prefix: "10.0.0.1:5000", Location: "10.0.0.1:5000", Insecure: true, Pos: Position{File: "v1.conf"}},
		{Prefix: "evil.example.com", Location: "evil.example.com", Blocked: true, Pos: Position{File: "v1.conf"}},
	}
	if !reflect.DeepEqual(c.Registries, want) {
		t.Errorf("got  %+v\nwant %+v", c.Registries, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"syntax", "[[registry]]\nprefix = \"a\nlocation = \"b\"\n", "f.conf:2:"},
		{"type", "[[registry]]\nlocation = \"a\"\ninsecure = \"yes\"\n", "f.conf:3:"},
		{"scheme", "[[registry]]\nlocation = \"https://quay.io\"\n", `f.conf:1: invalid location "https://quay.io": URI schemes are not supported`},
		{"empty", "[[registry]]\ninsecure = true\n", "f.conf:1: invalid location: cannot be empty"},
		{"empty location", "[[registry]]\nprefix = \"quay.io\"\n", `f.conf:1: invalid location for prefix "quay.io": cannot be empty`},
		{"bad wildcard", "[[registry]]\nprefix = \"*.example.com/ns\"\nlocation = \"a\"\n", `f.conf:1: invalid prefix "*.example.com/ns"`},
		{"inner wildcard", "[[registry]]\nprefix = \"a.*.com\"\nlocation = \"a\"\n", `f.conf:1: invalid prefix "a.*.com"`},
		{"mirror no location", "[[registry]]\nlocation = \"a\"\n[[registry.mirror]]\ninsecure = true\n", `f.conf:3: mirror of "a": location is unset`},
		{"pull-from-mirror", "[[registry]]\nlocation = \"a\"\n[[registry.mirror]]\nlocation = \"m\"\npull-from-mirror = \"sometimes\"\n", `f.conf:3: mirror "m": unsupported pull-from-mirror value "sometimes"`},
		{"digest-only twice", "[[registry]]\nlocation = \"a\"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"m\"\npull-from-mirror = \"all\"\n", `f.conf:4: mirror "m": cannot set mirror-by-digest-only`},
		{"conflict", "[[registry]]\nprefix = \"x\"\nlocation = \"a\"\ninsecure = true\n[[registry]]\nprefix = \"y\"\nlocation = \"a\"\n", `f.conf:5: registry "a" is defined multiple times with conflicting 'insecure' settings (first at f.conf:1)`},
		{"blocked conflict", "[[registry]]\nprefix = \"x\"\nlocation = \"a\"\nblocked = true\n[[registry]]\nprefix = \"y\"\nlocation = \"a\"\n", `conflicting 'blocked' settings`},
		{"mixed", "unqualified-search-registries = [\"a\"]\n[registries.search]\nregistries = [\"b\"]\n", "mixing the version 1 format"},
		{"too big", strings.Repeat("#", MaxFileSize+1), "file larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), "f.conf")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPullSources(t *testing.T) {
	c, err := Parse([]byte(sample+`
[[registry]]
prefix = "quay.io"
location = "quay-mirror.example.com"

[[registry]]
prefix = "*.example.org"
location = ""

[[registry]]
prefix = "*.sub.example.org"
location = "sub-cache.example.com"
`), "r.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref    string
		digest bool
		want   []string // Ref, with "!" for insecure and "m:" for mirrors
	}{
		// The longest prefix wins.
		{ref: "quay.io/opmkit-conformance/bar:v1", want: []string{"!127.0.0.1:5000/opmkit-conformance/bar:v1"}},
		{ref: "quay.io/other/bar:v1", want: []string{"quay-mirror.example.com/other/bar:v1"}},
		// A prefix matches whole path components only.
		{ref: "quay.io/opmkit-conformance-x/bar:v1", want: []string{"quay-mirror.example.com/opmkit-conformance-x/bar:v1"}},
		// No table: the reference itself.
		{ref: "ghcr.io/a/b:c", want: []string{"ghcr.io/a/b:c"}},
		// Mirrors in order, restricted by pull-from-mirror, then the location.
		{ref: "registry.example.com/ns/img:tag", want: []string{"m:mirror-a.example.com/ns/img:tag", "registry.example.com/ns/img:tag"}},
		{ref: "registry.example.com/ns/img@sha256:abcd", digest: true, want: []string{"m:mirror-a.example.com/ns/img@sha256:abcd", "m:!mirror-b.example.com:8443/cache/ns/img@sha256:abcd", "registry.example.com/ns/img@sha256:abcd"}},
		// mirror-by-digest-only.
		{ref: "docker.io/library/busybox:latest", want: []string{"hub-cache.example.com/library/busybox:latest"}},
		{ref: "docker.io/library/busybox@sha256:ff", digest: true, want: []string{"m:digests.example.com/library/busybox@sha256:ff", "hub-cache.example.com/library/busybox@sha256:ff"}},
		// Wildcards: an empty location keeps the reference; the most
		// specific wildcard wins.
		{ref: "a.example.org/x:1", want: []string{"a.example.org/x:1"}},
		{ref: "a.sub.example.org:5000/x:1", want: []string{"sub-cache.example.com:5000/x:1"}},
		{ref: "example.org/x:1", want: []string{"example.org/x:1"}},
	} {
		srcs, err := c.PullSources(tc.ref, tc.digest)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		var got []string
		for _, s := range srcs {
			g := s.Ref
			if s.Insecure {
				g = "!" + g
			}
			if s.Mirror {
				g = "m:" + g
			}
			got = append(got, g)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.ref, got, tc.want)
		}
	}

	_, err = c.PullSources("x.blocked.example/a:b", false)
	var be *BlockedError
	if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
		t.Fatalf("blocked: got %v", err)
	}
	if want := `registry "*.blocked.example" is blocked (blocked = true in r.conf:29)`; err.Error() != want {
		t.Errorf("blocked message:\ngot  %s\nwant %s", err, want)
	}
}

// Pushes take the location rewrite and the blocked flag, never a mirror.
func TestPushTarget(t *testing.T) {
	c, err := Parse([]byte(sample), "r.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ref, want string }{
		{ref: "quay.io/opmkit-conformance/bar:v1", want: "!127.0.0.1:5000/opmkit-conformance/bar:v1"},
		{ref: "registry.example.com/ns/img:tag", want: "registry.example.com/ns/img:tag"},
		{ref: "docker.io/library/busybox:latest", want: "hub-cache.example.com/library/busybox:latest"},
		{ref: "ghcr.io/a/b:c", want: "ghcr.io/a/b:c"},
	} {
		src, err := c.PushTarget(tc.ref)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		got := src.Ref
		if src.Insecure {
			got = "!" + got
		}
		if got != tc.want || src.Mirror {
			t.Errorf("%s: got %q (mirror %v), want %q", tc.ref, got, src.Mirror, tc.want)
		}
	}
	if _, err := c.PushTarget("x.blocked.example/a:b"); !errors.Is(err, ErrBlocked) {
		t.Errorf("blocked: got %v", err)
	}
}

func TestMatchLen(t *testing.T) {
	for _, tc := range []struct {
		ref, prefix string
		want        int
	}{
		{"quay.io/a/b:c", "quay.io", 7},
		{"quay.io:443/a", "quay.io", 7}, // as containers/image (documented there as unintended)
		{"quay.io/a/b:c", "quay.io/a/b", 11},
		{"quay.io/a/b@sha256:x", "quay.io/a/b", 11},
		{"quay.io/a/bc:c", "quay.io/a/b", -1},
		{"quay.io", "quay.io", 7},
		{"quay.i", "quay.io", -1},
		{"x.quay.io/a", "*.quay.io", 9},
		{"quay.io/a", "*.quay.io", -1},
		{"x.y.quay.io:5000/a", "*.quay.io", 11},
		{"evil.com/x.quay.io/a", "*.quay.io", -1},
	} {
		if got := matchLen(tc.ref, tc.prefix); got != tc.want {
			t.Errorf("matchLen(%q, %q) = %d, want %d", tc.ref, tc.prefix, got, tc.want)
		}
	}
}

func TestLocate(t *testing.T) {
	files := map[string]bool{}
	env := Env{
		Getenv: func(k string) string {
			if k == EnvVar && files["env"] {
				return "/custom.conf"
			}
			return ""
		},
		Home:   "/home/u",
		Exists: func(p string) bool { return files[p] },
	}
	if got, want := Locate(env), (Locations{File: SystemFile, Dirs: []string{SystemDir, "/home/u/.config/containers/registries.conf.d"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("default: got %+v, want %+v", got, want)
	}
	files["/home/u/.config/containers/registries.conf"] = true
	if got, want := Locate(env), (Locations{File: "/home/u/.config/containers/registries.conf", Dirs: []string{"/home/u/.config/containers/registries.conf.d"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("user: got %+v, want %+v", got, want)
	}
	files["env"] = true
	if got, want := Locate(env), (Locations{File: "/custom.conf", Required: true, Dirs: []string{SystemDir, "/home/u/.config/containers/registries.conf.d"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("env: got %+v, want %+v", got, want)
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "registries.conf")
	dropins := filepath.Join(dir, "registries.conf.d")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(main, "[[registry]]\nprefix = \"quay.io\"\nlocation = \"a.example.com\"\n\n[[registry]]\nprefix = \"ghcr.io\"\nlocation = \"b.example.com\"\n")
	write(filepath.Join(dropins, "20-override.conf"), "[[registry]]\nprefix = \"quay.io\"\nlocation = \"c.example.com\"\n")
	write(filepath.Join(dropins, "10-add.conf"), "[[registry]]\nprefix = \"docker.io\"\nlocation = \"d.example.com\"\n")
	write(filepath.Join(dropins, "ignored.txt"), "not toml [[[")

	c, err := LoadFiles(Locations{File: main, Dirs: []string{dropins, filepath.Join(dir, "missing.d")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Registries {
		got = append(got, r.Prefix+"="+r.Location+"@"+filepath.Base(r.Pos.File))
	}
	want := []string{"quay.io=c.example.com@20-override.conf", "ghcr.io=b.example.com@registries.conf", "docker.io=d.example.com@10-add.conf"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	// A missing default file is an empty configuration; a missing file
	// named by the environment is an error.
	c, err = LoadFiles(Locations{File: filepath.Join(dir, "none.conf")})
	if err != nil || len(c.Registries) != 0 {
		t.Errorf("missing default: %v, %+v", err, c)
	}
	if _, err := LoadFiles(Locations{File: filepath.Join(dir, "none.conf"), Required: true}); err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("missing required: %v", err)
	}
	// Errors in drop-ins name the drop-in.
	write(filepath.Join(dropins, "30-bad.conf"), "[[registry]]\nlocation = \"http://x\"\n")
	if _, err := LoadFiles(Locations{File: main, Dirs: []string{dropins}}); err == nil || !strings.Contains(err.Error(), "30-bad.conf:1: invalid location") {
		t.Errorf("bad drop-in: %v", err)
	}
}

func TestInsecureHosts(t *testing.T) {
	c, err := Parse([]byte(sample), "r.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"127.0.0.1:5000": true, "mirror-b.example.com:8443": true}
	if got := c.InsecureHosts(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("[registries.insecure]\nregistries = [\"a\"]\n"))
	f.Add([]byte("[[registry]]\nprefix = \"*.x\"\n[[registry.mirror]]\nlocation = \"m\"\n"))
	f.Add([]byte("registry = [{location = \"a\", mirror = [{location = \"b\"}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.conf")
		if err != nil {
			return
		}
		// Whatever parses resolves without panicking, and a source is
		// always produced for an unblocked reference.
		for _, ref := range []string{"quay.io/a/b:c", "docker.io/library/x@sha256:00", "localhost:5000/x:y"} {
			srcs, err := c.PullSources(ref, strings.Contains(ref, "@"))
			if err == nil && len(srcs) == 0 {
				t.Fatalf("no source for %s", ref)
			}
		}
		_ = c.InsecureHosts()
	})
}

// TestParseNesting: arrays nested past MaxNesting are refused before the
// TOML parser sees them (2M levels overflowed its stack), with the line
// and column; brackets in strings and comments do not count.
func TestParseNesting(t *testing.T) {
	deep := "x = 1\nregistry = " + strings.Repeat("[", 2<<20)
	_, err := Parse([]byte(deep), "r.conf")
	if err == nil || err.Error() != "r.conf:2:76: arrays and inline tables nest deeper than 64 levels" {
		t.Fatalf("got %v", err)
	}
	inline := "a = " + strings.Repeat("{b = ", 65) + "1" + strings.Repeat("}", 65)
	if _, err := Parse([]byte(inline), "r.conf"); err == nil || !strings.Contains(err.Error(), "nest deeper than 64 levels") {
		t.Fatalf("inline tables: %v", err)
	}
	ok := "# " + strings.Repeat("[", 100) + "\n" +
		"a = \"" + strings.Repeat("[", 100) + "\\\"[\"\n" +
		"b = '" + strings.Repeat("{", 100) + "'\n" +
		"c = \"\"\"\n" + strings.Repeat("[", 100) + "\"\"\"\"\n" +
		"d = '''" + strings.Repeat("[", 100) + "''''\n" +
		"e = " + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "\n" +
		"[[registry]]\nlocation = \"quay.io\"\n"
	c, err := Parse([]byte(ok), "r.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Registries) != 1 {
		t.Fatalf("got %+v", c.Registries)
	}
}

// astDepth is how deeply the arrays and inline tables of node n nest.
func astDepth(n *unstable.Node) int {
	d := 0
	it := n.Children()
	for it.Next() {
		d = max(d, astDepth(it.Node()))
	}
	if n.Kind == unstable.Array || n.Kind == unstable.InlineTable {
		d++
	}
	return d
}

// FuzzNesting checks that the scan before parsing never counts less
// nesting than the parser recurses into: every array and inline table of
// the syntax tree is a bracket the scan saw.
func FuzzNesting(f *testing.F) {
	f.Add([]byte("a = [[1], {b = [2]}]\n[t]\nc = '[[['\n"))
	f.Add([]byte("a = \"\"\"\n[[\"\"\"\"\nb = [[[]]]"))
	f.Add([]byte("a.b.c = 1\n[x.y]\nz = [{q = [1]}] # [[\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _ := scanNesting(data, 1<<30)
		var p unstable.Parser
		p.Reset(data)
		want := 0
		for p.NextExpression() {
			want = max(want, astDepth(p.Expression()))
		}
		if got < want {
			t.Fatalf("scan counted %d levels, the parser nests %d", got, want)
		}
	})
}
