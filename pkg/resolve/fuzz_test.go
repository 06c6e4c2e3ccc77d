package resolve

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/property"
)

// FuzzParseConstraint feeds olm.constraint values to the parser and, when
// they parse, builds and evaluates their predicate: nothing may panic, a
// parsed value survives a round trip through JSON, and evaluation is
// bounded.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{
		`{"gvk":{"group":"g","version":"v","kind":"k"}}`,
		`{"failureMessage":"m","package":{"packageName":"p","versionRange":">=1.0.0 <2.0.0 || 3.x"}}`,
		`{"all":{"constraints":[{"gvk":{"group":"g","version":"v","kind":"k"}},{"not":{"constraints":[{"package":{"packageName":"p","versionRange":"!1.2.x"}}]}}]}}`,
		`{"any":{"constraints":[]}}`,
		`{"cel":{"rule":"properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.version, '1.0.0') > 0)"}}`,
		`{"cel":{"rule":"size(properties) > 1"}}`,
		`{"package":{"name":"blue","versionRange":">=1.0.0"}}`,
		`{}`, `null`, `[]`, `{"not":{"constraints":[{"not":{"constraints":[{}]}}]}}`,
	} {
		f.Add([]byte(s))
	}
	b := &bundle{name: "b", pkg: "p", versionText: "1.5.0", version: semver.MustParse("1.5.0"), versionOK: true}
	b.props = []property.Property{{Type: "olm.package", Value: json.RawMessage(`{"packageName":"p","version":"1.5.0"}`)}, {Type: "olm.gvk", Value: json.RawMessage(`{"group":"g","version":"v","kind":"k"}`)}}
	b.nOwn = len(b.props)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConstraint(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := ParseConstraint(again); err != nil && len(again) <= MaxConstraintSize {
			t.Fatalf("round trip of %s: %v", again, err)
		}
		p, err := buildPredicate(c, compileCache{})
		if err != nil {
			return
		}
		_ = p.match(context.Background(), b)
		_ = p.describe()
		cat := &catalog{providers: nil}
		_, _ = candidatePackages(p, cat)
	})
}
