package declcfg

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The YAML fast path (yamlfast.go) must convert every document it accepts
// exactly as the slow path (upstream's sigs.k8s.io/yaml conversion) does:
// the same blob, keys and top-level members. These tests check it on every
// YAML document of the conformance suite, on hand-written edge cases, and
// under fuzzing (FuzzYAMLFast).

// compareYAMLFast converts doc both ways. It reports whether the fast path
// accepted doc, and fails t if the two paths disagree.
func compareYAMLFast(t testing.TB, doc []byte) bool {
	t.Helper()
	fast, ok := decodeYAMLFast(doc)
	if !ok {
		return false
	}
	slow, err := decodeYAMLSlow(doc)
	if err != nil {
		t.Fatalf("fast path accepted what the slow path rejects (%v): %q", err, clip(doc))
	}
	if !bytes.Equal(fast.blob, slow.blob) || fast.schema != slow.schema || fast.pkg != slow.pkg ||
		fast.name != slow.name || fast.hasKeys != slow.hasKeys {
		t.Fatalf("fast and slow paths differ on %q:\nfast %q (%q %q %q %v)\nslow %q (%q %q %q %v)\n%s",
			clip(doc), clip(fast.blob), fast.schema, fast.pkg, fast.name, fast.hasKeys,
			clip(slow.blob), slow.schema, slow.pkg, slow.name, slow.hasKeys, diffAt(fast.blob, slow.blob))
	}
	if slow.top != nil && !reflect.DeepEqual(fast.top, slow.top) {
		t.Fatalf("top-level members differ on %q:\nfast %+v\nslow %+v", clip(doc), fast.top, slow.top)
	}
	return true
}

func clip(b []byte) []byte {
	if len(b) > 2000 {
		return append(b[:2000:2000], "..."...)
	}
	return b
}

const conformanceSuite = "../../../shared/conformance"

// conformanceSmallOnly reports whether the conformance comparisons take
// only files up to conformanceSmall bytes (1448 of the 1683 YAML files,
// 9 of 133 MB): with -short and under the race detector, which would take
// minutes over the whole suite (the fast path is single-threaded code; the
// race detector adds nothing to the comparison).
func conformanceSmallOnly() bool { return testing.Short() || raceEnabled }

const conformanceSmall = 64 << 10

// conformanceYAML returns every YAML file of the conformance suite (inputs
// and recorded `-o yaml` outputs; see conformanceSmallOnly), or skips t if
// the suite is absent.
func conformanceYAML(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(conformanceSuite); err != nil {
		t.Skipf("conformance suite not found at %s", conformanceSuite)
	}
	var files []string
	err := filepath.WalkDir(conformanceSuite, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") &&
			(!strings.Contains(name, "yaml") || !strings.HasSuffix(name, ".stdout")) {
			return nil
		}
		if conformanceSmallOnly() {
			if info, err := d.Info(); err != nil || info.Size() > conformanceSmall {
				return err
			}
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// yamlDocs splits data into documents as the loader does.
func yamlDocs(data []byte) [][]byte {
	var docs [][]byte
	for off := 0; ; {
		doc, adv, _, err := catalogSplitter.Split(data[off:], true)
		if err != nil || doc.Data == nil {
			return docs
		}
		docs = append(docs, doc.Data)
		off += adv
	}
}

// TestYAMLFastConformance compares the two paths on every document of
// every YAML file of the conformance suite, and checks that the fast path
// takes nearly all of the real catalogs.
func TestYAMLFastConformance(t *testing.T) {
	var docs, accepted, bytesAll, bytesFast int
	var communityAll, communityFast int
	declined := map[string]int{}
	for _, file := range conformanceYAML(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range yamlDocs(data) {
			docs++
			bytesAll += len(doc)
			community := strings.Contains(file, "community-operators-prod-v4.20/input")
			if community {
				communityAll += len(doc)
			}
			if compareYAMLFast(t, doc) {
				accepted++
				bytesFast += len(doc)
				if community {
					communityFast += len(doc)
				}
			} else {
				rel, _ := filepath.Rel(conformanceSuite, file)
				declined[rel]++
			}
		}
	}
	t.Logf("fast path: %d of %d documents, %d of %d bytes", accepted, docs, bytesFast, bytesAll)
	for f, n := range declined {
		t.Logf("declined %d in %s", n, f)
	}
	if communityAll > 0 && !conformanceSmallOnly() && float64(communityFast) < 0.99*float64(communityAll) {
		t.Errorf("the fast path took only %d of the %d bytes of community-operators-prod-v4.20", communityFast, communityAll)
	}
}

// yamlFastCases are documents on the edges of the fast path's subset,
// with whether it takes them.
var yamlFastCases = []struct {
	name string
	doc  string
	fast bool
}{
	{"Simple", "schema: olm.package\nname: foo\n", true},
	{"Unsorted", "name: foo\nschema: x\nb: 1\na: 2\n", true},
	{"Duplicate", "schema: x\na: 1\na: 2\n", true},
	{"DuplicateQuoted", "schema: x\na: 1\n'a': 2\n", true},
	{"CaseDuplicate", "schema: x\nSchema: y\n", false},
	{"NonStringSchema", "schema: 5\n", false},
	{"Nested", "schema: x\no:\n  b: [] \n  a: {}\n  c:\n  d:\n    - 1\n    -\n    - x: y\n      z: w\n", true},
	{"IndentlessSequence", "schema: x\nl:\n- a\n- b: c\n  d: e\n-\nm: 1\n", true},
	{"SequenceOfSequences", "schema: x\nl:\n-\n  - a\n  - b\n", true},
	{"CompactNestedSequence", "schema: x\nl:\n- - a\n", false},
	{"Comments", "# head\nschema: x # trailing\n  # indented\na: 'q' # c\nb: |  # c\n  text\n# c\n", true},
	{"Scalars", "schema: x\na: yes\nb: No\nc: ~\nd: null\ne: 012\nf: 0x1F\ng: 1_000\nh: 1e3\ni: -0.0\nj: .5\nk: 1.\nl: +12\nm: 12345678901234567890\nnn: 123456789012345678\no: 2001-12-14\np: 1.2.3\nq: 0b101\nr: -0b11\ns: 0o17\ntt: on\nu: '1'\nv: \"true\"\n", true},
	{"SpecialFloats", "schema: x\na: .inf\n", false},
	{"NaN", "schema: x\na: .NaN\n", false},
	{"FloatOverflow", "schema: x\na: 1e400\nb: .5e999\n", true},
	{"Merge", "schema: x\n<<: {a: 1}\n", false},
	{"MergeValue", "schema: x\na: <<\n", false},
	{"QuotedMergeKey", "schema: x\n'<<': 1\n", true},
	{"Anchor", "schema: x\na: &a 1\nb: *a\n", false},
	{"Tag", "schema: x\na: !!str 1\n", false},
	{"NonStringKey", "schema: x\n1: a\n", false},
	{"BoolKey", "schema: x\ny: a\n", false},
	{"NoKey", "schema: x\nn: a\n", false},
	{"Flow", "schema: x\na: [1, 2]\n", false},
	{"Multiline", "schema: x\na: one\n  two\n\n  three\n\n\n   four\nb: 1\n", true},
	{"MultilineInSequence", "schema: x\na:\n- one\n  two\n- three\n", true},
	{"MultilineColon", "schema: x\na: one\n  two: three\n", false},
	{"MultilineComment", "schema: x\na: one\n  # c\nb: 2\n", true},
	{"ValueWithColon", "schema: x\na: b: c\n", false},
	{"ColonsInside", "schema: x\na: urn:alm:descriptor\nb: http://x:80/a\nc: 'a: b'\nd: a :b\n", true},
	{"Literal", "schema: x\na: |\n  line 1\n\n   indented\n  line 3\n\n\nb: |-\n  x\nc: |+\n  y\n\n\nd: |2\n    two more\ne: |\n\n  after empty\n", true},
	{"Folded", "schema: x\na: >\n  folded\n  text\n\n  para\n    more\n  back\nb: >-\n  x\n   y\n  z\n", true},
	{"BlockScalarShallow", "schema: x\na: |\nb: 1\n", true},
	{"BlockScalarLeadingBlank", "schema: x\na: |\n      \n  x\n", false},
	{"BlockScalarLeadingBlankOK", "schema: x\na: |+\n \n\n  x\n   \n\nb: >\n\n \n  x\n", true},
	{"BlockScalarTab", "schema: x\na: |\n  x\n  \ty\n  \tz\n", true},
	{"BlockScalarTabFirst", "schema: x\na: |\n  \tx\n", false},
	{"BlockScalarTabIndent", "schema: x\na: |\n\tx\n", false},
	{"BlockScalarInSequence", "schema: x\nl:\n- |\n  a\n- >\n  b\n", true},
	{"DoubleQuoted", "schema: x\na: \"tab\\there \\u00e9 \\x41 \\U0001F600 \\\" \\\\ \\/ \"\n", false},
	{"DoubleQuotedEscapes", "schema: x\na: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\N\\_\\L\\P\\'\"\n", true},
	{"DoubleQuotedMultiline", "schema: x\na: \"one\n  two\n\n  three \\\n  four\\\n  \\ five\"\n", true},
	{"SingleQuoted", "schema: x\na: 'it''s'\nb: 'multi\n  line\n\n  text'\n", true},
	{"QuotedKeys", "schema: x\n\"a b\": 1\n'c': 2\n\"\\u00e9\": 3\n", true},
	{"QuotedKeyMultiline", "schema: x\n'a\n  b': 1\n", false},
	{"Tabs", "schema: x\na:\tb\n", false},
	{"TabInPlain", "schema: x\na: b\tc\n", false},
	{"TabInQuoted", "schema: x\na: 'b\tc'\n", true},
	{"NonASCII", "schema: x\na: héllo wörld 😀\n", true},
	{"HTML", "schema: x\na: <b>&amp;</b>\n", true},
	{"LineSeparator", "schema: x\na: a\u2028b\n", false},
	{"ControlCharacter", "schema: x\na: a\x01b\n", false},
	{"TopLevelIndented", "  schema: x\n  a: 1\n", true},
	{"TopLevelDedent", "  schema: x\na: 1\n", false},
	{"TopLevelScalar", "just a string\n", false},
	{"TopLevelSequence", "- a\n", false},
	{"Empty", "# nothing\n", false},
	{"DocumentEnd", "schema: x\n...\n", false},
	{"Directive", "%YAML 1.1\nschema: x\n", false},
	{"BadIndent", "schema: x\na:\n    b: 1\n  c: 2\n", false},
	{"OverIndented", "schema: x\na: 1\n  b: 2\n", false},
	{"SequenceThenKey", "schema: x\na:\n  - 1\n  b: 2\n", false},
	{"LongKey", "schema: x\n" + strings.Repeat("k", 1100) + ": 1\n", false},
	{"EmptyValue", "schema: x\na:\nb: \n", true},
	{"DashValue", "schema: x\na: -1\nb: -x\nc: ?x\nd: :x\n", true},
	{"CRLF", "schema: x\r\n", false},
}

func TestYAMLFastCases(t *testing.T) {
	for _, tc := range yamlFastCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compareYAMLFast(t, []byte(tc.doc)); got != tc.fast {
				_, err := decodeYAMLSlow([]byte(tc.doc))
				t.Errorf("fast path took it: %v, want %v (slow path: %v)", got, tc.fast, err)
			}
		})
	}
}

// FuzzYAMLFast compares the fast path with the slow path on arbitrary
// documents. Seeds: every YAML document of the conformance suite (large
// ones cut at a line), the edge cases above and the stream seeds.
func FuzzYAMLFast(f *testing.F) {
	for _, tc := range yamlFastCases {
		f.Add([]byte(tc.doc))
	}
	for _, s := range streamSeeds {
		f.Add([]byte(s))
	}
	if _, err := os.Stat(conformanceSuite); err == nil {
		for _, file := range conformanceYAML(f) {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, doc := range yamlDocs(data) {
				if len(doc) > 16<<10 {
					cut := bytes.LastIndexByte(doc[:16<<10], '\n')
					doc = doc[:cut+1]
				}
				f.Add(doc)
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		// The splitter ends every line, the last one too.
		if len(doc) == 0 || doc[len(doc)-1] != '\n' {
			doc = append(doc, '\n')
		}
		compareYAMLFast(t, doc)
	})
}
