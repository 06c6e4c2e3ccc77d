// Package catalogedit is the action behind `opm catalog promote`,
// `set-default-channel`, `add-bundle`, `remove-bundle`, `prune` and
// `deprecate`: each takes its Options and returns a Result.
//
// The six operations are one package rather than six because they are one
// pipeline with a different middle step: open the catalog, refuse it if it
// does not validate (unless Force), apply the edit (pkg/catalogedit),
// render the changed files, validate the result, then write the files
// atomically or, with DryRun, return a unified diff. Six packages would
// each repeat that pipeline and re-export the same Result.
package catalogedit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ce "github.com/opmkit/opm/pkg/catalogedit"
)

// Common are the options every edit takes.
type Common struct {
	// Catalog is the FBC directory, FBC file or basic template to edit.
	Catalog string
	// DryRun computes the edit and its diff without writing.
	DryRun bool
	// Force edits a catalog that does not validate; the edit must then
	// add no problem of its own.
	Force bool
	// LockWait is how long to wait for another edit of the catalog to
	// finish (0: catalogedit.DefaultLockWait; negative: do not wait).
	LockWait time.Duration
}

// Result is what an edit changed.
type Result struct {
	Operation string        `json:"operation"`
	Catalog   string        `json:"catalog"`
	DryRun    bool          `json:"dryRun"`
	Written   bool          `json:"written"`
	Changes   []ce.Change   `json:"changes"`
	Files     []File        `json:"files"`
	LostPaths []ce.LostPath `json:"lostPaths"`
	// KeptPaths are the removed bundles whose installs still upgrade
	// (remove-bundle and prune).
	KeptPaths []ce.KeptPath `json:"keptPaths,omitempty"`
	// Notes say what the edit chose for the user (add-bundle: the
	// channels its annotations name).
	Notes []string `json:"notes,omitempty"`
	// Problems are the errors the catalog had before the edit (only
	// with Force).
	Problems []ce.Problem `json:"problemsBefore,omitempty"`
	// UnsafeCRDUpgrades are the new upgrade edges with unsafe CRD changes
	// the edit made anyway (promote and add-bundle with Force).
	UnsafeCRDUpgrades []CRDEdge `json:"unsafeCRDUpgrades,omitempty"`
}

// File is one file the edit changes.
type File struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	// Diff is the unified diff of the change (dry runs).
	Diff string `json:"diff,omitempty"`
}

// Diff returns the diffs of every file, in order.
func (r *Result) Diff() string {
	var b strings.Builder
	for _, f := range r.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}

// InvalidError is returned for a catalog that does not validate before
// the edit (without Force), or would not after it.
type InvalidError struct {
	Catalog  string
	Before   bool
	Problems []ce.Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	if e.Before {
		fmt.Fprintf(&b, "refusing to edit %s: it does not validate (fix it first, or use --force to edit it anyway):", e.Catalog)
	} else {
		fmt.Fprintf(&b, "refusing the edit: %s would not validate afterwards:", e.Catalog)
	}
	const maxShown = 20
	for i, p := range e.Problems {
		if i == maxShown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-maxShown)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// edit is the middle step of an operation: it changes the catalog and
// returns the upgrade paths the change loses, if any.
type edit func(ctx context.Context, c *ce.Catalog) ([]ce.LostPath, error)

// run opens, checks, edits, checks again and writes (or diffs).
func run(ctx context.Context, op string, opts Common, do edit) (*Result, error) {
	return runChecked(ctx, op, opts, do, nil)
}

// runChecked is run; with crds set, the upgrade edges the edit creates are
// checked for unsafe CRD changes (crdcheck.go).
func runChecked(ctx context.Context, op string, opts Common, do edit, crds *crdCheck) (*Result, error) {
	if opts.Catalog == "" {
		opts.Catalog = "."
	}
	// The whole read-check-write runs under the catalog's lock (shared
	// for a dry run), so that two edits at once cannot lose one.
	wait := opts.LockWait
	switch {
	case wait == 0:
		wait = ce.DefaultLockWait
	case wait < 0:
		wait = 0
	}
	unlock, err := ce.Lock(ctx, opts.Catalog, !opts.DryRun, wait)
	if err != nil {
		var le *ce.LockedError
		if errors.As(err, &le) || ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	defer unlock()
	cat, err := ce.Open(ctx, opts.Catalog)
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	defer cat.Close()
	before, err := cat.Check(ctx, cat.Config)
	if err != nil {
		return nil, err
	}
	res := &Result{Operation: op, Catalog: opts.Catalog, DryRun: opts.DryRun, Changes: []ce.Change{}, Files: []File{}, LostPaths: []ce.LostPath{}}
	if len(before) > 0 {
		if !opts.Force {
			return nil, &InvalidError{Catalog: opts.Catalog, Before: true, Problems: before}
		}
		res.Problems = before
	}
	lost, err := do(ctx, cat)
	if err != nil {
		return nil, err
	}
	if lost != nil {
		res.LostPaths = lost
	}
	res.Changes = append(res.Changes, cat.Changes()...)
	res.KeptPaths = cat.KeptPaths()
	changes, err := cat.Render()
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return res, nil
	}
	cfg, err := cat.ResultConfig(changes)
	if err != nil {
		return nil, err
	}
	if !cat.Template {
		// the other packages are as they were validated above
		cfg = ce.OnlyPackages(cfg, cat.TouchedPackages())
	}
	after, err := cat.Check(ctx, cfg)
	if err != nil {
		return nil, err
	}
	bad := after
	if opts.Force {
		bad = ce.NewProblems(before, after)
	}
	if len(bad) > 0 {
		return nil, &InvalidError{Catalog: opts.Catalog, Problems: bad}
	}
	if crds != nil && !cat.Template {
		unsafe, err := crds.newUnsafeEdges(ctx, cat.Config, cfg, cat.TouchedPackages())
		if err != nil {
			return nil, err
		}
		if len(unsafe) > 0 && !opts.Force {
			return nil, &UnsafeCRDError{Catalog: opts.Catalog, Edges: unsafe}
		}
		res.UnsafeCRDUpgrades = unsafe
	}
	for _, ch := range changes {
		f := File{Path: ch.Display, Action: ch.Action}
		if opts.DryRun {
			f.Diff = ce.UnifiedDiff(ch)
		}
		res.Files = append(res.Files, f)
	}
	if opts.DryRun {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cat.Write(changes); err != nil {
		return nil, err
	}
	res.Written = true
	return res, nil
}

// IsInvalid reports whether err is a validation refusal.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}
