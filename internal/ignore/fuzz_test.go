package ignore

import (
	"strings"
	"testing"
)

// FuzzMatch checks that no pattern or path panics, that answers are stable,
// and that without negations everything below an ignored directory is
// ignored.
func FuzzMatch(f *testing.F) {
	f.Add("README.md\n", "*.json\n!keep.json", "a/keep.json", false)
	f.Add("/x/\n**/y", "!y\na/**/b", "a/x/y", true)
	f.Add("a/**\n[!a]\n[", `\#x`+"\n"+`\!y\ `, "a/b/c", false)
	f.Add("**/a/b", "b/", "a/a/b", false)
	f.Add("/expected_all.json\n..*\n", "", "expected_all.json", false)
	f.Add("x\n!x/", "", "x", false)
	f.Fuzz(func(t *testing.T, root, sub, p string, isDir bool) {
		m := NewFromFiles(map[string][]byte{"": []byte(root), "a": []byte(sub)})
		got := m.Match(p, isDir)
		if again := m.Match(p, isDir); again != got {
			t.Fatalf("root=%q sub=%q path=%q: unstable answer", root, sub, p)
		}
		if got && isDir && !m.negation && !strings.HasSuffix(p, "/") {
			if !m.Match(p+"/below", false) {
				t.Fatalf("root=%q sub=%q: %q is ignored but %q is not", root, sub, p, p+"/below")
			}
		}
	})
}
