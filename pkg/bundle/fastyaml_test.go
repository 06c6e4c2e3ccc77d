package bundle

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
)

// slowYAML is decodeYAMLObject's yaml.v2 path.
func slowYAML(doc []byte) (any, error) {
	var y any
	if err := yamlv2.Unmarshal(doc, &y); err != nil {
		return nil, err
	}
	return convertYAML(y, 0)
}

// checkFast compares the fast path with yaml.v2's on doc: when the fast
// path reads it, the values must be equal. It reports whether the fast
// path read it.
func checkFast(t testing.TB, name string, doc []byte) bool {
	t.Helper()
	got, ok := fastYAML(doc)
	if !ok {
		return false
	}
	want, err := slowYAML(doc)
	if err == errSlowPath {
		t.Errorf("%s: the fast path read a document yaml.v2's path hands to the slow path: %v", name, got)
		return true
	}
	if err != nil {
		t.Errorf("%s: the fast path read a document yaml.v2 refuses (%v): %#v", name, err, got)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the fast path differs:\n got %#v\nwant %#v", name, got, want)
	}
	return true
}

var fastYAMLSeeds = []string{
	"a: b\n",
	"---\na: 1\nb: 1.5\nc: 1e3\nd: 0x1f\ne: 0o17\nf: 017\ng: 08\nh: 1_000\ni: yes\nj: off\nk: ~\nl:\nm: 12345678901234567890\nn: -0\n",
	"a:\n  b:\n    c: d\n  e: [1, two, \"3\"]\n  f: {}\n  g: []\n",
	"a:\n- x\n- y: 1\n  z: 2\n-\n  w: 3\n- - nested\n",
	"spec:\n  description: This is a long\n    description over\n\n    lines.\n  other: x # comment\n",
	"a: |\n  line1\n  line2\n\n  line4\nb: |-\n  x\n\nc: |+\n  y\n\nd: >\n  folded\n  text\n\n  para\ne: >-\n  f\n",
	"a: \"double \\\"quoted\\\" \\u00e9\\n\"\nb: 'single ''quoted'''\nc: \"multi\n  line\n\n  quoted\"\nd: 'x\n  y'\n",
	"a: \"trailing \\\n  escaped\"\n",
	"'quoted key': 1\n\"other\": 2\n",
	"a: http://example.com:8080/path\nb: foo#bar\nc: 2020-01-01\n",
	"a: &anchor x\nb: *anchor\n",
	"a: !!str 1\n",
	"? complex\n: key\n",
	"a: b\na: c\n",
	"on: x\n",
	"a: {b: c, d: 1}\n",
	"a: [b, {c: d}]\n",
	"a:\n  - |\n    text\n  - >-\n    more\n",
	"- a\n- b\n",
	"",
	"# just a comment\n",
	"a: b\n...\n",
	"a: 'unclosed\n",
	"a: b: c\n",
	"a:    \n  b\n",
	"  a: 1\n  b: 2\n",
	"a:\n  b: 1\n c: 2\n",
	"a: |\n    indented\n  less\n",
	"a: |\n  \n    spaces first\n",
	"a: \"x\" y\n",
	"a: -1\nb: -.5\nc: +.5e3\nd: .\ne: '-'\n",
	"a: 1.5e400\n",
	"a: 0b101\nb: -0b11\n",
	"key with spaces: value with spaces\n",
	"a: \"\\x41\\U0001F600\\_\\N\"\n",
	"a: >\n  x\n    more indented\n  y\n",
	"kind: A\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        description: \"Foo is\n          the Schema\"\n        properties:\n          spec:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n",
}

func TestFastYAML(t *testing.T) {
	for i, d := range fastYAMLSeeds {
		checkFast(t, "doc "+strconv.Itoa(i), []byte(d))
	}
}

// FuzzFastYAML compares the fast path with yaml.v2's on arbitrary
// documents.
func FuzzFastYAML(f *testing.F) {
	for _, s := range fastYAMLSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkFast(t, "input", doc)
	})
}

// TestFastYAMLCorpus compares the fast path with yaml.v2's on every
// manifest under $OPM_BUNDLE_CORPUS (e.g. a checkout of
// community-operators), and reports how many it read.
func TestFastYAMLCorpus(t *testing.T) {
	root := os.Getenv("OPM_BUNDLE_CORPUS")
	if root == "" {
		t.Skip("set OPM_BUNDLE_CORPUS to a directory of bundles to compare the fast YAML path with yaml.v2 on it")
	}
	files, read, bytesAll, bytesRead := 0, 0, 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if looksLikeJSON(data) {
			return nil
		}
		doc, err := firstYAMLDocument(data)
		if err != nil {
			return nil
		}
		files++
		bytesAll += len(doc)
		if checkFast(t, p, doc) {
			read++
			bytesRead += len(doc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fast path read %d of %d documents (%.1f%% of %d MB)", read, files, 100*float64(bytesRead)/float64(max(bytesAll, 1)), bytesAll>>20)
}
