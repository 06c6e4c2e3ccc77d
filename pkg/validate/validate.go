package validate

import (
	"context"
	"errors"
	"runtime"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
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
	// Strict turns warnings into errors.
	Strict bool
	// Schemas are the CUE schemas to apply; nil means opm's embedded
	// ones.
	Schemas *Schemas
	// Concurrency is the number of CUE workers (default: GOMAXPROCS).
	Concurrency int
	// Dependencies, when set, resolves every channel head's dependencies
	// (CheckDependencies).
	Dependencies *DependencyOptions
}

// Validate checks cfg and returns every finding. The verdict (Passed) and
// Message are upstream opm's on the same catalog unless warnings fail it
// under Strict. The error is only for failures to run (bad schemas, a
// cancelled context), never for an invalid catalog.
func Validate(ctx context.Context, cfg *declcfg.DeclarativeConfig, opts Options) (*Result, error) {
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

	res := &Result{}
	schemaDone := make(chan error, 1)
	var schemaFindings []Finding
	go func() {
		var err error
		schemaFindings, err = checkSchemas(ctx, cfg, opts.Schemas, opts.Concurrency)
		schemaDone <- err
	}()

	m, issues := model.Convert(*cfg)
	for _, is := range issues {
		res.Findings = append(res.Findings, fromIssue(SeverityError, is))
	}
	if len(issues) > 0 {
		res.Message = issues[0].Message
		// Upstream stops here; we also report what its model validation
		// would say about the parts that converted.
		for _, is := range treeAfterConversionErrors(m, issues) {
			res.Findings = append(res.Findings, fromIssue(SeverityError, is))
		}
	} else if err := m.Validate(); err != nil {
		res.Message = err.Error()
		errors.As(err, &res.Tree)
		for _, is := range model.Issues(err) {
			f := fromIssue(SeverityError, is)
			f.inTree = true
			res.Findings = append(res.Findings, f)
		}
	}
	res.Findings = append(res.Findings, extraChecks(cfg)...)
	res.Findings = append(res.Findings, maxOpenShiftChecks(cfg)...)
	if opts.Dependencies != nil {
		deps, err := CheckDependencies(ctx, cfg, *opts.Dependencies)
		if err != nil {
			<-schemaDone
			return nil, err
		}
		res.Findings = append(res.Findings, deps...)
	}

	if err := <-schemaDone; err != nil {
		return nil, err
	}
	res.Findings = append(res.Findings, schemaFindings...)
	finish(res, opts.Strict)
	return res, nil
}

// finish applies --strict, sorts the findings and sets the verdict.
func finish(res *Result, strict bool) {
	if strict {
		for i := range res.Findings {
			res.Findings[i].Severity = SeverityError
		}
	}
	sortFindings(res.Findings)
	errs, _ := res.Counts()
	res.Passed = errs == 0
	if res.Passed {
		res.Message = ""
		res.Tree = nil
		return
	}
	if res.Message == "" {
		var msgs []string
		for _, f := range res.Findings {
			if f.Severity == SeverityError {
				msgs = append(msgs, f.Message)
			}
		}
		res.Message = strings.Join(msgs, "\n")
	}
}

// LoadErrorResult is the result for a catalog that cannot be loaded: the
// upstream message of the loader error and one finding at its position.
func LoadErrorResult(err error) *Result {
	f := Finding{Severity: SeverityError, Code: CodeLoad, Message: declcfg.UpstreamMessage(err)}
	var le *declcfg.LoadError
	if errors.As(err, &le) {
		f.File, f.Line, f.Column = le.Pos.File, le.Pos.Line, le.Pos.Column
	}
	return &Result{Passed: false, Message: f.Message, Findings: []Finding{f}}
}

// treeAfterConversionErrors validates the partial model built despite
// conversion errors and returns its issues, minus those the conversion
// errors already explain: anything about a bundle whose blob was rejected
// or is missing, and duplicate versions in a package with such bundles
// (their versions are unknown).
func treeAfterConversionErrors(m model.Model, issues []model.Issue) []model.Issue {
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
	var out []model.Issue
	for _, is := range model.Issues(m.Validate()) {
		switch {
		case is.Bundle != "" && failed[is.Package][is.Bundle]:
			continue
		case is.Bundle != "" && missing[is.Package] && !hasBlob(m, is.Package, is.Channel, is.Bundle):
			continue
		case is.Code == model.CodePackageDuplicateVersions && tainted(is.Package):
			continue
		}
		out = append(out, is)
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
