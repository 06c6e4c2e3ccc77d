// Package bundlevalidate is the action of `opm bundle validate` and `opm
// alpha bundle validate`: it finds the bundles its references name (a
// bundle directory, a directory of bundles in the community layout
// operators/<package>/<version>/, a bundle image), loads each once
// (pkg/bundle/manifest), validates it (pkg/bundlevalidate) several at a
// time, and hands back one report per bundle, in order. Pulling images
// is this package's job; the validators pull nothing.
package bundlevalidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/bundle/manifest"
	bv "github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/validate"
)

// Options are what a validation is given.
type Options struct {
	// Refs are bundle directories, directories holding bundles (found
	// down to MaxDepth levels: operators/<package>/<version>/), or bundle
	// images (a registry reference, oci:DIR, oci-archive:FILE,
	// docker-archive:FILE).
	Refs []string
	// Registry configures image pulls (bundle images and, for the
	// multiarch validator, the images a CSV names).
	Registry render.RegistryOptions
	// Validate are the validator options (Dir is set per bundle).
	Validate bv.Options
	// External are operator-sdk's external validators
	// (--alpha-select-external): executables run with the bundle
	// directory as their argument, printing operator-framework/api's
	// ManifestResult JSON.
	External []string
	// OLMv1, when set, also checks each bundle against OLM v1's install
	// rules (pkg/olmv1) with these feature gates: refusals are errors,
	// the rest warnings.
	OLMv1 *olmv1.Gates
	// Positions locates every finding in its file (not needed for the
	// json-alpha1 form).
	Positions bool
	// Concurrency is how many bundles are validated at once (default:
	// GOMAXPROCS).
	Concurrency int
	// Stderr receives the external validators' standard error (discarded
	// when nil).
	Stderr io.Writer
	// Baseline is a baseline file (opm validate's format): the findings
	// it records are not reported.
	Baseline string
	// WriteBaseline, when set, is where today's findings are recorded
	// (atomically); they are then accepted, as with Baseline.
	WriteBaseline string
}

// MaxDepth is how deep a directory of bundles is searched.
const MaxDepth = 6

// Result is what Run found.
type Result struct {
	// Reports are one per bundle, in the order of Refs (bundles found in a
	// directory in path order).
	Reports []*bv.Report
	// Findings are the reports' findings for opm validate's writers, each
	// file named as it is reached from the working directory (DIR/manifests/x.yaml,
	// or IMAGE:manifests/x.yaml), baselines applied; set when
	// opts.Positions is.
	Findings *validate.Result
	// Written is the number of findings recorded in WriteBaseline.
	Written int
}

// Passed reports whether no bundle has an error (after baselines).
func (r *Result) Passed() bool {
	if r.Findings != nil {
		return r.Findings.Passed
	}
	for _, rep := range r.Reports {
		if !rep.Passed() {
			return false
		}
	}
	return true
}

// target is one bundle to validate.
type target struct {
	ref   string // as given, or the bundle's path under a directory given
	dir   string // a directory on disk ("" for an image)
	image bool
}

// Run validates the bundles opts.Refs name. A bundle that fails to
// validate is a report that did not pass; a bundle that cannot be read at
// all (an image that cannot be pulled, a directory refused by safefs) is
// the error when it is the only one, and a report with one load-error
// finding among several.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if len(opts.Refs) == 0 {
		return nil, action.Usagef("an image tag or directory is a required argument")
	}
	var baseline *validate.Baseline
	if opts.Baseline != "" {
		if !opts.Positions {
			return nil, action.Usagef("baselines need findings with positions (not -o json-alpha1)")
		}
		b, err := validate.ReadBaselineFile(opts.Baseline)
		if err != nil {
			return nil, err
		}
		baseline = b
	}
	var targets []target
	for _, ref := range opts.Refs {
		ts, err := expand(ref)
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	var session *image.Session
	for _, t := range targets {
		if t.image {
			session = image.NewSession(opts.Registry.ImageOptions()...)
			defer session.Close()
			break
		}
	}
	if opts.Validate.Inspect == nil {
		if session == nil {
			session = image.NewSession(opts.Registry.ImageOptions()...)
			defer session.Close()
		}
		opts.Validate.Inspect = Inspector(session)
	}
	n := opts.Concurrency
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, len(targets))
	reports := make([]*bv.Report, len(targets))
	errs := make([]error, len(targets))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				reports[i], errs[i] = validateOne(ctx, targets[i], opts, session)
			}
		}()
	}
	for i := range targets {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{}
	for i, t := range targets {
		if errs[i] != nil {
			if len(targets) == 1 {
				return nil, errs[i]
			}
			reports[i] = bv.LoadErrorReport(t.ref, errs[i])
		}
		res.Reports = append(res.Reports, reports[i])
	}
	if !opts.Positions {
		return res, nil
	}
	res.Findings = validate.BundleResult(res.Reports, func(r *bv.Report) string { return r.FilePrefix })
	if opts.WriteBaseline != "" {
		b := res.Findings.Baseline()
		if err := b.WriteFile(opts.WriteBaseline); err != nil {
			return nil, err
		}
		res.Written = b.Len()
		res.Findings.ApplyBaseline(b)
	}
	if baseline != nil {
		res.Findings.ApplyBaseline(baseline)
	}
	return res, nil
}

// expand turns a reference into the bundles it names.
func expand(ref string) ([]target, error) {
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
	case err == nil:
		return nil, fmt.Errorf("%s: not a directory (a bundle is a directory with manifests/ and metadata/, or an image)", ref)
	case errors.Is(err, fs.ErrNotExist):
		return []target{{ref: ref, image: true}}, nil
	default:
		return nil, err
	}
	if isBundleDir(ref) {
		return []target{{ref: ref, dir: ref}}, nil
	}
	var found []target
	root := filepath.Clean(ref)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && strings.Count(rel, string(filepath.Separator))+1 > MaxDepth {
			return filepath.SkipDir
		}
		if p != root && isBundleDir(p) {
			found = append(found, target{ref: p, dir: p})
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		// Not a bundle, and none below: validate it as one, which says why.
		return []target{{ref: ref, dir: ref}}, nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].ref < found[j].ref })
	return found, nil
}

// isBundleDir reports a directory with manifests/ or metadata/ (the
// validators say what is missing).
func isBundleDir(dir string) bool {
	for _, sub := range []string{"manifests", "metadata"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// validateOne loads and validates one bundle.
func validateOne(ctx context.Context, t target, opts Options, session *image.Session) (*bv.Report, error) {
	vopts := opts.Validate
	var (
		b   *manifest.Bundle
		dir = t.dir
		err error
	)
	if t.image {
		tmp, err := os.MkdirTemp("", "opm-bundle-validate-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := pull(ctx, session, t.ref, tmp); err != nil {
			return nil, err
		}
		dir = tmp
		if b, err = manifest.LoadDir(ctx, tmp); err != nil {
			return nil, fmt.Errorf("%s: %w", t.ref, err)
		}
		b.Source = t.ref
		vopts.Dir = t.ref
	} else {
		if b, err = manifest.LoadDir(ctx, t.dir); err != nil {
			return nil, err
		}
		vopts.Dir = relWd(t.dir)
	}
	rep, err := bv.Validate(ctx, b, vopts)
	if err != nil {
		return nil, err
	}
	if t.image {
		rep.FilePrefix = t.ref + ":"
	} else {
		rep.FilePrefix = filepath.ToSlash(filepath.Clean(t.dir)) + "/"
	}
	if opts.OLMv1 != nil {
		fs, err := olmv1Findings(ctx, dir, rep.Name, *opts.OLMv1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.ref, err)
		}
		rep.Add(fs...)
	}
	for _, e := range opts.External {
		fs, err := runExternal(ctx, e, dir, opts.Stderr)
		if err != nil {
			return nil, fmt.Errorf("external validator %s: %w", e, err)
		}
		rep.Add(fs...)
	}
	if opts.Positions {
		rep.Locate()
	}
	rep.Release()
	return rep, nil
}

// olmv1Checker names the findings of OLM v1's rules.
const olmv1Checker = "olm-v1"

// olmv1Findings checks the bundle directory dir (name is its CSV's) as
// OLM v1 reads a bundle image: each issue at its file, line and column,
// refusals as errors, the rest (installed given a config or a
// certificate provider, or relying on OLM classic) as warnings.
func olmv1Findings(ctx context.Context, dir, name string, gates olmv1.Gates) ([]bv.Finding, error) {
	b, err := olmv1.LoadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	v := olmv1.Check(b, gates)
	out := make([]bv.Finding, 0, len(v.Issues))
	for _, is := range v.Issues {
		sev := bv.SeverityWarning
		if is.Level() == olmv1.Refused {
			sev = bv.SeverityError
		}
		var pos declcfg.Position
		if src, ok := b.Position(is); ok {
			pos = declcfg.Position{File: src.File, Line: src.Line, Column: src.Column}
		}
		msg := "OLM v1: " + is.Message
		if pos.File == "" && is.Object >= 0 {
			msg += " (" + b.Describe(is.Object) + ")"
		}
		f := bv.CheckerFinding(sev, olmv1Checker, is.Code, name, msg, pos)
		f.Path = is.Path
		f.Help = is.HelpText()
		out = append(out, f)
	}
	return out, nil
}

// pull extracts a bundle image's manifests/ and metadata/ into dir.
func pull(ctx context.Context, session *image.Session, ref, dir string) error {
	img, err := session.Open(ctx, ref)
	if err != nil {
		return err
	}
	defer img.Close()
	if _, ok := img.Labels()[render.BundlePackageLabel]; !ok {
		return fmt.Errorf("%s: not a bundle image (no %s label)", ref, render.BundlePackageLabel)
	}
	return img.Extract(ctx, dir, "manifests", "metadata")
}

// relWd names dir relative to the working directory, as operator-sdk
// names a bundle directory in its messages.
func relWd(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil {
		return dir
	}
	return rel
}

// Inspector reads the platforms of images through session, for the
// multiarch validator: those of an index's entries, or the config's of a
// single image. Each image is read once.
func Inspector(session *image.Session) func(ctx context.Context, ref string) ([]bv.Platform, error) {
	var mu sync.Mutex
	cache := map[string][]bv.Platform{}
	return func(ctx context.Context, ref string) ([]bv.Platform, error) {
		mu.Lock()
		p, ok := cache[ref]
		mu.Unlock()
		if ok {
			return p, nil
		}
		base, err := session.OpenBase(ctx, ref, nil)
		if err != nil {
			return nil, err
		}
		defer base.Close()
		for _, im := range base.Images {
			p = append(p, bv.Platform{OS: im.Platform.OS, Architecture: im.Platform.Architecture})
		}
		mu.Lock()
		cache[ref] = p
		mu.Unlock()
		return p, nil
	}
}

// externalResult is operator-framework/api's ManifestResult as external
// validators print it.
type externalResult struct {
	Name     string
	Errors   []externalError
	Warnings []externalError
}

type externalError struct {
	Type     string
	Level    string
	Field    string
	BadValue any
	Detail   string
}

// runExternal runs an external validator on dir.
func runExternal(ctx context.Context, entrypoint, dir string, stderr io.Writer) ([]bv.Finding, error) {
	cmd := exec.CommandContext(ctx, entrypoint, dir)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	var r externalResult
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode its result: %w", err)
	}
	var fs []bv.Finding
	for _, part := range []struct {
		sev  bv.Severity
		errs []externalError
	}{{bv.SeverityWarning, r.Warnings}, {bv.SeverityError, r.Errors}} {
		for _, e := range part.errs {
			fs = append(fs, bv.ExternalFinding(part.sev, entrypoint, e.Level, e.Field, e.BadValue, e.Detail))
		}
	}
	return fs, nil
}
