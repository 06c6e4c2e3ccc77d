package resolve

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// celCostLimit bounds the work one rule may do on one candidate. A rule
// that exceeds it fails on that candidate, which then does not match (as
// every evaluation error). OLM sets no limit; catalogs are untrusted here,
// and real rules (a few exists() over tens of properties) cost far less.
const celCostLimit = 100_000

// celAggregateLimit bounds the cost of every CEL evaluation of one
// Universe together (one opm resolve, or one validate
// --check-dependencies): each evaluation is bounded by celCostLimit, but
// many costly rules times many candidates still added up to minutes (20
// rules of 400 bundles: 240 s). Real catalogs' rules cost tens to
// hundreds per candidate.
var celAggregateLimit uint64 = 20_000_000

// CelBudgetError is a resolution stopped because its CEL rules together
// cost more than the aggregate limit.
type CelBudgetError struct {
	Limit uint64
	Rule  string // the rule being evaluated when the limit was reached
}

func (e *CelBudgetError) Error() string {
	return fmt.Sprintf("the olm.constraint CEL rules cost more than %d together (the limit on all evaluations of one resolution; the last rule was %q): simplify the rules or reduce the candidates they are evaluated against", e.Limit, e.Rule)
}

// celMeter adds up the cost of evaluations. Safe for concurrent use.
type celMeter struct {
	limit uint64
	mu    sync.Mutex
	spent uint64
	over  *CelBudgetError
}

// add records cost; it reports false once the limit is passed.
func (m *celMeter) add(cost uint64, rule string) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spent += cost
	if m.spent > m.limit && m.over == nil {
		m.over = &CelBudgetError{Limit: m.limit, Rule: rule}
	}
	return m.over == nil
}

// err is the CelBudgetError once the limit is passed.
func (m *celMeter) err() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.over != nil {
		return m.over
	}
	return nil
}

// maxCelRuleSize bounds a rule's length; the whole constraint is bounded
// by MaxConstraintSize anyway.
const maxCelRuleSize = MaxConstraintSize

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

// CelEnv returns OLM's CEL environment for olm.constraint rules: the
// standard library, one variable `properties` (a list of maps from string
// to any value: a candidate's properties as {"type": ..., "value": ...})
// and one function, semver_compare(a, b), which returns -1, 0 or 1.
func CelEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("properties", cel.ListType(cel.MapType(cel.StringType, cel.AnyType))),
			cel.Function("semver_compare",
				cel.Overload("semver_compare", []*cel.Type{cel.AnyType, cel.AnyType}, cel.IntType,
					cel.BinaryBinding(semverCompare))),
		)
	})
	return celEnv, celEnvErr
}

// semverCompare compares two versions written as strings (or anything
// whose string form is a version), parsed leniently as blang's
// ParseTolerant does: "v2" is 2.0.0 and "1.2" is 1.2.0.
func semverCompare(a, b ref.Val) ref.Val {
	va, err := semver.ParseTolerant(celString(a))
	if err != nil {
		return types.WrapErr(err)
	}
	vb, err := semver.ParseTolerant(celString(b))
	if err != nil {
		return types.WrapErr(err)
	}
	return types.Int(va.Compare(vb))
}

func celString(v ref.Val) string {
	if s, ok := v.(types.String); ok {
		return string(s)
	}
	return fmt.Sprint(v.Value())
}

// celRule is a compiled rule.
type celRule struct {
	rule  string
	prg   cel.Program
	meter *celMeter // the aggregate cost (nil: none)
}

// compileCel compiles a rule; it must have type bool.
func compileCel(rule string) (*celRule, error) {
	if len(rule) > maxCelRuleSize {
		return nil, fmt.Errorf("cel rule is %d bytes, more than the limit of %d", len(rule), maxCelRuleSize)
	}
	env, err := CelEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(rule)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("compile cel rule %q: %w", rule, iss.Err())
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("cel rule %q has type %s, not bool", rule, ast.OutputType())
	}
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize),
		cel.CostLimit(celCostLimit),
		cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("cel rule %q: %w", rule, err)
	}
	return &celRule{rule: rule, prg: prg}, nil
}

// errNotBool is a rule whose result is not a bool (cannot happen for a
// rule that type-checks as bool, but evaluation is defensive).
var errNotBool = errors.New("cel rule did not evaluate to a bool")

// eval evaluates the rule against properties (the candidate's
// properties, each a map {"type": string, "value": decoded JSON}). Any
// error means "no match", as in OLM.
func (r *celRule) eval(ctx context.Context, properties []any) (bool, error) {
	if err := r.meter.err(); err != nil {
		return false, err
	}
	out, det, err := r.prg.ContextEval(ctx, map[string]any{"properties": properties})
	cost := uint64(celCostLimit) // failed: count it as the most it may cost
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	if !r.meter.add(cost, r.rule) {
		return false, r.meter.err()
	}
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, errNotBool
	}
	return bool(b), nil
}
