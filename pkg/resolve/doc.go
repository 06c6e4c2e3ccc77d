// Package resolve is OLM classic's dependency resolution as an offline dry
// run: given file-based catalogs (each with a name and a priority), the
// bundles installed in a namespace and its subscriptions, it decides which
// bundles the namespace ends up with, and why each is there; or, when no
// solution exists, a minimal set of rules that cannot all hold, in words.
//
// # Rules
//
// The rules are OLM's (operator-lifecycle-manager's
// pkg/controller/registry/resolver at the version the project's
// resolution notes were checked against):
//
//   - A catalog record is a bundle in one channel of one catalog; the same
//     bundle in two channels is two candidates.
//   - A subscription takes its candidates from one catalog only (the
//     installed bundle's catalog, else the highest priority one that has
//     the package, ties by name): the default channel's chain first, then
//     the other channels by name; no channel means every channel. Chains
//     are walked from the head along replaces; skipped entries and entries
//     off the chain are no candidates (except a startingCSV, which is
//     looked up by name). With a bundle of the package installed, the
//     candidates are the entries that replace it, skip it or whose
//     skipRange covers its version, and keeping it comes last.
//   - Every olm.gvk.required, olm.package.required, olm.label.required and
//     olm.constraint property is one dependency: at least one bundle of
//     the solution must match it. Candidates come installed bundles first,
//     then the requiring bundle's own catalog, then by priority and name;
//     within a catalog default channels first, then by package and channel
//     name, each in chain order.
//   - olm.constraint holds gvk, package, all, any, not or cel (OLM's CEL
//     environment: `properties` and semver_compare). all/any/not apply to
//     one candidate at a time; a top-level not is met by almost anything.
//     Version ranges are blang/semver's (pre-releases match like any
//     version), read by pkg/versionrange's classic parser.
//   - At most one bundle per package and one provider per API (group,
//     version, kind); installed bundles no subscription names stay;
//     bundles with an olm.deprecated property are never selected. (OLM
//     also states that a replacement conflicts with the bundle it replaces;
//     one-bundle-per-package implies it, so it is not encoded twice.)
//   - Preference: choices are made breadth first (installed bundles nobody
//     subscribes to, in the order given, then subscriptions in the order
//     given, then the dependencies of what they selected, level by level);
//     each takes its first candidate that can still lead to a complete
//     solution, unless a candidate is already selected.
//
// # The solver
//
// The hard rules are a boolean problem and the preference is a search
// over it; both are OLM's design. OLM drives go-air/gini, a CDCL solver,
// with assumptions: it assumes a candidate, tests, and backtracks. This
// package does the same with its own CDCL solver (sat.go, after MiniSat:
// watched literals, first-UIP learning, VSIDS, restarts), incremental
// under assumptions (one solver, many questions; learned clauses are
// kept), deterministic, and checked against brute force by the tests. It
// replaced gophersat, whose search cannot be stopped: this one checks the
// context inside the search, so a signal ends it at once, and spends at
// most a budget of conflicts per resolution (Request.Budget,
// DefaultBudget; --solver-budget), after which the resolution fails
// with a BudgetError naming the packages involved. Dependency problems
// can be made arbitrarily hard (a pigeonhole: n+1 packages needing n
// providers is exponential for any clause-learning solver); real
// catalogs need no conflict at all.
//
// An explanation of an unsatisfiable problem needs a minimal set of
// rules that cannot all hold: each rule's clauses carry a selector
// literal, and QuickXplain (divide and conquer over the selectors,
// O(k·log(n/k)) solver calls) finds one. gini gives an unsat core (the
// failed assumptions) but not a minimal one; OLM prints that core, which
// may hold rules that play no part. Every clause carries its rule's
// selector, so the problem has no unit clause; selectors are assumed.
//
// CEL rules (olm.constraint) are bounded one evaluation at a time
// (celCostLimit) and all together over a Universe (celAggregateLimit): a
// resolution whose rules cost more fails with a CelBudgetError.
//
// The search tests each candidate with a complete solver call (or reads
// it off the last model, which already proves a candidate possible)
// instead of OLM's unit-propagation test with backtracking. Both return
// the first solution in preference order: a candidate the complete test
// accepts always leads to a solution, and one it rejects never does, so
// backtracking would never change a choice. The result is the set of
// candidates chosen, which is also what OLM's final minimisation keeps.
//
// # Determinism
//
// Variables, rules and clauses are built in an order that depends only on
// the inputs' meaning: catalogs by priority and name, channels by the
// rules above, candidates in preference order, uniqueness rules sorted by
// package and API. File order and map order play no part, except where
// OLM's rules say order matters (property order, the order of
// subscriptions and installed bundles). The solver has no randomness, and
// the result does not depend on its choices anyway (see above), so the
// same inputs give the same solution and the same explanation every time.
package resolve
