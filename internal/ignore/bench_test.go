package ignore

import "testing"

// benchIgnore is a realistic ~20-pattern setup: a root file and two scoped ones.
var benchIgnore = map[string][]byte{
	"": []byte(`# generated and editor files
/expected_all.json
..*
README.md
*.md
*.txt
*.orig
*~
.git/
.github/
hack/
build/
**/testdata/**
docs/**/*.png
[Mm]akefile
*.sw[op]
`),
	"operators/foo": []byte("/old/\n*.bak\nCHANGELOG*\n"),
	"operators/bar": []byte("tmp/\n"),
}

var benchPaths = []string{
	"catalog.yaml",
	"operators/foo/catalog.json",
	"operators/foo/bundles/foo.v1.2.3.yaml",
	"operators/bar/channels/stable.yaml",
	"operators/baz/deeply/nested/dir/index.json",
	"README.md",
	"operators/foo/old/x.json",
	"expected_all.json",
}

func benchmarkMatch(b *testing.B, m *Matcher) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Match(benchPaths[i%len(benchPaths)], false)
	}
}

func BenchmarkMatch(b *testing.B) {
	b.Run("patterns=20", func(b *testing.B) { benchmarkMatch(b, NewFromFiles(benchIgnore)) })
	b.Run("patterns=20+negation", func(b *testing.B) {
		files := map[string][]byte{"": append([]byte("!keep.md\n"), benchIgnore[""]...)}
		for k, v := range benchIgnore {
			if k != "" {
				files[k] = v
			}
		}
		benchmarkMatch(b, NewFromFiles(files))
	})
	b.Run("patterns=0", func(b *testing.B) { benchmarkMatch(b, NewFromFiles(nil)) })
}
