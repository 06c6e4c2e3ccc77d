// Package validate checks file-based catalogs as `opm validate` does: every
// rule upstream opm enforces (through pkg/model), the CUE schemas of
// package schemas applied to every blob, and checks upstream lacks. Each
// problem is a [Finding] with a severity, a stable rule code, upstream's
// message, the file and line of the blob and the package, channel and
// bundle it concerns. Writers render a [Result] as text, JSON, YAML, GitHub
// Actions annotations or SARIF.
package validate

import (
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/olmv1"
)

// Severity is how bad a finding is.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem found in a catalog.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	// File, Line and Column are where the problem is: the element of the
	// blob named by Path when the catalog's source could be read again,
	// else the start of the blob.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	// Channels lists every channel the same problem was found in, when
	// there are several (Channel is the first).
	Channels []string `json:"channels,omitempty"`
	Bundle   string   `json:"bundle,omitempty"`
	// Path is the element of the blob the finding is about, such as
	// "entries[3].skips[1]" or "properties[0].value.version"; empty for
	// the blob as a whole.
	Path string `json:"path,omitempty"`
	// Help says how to fix the problem, when there is more to say than
	// the message.
	Help string `json:"help,omitempty"`

	// inTree marks findings that are leaves of Result.Tree, and leaves
	// are those leaves (their positions follow the finding's).
	inTree bool
	leaves []*model.RuleError
	// at is the blob while its group is checked, ref its index in the
	// source (-1: none) once it is done.
	at  blobID
	ref int
	// key identifies the problem across unrelated edits (see Key).
	key string
}

// Pos returns the finding's position.
func (f Finding) Pos() declcfg.Position {
	return declcfg.Position{File: f.File, Line: f.Line, Column: f.Column}
}

// Result is the outcome of validating one catalog.
type Result struct {
	// Passed is the verdict: no finding of severity error.
	Passed bool
	// Message is upstream opm's error text when upstream would fail the
	// catalog (the first conversion error, or the model validation tree),
	// or the messages of the findings that fail it otherwise (--strict).
	// It is empty when Passed.
	Message string
	// Tree is the model validation error when the catalog fails it; text
	// output renders it with positions.
	Tree *model.ValidationError
	// Findings are every problem found, sorted by file, line, column,
	// code and message (findings without a file last).
	Findings []Finding
	// Ignored and Baselined count the findings left out by the Ignore
	// and Baseline options.
	Ignored, Baselined int
	// OLMv1 counts what OLM v1 installs, when Options.OLMv1 was set.
	OLMv1 *olmv1.Summary
	// Gate says what the release gate checked, when Options.Gate was set.
	Gate *GateSummary

	// upstream is upstream's message when upstream fails the catalog.
	upstream string
}

// Counts returns the number of errors and warnings.
func (r *Result) Counts() (errs, warnings int) {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if (a.File == "") != (b.File == "") {
			return a.File != ""
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if a.Message != b.Message {
			return a.Message < b.Message
		}
		if a.Channel != b.Channel {
			return a.Channel < b.Channel
		}
		return a.Bundle < b.Bundle
	})
}
