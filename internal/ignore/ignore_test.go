package ignore

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

type query struct {
	path  string
	isDir bool
	want  bool
}

// f and d build queries for a file and a directory.
func f(path string, want bool) query { return query{path, false, want} }
func d(path string, want bool) query { return query{path, true, want} }

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // directory -> .indexignore content
		queries []query
	}{
		{
			name:    "Success/no patterns",
			files:   map[string]string{"": "# only a comment\n\n   \n\t\n"},
			queries: []query{f("README.md", false), f("a/b/c.json", false), d("a", false)},
		},
		{
			name:  "Success/name matches at any depth",
			files: map[string]string{"": "README.md\n"},
			queries: []query{
				f("README.md", true), f("sub/README.md", true), f("a/b/README.md", true),
				f("README.mdx", false), f("xREADME.md", false), f("readme.md", false),
			},
		},
		{
			name:  "Success/name matching a parent ignores everything below",
			files: map[string]string{"": "vendor\n"},
			queries: []query{
				f("vendor", true), d("vendor", true), f("vendor/a.json", true),
				f("x/vendor/y/z.json", true), f("vendors/a.json", false),
			},
		},
		{
			name:    "Success/comment",
			files:   map[string]string{"": "#README.md\n"},
			queries: []query{f("README.md", false), f("#README.md", false)},
		},
		{
			name:    "Success/escaped hash",
			files:   map[string]string{"": `\#notes` + "\n"},
			queries: []query{f("#notes", true), f("notes", false)},
		},
		{
			name:    "Success/hash not at start is literal",
			files:   map[string]string{"": "a#b\n"},
			queries: []query{f("a#b", true), f("a", false)},
		},
		{
			name:    "Success/trailing spaces trimmed",
			files:   map[string]string{"": "foo   \n"},
			queries: []query{f("foo", true), f("foo ", false)},
		},
		{
			name:    "Success/escaped trailing space kept",
			files:   map[string]string{"": `foo\ ` + "\n"},
			queries: []query{f("foo ", true), f("foo", false)},
		},
		{
			name:    "Success/leading spaces kept",
			files:   map[string]string{"": "  foo\n"},
			queries: []query{f("  foo", true), f("foo", false)},
		},
		{
			name:    "Success/CRLF and no final newline",
			files:   map[string]string{"": "foo\r\nbar\r\nbaz"},
			queries: []query{f("foo", true), f("bar", true), f("baz", true), f("qux", false)},
		},
		{
			name:    "Success/negation after a glob re-includes",
			files:   map[string]string{"": "*.json\n!keep.json\n"},
			queries: []query{f("a.json", true), f("keep.json", false), f("sub/keep.json", false), f("sub/a.json", true)},
		},
		{
			name:    "Success/later pattern wins over negation",
			files:   map[string]string{"": "!keep.json\n*.json\n"},
			queries: []query{f("keep.json", true), f("a.json", true)},
		},
		{
			name:    "Success/escaped bang",
			files:   map[string]string{"": `\!important` + "\n"},
			queries: []query{f("!important", true), f("important", false)},
		},
		{
			name:    "Success/lone bang and slash match nothing",
			files:   map[string]string{"": "!\n/\n!/\n"},
			queries: []query{f("a", false), f("a/b", false)},
		},
		{
			name:  "Success/leading slash anchors",
			files: map[string]string{"": "/a.json\n"},
			queries: []query{
				f("a.json", true), f("sub/a.json", false), d("a.json", true), f("a.json/x", true),
			},
		},
		{
			name:  "Success/middle slash anchors",
			files: map[string]string{"": "sub/a.json\n"},
			queries: []query{
				f("sub/a.json", true), f("x/sub/a.json", false), f("a.json", false),
			},
		},
		{
			name:  "Success/anchored pattern ignores below",
			files: map[string]string{"": "a/b\n"},
			queries: []query{
				f("a/b", true), f("a/b/c.json", true), f("a/b/c/d.json", true), f("a/bc/d.json", false), f("b/c", false),
			},
		},
		{
			name:  "Success/double slash collapses",
			files: map[string]string{"": "a//b\n"},
			queries: []query{
				f("a/b", true), f("a/x/b", false),
			},
		},
		{
			name:  "Success/trailing slash is dir only",
			files: map[string]string{"": "sub/\n"},
			queries: []query{
				f("sub", false), d("sub", true), f("sub/x.json", true), f("a/sub/x.json", true), f("a/sub", false),
			},
		},
		{
			name:  "Success/anchored dir only",
			files: map[string]string{"": "a/sub/\n"},
			queries: []query{
				f("a/sub", false), d("a/sub", true), f("a/sub/x.json", true), f("b/a/sub/x.json", false),
			},
		},
		{
			name:  "Success/leading double star",
			files: map[string]string{"": "**/foo\n"},
			queries: []query{
				f("foo", true), f("a/foo", true), f("a/b/foo", true), f("a/b/foo/x.json", true), f("a/foox", false),
			},
		},
		{
			name:  "Success/leading double star with anchored rest",
			files: map[string]string{"": "**/foo/bar\n"},
			queries: []query{
				f("foo/bar", true), f("a/foo/bar", true), f("a/foo/baz", false), f("a/bar", false),
			},
		},
		{
			name:  "Success/middle double star",
			files: map[string]string{"": "a/**/b\n"},
			queries: []query{
				f("a/b", true), f("a/x/b", true), f("a/x/y/b", true), f("a/x/y/b/c", true),
				f("b", false), f("x/a/b", false), f("a/x", false),
			},
		},
		{
			name:  "Success/trailing double star",
			files: map[string]string{"": "a/**\n"},
			queries: []query{
				f("a/x", true), f("a/x/y", true), f("b/x", false), f("ab/x", false),
			},
		},
		{
			name:    "Success/double star alone matches everything",
			files:   map[string]string{"": "**\n"},
			queries: []query{f("a", true), f("a/b/c", true)},
		},
		{
			name:  "Success/double star inside a name",
			files: map[string]string{"": "foo**\nx/bar**\n"},
			queries: []query{
				// Unanchored it is an ordinary glob; anchored go-git never matches it.
				f("foobar", true), f("foo", true), f("x/barbaz", false), f("x/bar", false),
			},
		},
		{
			name:  "Success/star and question mark stay in one component",
			files: map[string]string{"": "a/*.json\nb?.yaml\n"},
			queries: []query{
				f("a/x.json", true), f("a/.json", true), f("a/b/x.json", false),
				f("b1.yaml", true), f("sub/b2.yaml", true), f("b.yaml", false), f("b12.yaml", false),
			},
		},
		{
			name:  "Success/star forms",
			files: map[string]string{"": "*.bak\ntmp*\n*cache*\nx/*\n"},
			queries: []query{
				f("a.bak", true), f(".bak", true), f("a.bakx", false),
				f("tmp", true), f("tmpfile", true), f("atmp", false),
				f("cache", true), f("my-cache-dir/x", true), f("cach", false),
				f("x/anything", true), f("x", false), f("y/x/z", false),
			},
		},
		{
			name:  "Success/character classes",
			files: map[string]string{"": "[abc].json\n[x-z]?.yaml\n[^m-p]n.txt\n"},
			queries: []query{
				f("a.json", true), f("c.json", true), f("d.json", false),
				f("y1.yaml", true), f("w1.yaml", false),
				f("an.txt", true), f("nn.txt", false),
			},
		},
		{
			name:  "Success/bang in class is literal as in path.Match",
			files: map[string]string{"": "[!a].json\n"},
			queries: []query{
				f("!.json", true), f("a.json", true), f("b.json", false),
			},
		},
		{
			name:  "Success/escapes",
			files: map[string]string{"": `\*.json` + "\n" + `q\?` + "\n" + `\[x]` + "\n"},
			queries: []query{
				f("*.json", true), f("a.json", false), f("q?", true), f("qa", false), f("[x]", true), f("x", false),
			},
		},
		{
			name:    "Success/malformed patterns match nothing",
			files:   map[string]string{"": "[\na/[b\nc\\\n"},
			queries: []query{f("[", false), f("a/[b", false), f("a", false), f("c", false), f(`c\`, false)},
		},
		{
			name:    "Success/no backtracking after double star as in go-git",
			files:   map[string]string{"": "**/a/b\n"},
			queries: []query{f("x/a/b", true), f("a/a/b", false)},
		},
		{
			name:  "Success/scoped to the directory of the ignore file",
			files: map[string]string{"": "", "sub": "*.json\n"},
			queries: []query{
				f("a.json", false), f("sub/a.json", true), f("sub/deeper/b.json", true),
				f("other/a.json", false), f("subx/a.json", false), f("x/sub/a.json", false),
			},
		},
		{
			name:  "Success/leading slash anchors to the ignore file's directory",
			files: map[string]string{"sub": "/a.json\n", "x/y": "/b/c.json\n"},
			queries: []query{
				f("sub/a.json", true), f("sub/x/a.json", false), f("a.json", false),
				f("x/y/b/c.json", true), f("x/b/c.json", false), f("b/c.json", false),
			},
		},
		{
			name:  "Success/scoped pattern never matches its own directory",
			files: map[string]string{"sub": "sub\n"},
			queries: []query{
				d("sub", false), f("sub/x", false), f("sub/sub", true), f("sub/sub/x", true),
			},
		},
		{
			name:  "Success/deeper file overrides for its subtree",
			files: map[string]string{"": "*.json\n", "sub": "!keep.json\n"},
			queries: []query{
				f("keep.json", true), f("sub/keep.json", false), f("sub/a/keep.json", false), f("sub/a.json", true),
			},
		},
		{
			name:  "Success/shallower file cannot override deeper",
			files: map[string]string{"": "!keep.json\n", "sub": "*.json\n"},
			queries: []query{
				f("keep.json", false), f("sub/keep.json", true),
			},
		},
		{
			name:  "Success/directory keys are cleaned",
			files: map[string]string{".": "a\n", "./x/": "b\n", "y/z/": "c\n"},
			queries: []query{
				f("a", true), f("x/b", true), f("b", false), f("y/z/c", true), f("y/c", false),
			},
		},
		{
			name:  "Success/negation re-includes below an ignored directory (go-git)",
			files: map[string]string{"": "sub/\n!sub/keep.json\n"},
			queries: []query{
				f("sub/keep.json", false), f("sub/a.json", true),
			},
		},
		{
			name:  "Success/negated name re-includes below an ignored name (go-git)",
			files: map[string]string{"": "sub\n!keep.json\n"},
			queries: []query{
				f("sub/keep.json", false), f("keep.json", false),
			},
		},
		{
			name:  "Success/deeper negation re-includes below an ignored directory (go-git)",
			files: map[string]string{"": "sub/\n", "sub": "!keep.json\n"},
			queries: []query{
				f("sub/keep.json", false),
			},
		},
		{
			name:  "Success/directory re-included but not the file of the same name",
			files: map[string]string{"": "x\n!x/\n"},
			queries: []query{
				f("x", true), d("x", false), f("x/below", false),
			},
		},
		{
			name:  "Success/re-included directory",
			files: map[string]string{"": "sub/\n!sub/\n"},
			queries: []query{
				f("sub/x", false), d("sub", false),
			},
		},
		{
			// go-git matches "!*/" against the parent "x", so unlike git it re-includes
			// every file below a directory.
			name:  "Success/ignore all but json and directories",
			files: map[string]string{"": "*\n!*/\n!*.json\n"},
			queries: []query{
				f("a.json", false), f("x/y/b.json", false), f("README.md", true), f("x/notes.txt", false),
			},
		},
		// The .indexignore files of the conformance catalogs (catalogd-test-catalog and
		// operator-controller-test-catalog-v1/v2): "..*" is a glob, so it only matches
		// names that start with two dots.
		{
			name:  "Success/conformance catalog indexignore",
			files: map[string]string{"": "/expected_all.json\n..*\n"},
			queries: []query{
				f("expected_all.json", true), f("catalog.yaml", false), f("sub/expected_all.json", false),
				f(".indexignore", false), f(".hidden.json", false), f("..data/x.json", true),
			},
		},
		// invalid/loader: README.md is ignored, everything else loads.
		{
			name:  "Success/conformance loader indexignore",
			files: map[string]string{"": "README.md\n"},
			queries: []query{
				f("README.md", true), f("a.json", false), f("sub/b.yaml", false), f("sub/README.md", true),
			},
		},
		{
			name:    "Success/leading dot slash and root",
			files:   map[string]string{"": "a\n**\n"},
			queries: []query{f("./a", true), f("", false), f(".", false), d(".", false)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for dir, content := range tt.files {
				files[dir] = []byte(content)
			}
			m := NewFromFiles(files)
			for _, q := range tt.queries {
				if got := m.Match(q.path, q.isDir); got != q.want {
					t.Errorf("Match(%q, %v) = %v, want %v", q.path, q.isDir, got, q.want)
				}
			}
		})
	}
}

func TestNilAndZeroMatcher(t *testing.T) {
	var m *Matcher
	if m.Match("a", false) {
		t.Error("nil Matcher ignored a path")
	}
	if (&Matcher{}).Match("a", false) {
		t.Error("zero Matcher ignored a path")
	}
	if NewFromFiles(nil).Match("a", false) {
		t.Error("NewFromFiles(nil) ignored a path")
	}
}

func TestNew(t *testing.T) {
	fsys := fstest.MapFS{
		".indexignore":              {Data: []byte("README.md\n*.txt\n")},
		"README.md":                 {Data: []byte("not fbc")},
		"a.json":                    {Data: []byte("{}")},
		"notes.txt":                 {Data: []byte("x")},
		"-early/.indexignore":       {Data: []byte("x.json\n")},
		"-early/x.json":             {Data: []byte("{}")},
		"sub/.indexignore":          {Data: []byte("!keep.txt\n/b.yaml\n")},
		"sub/b.yaml":                {Data: []byte("")},
		"sub/keep.txt":              {Data: []byte("")},
		"sub/deep/b.yaml":           {Data: []byte("")},
		"sub/deep/c.txt":            {Data: []byte("")},
		"dir/.indexignore/x.json":   {Data: []byte("{}")}, // a directory named like the ignore file is not read
		"vendor.txt/.indexignore":   {Data: []byte("!*\n")},
		"vendor.txt/x.json":         {Data: []byte("{}")},
		"other/.indexignore":        {Data: []byte("# nothing\n")},
		"other/README.md":           {Data: []byte("x")},
		"other/keep.txt":            {Data: []byte("x")},
		"other/nested/.indexignore": {Data: []byte("*.json\n")},
		"other/nested/a.json":       {Data: []byte("{}")},
	}
	m, err := New(fsys, ".indexignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []query{
		f("README.md", true), f("a.json", false), f("notes.txt", true),
		f("-early/x.json", true), f("x.json", false),
		f("sub/b.yaml", true), f("sub/keep.txt", false), f("sub/deep/b.yaml", false), f("sub/deep/c.txt", true),
		f("dir/.indexignore/x.json", false),
		f("vendor.txt/x.json", false),
		f("other/README.md", true), f("other/keep.txt", true), f("other/nested/a.json", true), f("other/a.json", false),
	} {
		if got := m.Match(q.path, q.isDir); got != q.want {
			t.Errorf("Match(%q, %v) = %v, want %v", q.path, q.isDir, got, q.want)
		}
	}
	// Every ignore file is read, those in ignored directories included.
	if got, want := len(m.patterns), 7; got != want {
		t.Errorf("compiled %d patterns, want %d", got, want)
	}
}

func TestNewMatchesNewFromFiles(t *testing.T) {
	fsys := fstest.MapFS{
		".indexignore":       {Data: []byte("*.md\n!KEEP.md\n")},
		"a/.indexignore":     {Data: []byte("/x/\n**/y.json\n")},
		"a/b/.indexignore":   {Data: []byte("!y.json\nKEEP.md\n")},
		"a/b/c/.indexignore": {Data: []byte("*\n")},
		"z/.indexignore":     {Data: []byte("[\n")},
	}
	fromFS, err := New(fsys, ".indexignore")
	if err != nil {
		t.Fatal(err)
	}
	fromFiles := NewFromFiles(map[string][]byte{
		"z":     []byte("[\n"),
		"a/b/c": []byte("*\n"),
		"a":     []byte("/x/\n**/y.json\n"),
		".":     []byte("*.md\n!KEEP.md\n"),
		"a/b":   []byte("!y.json\nKEEP.md\n"),
	})
	paths := []string{
		"README.md", "KEEP.md", "a/KEEP.md", "a/b/KEEP.md", "a/b/c/KEEP.md", "a/x/y", "a/x", "a/b/x/y",
		"a/y.json", "a/q/y.json", "a/b/y.json", "a/b/c/y.json", "a/b/c/d", "z/[", "y.json",
	}
	for _, p := range paths {
		for _, isDir := range []bool{false, true} {
			if a, b := fromFS.Match(p, isDir), fromFiles.Match(p, isDir); a != b {
				t.Errorf("Match(%q, %v): New says %v, NewFromFiles says %v", p, isDir, a, b)
			}
		}
	}
}

// failFS fails to open one file. It has only Open, so fs.ReadDir and fs.ReadFile go through it.
type failFS struct {
	m    fstest.MapFS
	fail string
}

func (f failFS) Open(name string) (fs.File, error) {
	if name == f.fail {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.m.Open(name)
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		fsys fs.FS
		want string
	}{
		{
			name: "Error/unreadable ignore file",
			fsys: failFS{fstest.MapFS{"sub/.indexignore": {Data: []byte("x\n")}}, "sub/.indexignore"},
			want: "reading ignore file sub/.indexignore: open sub/.indexignore: permission denied",
		},
		{
			name: "Error/unreadable directory",
			fsys: failFS{fstest.MapFS{"sub/x.json": {Data: []byte("{}")}}, "sub"},
			want: "reading directory sub: open sub: permission denied",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(tt.fsys, ".indexignore")
			if err == nil {
				t.Fatalf("New() = %v, want error", m)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
			if !errors.Is(err, fs.ErrPermission) {
				t.Errorf("error %v does not wrap fs.ErrPermission", err)
			}
		})
	}
}

func TestNewReadsIgnoredDirectories(t *testing.T) {
	// An ignore file below an ignored directory still counts (go-git).
	fsys := fstest.MapFS{
		".indexignore":           {Data: []byte("build/\n")},
		"build/sub/.indexignore": {Data: []byte("!x\n")},
		"a.json":                 {Data: []byte("{}")},
	}
	m, err := New(fsys, ".indexignore")
	if err != nil {
		t.Fatal(err)
	}
	if m.Match("build/sub/x", false) {
		t.Error("build/sub/x ignored, want it re-included")
	}
	if !m.Match("build/sub/y", false) {
		t.Error("build/sub/y not ignored")
	}
}
