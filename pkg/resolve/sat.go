package resolve

import (
	"context"
	"errors"
	"sync"

	"github.com/crillab/gophersat/solver"
)

// satMu serialises every use of gophersat in the process: its clause
// learning writes into a package-level buffer (solver.bufLits), so two
// solvers must never search at the same time.
var satMu sync.Mutex

// errIndeterminate is a solver that stopped without an answer (it does
// not, without a time limit; kept for safety).
var errIndeterminate = errors.New("the SAT solver stopped without an answer")

// satSolver is one CNF problem in an incremental gophersat solver, asked
// again and again under different assumptions. Literals are DIMACS
// integers (variable v true is v, false is -v), variables from 1.
//
// Assumptions are gophersat's Assume: unit literals set before search and
// cleared by the next call, while learned clauses stay. Assume also clears
// the units of the problem itself, so a problem given here must have no
// unit clause: every unit fact is passed as an assumption instead (the
// encoding guarantees it: every rule's clauses carry the rule's selector).
type satSolver struct {
	s      *solver.Solver
	nbVars int
	calls  int
	lits   []solver.Lit
}

// newSatSolver builds the solver. Clauses must have at least two
// literals.
func newSatSolver(nbVars int, clauses [][]int) *satSolver {
	pb := solver.ParseSliceNb(clauses, nbVars)
	return &satSolver{s: solver.New(pb), nbVars: nbVars}
}

// solve reports whether the problem is satisfiable under the assumptions.
// Callers hold satMu.
func (s *satSolver) solve(ctx context.Context, assume []int) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.calls++
	s.lits = s.lits[:0]
	for _, a := range assume {
		s.lits = append(s.lits, solver.IntToLit(int32(a)))
	}
	st := s.s.Assume(s.lits)
	if st != solver.Unsat {
		st = s.s.Solve()
	}
	switch st {
	case solver.Sat:
		return true, nil
	case solver.Unsat:
		return false, nil
	}
	return false, errIndeterminate
}

// model returns the last model: model[v] is variable v's value (index 0
// unused).
func (s *satSolver) model(dst []bool) []bool {
	m := s.s.Model()
	dst = append(dst[:0], false)
	return append(dst, m...)
}

// minimalCore returns a minimal subset of sel (assumption literals that
// switch rules on), in sel's order, that is unsatisfiable together with
// base: removing any one of them makes it satisfiable. base ∪ sel must be
// unsatisfiable. It is QuickXplain (Junker, 2004): divide and conquer over
// sel, O(k·log(n/k)) solver calls for a core of k among n, and the result
// prefers sel's earlier members, so it depends only on sel's order. When
// base alone is unsatisfiable the core is empty.
func (s *satSolver) minimalCore(ctx context.Context, base, sel []int) ([]int, error) {
	var qx func(background []int, changed bool, cands []int) ([]int, error)
	qx = func(background []int, changed bool, cands []int) ([]int, error) {
		if changed {
			ok, err := s.solve(ctx, background)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, nil
			}
		}
		if len(cands) == 1 {
			return cands, nil
		}
		c1, c2 := cands[:len(cands)/2], cands[len(cands)/2:]
		x2, err := qx(concat(background, c1), len(c1) > 0, c2)
		if err != nil {
			return nil, err
		}
		x1, err := qx(concat(background, x2), len(x2) > 0, c1)
		if err != nil {
			return nil, err
		}
		return concat(x1, x2), nil
	}
	if len(sel) == 0 {
		return nil, nil
	}
	return qx(base, true, sel)
}

func concat(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}
