package validate

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Rule options take globs and former codes (issue 34): a glob selects the
// rules it matches, one that matches none is a usage error as an unknown
// code is, and a code named exactly wins over a glob of the other option.
func TestSelectionGlobs(t *testing.T) {
	s, err := newSelection(Options{Ignore: []string{"crd-*"}, StrictRules: []string{"crd-field-removed", "skiprange-*"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{CRDCode("type-changed"), CodeCRDUpgradesNotChecked, CRDCode("limit-reached")} {
		if !s.ignore[c] || s.strict[c] {
			t.Errorf("%s: ignored %v, strict %v", c, s.ignore[c], s.strict[c])
		}
	}
	if s.ignore["crd-field-removed"] || !s.strict["crd-field-removed"] || !s.strict[CodeSkipRangeVPrefix] || !s.strict[CodeSkipRangeCoversNone] {
		t.Errorf("selection = %+v", s)
	}

	// a former code is its rule
	s, err = newSelection(Options{Ignore: []string{"crd-unhandled-change"}})
	if err != nil || !s.ignore["crd-unclassified-change"] {
		t.Errorf("alias: %+v, %v", s, err)
	}

	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{Ignore: []string{"crd-nope-*"}}, `ignore: "crd-nope-*" matches no rule; docs/validate.md lists the rules`},
		{Options{StrictRules: []string{"[a-"}}, `strict: "[a-": syntax error in pattern`},
		{Options{Ignore: []string{"channel-*"}}, `ignore: "channel-*" matches only rules that cannot be ignored`},
		{Options{Ignore: []string{"crd-field-*"}, StrictRules: []string{"crd-*-removed"}}, `rule "crd-field-removed" is both ignored (crd-field-*) and made an error (crd-*-removed)`},
		{Options{Ignore: []string{"crd-unhandled-change"}, StrictRules: []string{"crd-unclassified-change"}}, `rule "crd-unclassified-change" is both ignored and made an error`},
	} {
		_, err := newSelection(tt.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: error = %v, want %q", tt.opts, err, tt.want)
		}
	}
	if err := CheckRules("--ignore", []string{"crd-*", "dependencies-undecided", "crd-unhandled-change"}); err != nil {
		t.Error(err)
	}
}

// A baseline written before a rule was renamed still matches its findings.
func TestBaselineFormerCode(t *testing.T) {
	b, err := ReadBaseline(strings.NewReader(`{"opmValidateBaseline": 1, "findings": [{"code": "crd-unhandled-change", "package": "p", "bundle": "b", "element": "e"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := Finding{Code: "crd-unclassified-change", Package: "p", Bundle: "b", key: "e"}
	if b.counts[f.Key()] != 1 {
		t.Errorf("counts = %v, key %q", b.counts, f.Key())
	}
	if !slices.ContainsFunc(b.entries, func(e baselineEntry) bool { return e.Code == "crd-unclassified-change" }) {
		t.Errorf("entries = %+v", b.entries)
	}
}
