package validate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
)

// Rule selection: which findings are reported, and which warnings fail a
// catalog.
//
// A repository can drop the findings of a rule (Ignore), make a rule's
// warnings errors (StrictRules, or every rule with Strict), and accept the
// findings it has today (Baseline). None of this applies to the rules
// upstream enforces: a catalog they reject is rejected by OLM whatever a
// configuration says, so their findings are always reported, as errors.

// OptionError is an option naming a rule wrongly (an unknown code, a rule
// that cannot be ignored): a usage error.
type OptionError struct {
	Msg string
}

func (e *OptionError) Error() string { return e.Msg }

// Ignorable reports whether findings of the rule code may be ignored or
// baselined: every rule but those upstream enforces (load errors and
// model rules). Findings of user schemas (custom-schema) may.
func Ignorable(code string) bool {
	r, ok := RuleByCode(code)
	return ok && (!r.Upstream || code == CodeCustomSchema)
}

// ruleAliases maps former rule codes to the codes that replaced them:
// they are still accepted wherever users name rules (options,
// configuration files, baselines).
var ruleAliases = map[string]string{}

// canonicalCode returns the code a rule code (or a former one) names now.
func canonicalCode(code string) string {
	if to, ok := ruleAliases[code]; ok {
		return to
	}
	return code
}

// isGlob reports whether a rule option is a glob (path.Match's syntax:
// *, ?, [...]), such as crd-*.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// ruleCodes returns every rule code, in documentation order.
func ruleCodes() []string {
	all := make([]string, len(Rules))
	for i, r := range Rules {
		all[i] = r.Code
	}
	return all
}

// matchRules returns the codes the glob matches (an error for a
// malformed glob).
func matchRules(glob string) ([]string, error) {
	if _, err := path.Match(glob, ""); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range Rules {
		if ok, _ := path.Match(glob, r.Code); ok {
			out = append(out, r.Code)
		}
	}
	return out, nil
}

// CheckRules reports the first element of codes that is neither a rule
// code (or a former one) nor a glob matching some rule, as an
// *OptionError naming the option (e.g. "--ignore").
func CheckRules(option string, codes []string) error {
	for _, c := range codes {
		if isGlob(c) {
			m, err := matchRules(c)
			switch {
			case err != nil:
				return &OptionError{Msg: fmt.Sprintf("%s: %q: %v", option, c, err)}
			case len(m) == 0:
				return &OptionError{Msg: fmt.Sprintf("%s: %q matches no rule; docs/validate.md lists the rules", option, c)}
			}
			continue
		}
		if _, ok := RuleByCode(canonicalCode(c)); !ok {
			e := suggest.Unknown("rule", c, "", ruleCodes())
			e.Hint = "docs/validate.md lists the rules"
			return &OptionError{Msg: option + ": " + e.Error()}
		}
	}
	return nil
}

// selection is the rule options of one validation.
type selection struct {
	strictAll bool
	strict    map[string]bool
	ignore    map[string]bool
	baseline  *Baseline
}

// ruleSet is the codes a rule option names: exactly (codes, former codes)
// and through globs, each code with the glob that matched it.
type ruleSet struct {
	exact map[string]bool
	glob  map[string]string
}

func newRuleSet(option string, codes []string) (ruleSet, error) {
	rs := ruleSet{exact: map[string]bool{}, glob: map[string]string{}}
	if err := CheckRules(option, codes); err != nil {
		return rs, err
	}
	for _, c := range codes {
		if !isGlob(c) {
			rs.exact[canonicalCode(c)] = true
			continue
		}
		m, _ := matchRules(c)
		for _, code := range m {
			if _, ok := rs.glob[code]; !ok {
				rs.glob[code] = c
			}
		}
	}
	return rs, nil
}

// newSelection resolves the rule options. A code named exactly wins over
// a glob of the other option (--ignore 'crd-*' --warn-as-error
// crd-field-removed ignores every CRD rule but that one); a glob of
// --ignore takes the rules it matches that may be ignored, and must match
// one.
func newSelection(opts Options) (*selection, error) {
	s := &selection{strictAll: opts.Strict, strict: map[string]bool{}, ignore: map[string]bool{}, baseline: opts.Baseline}
	strict, err := newRuleSet("strict", opts.StrictRules)
	if err != nil {
		return nil, err
	}
	ignore, err := newRuleSet("ignore", opts.Ignore)
	if err != nil {
		return nil, err
	}
	for c := range ignore.exact {
		if !Ignorable(c) {
			return nil, &OptionError{Msg: fmt.Sprintf("ignore: rule %q cannot be ignored: upstream opm rejects catalogs that break it", c)}
		}
		if strict.exact[c] {
			return nil, &OptionError{Msg: fmt.Sprintf("rule %q is both ignored and made an error", c)}
		}
		s.ignore[c] = true
	}
	globs := map[string]bool{}
	for c, g := range ignore.glob {
		globs[g] = globs[g] || Ignorable(c)
		if !Ignorable(c) || strict.exact[c] || ignore.exact[c] {
			continue
		}
		if sg, ok := strict.glob[c]; ok {
			return nil, &OptionError{Msg: fmt.Sprintf("rule %q is both ignored (%s) and made an error (%s)", c, g, sg)}
		}
		s.ignore[c] = true
	}
	for g, ok := range globs {
		if !ok {
			return nil, &OptionError{Msg: fmt.Sprintf("ignore: %q matches only rules that cannot be ignored: upstream opm rejects catalogs that break them", g)}
		}
	}
	for c := range strict.exact {
		s.strict[c] = true
	}
	for c := range strict.glob {
		if !ignore.exact[c] {
			s.strict[c] = true
		}
	}
	return s, nil
}

// apply drops the ignored and baselined findings.
func (s *selection) apply(res *Result) {
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if s.ignore[f.Code] {
			res.Ignored++
			continue
		}
		kept = append(kept, f)
	}
	clear(res.Findings[len(kept):])
	res.Findings = kept
	if s.baseline != nil {
		res.dropBaselined(s.baseline)
	}
}

// dropBaselined drops the findings b records, each entry of b matching one
// finding.
func (r *Result) dropBaselined(b *Baseline) {
	left := make(map[string]int, len(b.counts))
	for k, n := range b.counts {
		left[k] = n
	}
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if k := f.Key(); Ignorable(f.Code) && left[k] > 0 {
			left[k]--
			r.Baselined++
			continue
		}
		kept = append(kept, f)
	}
	clear(r.Findings[len(kept):])
	r.Findings = kept
}

// finish applies the strict options, sorts the findings and sets the
// verdict.
func finish(res *Result, s *selection) {
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Severity == SeverityWarning && (s.strictAll || s.strict[f.Code]) {
			f.Severity = SeverityError
		}
	}
	res.upstream = res.Message
	res.settle()
}

// settle sorts the findings and sets the verdict and message.
func (r *Result) settle() {
	sortFindings(r.Findings)
	errs, _ := r.Counts()
	r.Passed = errs == 0
	if r.Passed {
		r.Message = ""
		r.Tree = nil
		return
	}
	if r.upstream != "" {
		r.Message = r.upstream
		return
	}
	var msgs []string
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			msgs = append(msgs, f.Message)
		}
	}
	r.Message = strings.Join(msgs, "\n")
}

// ApplyBaseline drops the findings b records (see Baseline) and sets the
// verdict again.
func (r *Result) ApplyBaseline(b *Baseline) {
	r.dropBaselined(b)
	r.settle()
}

// dedupe reports once a problem found from several places: a bundle's
// problem seen in each channel that lists it, an edge that several
// channels share. The finding kept is the first by position; it names
// every channel in Channels.
func dedupe(fs []Finding) []Finding {
	sortFindings(fs)
	first := map[string]int{}
	out := fs[:0:0]
	for _, f := range fs {
		if f.Bundle == "" || f.Channel == "" {
			out = append(out, f)
			continue
		}
		k := strings.Join([]string{f.Code, string(f.Severity), f.Package, f.Bundle, f.Message}, "\x00")
		j, ok := first[k]
		if !ok {
			first[k] = len(out)
			f.Channels = []string{f.Channel}
			out = append(out, f)
			continue
		}
		d := &out[j]
		if !slices.Contains(d.Channels, f.Channel) {
			d.Channels = append(d.Channels, f.Channel)
		}
		d.leaves = append(d.leaves, f.leaves...)
		d.inTree = d.inTree || f.inTree
	}
	for i := range out {
		f := &out[i]
		if len(f.Channels) > 1 {
			slices.Sort(f.Channels)
			f.Channel = f.Channels[0]
		} else {
			f.Channels = nil
		}
	}
	return out
}
