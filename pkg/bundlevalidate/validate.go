// Package bundlevalidate validates operator bundles as operator-sdk's
// `bundle validate` does, with the validators of operator-framework/api
// and operator-registry's bundle format checks, written anew from their
// public sources: the same rules, the same verdict and, in the -o
// json-alpha1 form, the same messages; and, for people, every finding at
// the file, line and column of the element concerned.
//
// Default validators (always run): the bundle format (manifests/,
// metadata/, the annotations file, the media type, dependencies.yaml),
// the CSV, the CRDs (as the API server would accept them), the bundle
// (owned CRDs, service accounts, size) and the other objects (supported
// kinds, metadata). Optional validators are selected with operator-sdk's
// label selector (--select-optional): operatorhubv2, capabilities,
// categories, the deprecated operatorhub, alpha-deprecated-apis,
// good-practices and multiarch, as operator-sdk lists them, and
// bundle-objects (operator-registry's).
//
// The bundle is loaded once, by pkg/bundle/manifest; this package reads
// nothing itself, and pulls nothing: the multiarch validator asks
// Options.Inspect for the platforms of an image.
package bundlevalidate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Options configure a validation.
type Options struct {
	// Selector selects optional validators: operator-sdk's
	// --select-optional label selector ("suite=operatorframework",
	// "name=operatorhubv2", "name in (good-practices,multiarch)"); nil
	// runs none. See ParseSelector.
	Selector *Selector
	// Values are operator-sdk's --optional-values: k8s-version (the
	// Kubernetes version the deprecated-API checks target) and
	// container-tools (accepted, unused: images are read with
	// go-containerregistry).
	Values map[string]string
	// Dir names the bundle directory in the bundle format's message
	// ("error validating format in DIR: ..."), as operator-sdk names it:
	// relative to the working directory.
	Dir string
	// CategoriesFile is a custom categories file
	// (OPERATOR_BUNDLE_CATEGORIES): a JSON object {"categories": [...]}
	// replacing the standard categories; "" for the standard ones.
	CategoriesFile string
	// ReadFile reads CategoriesFile (os.ReadFile when nil).
	ReadFile func(name string) ([]byte, error)
	// Inspect returns the platforms of an image, for the multiarch
	// validator; nil reports every image as not inspected.
	Inspect func(ctx context.Context, image string) ([]Platform, error)
}

// Report is what validating one bundle found.
type Report struct {
	// Bundle is the bundle validated (nil once Release is called).
	Bundle *manifest.Bundle
	// Source, Name and Package are the bundle's (see manifest.Bundle).
	Source, Name, Package string
	// Findings are every problem found, in upstream's order of output
	// (each validator's warnings, then its errors).
	Findings []Finding
	// Dir is the directory named in the format message.
	Dir string
	// FilePrefix is how the bundle's files are reached ("bundles/foo/",
	// "quay.io/acme/foo-bundle:v1:"), for callers that print paths.
	FilePrefix string
}

// Add appends findings (those of external validators).
func (r *Report) Add(fs ...Finding) { r.Findings = append(r.Findings, fs...) }

// Release drops the report's references to the bundle (its files): keep
// a report after it, and the bundle's memory goes. Findings not located
// by then have no position.
func (r *Report) Release() {
	r.Bundle = nil
	for i := range r.Findings {
		r.Findings[i].at = nil
	}
}

// LoadErrorReport is the report of a bundle that could not be read at
// all.
func LoadErrorReport(source string, err error) *Report {
	msg := err.Error()
	return &Report{Source: source, Dir: source, Findings: []Finding{{Severity: SeverityError, Validator: "load", Code: "load-unreadable", Upstream: msg, Message: msg}}}
}

// ExternalFinding is a finding of an external validator (operator-sdk's
// --alpha-select-external), from the parts of operator-framework/api's
// error it printed.
func ExternalFinding(sev Severity, validator, level, field string, value any, detail string) Finding {
	var v *string
	if value != nil {
		s := fmt.Sprint(value)
		v = &s
	}
	if level == "" {
		level = levelOf(sev)
	}
	up := apiError(level, field, v, detail)
	return Finding{Severity: sev, Validator: validator, Code: "external", Upstream: up, Message: strings.TrimPrefix(strings.TrimPrefix(up, level+": "), "Value : ")}
}

// CheckerFinding is a finding of a checker run beside the validators
// (OLM v1's install rules for `opm bundle validate --olm-v1`), already
// positioned; -o json-alpha1 writes it as operator-framework/api writes
// an error about the bundle named value.
func CheckerFinding(sev Severity, checker, code, value, message string, pos declcfg.Position) Finding {
	return Finding{Severity: sev, Validator: checker, Code: code, Upstream: apiError(levelOf(sev), "", &value, message),
		Message: message, Pos: pos}
}

// Passed reports whether the bundle has no error.
func (r *Report) Passed() bool {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			return false
		}
	}
	return true
}

// Counts returns the numbers of errors and warnings.
func (r *Report) Counts() (errs, warnings int) {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}

// checker runs the validators on one bundle.
type checker struct {
	ctx  context.Context
	b    *manifest.Bundle
	opts Options
	dir  string

	findings []Finding
	groups   []int // group of each finding
	group    int
	name     string // current validator
}

// begin starts a new result: upstream prints each result's warnings,
// then its errors.
func (c *checker) begin(validator string) {
	c.group++
	c.name = validator
}

func (c *checker) add(f Finding, where at) {
	f.Validator = c.name
	f.at, f.Path = where.l, where.path
	c.findings = append(c.findings, f)
	c.groups = append(c.groups, c.group)
}

// Validate runs the default validators and those opts selects on b. The
// error is for a cancelled ctx only: a bundle that cannot be validated
// (no CSV, a manifest that does not decode) is reported as errors.
func Validate(ctx context.Context, b *manifest.Bundle, opts Options) (*Report, error) {
	c := &checker{ctx: ctx, b: b, opts: opts, dir: opts.Dir}
	if c.dir == "" {
		c.dir = b.Source
	}
	media := mediaRegistryV1
	if b.Catalog == nil {
		c.checkFormat()
		c.checkLoad()
		if mt, ok := mediaType(b); ok {
			media = mt
		}
	} else {
		c.checkCatalogLoad()
	}
	if media != mediaHelm {
		c.checkContent(media)
	}
	if b.CSV != nil {
		for _, v := range optionalValidators {
			if opts.Selector == nil || !opts.Selector.Matches(v.Labels) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			v.run(c)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Report{Bundle: b, Source: b.Source, Name: b.Name(), Package: b.Package(), Findings: c.ordered(), Dir: c.dir}, nil
}

// checkContent runs the content validators as operator-sdk's
// ValidateBundleContent does: the bundle, the CSV (with the objects'
// problems), then each CRD.
func (c *checker) checkContent(media string) {
	if c.b.CSV == nil {
		c.begin("crd")
		c.checkCRDs()
		return
	}
	c.checkBundle()
	c.checkCSV()
	c.checkObjects(media)
	c.checkCRDs()
}

// ordered returns the findings in upstream's order: by result, each
// result's warnings before its errors.
func (c *checker) ordered() []Finding {
	idx := make([]int, len(c.findings))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if c.groups[a] != c.groups[b] {
			return c.groups[a] < c.groups[b]
		}
		return c.findings[a].Severity == SeverityWarning && c.findings[b].Severity == SeverityError
	})
	out := make([]Finding, len(idx))
	for i, k := range idx {
		out[i] = c.findings[k]
	}
	return out
}

// Locate sets the position of every finding of r.
func (r *Report) Locate() {
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.at != nil && !f.Pos.IsValid() {
			f.Pos = f.at.Locate(f.Path)
		}
	}
}
