// Package crddiff is the action of `opm crd diff OLD NEW`: the CRD
// changes of an upgrade from one bundle (or CRD file) to another, each
// with its rule and who refuses it (pkg/crd), for operator authors before
// a catalog is involved.
package crddiff

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/crd/crdsource"
	"github.com/opmkit/opm/pkg/render"
)

// Options name the two sides.
type Options struct {
	// Old and New are CRD manifest files, bundle directories or bundle
	// images.
	Old, New string
	// Registry configures pulls of bundle images.
	Registry render.RegistryOptions
}

// Result is the comparison.
type Result struct {
	Old, New string
	Report   *crd.BundleReport
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
	return &Result{Old: opts.Old, New: opts.New, Report: rep}, nil
}

// Unsafe reports whether some change is not safe.
func (r *Result) Unsafe() bool { return len(r.Report.Unsafe()) > 0 }

// ChangeJSON is one change in the -o json form.
type ChangeJSON struct {
	crd.Change
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// JSON is the -o json form.
type JSON struct {
	Old string `json:"old"`
	New string `json:"new"`
	// Safe is false when some change is not safe.
	Safe bool `json:"safe"`
	// RefusedBy lists who refuses the upgrade: "v1", "classic".
	RefusedBy []string     `json:"refusedBy"`
	Changes   []ChangeJSON `json:"changes"`
}

// JSON returns the -o json form: every change, safe ones included.
func (r *Result) JSON() JSON {
	out := JSON{Old: r.Old, New: r.New, Safe: !r.Unsafe(), RefusedBy: r.Report.Refused().List(), Changes: []ChangeJSON{}}
	for _, c := range r.Report.Changes {
		cj := ChangeJSON{Change: c}
		if f, l, col, ok := c.Pos(); ok {
			cj.File, cj.Line, cj.Column = f, l, col
		}
		out.Changes = append(out.Changes, cj)
	}
	return out
}

// WriteText writes the unsafe changes (and with all the safe ones), one a
// line, each with its position when known, then a verdict.
func (r *Result) WriteText(w io.Writer, all bool) error {
	unsafe := 0
	for _, c := range r.Report.Changes {
		if c.Safe && !all {
			continue
		}
		if !c.Safe {
			unsafe++
		}
		var b strings.Builder
		if f, l, col, ok := c.Pos(); ok {
			fmt.Fprintf(&b, "%s:%d:%d: ", f, l, col)
		}
		b.WriteString(c.Rule + ": CRD " + c.CRD)
		if c.Version != "" {
			b.WriteString(", version " + c.Version)
		}
		b.WriteString(": " + c.Message)
		switch {
		case c.Refused != 0:
			b.WriteString(" (refused by " + c.Refused.String() + ")")
		case !c.Safe:
			b.WriteString(" (neither OLM refuses it)")
		default:
			b.WriteString(" (safe)")
		}
		if _, err := fmt.Fprintln(w, b.String()); err != nil {
			return err
		}
	}
	var err error
	switch ref := r.Report.Refused(); {
	case unsafe == 0:
		_, err = fmt.Fprintf(w, "Safe: no change from %s to %s is refused or loses data.\n", r.Report.From, r.Report.To)
	case ref == 0:
		_, err = fmt.Fprintf(w, "Unsafe: %d %s; neither OLM refuses the upgrade from %s to %s.\n", unsafe, plural(unsafe), r.Report.From, r.Report.To)
	default:
		_, err = fmt.Fprintf(w, "Unsafe: %d %s; %s %s the upgrade from %s to %s.\n", unsafe, plural(unsafe), ref, verb(ref), r.Report.From, r.Report.To)
	}
	return err
}

func plural(n int) string {
	if n == 1 {
		return "unsafe change"
	}
	return "unsafe changes"
}

func verb(r crd.Refusal) string {
	if r == crd.RefusedByV1|crd.RefusedByClassic {
		return "refuse"
	}
	return "refuses"
}
