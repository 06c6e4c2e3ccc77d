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
// package does the same with github.com/crillab/gophersat, for these
// reasons:
//
//   - go-air/gini cannot be had here: the Go module proxy refuses it.
//   - gophersat (CRIL, v1.4.0 of November 2023) is a CDCL SAT and
//     pseudo-boolean solver in pure Go, with no dependencies of its own,
//     deterministic (no randomness, no map iteration in the search), and it
//     solves incrementally under assumptions (Assume, then Solve; learned
//     clauses are kept), which the preference search needs: one solver,
//     many questions. This package's tests check that use of it against
//     brute force.
//   - It comes with MUS extraction (package explain), which is what an
//     explanation of an unsatisfiable problem needs. Its explain package
//     works on single clauses, while a rule here is a group of clauses (an
//     at-most-one), so this package runs the same deletion idea over
//     rules: each rule's clauses carry a selector literal, and QuickXplain
//     (divide and conquer over the selectors, O(k·log(n/k)) solver calls)
//     finds a minimal set of rules that is unsatisfiable. gini gives an
//     unsat core (the failed assumptions) but not a minimal one; OLM prints
//     that core, which may hold rules that play no part.
//
// Two facts about gophersat shape the code. Its clause learning uses a
// package-level buffer, so every use is serialised by a mutex (resolutions
// run one at a time in a process). Assume clears the problem's own unit
// facts along with the previous assumptions, so the encoding has no unit
// clause: every clause carries its rule's selector, and selectors are
// assumed.
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
// subscriptions and installed bundles). gophersat has no randomness, so the
// same inputs give the same solution and the same explanation every time.
package resolve
