// Package nameorder is the one order in which opm lists names that carry
// versions (channels, bundles, packages): runs of digits compare as
// numbers, so stable-3.6 comes before stable-3.10 and
// quay-operator.v3.9.1 before quay-operator.v3.10.0.
//
// Where upstream opm's output fixes another order (alpha list, render),
// that order is kept; this one is for opm's own listings.
package nameorder

import (
	"slices"
	"strings"
)

// Compare orders a and b: negative when a comes first. Runs of ASCII
// digits compare by value (then, for equal values, the one with fewer
// leading zeros first); other bytes compare as bytes, and a name that ends
// comes before a longer one. One exception makes pre-releases sort as
// semver has them: right after a number, "-" comes before the end of the
// name (1.0.0-rc.1 before 1.0.0, before 1.0.0+1 and 1.0.0.1). Equal names
// compare 0, and only those.
func Compare(a, b string) int {
	i, j := 0, 0
	afterDigit := false
	for {
		if i < len(a) && j < len(b) && isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			if c := compareNumbers(a[i:ei], b[j:ej]); c != 0 {
				return c
			}
			i, j = ei, ej
			afterDigit = true
			continue
		}
		ka, kb := key(a, i, afterDigit), key(b, j, afterDigit)
		if ka != kb {
			return ka - kb
		}
		if i == len(a) {
			return 0 // both ended
		}
		i, j = i+1, j+1
		afterDigit = false
	}
}

// key ranks the byte at s[i] (or the end of s) for Compare.
func key(s string, i int, afterDigit bool) int {
	switch {
	case afterDigit && i < len(s) && s[i] == '-':
		return 0
	case i == len(s):
		return 1
	}
	return 2 + int(s[i])
}

// Sort sorts names by Compare.
func Sort(names []string) { slices.SortFunc(names, Compare) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// compareNumbers compares two runs of digits by value, then by their
// number of leading zeros (fewer first).
func compareNumbers(a, b string) int {
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		return len(ta) - len(tb)
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return len(a) - len(b)
}
