package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"cache-operator", "queue-operator", "web-console", "stable", "fast", "cache-operator.v1.0.0", "cache-operator.v1.1.0"}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"cache-operatr", []string{"cache-operator"}},
		{"Cache_Operator", []string{"cache-operator"}},
		{"stabel", []string{"stable"}},
		{"cache", []string{"cache-operator", "cache-operator.v1.0.0", "cache-operator.v1.1.0"}},
		{"cache-operator.v1.0.9", []string{"cache-operator.v1.0.0"}},
		{"zzz", nil},
		{"", nil},
		{"stable", nil}, // itself is not a suggestion
	} {
		if got := Closest(tc.name, known); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestUnknownMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *UnknownError
		want string
	}{
		{Unknown("package", "cache-operatr", "", []string{"web-console", "cache-operator", "queue-operator"}),
			`unknown package "cache-operatr"; did you mean "cache-operator"?`},
		{Unknown("channel", "beta", `of package "p"`, []string{"stable", "fast", "stable"}),
			`unknown channel "beta" of package "p" (channels: fast, stable)`},
		{Unknown("package", "p", "", nil),
			`unknown package "p" (there are no packages)`},
		{Unknown("bundle", "x", `of package "p"`, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}),
			`unknown bundle "x" of package "p"`},
		{Unknown("rule", "edge-target-mising", "", []string{"edge-target-missing", "schema"}),
			`unknown rule "edge-target-mising"; did you mean "edge-target-missing"?`},
		{&UnknownError{Kind: "channel", Name: "x", Scope: `of package "p"`, Known: []string{"a"}, Hint: "add --create to create it"},
			`unknown channel "x" of package "p" (channels: a); add --create to create it`},
		{&UnknownError{Kind: "bundle", Name: "v", Suggestions: []string{"a", "b", "c"}},
			`unknown bundle "v"; did you mean "a", "b" or "c"?`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"stable", "stabel", 1},
		{"abc", "abc", 0},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
	} {
		if got := distance(tc.a, tc.b, 10); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := distance("abcdefgh", "zzzzzzzz", 2); got != 3 {
		t.Errorf("capped distance = %d, want 3", got)
	}
}
