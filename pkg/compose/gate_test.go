package compose

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

func TestPruned(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{
		"stable":       {"p.v1.0.0", "p.v1.1.0<p.v1.0.0"},
		"candidate-v1": {"p.v1.1.0", "p.v1.2.0-rc.1<p.v1.1.0"},
		"beta":         {"p.v1.1.0"},
	})
	old.Merge(testCatalog("preview", "dev-preview", map[string][]string{"dev-preview": {"preview.v0.1.0"}}))
	old.Merge(testCatalog("gone", "stable", map[string][]string{"stable": {"gone.v1.0.0"}}))
	cur := testCatalog("p", "stable", map[string][]string{
		"stable":       {"p.v1.1.0", "p.v1.2.0<p.v1.1.0"},
		"candidate-v1": {"p.v1.1.0"},
	})
	failures := func(opts DiffOptions) string {
		t.Helper()
		opts.FailOn = []FailOn{FailPruned}
		r, _ := diffText(t, old, cur, opts)
		var out []string
		for _, f := range r.Failures {
			out = append(out, f.Message)
		}
		return strings.Join(out, "\n")
	}
	want := `package "gone" was pruned: channel "stable"
package "p": channel "beta" was pruned (1 entry)
package "p": channel "stable": entry "p.v1.0.0" (1.0.0) was pruned`
	if got := failures(DiffOptions{}); got != want {
		t.Errorf("default pre-release channels:\n%s\nwant:\n%s", got, want)
	}
	// A fragment compares only its packages; other substrings.
	want = `package "p": channel "candidate-v1": entry "p.v1.2.0-rc.1" (1.2.0-rc.1) was pruned
package "p": channel "stable": entry "p.v1.0.0" (1.0.0) was pruned`
	if got := failures(DiffOptions{Fragment: true, PreReleaseChannels: []string{"beta"}}); got != want {
		t.Errorf("fragment, beta:\n%s\nwant:\n%s", got, want)
	}
	// Not asked for: nothing.
	if r, _ := diffText(t, old, cur, DiffOptions{}); r.Failed() {
		t.Errorf("failures %+v", r.Failures)
	}
}

func TestFindUnreleased(t *testing.T) {
	old := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.0.0", "p.v1.1.0<p.v1.0.0"}})
	old.Bundles[0].RelatedImages = []declcfg.RelatedImage{{Name: "op", Image: "quay.io/test/op:1.0.0"}}
	cur := testCatalog("p", "stable", map[string][]string{"stable": {"p.v1.1.0", "p.v1.2.0<p.v1.1.0", "p.v1.3.0<p.v1.2.0", "p.v1.4.0<p.v1.3.0"}})
	cur.Merge(testCatalog("q", "stable", map[string][]string{"stable": {"q.v1.0.0"}}))
	for i := range cur.Bundles {
		b := &cur.Bundles[i]
		switch b.Name {
		case "p.v1.1.0": // rebuilt: a new image is a new release
			b.Image += "-rebuilt"
		case "p.v1.2.0": // the old sqlite deprecation: left out
			b.Properties = append(b.Properties, property.Property{Type: property.TypeDeprecated, Value: json.RawMessage(`{}`)})
			b.RelatedImages = []declcfg.RelatedImage{{Image: "quay.io/test/op:1.2.0"}}
		case "p.v1.3.0":
			b.RelatedImages = []declcfg.RelatedImage{{Name: "op", Image: "quay.io/test/op:1.0.0"}, {Name: "op", Image: "quay.io/test/op:1.3.0"}}
		case "p.v1.4.0": // carried as objects only: known by name
			b.Image = ""
		}
	}
	u := FindUnreleased(summarize(t, old, "old"), summarize(t, cur, "new"), nil)
	b, _ := json.Marshal(u)
	want := `{"old":"old","new":"new","packages":[{"name":"p","bundles":[{"name":"p.v1.1.0","version":"1.1.0","image":"quay.io/test/p.v1.1.0-rebuilt"},{"name":"p.v1.3.0","version":"1.3.0","image":"quay.io/test/p.v1.3.0"},{"name":"p.v1.4.0","version":"1.4.0","image":""}],"relatedImages":["quay.io/test/op:1.3.0"]},{"name":"q","bundles":[{"name":"q.v1.0.0","version":"1.0.0","image":"quay.io/test/q.v1.0.0"}]}],"bundles":4,"relatedImages":1}`
	if string(b) != want {
		t.Errorf("unreleased:\n%s\nwant:\n%s", b, want)
	}
	if u := FindUnreleased(summarize(t, old, "old"), summarize(t, cur, "new"), []string{"q"}); len(u.Packages) != 1 || u.Packages[0].Name != "q" {
		t.Errorf("-p q: %+v", u)
	}
}
