package resolve

import (
	"context"
	"errors"
	"fmt"
)

// The SAT solver: conflict-driven clause learning (CDCL) after MiniSat
// (Eén and Sörensson, 2003): two watched literals, first-UIP learning,
// VSIDS branching with saved phases, Luby restarts, learned-clause
// deletion by activity. It is incremental under assumptions: one problem,
// asked again and again with different literals assumed true (decisions
// at the first levels); learned clauses are consequences of the problem
// alone, so they stay from one call to the next.
//
// It is the project's own (it replaced gophersat) so that the search can
// stop: a context checked inside the search (a signal ends a hopeless
// resolution at once) and a budget of conflicts over a resolution, which
// bounds what a catalog crafted to be hard (a pigeonhole: n+1 packages
// needing n providers) costs; upstream's solver, like gophersat, runs
// such a problem for hours.

// BudgetError is a resolution the solver gave up on: it met Conflicts
// conflicts without reaching a verdict.
type BudgetError struct {
	Conflicts int64
	// Packages are the packages the problem involves, sorted.
	Packages []string
}

func (e *BudgetError) Error() string {
	pkgs := quoteAll(e.Packages)
	if len(pkgs) > 12 {
		pkgs = append(pkgs[:12:12], fmt.Sprintf("%d more", len(e.Packages)-12))
	}
	return fmt.Sprintf("gave up after %d solver conflicts without a verdict (the solver budget, raised with --solver-budget): the dependencies between packages %s are too hard to decide", e.Conflicts, joinAnd(pkgs))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// errBudget is returned by solve when the budget is spent; the caller
// turns it into a BudgetError naming the packages.
var errBudget = errors.New("solver budget spent")

type lit int32 // variable v true is 2v, false is 2v+1

func mkLit(d int) lit {
	if d < 0 {
		return lit(-d)<<1 | 1
	}
	return lit(d) << 1
}

func (l lit) neg() lit { return l ^ 1 }
func (l lit) v() int   { return int(l >> 1) }

type clause struct {
	lits   []lit
	learnt bool
	act    float64
}

// satSolver is one CNF problem. Literals are DIMACS integers (variable v
// true is v, false is -v), variables from 1.
type satSolver struct {
	nbVars    int
	clauses   []*clause // by reference; nil: deleted
	nLearnt   int
	watches   [][]int32 // per literal: the clauses watching it
	assign    []int8    // per variable: 0 unassigned, 1 true, -1 false
	level     []int32
	reason    []int32 // clause reference, -1 for decisions and assumptions
	trail     []lit
	lim       []int // trail length at the start of each decision level
	qhead     int
	act       []float64
	varInc    float64
	claInc    float64
	heap      varHeap
	phase     []bool
	seen      []bool
	unsat     bool // the problem itself is unsatisfiable
	lastModel []bool
	learnt    []lit

	calls     int
	conflicts int64
	// budget bounds conflicts over the solver's life (0: none).
	budget     int64
	maxLearnts float64
}

// newSatSolver builds the solver. Clauses must have at least two
// literals.
func newSatSolver(nbVars int, clauses [][]int) *satSolver {
	n := nbVars + 1
	s := &satSolver{
		nbVars:  nbVars,
		watches: make([][]int32, 2*n),
		assign:  make([]int8, n),
		level:   make([]int32, n),
		reason:  make([]int32, n),
		act:     make([]float64, n),
		phase:   make([]bool, n),
		seen:    make([]bool, n),
		varInc:  1,
		claInc:  1,
	}
	s.heap.act = s.act
	s.heap.pos = make([]int, n)
	for v := 1; v < n; v++ {
		s.reason[v] = -1
		s.heap.pos[v] = -1
		s.heap.insert(v)
	}
	for _, c := range clauses {
		lits := make([]lit, len(c))
		for i, d := range c {
			lits[i] = mkLit(d)
		}
		s.addClause(lits, false)
	}
	s.maxLearnts = float64(len(clauses))/3 + 2000
	return s
}

func (s *satSolver) addClause(lits []lit, learnt bool) int32 {
	cr := int32(len(s.clauses))
	s.clauses = append(s.clauses, &clause{lits: lits, learnt: learnt})
	s.watches[lits[0]] = append(s.watches[lits[0]], cr)
	s.watches[lits[1]] = append(s.watches[lits[1]], cr)
	if learnt {
		s.nLearnt++
	}
	return cr
}

// value is 1 when l is true, -1 when false, 0 when unassigned.
func (s *satSolver) value(l lit) int8 {
	a := s.assign[l.v()]
	if l&1 != 0 {
		return -a
	}
	return a
}

func (s *satSolver) enqueue(l lit, from int32) {
	v := l.v()
	if l&1 != 0 {
		s.assign[v] = -1
	} else {
		s.assign[v] = 1
	}
	s.level[v] = int32(len(s.lim))
	s.reason[v] = from
	s.trail = append(s.trail, l)
}

// propagate runs unit propagation; it returns a conflicting clause, or -1.
func (s *satSolver) propagate() int32 {
	for s.qhead < len(s.trail) {
		fl := s.trail[s.qhead].neg() // now false
		s.qhead++
		ws := s.watches[fl]
		i, j := 0, 0
		for i < len(ws) {
			cr := ws[i]
			i++
			c := s.clauses[cr].lits
			if c[0] == fl {
				c[0], c[1] = c[1], c[0]
			}
			if s.value(c[0]) == 1 {
				ws[j] = cr
				j++
				continue
			}
			moved := false
			for k := 2; k < len(c); k++ {
				if s.value(c[k]) != -1 {
					c[1], c[k] = c[k], c[1]
					s.watches[c[1]] = append(s.watches[c[1]], cr)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = cr
			j++
			if s.value(c[0]) == -1 {
				for i < len(ws) {
					ws[j] = ws[i]
					i++
					j++
				}
				s.watches[fl] = ws[:j]
				return cr
			}
			s.enqueue(c[0], cr)
		}
		s.watches[fl] = ws[:j]
	}
	return -1
}

// analyze derives the first-UIP clause of a conflict into s.learnt
// (asserting literal first, then one of the highest level) and returns
// the level to go back to.
func (s *satSolver) analyze(confl int32) int {
	s.learnt = append(s.learnt[:0], 0)
	pathC := 0
	p := lit(-1)
	idx := len(s.trail) - 1
	cur := int32(len(s.lim))
	for {
		c := s.clauses[confl]
		if c.learnt {
			s.bumpClause(c)
		}
		start := 0
		if p != -1 {
			start = 1
		}
		for _, q := range c.lits[start:] {
			v := q.v()
			if s.seen[v] || s.level[v] == 0 {
				continue
			}
			s.bumpVar(v)
			s.seen[v] = true
			if s.level[v] >= cur {
				pathC++
			} else {
				s.learnt = append(s.learnt, q)
			}
		}
		for !s.seen[s.trail[idx].v()] {
			idx--
		}
		p = s.trail[idx]
		idx--
		confl = s.reason[p.v()]
		s.seen[p.v()] = false
		pathC--
		if pathC == 0 {
			break
		}
	}
	s.learnt[0] = p.neg()
	bt := 0
	if len(s.learnt) > 1 {
		hi := 1
		for i := 2; i < len(s.learnt); i++ {
			if s.level[s.learnt[i].v()] > s.level[s.learnt[hi].v()] {
				hi = i
			}
		}
		s.learnt[1], s.learnt[hi] = s.learnt[hi], s.learnt[1]
		bt = int(s.level[s.learnt[1].v()])
	}
	for _, q := range s.learnt[1:] {
		s.seen[q.v()] = false
	}
	return bt
}

func (s *satSolver) bumpVar(v int) {
	s.act[v] += s.varInc
	if s.act[v] > 1e100 {
		for i := range s.act {
			s.act[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	if s.heap.pos[v] >= 0 {
		s.heap.up(s.heap.pos[v])
	}
}

func (s *satSolver) bumpClause(c *clause) {
	c.act += s.claInc
	if c.act > 1e20 {
		for _, d := range s.clauses {
			if d != nil && d.learnt {
				d.act *= 1e-20
			}
		}
		s.claInc *= 1e-20
	}
}

func (s *satSolver) cancelUntil(level int) {
	if len(s.lim) <= level {
		return
	}
	for i := len(s.trail) - 1; i >= s.lim[level]; i-- {
		v := s.trail[i].v()
		s.phase[v] = s.assign[v] > 0
		s.assign[v] = 0
		s.reason[v] = -1
		if s.heap.pos[v] < 0 {
			s.heap.insert(v)
		}
	}
	s.trail = s.trail[:s.lim[level]]
	s.lim = s.lim[:level]
	s.qhead = len(s.trail)
}

// reduceLearnts deletes the less active half of the learned clauses that
// are longer than two literals and are no reason for an assignment.
func (s *satSolver) reduceLearnts() {
	locked := func(cr int32, c *clause) bool {
		v := c.lits[0].v()
		return s.reason[v] == cr && s.value(c.lits[0]) == 1
	}
	var cands []int32
	for cr, c := range s.clauses {
		if c != nil && c.learnt && len(c.lits) > 2 && !locked(int32(cr), c) {
			cands = append(cands, int32(cr))
		}
	}
	if len(cands) < 2 {
		return
	}
	// Median activity by selection: a partial sort is enough.
	acts := make([]float64, len(cands))
	for i, cr := range cands {
		acts[i] = s.clauses[cr].act
	}
	med := quickselect(acts, len(acts)/2)
	removed := 0
	for _, cr := range cands {
		if s.clauses[cr].act <= med && removed < len(cands)/2 {
			s.clauses[cr] = nil
			removed++
		}
	}
	s.nLearnt -= removed
	for l := range s.watches {
		ws := s.watches[l]
		j := 0
		for _, cr := range ws {
			if s.clauses[cr] != nil {
				ws[j] = cr
				j++
			}
		}
		s.watches[l] = ws[:j]
	}
}

func quickselect(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// luby is the Luby sequence 1 1 2 1 1 2 4 ... at i (from 0).
func luby(i int) float64 {
	size, seq := 1, 0
	for size < i+1 {
		seq++
		size = 2*size + 1
	}
	x := i
	for size-1 != x {
		size = (size - 1) >> 1
		seq--
		x = x % size
	}
	f := 1.0
	for ; seq > 0; seq-- {
		f *= 2
	}
	return f
}

// solve reports whether the problem is satisfiable under the assumptions.
// It stops with ctx's error once ctx is done and with errBudget once the
// budget of conflicts is spent.
func (s *satSolver) solve(ctx context.Context, assume []int) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.calls++
	s.cancelUntil(0)
	if s.unsat {
		return false, nil
	}
	if s.propagate() != -1 {
		s.unsat = true
		return false, nil
	}
	restarts, sinceRestart := 0, 0
	limit := 100 * luby(0)
	steps := 0
	for {
		confl := s.propagate()
		if confl != -1 {
			s.conflicts++
			sinceRestart++
			if s.conflicts&63 == 0 {
				if err := ctx.Err(); err != nil {
					s.cancelUntil(0)
					return false, err
				}
			}
			if s.budget > 0 && s.conflicts >= s.budget {
				s.cancelUntil(0)
				return false, errBudget
			}
			if len(s.lim) == 0 {
				s.unsat = true
				return false, nil
			}
			bt := s.analyze(confl)
			s.cancelUntil(bt)
			if len(s.learnt) == 1 {
				s.enqueue(s.learnt[0], -1)
			} else {
				lits := append([]lit(nil), s.learnt...)
				cr := s.addClause(lits, true)
				s.bumpClause(s.clauses[cr])
				s.enqueue(lits[0], cr)
			}
			s.varInc /= 0.95
			s.claInc /= 0.999
			continue
		}
		if float64(sinceRestart) >= limit {
			restarts++
			sinceRestart = 0
			limit = 100 * luby(restarts)
			s.cancelUntil(0)
			continue
		}
		if float64(s.nLearnt-len(s.trail)) >= s.maxLearnts {
			s.reduceLearnts()
			s.maxLearnts *= 1.1
		}
		steps++
		if steps&1023 == 0 {
			if err := ctx.Err(); err != nil {
				s.cancelUntil(0)
				return false, err
			}
		}
		var next lit = -1
		for len(s.lim) < len(assume) {
			p := mkLit(assume[len(s.lim)])
			switch s.value(p) {
			case 1:
				s.lim = append(s.lim, len(s.trail)) // already true: an empty level
				continue
			case -1:
				// The assumptions contradict what the others imply.
				s.cancelUntil(0)
				return false, nil
			}
			next = p
			break
		}
		if next == -1 {
			for s.heap.len() > 0 {
				v := s.heap.pop()
				if s.assign[v] == 0 {
					next = mkLit(-v)
					if s.phase[v] {
						next = mkLit(v)
					}
					break
				}
			}
		}
		if next == -1 {
			s.lastModel = s.lastModel[:0]
			s.lastModel = append(s.lastModel, false)
			for v := 1; v <= s.nbVars; v++ {
				s.lastModel = append(s.lastModel, s.assign[v] > 0)
			}
			s.cancelUntil(0)
			return true, nil
		}
		s.lim = append(s.lim, len(s.trail))
		s.enqueue(next, -1)
	}
}

// model returns the last model: model[v] is variable v's value (index 0
// unused).
func (s *satSolver) model(dst []bool) []bool {
	return append(dst[:0], s.lastModel...)
}

// varHeap orders unassigned variables by activity, highest first.
type varHeap struct {
	act  []float64
	heap []int
	pos  []int // index in heap, -1 when absent
}

func (h *varHeap) len() int { return len(h.heap) }

func (h *varHeap) less(i, j int) bool {
	a, b := h.heap[i], h.heap[j]
	if h.act[a] != h.act[b] {
		return h.act[a] > h.act[b]
	}
	return a < b
}

func (h *varHeap) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.pos[h.heap[i]] = i
	h.pos[h.heap[j]] = j
}

func (h *varHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *varHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(h.heap) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

func (h *varHeap) insert(v int) {
	h.pos[v] = len(h.heap)
	h.heap = append(h.heap, v)
	h.up(len(h.heap) - 1)
}

func (h *varHeap) pop() int {
	v := h.heap[0]
	last := len(h.heap) - 1
	h.swap(0, last)
	h.heap = h.heap[:last]
	h.pos[v] = -1
	if last > 0 {
		h.down(0)
	}
	return v
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
