package resolve

import (
	"context"
	"math/rand"
	"testing"
)

// dpll is a plain DPLL (unit propagation, then both values of the first
// free variable): an oracle for satisfiability that shares nothing with
// the solver.
func dpll(n int, clauses [][]int, assign []int8) bool {
	a := append([]int8(nil), assign...)
	for {
		unit := 0
		for _, c := range clauses {
			free, freeLit, sat := 0, 0, false
			for _, l := range c {
				v, want := l, int8(1)
				if l < 0 {
					v, want = -l, -1
				}
				switch a[v] {
				case want:
					sat = true
				case 0:
					free++
					freeLit = l
				}
				if sat {
					break
				}
			}
			if sat {
				continue
			}
			if free == 0 {
				return false
			}
			if free == 1 {
				unit = freeLit
				break
			}
		}
		if unit == 0 {
			break
		}
		if unit > 0 {
			a[unit] = 1
		} else {
			a[-unit] = -1
		}
	}
	for v := 1; v <= n; v++ {
		if a[v] == 0 {
			for _, val := range []int8{1, -1} {
				a[v] = val
				if dpll(n, clauses, a) {
					return true
				}
			}
			return false
		}
	}
	return true
}

func satisfies(model []bool, clauses [][]int, assume []int) bool {
	val := func(l int) bool {
		if l < 0 {
			return !model[-l]
		}
		return model[l]
	}
	for _, l := range assume {
		if !val(l) {
			return false
		}
	}
	for _, c := range clauses {
		ok := false
		for _, l := range c {
			if val(l) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// TestSatRandom3SAT checks the solver against the DPLL oracle on random
// 3-SAT near the satisfiability threshold (both verdicts common, hundreds
// of conflicts: restarts happen), with learned clauses deleted often
// (maxLearnts forced low), asked again and again under assumptions as
// the resolver asks it. A model it returns must satisfy the problem.
func TestSatRandom3SAT(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	instances := 60
	if testing.Short() {
		instances = 15
	}
	var sat, unsat, restarted int
	for iter := 0; iter < instances; iter++ {
		n := 50 + rng.Intn(16)
		m := int(float64(n) * (4.0 + 0.5*rng.Float64()))
		clauses := make([][]int, m)
		for i := range clauses {
			vs := rng.Perm(n)[:3]
			c := make([]int, 3)
			for k, v := range vs {
				c[k] = v + 1
				if rng.Intn(2) == 0 {
					c[k] = -c[k]
				}
			}
			clauses[i] = c
		}
		s := newSatSolver(n, clauses)
		s.maxLearnts = 10
		for q := 0; q < 6; q++ {
			var assume []int
			if q > 0 {
				for _, v := range rng.Perm(n)[:rng.Intn(4)] {
					l := v + 1
					if rng.Intn(2) == 0 {
						l = -l
					}
					assume = append(assume, l)
				}
			}
			before := s.conflicts
			got, err := s.solve(ctx, assume)
			if err != nil {
				t.Fatal(err)
			}
			if s.conflicts-before > 100 {
				restarted++
			}
			a := make([]int8, n+1)
			for _, l := range assume {
				if l > 0 {
					a[l] = 1
				} else {
					a[-l] = -1
				}
			}
			if want := dpll(n, clauses, a); got != want {
				t.Fatalf("instance %d (n=%d, m=%d), assumptions %v: solver says %v, DPLL %v", iter, n, m, assume, got, want)
			}
			if got {
				sat++
				if !satisfies(s.model(nil), clauses, assume) {
					t.Fatalf("instance %d, assumptions %v: the model does not satisfy the problem", iter, assume)
				}
			} else {
				unsat++
			}
		}
	}
	if sat == 0 || unsat == 0 || restarted == 0 {
		t.Errorf("the instances did not exercise the solver: %d satisfiable, %d not, %d calls past the first restart", sat, unsat, restarted)
	}
	t.Logf("%d satisfiable, %d unsatisfiable, %d calls past the first restart", sat, unsat, restarted)
}
