package resolve

import (
	"context"
	"math/rand"
	"testing"
)

func bruteSAT(n int, clauses [][]int, assume []int) bool {
	val := func(m, l int) bool {
		v := l
		if v < 0 {
			v = -v
		}
		b := m>>(v-1)&1 == 1
		return b == (l > 0)
	}
next:
	for m := 0; m < 1<<n; m++ {
		for _, a := range assume {
			if !val(m, a) {
				continue next
			}
		}
		for _, c := range clauses {
			ok := false
			for _, l := range c {
				if val(m, l) {
					ok = true
					break
				}
			}
			if !ok {
				continue next
			}
		}
		return true
	}
	return false
}

// TestSatIncremental checks the way this package uses its solver (one
// solver, many Assume+Solve calls, no unit clauses in the problem)
// against brute force, and that minimalCore returns minimal cores.
func TestSatIncremental(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 300; iter++ {
		n := 4 + rng.Intn(9)
		var clauses [][]int
		for i := 0; i < n+rng.Intn(3*n); i++ {
			seen := map[int]bool{}
			var c []int
			for len(c) < 2+rng.Intn(2) && len(seen) < n {
				v := 1 + rng.Intn(n)
				if seen[v] {
					continue
				}
				seen[v] = true
				if rng.Intn(2) == 0 {
					v = -v
				}
				c = append(c, v)
			}
			clauses = append(clauses, c)
		}
		s := newSatSolver(n, clauses)
		for q := 0; q < 15; q++ {
			var assume []int
			for v := 1; v <= n; v++ {
				if rng.Intn(4) == 0 {
					if rng.Intn(2) == 0 {
						assume = append(assume, v)
					} else {
						assume = append(assume, -v)
					}
				}
			}
			got, err := s.solve(ctx, assume)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteSAT(n, clauses, assume); got != want {
				t.Fatalf("iter %d: solve(%v) = %v, brute force %v", iter, assume, got, want)
			}
			if got {
				m := s.model(nil)
				for _, a := range assume {
					if m[abs(a)] != (a > 0) {
						t.Fatalf("model breaks assumption %d", a)
					}
				}
				continue
			}
			core, err := s.minimalCore(ctx, nil, assume)
			if err != nil {
				t.Fatal(err)
			}
			if bruteSAT(n, clauses, core) {
				t.Fatalf("core %v of %v is satisfiable", core, assume)
			}
			for i := range core {
				rest := append(append([]int(nil), core[:i]...), core[i+1:]...)
				if !bruteSAT(n, clauses, rest) {
					t.Fatalf("core %v is not minimal", core)
				}
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
