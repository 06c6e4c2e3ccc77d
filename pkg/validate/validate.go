package validate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/olmv1"
)

// Rule codes of this package (the model's are in pkg/model).
const (
	// CodeLoad is a file that cannot be loaded (syntax, schema envelope).
	CodeLoad = "load-error"
	// CodeSchema is a blob or property value that does not satisfy opm's
	// CUE schemas (a warning: upstream does not check these).
	CodeSchema = "schema"
	// CodeCustomSchema is a blob that does not satisfy a user's CUE
	// schema (--schema-dir; an error).
	CodeCustomSchema = "custom-schema"
)

// Options configure a validation.
type Options struct {
	// Strict turns every warning into an error.
	Strict bool
	// StrictRules turns the warnings of these rules into errors.
	StrictRules []string
	// Ignore drops the findings of these rules. Rules upstream enforces
	// cannot be ignored (see [Ignorable]).
	Ignore []string
	// Baseline, when set, drops the findings it records (see
	// [Baseline]); findings of rules upstream enforces are never dropped.
	Baseline *Baseline
	// Schemas are the CUE schemas to apply; nil means opm's embedded
	// ones.
	Schemas *Schemas
	// Concurrency is the number of packages checked at once (default:
	// GOMAXPROCS).
	Concurrency int
	// Dependencies, when set, resolves every channel head's dependencies
	// (CheckDependencies).
	Dependencies *DependencyOptions
	// CRDUpgrades, when set, checks the CRDs of every upgrade edge
	// (crdupgrade.go).
	CRDUpgrades *CRDUpgradeOptions
	// Bundles, when set, validates every bundle as `opm bundle validate`
	// does (bundles.go).
	Bundles *BundleOptions
	// OLMv1, when set, checks what OLM v1 installs and upgrades
	// (olmv1.go); Result.OLMv1 counts it.
	OLMv1 *OLMv1Options
	// Extra are findings of checks made outside this package (the serve
	// cache check of `opm validate --check-cache`), reported with the
	// catalog's and subject to the same rule options.
	Extra []Finding
	// Gate, when set, runs the release gate rules it turns on (gate.go);
	// Result.Gate says what it checked.
	Gate *GateOptions
}

// Validate checks cfg and returns every finding. The verdict (Passed) and
// Message are upstream opm's on the same catalog unless warnings fail it
// under Strict. The error is only for failures to run (bad schemas, a
// cancelled context, unknown rule codes in opts), never for an invalid
// catalog. Findings are positioned at the start of their blobs (cfg holds
// no source text); see ValidateIndex.
func Validate(ctx context.Context, cfg *declcfg.DeclarativeConfig, opts Options) (*Result, error) {
	return validateSource(ctx, newMemSource(cfg), opts)
}

// ValidateIndex checks the catalog of ix as Validate checks it loaded
// whole, one package at a time: only the packages being checked are held in
// memory. Findings about an element of a blob (a channel entry, a skip, a
// property, a field) are positioned at that element, read back from the
// catalog's files.
func ValidateIndex(ctx context.Context, ix *declcfg.Index, opts Options) (*Result, error) {
	return validateSource(ctx, indexSource{ix}, opts)
}

// groupResult is what checking one group found.
type groupResult struct {
	// conv are the conversion issues, with their place in upstream's
	// order of checks.
	conv []rankedFinding
	// tree are the group's packages in the model validation tree, and
	// leaves its leaves as findings; after are the leaves left when the
	// group has conversion issues (see afterConversion).
	tree   []error
	leaves []Finding
	after  []Finding
	// other are the schema findings and the checks upstream lacks.
	other []Finding
	facts catalogFacts
	gate  gateFacts
	olmv1 *olmv1.Summary
}

// rankedFinding is a conversion issue and its place in upstream's order of
// checks: packages, channels, bundles (each in load order), entries
// without bundles (by package), deprecations.
type rankedFinding struct {
	f     Finding
	stage int
	rank  int
	pkg   string
}

func validateSource(ctx context.Context, src catalogSource, opts Options) (*Result, error) {
	sel, err := newSelection(opts)
	if err != nil {
		return nil, err
	}
	if opts.Schemas == nil {
		s, err := LoadSchemas("")
		if err != nil {
			return nil, err
		}
		opts.Schemas = s
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = runtime.GOMAXPROCS(0)
	}

	names := src.groups()
	results := make([]*groupResult, len(names))
	n := min(opts.Concurrency, len(names))
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := opts.Schemas.pool.get()
			if err != nil {
				errs[w] = err
				return
			}
			defer opts.Schemas.pool.put(c)
			sc := &schemaChecker{c: c, custom: opts.Schemas.custom}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(names) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				g, err := src.load(ctx, names[i])
				if err != nil {
					errs[w] = err
					next.Store(int64(len(names))) // stop the others
					return
				}
				results[i] = checkGroup(g, sc)
				if opts.CRDUpgrades != nil {
					fs, err := g.crdUpgradeChecks(ctx, opts.CRDUpgrades)
					if err != nil {
						errs[w] = err
						next.Store(int64(len(names)))
						return
					}
					results[i].other = append(results[i].other, fs...)
				}
				if opts.Bundles != nil {
					fs, err := g.bundleChecks(ctx, opts.Bundles)
					if err != nil {
						errs[w] = err
						next.Store(int64(len(names)))
						return
					}
					results[i].other = append(results[i].other, fs...)
				}
				if opts.Gate != nil {
					results[i].other = append(results[i].other, g.gateChecks(opts.Gate, sc, &results[i].gate)...)
				}
				if opts.OLMv1 != nil {
					fs, sum, err := g.olmv1Checks(ctx, opts.OLMv1)
					if err != nil {
						errs[w] = err
						next.Store(int64(len(names)))
						return
					}
					results[i].other = append(results[i].other, fs...)
					results[i].olmv1 = sum
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	res := &Result{}
	if opts.OLMv1 != nil {
		res.OLMv1 = olmv1.NewSummary(opts.OLMv1.Gates)
	}
	var conv []rankedFinding
	for _, gr := range results {
		conv = append(conv, gr.conv...)
	}
	sort.SliceStable(conv, func(i, j int) bool {
		a, b := conv[i], conv[j]
		if a.stage != b.stage {
			return a.stage < b.stage
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.pkg < b.pkg
	})
	root := &model.ValidationError{Message: "invalid index"}
	var facts catalogFacts
	var gate gateFacts
	for _, gr := range results {
		for _, c := range gr.conv {
			res.Findings = append(res.Findings, c.f)
		}
		switch {
		case len(conv) == 0:
			for _, f := range gr.leaves {
				f.inTree = true
				res.Findings = append(res.Findings, f)
			}
			root.SubErrors = append(root.SubErrors, gr.tree...)
		case len(gr.conv) > 0:
			res.Findings = append(res.Findings, gr.after...)
		default:
			res.Findings = append(res.Findings, gr.leaves...)
		}
		res.Findings = append(res.Findings, gr.other...)
		facts.merge(&gr.facts)
		gate.withBundles += gr.gate.withBundles
		if gr.olmv1 != nil {
			res.OLMv1.Merge(gr.olmv1)
		}
	}
	results = nil
	if len(conv) > 0 {
		// Upstream stops at its first conversion error; we also report
		// what its model validation would say about the parts that
		// converted.
		res.Message = conv[0].f.Message
	} else if len(root.SubErrors) > 0 {
		res.Tree = root
		res.Message = root.Error()
	}
	if opts.Dependencies != nil {
		for _, c := range opts.Dependencies.With {
			if c.Config != nil {
				facts.addProviders(c.Config)
			}
		}
	}
	res.Findings = append(res.Findings, facts.unmet()...)
	if opts.Dependencies != nil {
		cfg, err := src.whole(ctx)
		if err != nil {
			return nil, err
		}
		deps, err := CheckDependencies(ctx, cfg, *opts.Dependencies)
		if err != nil {
			return nil, err
		}
		for i := range deps {
			deps[i].ref = -1
		}
		res.Findings = append(res.Findings, deps...)
	}
	if err := locate(ctx, src, res.Findings); err != nil {
		return nil, err
	}
	if opts.Gate != nil {
		res.Findings = append(res.Findings, catalogGateFindings(opts.Gate, gate)...)
		res.Gate = opts.Gate.summary()
	}
	for _, f := range opts.Extra {
		f.ref = -1
		res.Findings = append(res.Findings, f)
	}
	res.Findings = dedupe(res.Findings)
	sel.apply(res)
	finish(res, sel)
	return res, nil
}

// checkGroup runs every check of one group.
func checkGroup(g *group, sc *schemaChecker) *groupResult {
	gr := &groupResult{}
	gr.other = sc.checkGroup(g)

	m, issues := model.Convert(*g.cfg)
	seen := map[string]int{}
	for _, is := range issues {
		at := blobOf(is.Pos)
		rf := rankedFinding{stage: conversionStage(is.Code), pkg: is.Package}
		if at.ok {
			rf.rank = g.rank[at.kind][at.i]
			if is.Code == model.CodeDeprecationNoPackage && at.kind == declcfg.KindDeprecation {
				// Upstream numbers deprecations over the whole catalog.
				is.Message = fmt.Sprintf("package name must be set for deprecation item %v", rf.rank)
			}
		}
		rf.f = g.issueFinding(is, seen)
		gr.conv = append(gr.conv, rf)
	}
	if err := m.Validate(); err != nil {
		var root *model.ValidationError
		if errors.As(err, &root) {
			gr.tree = root.SubErrors
		}
		for _, leaf := range ruleLeaves(err) {
			f := g.issueFinding(leaf.Issue, seen)
			f.leaves = []*model.RuleError{leaf}
			gr.leaves = append(gr.leaves, f)
		}
		if len(issues) > 0 {
			gr.after = afterConversion(m, issues, gr.leaves)
		}
	}
	gr.other = append(gr.other, g.extraChecks(&gr.facts)...)
	gr.other = append(gr.other, g.maxOpenShiftChecks()...)
	return gr
}

// conversionStage is the place of a conversion rule in upstream's order
// of checks.
func conversionStage(code string) int {
	switch code {
	case model.CodePackageNoName, model.CodePackageDuplicate, model.CodePackageNameInvalid:
		return 0
	case model.CodeChannelUnknownPackage, model.CodeChannelNoName, model.CodeChannelDuplicate, model.CodeChannelDuplicateEntry:
		return 1
	case model.CodeChannelEntryNoBundle:
		return 3
	case model.CodeDeprecationNoPackage, model.CodeDeprecationUnknownPackage, model.CodeDeprecationDuplicate,
		model.CodeDeprecationNoSchema, model.CodeDeprecationDuplicateEntry, model.CodeDeprecationBundleNotFound,
		model.CodeDeprecationChannelMissing, model.CodeDeprecationPackageNamed, model.CodeDeprecationSchemaUnknown:
		return 4
	}
	return 2
}

// ruleLeaves returns the leaves of a validation tree.
func ruleLeaves(err error) []*model.RuleError {
	var out []*model.RuleError
	var walk func(error)
	walk = func(e error) {
		var ve *model.ValidationError
		var re *model.RuleError
		switch {
		case errors.As(e, &ve):
			for _, s := range ve.SubErrors {
				walk(s)
			}
		case errors.As(e, &re):
			out = append(out, re)
		}
	}
	walk(err)
	return out
}

// LoadErrorResult is the result for a catalog that cannot be loaded: the
// upstream message of the loader error and one finding at its position.
func LoadErrorResult(err error) *Result {
	f := Finding{Severity: SeverityError, Code: CodeLoad, Message: declcfg.UpstreamMessage(err), ref: -1}
	var le *declcfg.LoadError
	if errors.As(err, &le) {
		f.File, f.Line, f.Column = le.Pos.File, le.Pos.Line, le.Pos.Column
	}
	return &Result{Passed: false, Message: f.Message, Findings: []Finding{f}, upstream: f.Message}
}

// afterConversion returns the leaves of the validation of the partial
// model built despite conversion errors, minus those the conversion errors
// already explain: anything about a bundle whose blob was rejected or is
// missing, and duplicate versions in a package with such bundles (their
// versions are unknown).
func afterConversion(m model.Model, issues []model.Issue, leaves []Finding) []Finding {
	failed := map[string]map[string]bool{} // package -> bundle
	missing := map[string]bool{}           // packages with entries without blobs
	for _, is := range issues {
		if is.Code == model.CodeChannelEntryNoBundle {
			missing[is.Package] = true
		}
		if is.Bundle == "" || is.Package == "" {
			continue
		}
		if failed[is.Package] == nil {
			failed[is.Package] = map[string]bool{}
		}
		failed[is.Package][is.Bundle] = true
	}
	tainted := func(pkg string) bool { return len(failed[pkg]) > 0 || missing[pkg] }
	var out []Finding
	for _, f := range leaves {
		switch {
		case f.Bundle != "" && failed[f.Package][f.Bundle]:
			continue
		case f.Bundle != "" && missing[f.Package] && !hasBlob(m, f.Package, f.Channel, f.Bundle):
			continue
		case f.Code == model.CodePackageDuplicateVersions && tainted(f.Package):
			continue
		}
		out = append(out, f)
	}
	return out
}

func hasBlob(m model.Model, pkg, ch, bundle string) bool {
	p := m[pkg]
	if p == nil || p.Channels[ch] == nil || p.Channels[ch].Bundles[bundle] == nil {
		return false
	}
	return p.Channels[ch].Bundles[bundle].HasBlob
}
