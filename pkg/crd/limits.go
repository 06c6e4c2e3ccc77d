package crd

// Limits of the work one comparison or validation does. CRDs and
// examples come from catalogs and images anyone can publish: past a
// limit, the check stops and says what it did not check (a limit-reached
// or examples-not-checked change), and never reads as a pass.
const (
	// MaxServedVersions bounds the served versions of a CRD that are
	// compared with each other: OLM v1 compares every pair of served
	// versions of a CRD without a conversion webhook, and 50 versions are
	// 1,225 pairs. Real CRDs serve a handful.
	MaxServedVersions = 50
	// MaxCompareSteps bounds the pairs of schema nodes one comparison of
	// two CRDs compares, served pairs included (identical subtrees are
	// skipped whole and cost one step). The largest real CRDs have 7,000
	// nodes a version.
	MaxCompareSteps = 1_000_000
	// MaxChanges bounds the changes one comparison of two CRDs keeps: the
	// unsafe ones (past it the comparison stops) and the safe ones (past
	// it they are counted, not kept).
	MaxChanges = 1000
	// MaxExampleSteps bounds the steps (values checked against a schema
	// node, anyOf and oneOf trials included) of validating one object, as
	// CEL's cost budget bounds one rule. Real examples take hundreds.
	MaxExampleSteps = 200_000
	// MaxExamplesSteps bounds the steps of validating all the examples of
	// one upgrade (the old bundle's examples, under the old CRDs and the
	// new ones).
	MaxExamplesSteps = 4_000_000
	// MaxCheckSteps bounds the steps (of comparisons, of examples, and a
	// step per change) of one check: the upgrade of `opm crd diff`, the
	// upgrades of one package (`opm validate --check-crd-upgrades`), the
	// new upgrades of one edit.
	MaxCheckSteps = 20_000_000
)

// limits are the limits in force: the constants above (tests lower them).
var limits = struct {
	servedVersions, compareSteps, changes   int
	exampleSteps, examplesSteps, checkSteps int
}{MaxServedVersions, MaxCompareSteps, MaxChanges, MaxExampleSteps, MaxExamplesSteps, MaxCheckSteps}
