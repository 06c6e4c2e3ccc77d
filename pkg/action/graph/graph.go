// Package graph is the action of `opm graph show|successors|path|upgradeable`:
// queries over the upgrade graphs of a catalog under OLM classic and OLM v1
// semantics (pkg/graph), with their results in the shapes the command
// prints: JSON for scripts, text for people.
package graph

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/declcfg"
	gr "github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Options select the catalog and the part of it every query is about.
type Options struct {
	// Refs are FBC directories or catalog images, rendered together.
	Refs []string
	// Packages and Channels select what to look at (empty = the query's
	// default: see each query).
	Packages []string
	Channels []string
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
	// OLMv1, for Show, marks the bundles OLM v1 refuses under the feature
	// gates FeatureGates (operator-controller's --feature-gates form).
	OLMv1        bool
	FeatureGates []string
}

// load renders the references and builds their graph.
func load(ctx context.Context, opts Options) (*declcfg.DeclarativeConfig, *gr.Graph, error) {
	cfg, err := render.Render(ctx, render.Options{
		Refs:           opts.Refs,
		AllowedRefMask: render.RefDCDir | render.RefDCFile | render.RefDCImage,
		Registry:       opts.Registry,
	})
	if err != nil {
		return nil, nil, err
	}
	g, err := gr.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, g, nil
}

// ShowResult is the selected part of a catalog and of its graph.
type ShowResult struct {
	// Config holds the blobs of the selected packages and channels.
	Config *declcfg.DeclarativeConfig
	// Graph is the graph of the selected packages and channels.
	Graph *gr.Graph
	// OLMv1 marks the bundles OLM v1 refuses (Options.OLMv1).
	OLMv1 *OLMv1Marks
}

// Show selects the packages and channels to draw (default: all).
func Show(ctx context.Context, opts Options) (*ShowResult, error) {
	cfg, g, err := load(ctx, opts)
	if err != nil {
		return nil, err
	}
	sel, err := g.Select(opts.Packages, opts.Channels)
	if err != nil {
		return nil, err
	}
	// Every format draws every edge: refuse a channel with too many
	// before any is built.
	if err := sel.CheckEdges(gr.MaxEdges); err != nil {
		return nil, err
	}
	res := &ShowResult{Config: selectConfig(cfg, sel), Graph: sel}
	if opts.OLMv1 {
		if res.OLMv1, err = olmv1Marks(res.Config, opts.FeatureGates); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// JSON is the -o json form: every channel's entries, head, replaces chain,
// stranded entries, edges and problems (and olmV1, the marks).
func (r *ShowResult) JSON() any {
	if r.OLMv1 != nil {
		return markedJSON{GraphJSON: r.Graph.JSON(), OLMv1: r.OLMv1}
	}
	return r.Graph.JSON()
}

// WriteDOT writes the graphs as Graphviz DOT.
func (r *ShowResult) WriteDOT(w io.Writer) error {
	if r.OLMv1 == nil {
		return gr.WriteDOT(r.Graph, w)
	}
	var buf bytes.Buffer
	if err := gr.WriteDOT(r.Graph, &buf); err != nil {
		return err
	}
	return r.writeDOTMarks(w, buf.Bytes())
}

// WriteMermaid writes the same flowchart as `opm alpha render-graph`;
// warnings (ignored skipRanges) go to warnings.
func (r *ShowResult) WriteMermaid(w, warnings io.Writer) error {
	if r.OLMv1 == nil {
		return gr.WriteMermaid(r.Config, w, gr.MermaidOptions{Warnings: warnings})
	}
	var buf bytes.Buffer
	if err := gr.WriteMermaid(r.Config, &buf, gr.MermaidOptions{Warnings: warnings}); err != nil {
		return err
	}
	return r.writeMermaidMarks(w, buf.Bytes())
}

// selectConfig keeps the blobs of cfg that belong to the selected packages
// and channels.
func selectConfig(cfg *declcfg.DeclarativeConfig, sel *gr.Graph) *declcfg.DeclarativeConfig {
	keep := map[string]map[string]bool{}
	for _, p := range sel.Packages {
		keep[p.Name] = map[string]bool{}
		for _, c := range p.Channels {
			keep[p.Name][c.Name] = true
		}
	}
	out := &declcfg.DeclarativeConfig{}
	for _, c := range cfg.Channels {
		if keep[c.Package][c.Name] {
			out.Channels = append(out.Channels, c)
		}
	}
	for _, b := range cfg.Bundles {
		if keep[b.Package] != nil {
			out.Bundles = append(out.Bundles, b)
		}
	}
	for _, d := range cfg.Deprecations {
		if keep[d.Package] != nil {
			out.Deprecations = append(out.Deprecations, d)
		}
	}
	return out
}

// loadFrom loads the catalog and resolves the installed bundle (from: a
// version or bundle name; bundle: its name, for bundles the catalog lacks)
// in the one package a successors or path query is about.
func loadFrom(ctx context.Context, opts Options, from, bundle string) (*gr.PackageGraph, gr.Installed, error) {
	if from == "" && bundle == "" {
		return nil, gr.Installed{}, errNoFrom
	}
	_, g, err := load(ctx, opts)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	return resolveFrom(g, opts.Packages, from, bundle)
}

var errNoFrom = action.Usagef("give the installed bundle with --from VERSION, --from-bundle NAME, or both")

// resolveFrom resolves the installed bundle in the one package of g a
// query is about.
func resolveFrom(g *gr.Graph, packages []string, from, bundle string) (*gr.PackageGraph, gr.Installed, error) {
	if from == "" && bundle == "" {
		return nil, gr.Installed{}, errNoFrom
	}
	p, err := onePackage(g, packages)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	in, err := p.ResolveInstalled(from, bundle)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	return p, in, nil
}

// onePackage returns the package a successors or path query is about: the
// one named, or the catalog's only one.
func onePackage(g *gr.Graph, packages []string) (*gr.PackageGraph, error) {
	switch len(packages) {
	case 0:
		if len(g.Packages) == 1 {
			return g.Packages[0], nil
		}
		if len(g.Packages) == 0 {
			return nil, fmt.Errorf("the catalog has no packages")
		}
		return nil, action.Usagef("the catalog has %d packages; choose one with --package (packages: %s)", len(g.Packages), strings.Join(g.PackageNames(), ", "))
	case 1:
		p := g.Package(packages[0])
		if p == nil {
			return nil, g.UnknownPackage(packages[0])
		}
		return p, nil
	}
	return nil, action.Usagef("this query takes one --package, got %d", len(packages))
}

// SuccessorsOptions are the options of a successors query.
type SuccessorsOptions struct {
	Options
	// From is the installed version or bundle name.
	From string
	// FromBundle is the installed bundle's name, for a bundle the catalog
	// no longer has (with From its version). See
	// [gr.PackageGraph.ResolveInstalled].
	FromBundle string
}

// SuccessorsResult lists the direct successors of the installed bundle.
type SuccessorsResult struct {
	Package    string
	From       gr.Installed
	Successors []gr.Successor
	// V1Stays says why OLM v1 picks none of the successors ("" when it
	// picks one or there is none).
	V1Stays string
}

// Successors lists the channel entries (of Options.Channels, default all)
// that upgrade directly from opts.From, and which one each semantics
// picks.
func Successors(ctx context.Context, opts SuccessorsOptions) (*SuccessorsResult, error) {
	p, in, err := loadFrom(ctx, opts.Options, opts.From, opts.FromBundle)
	if err != nil {
		return nil, err
	}
	succ, err := p.Successors(in, opts.Channels)
	if err != nil {
		return nil, err
	}
	return &SuccessorsResult{Package: p.Name, From: in, Successors: succ, V1Stays: gr.V1Stays(in, succ)}, nil
}

// VersionJSON is a bundle (name, when known) and its version (when known).
type VersionJSON struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	// Release is the olm.package release, when the bundle has one.
	Release string `json:"release,omitempty"`
}

// InstalledJSON is the installed bundle: a VersionJSON, and whether its
// name was assumed (with the sentence that says so).
type InstalledJSON struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	Assumed bool   `json:"assumed,omitempty"`
	Note    string `json:"note,omitempty"`
}

func nodeJSON(n *gr.Node) VersionJSON {
	return VersionJSON{Name: n.Name, Version: n.VersionString(), Release: n.Release}
}

func installedJSON(in gr.Installed) InstalledJSON {
	v := InstalledJSON{Name: in.Name, Release: in.Release, Assumed: in.Assumed, Note: in.Note}
	if in.HasVersion {
		v.Version = in.Version.String()
	}
	return v
}

// EdgeJSON is an edge that allows an upgrade: its kind and, for
// skipRange, the range.
type EdgeJSON struct {
	Kind  gr.EdgeKind `json:"kind"`
	Range string      `json:"range,omitempty"`
}

func edgesJSON(edges []gr.Edge) []EdgeJSON {
	out := make([]EdgeJSON, len(edges))
	for i, e := range edges {
		out[i] = EdgeJSON{Kind: e.Kind, Range: e.Range}
	}
	return out
}

func edgesText(edges []gr.Edge) string {
	parts := make([]string, len(edges))
	for i, e := range edges {
		if e.Kind == gr.KindSkipRange {
			parts[i] = fmt.Sprintf("skipRange(%s)", e.Range)
		} else {
			parts[i] = string(e.Kind)
		}
	}
	return strings.Join(parts, ", ")
}

// SuccessorJSON is one successor in the -o json form.
type SuccessorJSON struct {
	Channel    string     `json:"channel"`
	Bundle     string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	Deprecated bool       `json:"deprecated"`
	Edges      []EdgeJSON `json:"edges"`
	// ChainIndex is the place on the replaces chain (0 = head); null when
	// the entry is not on it.
	ChainIndex *int `json:"chainIndex"`
	Classic    bool `json:"classic"`
	V1         bool `json:"v1"`
	Lower      bool `json:"lower"`
}

// SuccessorsJSON is the -o json form of a successors query.
type SuccessorsJSON struct {
	Package    string          `json:"package"`
	From       InstalledJSON   `json:"from"`
	Successors []SuccessorJSON `json:"successors"`
	// V1Stays says why OLM v1 picks none of the successors.
	V1Stays string `json:"v1Stays,omitempty"`
}

// JSON returns the -o json form.
func (r *SuccessorsResult) JSON() SuccessorsJSON {
	out := SuccessorsJSON{Package: r.Package, From: installedJSON(r.From), Successors: []SuccessorJSON{}, V1Stays: r.V1Stays}
	for _, s := range r.Successors {
		row := SuccessorJSON{Channel: s.Channel, Bundle: s.Node.Name, Version: s.Node.VersionString(), Deprecated: s.Node.Deprecated,
			Edges: edgesJSON(s.Edges), Classic: s.Classic, V1: s.V1, Lower: s.Lower}
		if s.ChainIndex >= 0 {
			i := s.ChainIndex
			row.ChainIndex = &i
		}
		out.Successors = append(out.Successors, row)
	}
	return out
}

// WriteText writes the successors as a table for people.
func (r *SuccessorsResult) WriteText(w io.Writer) error {
	if r.From.Note != "" {
		fmt.Fprintf(w, "Note: %s (give --from-bundle if it was named otherwise).\n", r.From.Note)
	}
	if len(r.Successors) == 0 {
		_, err := fmt.Fprintf(w, "No bundle of package %q upgrades from %s.\n", r.Package, r.From.Label())
		return err
	}
	fmt.Fprintf(w, "Successors of %s in package %q:\n", r.From.Label(), r.Package)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tBUNDLE\tVERSION\tEDGES\tCHAIN\tCLASSIC\tV1")
	for _, s := range r.Successors {
		chain := "-"
		switch {
		case s.ChainIndex == 0:
			chain = "head"
		case s.ChainIndex > 0:
			chain = fmt.Sprintf("head-%d", s.ChainIndex)
		}
		name := s.Node.Name
		if s.Node.Deprecated {
			name += " (deprecated)"
		}
		v1 := mark(s.V1)
		if s.Lower {
			v1 = "lower"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Channel, name, orDash(s.Node.VersionString()), edgesText(s.Edges), chain, mark(s.Classic), v1)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.V1Stays != "" {
		_, err := fmt.Fprintf(w, "OLM v1 picks none: it %s.\n", r.V1Stays)
		return err
	}
	return nil
}

func mark(b bool) string {
	if b {
		return "picked"
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PathOptions are the options of a path query.
type PathOptions struct {
	Options
	// From is the installed version or bundle name.
	From string
	// FromBundle is the installed bundle's name, for a bundle the catalog
	// no longer has (with From its version).
	FromBundle string
	// To is a version or bundle name to reach ("" = as far as the
	// semantics allows); it cannot be combined with Version.
	To string
	// Version is an OLM v1 range every step must stay in ("" = none).
	Version string
	// Semantics is "classic" or "v1" ("" = classic).
	Semantics string
}

// PathResult holds one path per channel (classic) or one path (v1).
type PathResult struct {
	Paths []*gr.Path
	// CRD holds the CRD check of each step (by path, then step; nil when
	// either bundle carries no olm.bundle.object properties). PathIn
	// leaves it empty.
	CRD [][]*crd.BundleReport
}

// Path walks the upgrades from opts.From. A path that does not reach its
// target is a result (see [PathResult.Reached]), not an error. A bad
// semantics, range or combination is an *action.UsageError.
func Path(ctx context.Context, opts PathOptions) (*PathResult, error) {
	po, err := pathOptions(opts)
	if err != nil {
		return nil, err
	}
	if opts.From == "" && opts.FromBundle == "" {
		return nil, errNoFrom
	}
	cfg, g, err := load(ctx, opts.Options)
	if err != nil {
		return nil, err
	}
	po.Context = ctx // a long walk stops at a signal
	res, err := pathIn(g, opts, po)
	if err != nil {
		return nil, err
	}
	if len(res.Paths) > 0 {
		if res.CRD, err = checkSteps(ctx, cfg, res.Paths[0].Package, res.Paths); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// PathIn is [Path] on a graph already built (by a caller that keeps the
// catalog loaded, such as `opm view`): the same checks, the same answers.
// opts.Refs and opts.Registry are not used; the walk stops when ctx ends.
func PathIn(ctx context.Context, g *gr.Graph, opts PathOptions) (*PathResult, error) {
	po, err := pathOptions(opts)
	if err != nil {
		return nil, err
	}
	po.Context = ctx
	return pathIn(g, opts, po)
}

// pathOptions checks the semantics, the range and their combination.
func pathOptions(opts PathOptions) (gr.PathOptions, error) {
	if opts.Semantics == "" {
		opts.Semantics = string(gr.Classic)
	}
	sem, err := gr.ParseSemantics(opts.Semantics)
	if err != nil {
		return gr.PathOptions{}, action.Usagef("invalid --semantics: %v", err)
	}
	if opts.To != "" && opts.Version != "" {
		return gr.PathOptions{}, action.Usagef("--to and --version cannot be used together")
	}
	po := gr.PathOptions{Semantics: sem, Channels: opts.Channels}
	if opts.Version != "" {
		r, err := versionrange.Parse(opts.Version)
		if err != nil {
			return gr.PathOptions{}, action.Usagef("invalid --version: %v", err)
		}
		po.Range = r
	}
	return po, nil
}

func pathIn(g *gr.Graph, opts PathOptions, po gr.PathOptions) (*PathResult, error) {
	p, in, err := resolveFrom(g, opts.Packages, opts.From, opts.FromBundle)
	if err != nil {
		return nil, err
	}
	if opts.To != "" {
		to, err := p.Resolve(opts.To)
		if err != nil {
			return nil, err
		}
		if !to.HasVersion {
			return nil, fmt.Errorf("--to %q: no bundle of package %q has that name, so its version is unknown", opts.To, p.Name)
		}
		v := to.Version
		po.To, po.ToRelease = &v, to.Release
	}
	paths, err := p.Path(in, po)
	if err != nil {
		return nil, err
	}
	return &PathResult{Paths: paths}, nil
}

// checkSteps checks the CRDs of every step whose two bundles carry
// olm.bundle.object properties (pkg/crd).
func checkSteps(ctx context.Context, cfg *declcfg.DeclarativeConfig, pkg string, paths []*gr.Path) ([][]*crd.BundleReport, error) {
	k := &crd.Checker{Bundles: map[string]*crd.Bundle{}}
	cache := &crd.Cache{}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if b.Package != pkg {
			continue
		}
		if cb, ok, err := crd.FromDeclcfg(ctx, b, cache); err == nil && ok {
			k.Bundles[b.Name] = cb
		}
	}
	out := make([][]*crd.BundleReport, len(paths))
	for i, p := range paths {
		out[i] = make([]*crd.BundleReport, len(p.Steps))
		for j, s := range p.Steps {
			r, err := k.Check(ctx, s.From.Name, s.To.Name)
			if err != nil {
				return nil, err
			}
			out[i][j] = r
		}
	}
	return out, nil
}

// stepCRD returns the CRD check of step j of path i, or nil.
func (r *PathResult) stepCRD(i, j int) *crd.BundleReport {
	if i < len(r.CRD) && j < len(r.CRD[i]) {
		return r.CRD[i][j]
	}
	return nil
}

// Reached reports whether every path reached its target.
func (r *PathResult) Reached() bool {
	for _, p := range r.Paths {
		if !p.Reached {
			return false
		}
	}
	return true
}

// StepJSON is one upgrade of a path in the -o json form.
type StepJSON struct {
	From    VersionJSON `json:"from"`
	To      VersionJSON `json:"to"`
	Channel string      `json:"channel"`
	Edges   []EdgeJSON  `json:"edges"`
	// Note explains an OLM v1 step between versions equal but for their
	// release.
	Note string `json:"note,omitempty"`
	// CRD is the check of the step's CRDs, when both bundles carry them.
	CRD *StepCRDJSON `json:"crd,omitempty"`
}

// StepCRDJSON is the CRD check of a step: whether it is safe, who
// refuses it, and its unsafe changes.
type StepCRDJSON struct {
	Safe      bool         `json:"safe"`
	RefusedBy []string     `json:"refusedBy"`
	Changes   []crd.Change `json:"changes"`
}

// PathJSON is one path in the -o json form.
type PathJSON struct {
	Package   string        `json:"package"`
	Semantics gr.Semantics  `json:"semantics"`
	Channels  []string      `json:"channels"`
	From      InstalledJSON `json:"from"`
	To        VersionJSON   `json:"to"`
	Reached   bool          `json:"reached"`
	Reason    string        `json:"reason"`
	// InOtherChannels is set when the installed bundle is an entry of
	// none of Channels but of these.
	InOtherChannels []string   `json:"inOtherChannels,omitempty"`
	Steps           []StepJSON `json:"steps"`
}

// PathsJSON is the -o json form of a path query.
type PathsJSON struct {
	Paths []PathJSON `json:"paths"`
}

// JSON returns the -o json form.
func (r *PathResult) JSON() PathsJSON {
	out := PathsJSON{Paths: []PathJSON{}}
	for _, p := range r.Paths {
		pj := PathJSON{Package: p.Package, Semantics: p.Semantics, Channels: p.Channels, From: installedJSON(p.From),
			To: nodeJSON(p.End()), Reached: p.Reached, Reason: p.Reason, InOtherChannels: p.InOtherChannels, Steps: []StepJSON{}}
		for j, s := range p.Steps {
			sj := StepJSON{From: nodeJSON(s.From), To: nodeJSON(s.To), Channel: s.Channel, Edges: edgesJSON(s.Edges), Note: s.Note}
			if c := r.stepCRD(len(out.Paths), j); c != nil {
				u := c.Unsafe()
				sj.CRD = &StepCRDJSON{Safe: len(u) == 0, RefusedBy: c.Refused().List(), Changes: u}
				if sj.CRD.Changes == nil {
					sj.CRD.Changes = []crd.Change{}
				}
			}
			pj.Steps = append(pj.Steps, sj)
		}
		out.Paths = append(out.Paths, pj)
	}
	return out
}

// maxStepChanges bounds the CRD changes printed under one step.
const maxStepChanges = 5

// writeStepCRD marks an unsafe step, with its changes.
func writeStepCRD(w io.Writer, r *crd.BundleReport) {
	if r == nil {
		return
	}
	u := r.Unsafe()
	if len(u) == 0 {
		return
	}
	who := "neither OLM refuses it"
	if ref := r.Refused(); ref != 0 {
		who = "refused by " + ref.String()
	}
	fmt.Fprintf(w, "     UNSAFE CRD upgrade (%s):\n", who)
	for k, c := range u {
		if k == maxStepChanges {
			fmt.Fprintf(w, "       ... and %d more (opm crd diff shows them all)\n", len(u)-maxStepChanges)
			break
		}
		v := ""
		if c.Version != "" {
			v = " " + c.Version
		}
		fmt.Fprintf(w, "       %s%s: %s [%s]\n", c.CRD, v, c.Message, c.Rule)
	}
}

// WriteText writes the paths, one step a line, for people.
func (r *PathResult) WriteText(w io.Writer) error {
	for i, p := range r.Paths {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if i == 0 && p.From.Note != "" {
			fmt.Fprintf(w, "Note: %s (give --from-bundle if it was named otherwise).\n", p.From.Note)
		}
		what := "channel " + p.Channels[0]
		if p.Semantics == gr.V1 {
			what = "channels " + strings.Join(p.Channels, ", ")
		}
		fmt.Fprintf(w, "Package %q, %s, %s semantics, from %s:\n", p.Package, what, p.Semantics, p.From.Label())
		for j, s := range p.Steps {
			fmt.Fprintf(w, "  %d. %s -> %s  (%s", j+1, s.From.Label(), s.To.Label(), edgesText(s.Edges))
			if p.Semantics == gr.V1 && len(p.Channels) > 1 {
				fmt.Fprintf(w, "; channel %s", s.Channel)
			}
			if s.Note != "" {
				fmt.Fprintf(w, "; %s", s.Note)
			}
			fmt.Fprintln(w, ")")
			writeStepCRD(w, r.stepCRD(i, j))
		}
		if len(p.Steps) == 0 {
			fmt.Fprintln(w, "  no upgrade")
		}
		line := "Reached: " + p.Reason
		switch {
		case !p.Reached:
			line = "Not reached: " + p.Reason
		case strings.HasPrefix(p.Reason, "reached "):
			// "Reached the head of channel ...", not "Reached: reached ...".
			line = "Reached " + strings.TrimPrefix(p.Reason, "reached ")
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
		if others := p.InOtherChannels; !p.Reached && len(others) > 0 {
			followed := strings.Join(p.Channels, ", ")
			if len(others) == 1 {
				fmt.Fprintf(w, "Hint: %s is in channel %s, not in %s: follow it with -c %s.\n", p.From.Name, others[0], followed, others[0])
			} else {
				fmt.Fprintf(w, "Hint: %s is in channels %s, not in %s: follow one of them with -c CHANNEL.\n", p.From.Name, strings.Join(others, ", "), followed)
			}
		}
	}
	return nil
}
