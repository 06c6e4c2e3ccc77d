package nameorder

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestSort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"stable-3.10 stable-3.6 stable-3.9 alpha", "alpha stable-3.6 stable-3.9 stable-3.10"},
		{"quay-operator.v3.10.0 quay-operator.v3.9.1 quay-operator.v3.10.0-rc.1", "quay-operator.v3.9.1 quay-operator.v3.10.0-rc.1 quay-operator.v3.10.0"},
		{"1.0.0+1 1.0.0 1.0.0-rc.2 1.0.0-rc.10 1.0.0.1", "1.0.0-rc.2 1.0.0-rc.10 1.0.0 1.0.0+1 1.0.0.1"},
		{"fast stable candidate", "candidate fast stable"},
		{"v01 v1 v001", "v1 v01 v001"},
		{"a-b a a-1", "a a-1 a-b"},
		{"99999999999999999999999 100000000000000000000000 2", "2 99999999999999999999999 100000000000000000000000"},
	} {
		got := strings.Fields(tc.in)
		Sort(got)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Sort(%s) = %s, want %s", tc.in, strings.Join(got, " "), tc.want)
		}
	}
}

// TestOrder checks that Compare is a total order on a mix of tricky
// names: antisymmetric, transitive, 0 only for equal names.
func TestOrder(t *testing.T) {
	parts := []string{"", "1", "01", "10", "-", "+", ".", "-rc", "a", "v", ",", "2"}
	var names []string
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				names = append(names, a+b+c)
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	r := rand.New(rand.NewSource(1))
	for k := 0; k < 200000; k++ {
		a, b, c := names[r.Intn(len(names))], names[r.Intn(len(names))], names[r.Intn(len(names))]
		ab, ba := Compare(a, b), Compare(b, a)
		if sign(ab) != -sign(ba) || (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d, reverse %d", a, b, ab, ba)
		}
		if ab < 0 && Compare(b, c) < 0 && Compare(a, c) >= 0 {
			t.Fatalf("not transitive: %q < %q < %q but Compare(a, c) = %d", a, b, c, Compare(a, c))
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
