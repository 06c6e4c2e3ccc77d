// Package crddiff is the action of `opm crd diff OLD NEW`: the CRD
// changes of an upgrade from one bundle (or CRD file) to another, each
// with its rule and who refuses it (pkg/crd), for operator authors before
// a catalog is involved.
package crddiff

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/crd/crdsource"
	"github.com/opmkit/opm/pkg/render"
)

// Options name the two sides, and what the verdict is about.
type Options struct {
	// Old and New are CRD manifest files, bundle directories or bundle
	// images.
	Old, New string
	// Registry configures pulls of bundle images.
	Registry render.RegistryOptions
	// OLM is the OLM the check is aimed at (crd.ParseOLM; 0: both): a
	// change only the other one refuses is a warning, which does not fail
	// the upgrade unless its rule is in WarnAsError.
	OLM crd.Refusal
	// Ignore drops the changes of these rules (crd.SelectRules).
	Ignore map[string]bool
	// WarnAsError makes the warnings of these rules fail the upgrade.
	WarnAsError map[string]bool
}

// Result is the comparison.
type Result struct {
	Old, New string
	// Report holds the changes, those of ignored rules left out.
	Report *crd.BundleReport
	// OLM is the OLM the verdict is about (both when 0 was asked).
	OLM crd.Refusal
	// Ignored counts the changes of ignored rules.
	Ignored     int
	warnAsError map[string]bool
}

// Run loads both sides and compares them.
func Run(ctx context.Context, opts Options) (*Result, error) {
	old, err := crdsource.Load(ctx, opts.Old, opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("old: %w", err)
	}
	cur, err := crdsource.Load(ctx, opts.New, opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	rep, err := crd.CompareBundles(ctx, old, cur)
	if err != nil {
		return nil, err
	}
	res := &Result{Old: opts.Old, New: opts.New, Report: rep, OLM: opts.OLM, warnAsError: opts.WarnAsError}
	if res.OLM == 0 {
		res.OLM = crd.RefusedByV1 | crd.RefusedByClassic
	}
	kept := rep.Changes[:0]
	for _, c := range rep.Changes {
		if opts.Ignore[c.Rule] {
			res.Ignored++
			continue
		}
		kept = append(kept, c)
	}
	rep.Changes = kept
	return res, nil
}

// Level is what a change means for the verdict.
type Level int

// Levels of changes.
const (
	// Safe changes lose nothing and neither OLM refuses them.
	Safe Level = iota
	// Warning is a change only the OLM the check is not aimed at refuses.
	Warning
	// Unsafe changes fail the upgrade: refused by the OLM the check is
	// aimed at, losing data (crd-removed), or not checked.
	Unsafe
)

// Level returns what the change means for the verdict.
func (r *Result) Level(c crd.Change) Level {
	switch {
	case c.Safe:
		return Safe
	case c.Refused != 0 && c.Refused&r.OLM == 0 && !r.warnAsError[c.Rule]:
		return Warning
	}
	return Unsafe
}

// Unsafe reports whether some change fails the upgrade.
func (r *Result) Unsafe() bool {
	for _, c := range r.Report.Changes {
		if r.Level(c) == Unsafe {
			return true
		}
	}
	return false
}

// ChangeJSON is one change in the -o json form.
type ChangeJSON struct {
	crd.Change
	// Warning marks a change only the OLM the check is not aimed at
	// refuses (see Options.OLM).
	Warning bool `json:"warning,omitempty"`
	// Hint says how to fix it (unsafe rules).
	Hint   string `json:"hint,omitempty"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// JSON is the -o json form.
type JSON struct {
	Old string `json:"old"`
	New string `json:"new"`
	// OLM is the OLM the verdict is about: "both", "v1" or "classic".
	OLM string `json:"olm"`
	// Safe is false when some change fails the upgrade.
	Safe bool `json:"safe"`
	// RefusedBy lists who refuses the upgrade: "v1", "classic".
	RefusedBy []string     `json:"refusedBy"`
	Changes   []ChangeJSON `json:"changes"`
	// Omitted counts the safe changes not listed (past crd.MaxChanges in
	// one CRD), Ignored the changes of --ignore'd rules.
	Omitted int `json:"omitted,omitempty"`
	Ignored int `json:"ignored,omitempty"`
}

// OLMName names an OLM choice as ParseOLM reads it.
func OLMName(r crd.Refusal) string {
	switch r {
	case crd.RefusedByV1:
		return "v1"
	case crd.RefusedByClassic:
		return "classic"
	}
	return "both"
}

// JSON returns the -o json form: every change, safe ones included.
func (r *Result) JSON() JSON {
	out := JSON{Old: r.Old, New: r.New, OLM: OLMName(r.OLM), Safe: !r.Unsafe(), RefusedBy: r.Report.Refused().List(),
		Changes: []ChangeJSON{}, Omitted: r.Report.Omitted, Ignored: r.Ignored}
	for _, c := range r.Report.Changes {
		info, _ := crd.Rule(c.Rule)
		cj := ChangeJSON{Change: c, Warning: r.Level(c) == Warning, Hint: info.Hint}
		if f, l, col, ok := c.Pos(); ok {
			cj.File, cj.Line, cj.Column = f, l, col
		}
		out.Changes = append(out.Changes, cj)
	}
	return out
}

// WriteText writes the changes that fail the upgrade and the warnings
// (and with all the safe ones), each with its position when known, lines
// wrapped at textWidth, the rule's hint under the first change of each
// rule; then a verdict.
func (r *Result) WriteText(w io.Writer, all bool) error {
	bw := bufio.NewWriter(w)
	unsafe, warnings, notChecked := 0, 0, 0
	var refused crd.Refusal
	hinted := map[string]bool{}
	for _, c := range r.Report.Changes {
		lv := r.Level(c)
		info, _ := crd.Rule(c.Rule)
		switch {
		case lv == Unsafe:
			unsafe++
			refused |= c.Refused
			if info.NotChecked {
				notChecked++
			}
		case lv == Warning:
			warnings++
		case !all:
			continue
		}
		var b strings.Builder
		if f, l, col, ok := c.Pos(); ok {
			fmt.Fprintf(&b, "%s:%d:%d: ", f, l, col)
		}
		b.WriteString(c.Rule)
		if lv == Warning {
			b.WriteString(" (warning)")
		}
		b.WriteString(": ")
		if c.CRD != "" {
			b.WriteString("CRD " + c.CRD)
			if c.Version != "" {
				b.WriteString(", version " + c.Version)
			}
			b.WriteString(": ")
		}
		b.WriteString(c.Message)
		switch {
		case lv == Warning:
			fmt.Fprintf(&b, " (refused by %s only; the check is aimed at %s)", c.Refused, r.OLM)
		case info.NotChecked:
			b.WriteString(" (not checked)")
		case c.Refused != 0:
			b.WriteString(" (refused by " + c.Refused.String() + ")")
		case !c.Safe:
			b.WriteString(" (neither OLM refuses it)")
		default:
			b.WriteString(" (safe)")
		}
		bw.WriteString(wrap(b.String(), "    ") + "\n")
		if lv != Safe && info.Hint != "" && !hinted[c.Rule] {
			hinted[c.Rule] = true
			bw.WriteString(wrap("    help: "+info.Hint, "          ") + "\n")
		}
	}
	if all && r.Report.Omitted > 0 {
		fmt.Fprintf(bw, "... and %d more safe changes, not listed (more than %d in one CRD)\n", r.Report.Omitted, crd.MaxChanges)
	}
	from, to := r.Report.From, r.Report.To
	var verdict string
	switch {
	case unsafe == 0:
		verdict = fmt.Sprintf("Safe: no change from %s to %s is refused or loses data", from, to)
		if r.OLM != crd.RefusedByV1|crd.RefusedByClassic {
			verdict = fmt.Sprintf("Safe for %s: no change from %s to %s is refused by it or loses data", r.OLM, from, to)
		}
	case notChecked == unsafe:
		verdict = fmt.Sprintf("Not checked: %d %s could not run; the upgrade from %s to %s is not known to be safe", unsafe, plural(unsafe, "check", "checks"), from, to)
	case refused == 0:
		verdict = fmt.Sprintf("Unsafe: %d %s; neither OLM refuses the upgrade from %s to %s", unsafe, plural(unsafe, "unsafe change", "unsafe changes"), from, to)
	default:
		verdict = fmt.Sprintf("Unsafe: %d %s; %s %s the upgrade from %s to %s", unsafe, plural(unsafe, "unsafe change", "unsafe changes"), refused, verb(refused), from, to)
	}
	if notChecked > 0 && notChecked < unsafe {
		verdict += fmt.Sprintf(" (and %d %s could not run)", notChecked, plural(notChecked, "check", "checks"))
	}
	verdict += "."
	if warnings > 0 {
		verdict += fmt.Sprintf(" %d %s: refused by %s only.", warnings, plural(warnings, "warning", "warnings"), crd.Refusal(crd.RefusedByV1|crd.RefusedByClassic)&^r.OLM)
	}
	if r.Ignored > 0 {
		verdict += fmt.Sprintf(" %d %s of ignored rules not shown.", r.Ignored, plural(r.Ignored, "change", "changes"))
	}
	bw.WriteString(wrap(verdict, "    ") + "\n")
	return bw.Flush()
}

// textWidth is the width text lines are wrapped at.
const textWidth = 100

// wrap breaks s into lines of at most textWidth bytes at spaces, the
// lines after the first indented by indent; a word longer than a line (a
// long field path or value) is broken after a dot, comma or slash where
// it has one.
func wrap(s, indent string) string {
	if len(s) <= textWidth {
		return s
	}
	var b strings.Builder
	lineLen := 0
	first := true
	for _, word := range strings.Split(s, " ") {
		for _, piece := range breakWord(word, textWidth-len(indent)) {
			switch {
			case first:
				first = false
			case lineLen+1+len(piece.text) <= textWidth && piece.space:
				b.WriteByte(' ')
				lineLen++
			case lineLen+len(piece.text) <= textWidth && !piece.space:
			default:
				b.WriteString("\n" + indent)
				lineLen = len(indent)
			}
			b.WriteString(piece.text)
			lineLen += len(piece.text)
		}
	}
	return b.String()
}

type piece struct {
	text string
	// space is set when a space comes before the piece (its word's
	// first piece).
	space bool
}

// breakWord cuts word into pieces of at most max bytes, after a '.', ',', '/'
// or '|' when the piece has one in its second half, on a character
// boundary otherwise.
func breakWord(word string, max int) []piece {
	out := []piece{}
	space := true
	for len(word) > max {
		cut := strings.LastIndexAny(word[:max], ".,/|")
		if cut < max/2 {
			cut = max
			for cut > 0 && !utf8.RuneStart(word[cut]) {
				cut--
			}
		} else {
			cut++ // keep the separator on this line
		}
		out = append(out, piece{word[:cut], space})
		word, space = word[cut:], false
	}
	return append(out, piece{word, space})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func verb(r crd.Refusal) string {
	if r == crd.RefusedByV1|crd.RefusedByClassic {
		return "refuse"
	}
	return "refuses"
}
