// Package suggest is the one shape of "unknown name" errors (a package,
// channel, bundle or rule that is not there) and their "did you mean"
// suggestions, so that every command words them alike:
//
//	unknown package "cache-operatr"; did you mean "cache-operator"?
//	unknown channel "beta" of package "cache-operator" (channels: fast, stable)
//	unknown bundle "cache-operator.v9" of package "cache-operator"; give a bundle name or a version
//
// The parts: what is unknown and where it was looked up; the known names
// when there are few and none is near; advice; the near names.
package suggest

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/opmkit/opm/internal/nameorder"
)

// maxListed is how many names an error lists when none is near enough to
// suggest: a short list helps, a catalog's hundreds of packages do not.
const maxListed = 8

// maxSuggestions is how many near names an error suggests at most.
const maxSuggestions = 3

// UnknownError is a name the catalog (or the tool) does not have.
type UnknownError struct {
	// Kind is what the name should name: "package", "channel", "bundle",
	// "rule", ...
	Kind string
	// Name is the name given.
	Name string
	// Scope says where it was looked up, e.g. `of package "etcd"`; empty
	// for the whole catalog.
	Scope string
	// Suggestions are the known names nearest to Name, best first.
	Suggestions []string
	// Known are every known name, sorted (listed when there are few and
	// none is near).
	Known []string
	// Hint is advice appended to the message, e.g. "add --create to
	// create it".
	Hint string
}

func (e *UnknownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown %s %q", e.Kind, e.Name)
	if e.Scope != "" {
		b.WriteString(" " + e.Scope)
	}
	switch {
	case len(e.Suggestions) > 0:
	case len(e.Known) == 0:
		fmt.Fprintf(&b, " (there are no %ss)", e.Kind)
	case len(e.Known) <= maxListed:
		fmt.Fprintf(&b, " (%ss: %s)", e.Kind, strings.Join(e.Known, ", "))
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	if len(e.Suggestions) > 0 {
		b.WriteString("; did you mean " + Alternatives(e.Suggestions) + "?")
	}
	return b.String()
}

// Alternatives writes names quoted, as alternatives: "a", "b" or "c".
func Alternatives(names []string) string {
	var b strings.Builder
	for i, s := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", s)
	}
	return b.String()
}

// Unknown returns the error for name, unknown among known (in any order,
// duplicates allowed), looked up in scope.
func Unknown(kind, name, scope string, known []string) *UnknownError {
	k := sortedUnique(known)
	return &UnknownError{Kind: kind, Name: name, Scope: scope, Suggestions: Closest(name, k), Known: k}
}

// Closest returns the known names nearest to name, at most three, in name
// order: those at the smallest edit distance found within a small bound
// (case and the separators -, _ and . aside), else those that name is a
// prefix or a suffix of. None when nothing is near.
func Closest(name string, known []string) []string {
	if name == "" {
		return nil
	}
	type cand struct {
		s string
		d int
	}
	n := fold(name)
	size := utf8.RuneCountInString(n)
	limit := min(max(size/4, 1), 3)
	var cs []cand
	for _, k := range sortedUnique(known) {
		if k == name {
			continue
		}
		f := fold(k)
		d := distance(n, f, limit)
		switch {
		case d <= limit && d < size:
		case size >= 3 && (strings.HasPrefix(f, n) || strings.HasSuffix(f, n)):
			d = limit + 1
		default:
			continue
		}
		cs = append(cs, cand{k, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) > 0 {
		// The nearest only: a name one edit away hides those two away.
		k := 1
		for k < len(cs) && cs[k].d == cs[0].d {
			k++
		}
		cs = cs[:k]
	}
	if len(cs) > maxSuggestions {
		cs = cs[:maxSuggestions]
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.s
	}
	return out
}

// fold lowers s and makes the separators alike, so that "Cache_Operator"
// is near "cache-operator".
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '.':
			return '-'
		}
		return r
	}, strings.ToLower(s))
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance
// of a and b, or limit+1 when it is larger than limit.
func distance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func sortedUnique(s []string) []string {
	out := append([]string(nil), s...)
	nameorder.Sort(out)
	j := 0
	for i, x := range out {
		if i == 0 || x != out[j-1] {
			out[j] = x
			j++
		}
	}
	return out[:j]
}
