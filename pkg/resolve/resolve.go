package resolve

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/property"
)

// Installed names an installed bundle: a bundle of a catalog, installed
// from it. It has exactly that bundle's name, version and properties.
type Installed struct {
	Catalog string
	Bundle  string
}

// Subscription asks for a package: optionally one channel (empty: every
// channel, the default one first) and a starting bundle (used only when
// nothing of the package is installed).
type Subscription struct {
	Package     string
	Channel     string
	StartingCSV string
	// Catalog is the catalog the subscription installs from. Empty: the
	// catalog of the installed bundle of the package, else the catalog
	// with the highest priority that has the package (ties: name order).
	Catalog string
	// Name names the subscription in results; empty: PACKAGE[:CHANNEL][@STARTINGCSV].
	Name string
}

func (s Subscription) displayName() string {
	if s.Name != "" {
		return s.Name
	}
	n := s.Package
	if s.Channel != "" {
		n += ":" + s.Channel
	}
	if s.StartingCSV != "" {
		n += "@" + s.StartingCSV
	}
	return n
}

// Request is what to resolve: the namespace's installed bundles and its
// subscriptions.
type Request struct {
	Installed     []Installed
	Subscriptions []Subscription
	// Budget bounds the solver's work in conflicts (dead ends it learns
	// from) over the whole resolution: 0 means DefaultBudget, a negative
	// value no bound. A resolution that spends it fails with a
	// *BudgetError. Real catalogs need a few hundred at most.
	Budget int64
}

// DefaultBudget is the solver budget of a resolution when the request
// sets none: about a second of search on a hard problem. Real catalogs
// need none at all (every package of the largest conformance catalog at
// once: 0 conflicts); it bounds what a catalog crafted to be hard costs.
const DefaultBudget = 10_000

// NoBudget is the --solver-budget value that lifts the bound.
const NoBudget = -1

// CheckBudget checks a --solver-budget value: a positive number of
// conflicts, or NoBudget. (Request.Budget also takes 0 for DefaultBudget
// and any negative value for none, as a zero value should; a user who
// writes 0 or -5 meant something else.)
func CheckBudget(n int64) error {
	if n > 0 || n == NoBudget {
		return nil
	}
	return fmt.Errorf("%d is not a solver budget: give a positive number of conflicts, or %d for no limit", n, NoBudget)
}

// InputError is a request the resolver cannot take: an unknown catalog or
// bundle, two installed bundles of one package. (An unsatisfiable request
// is not an error: see Result.)
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Result is the outcome of a resolution.
type Result struct {
	// Resolvable is true when a solution exists.
	Resolvable bool `json:"resolvable"`
	// Install is every bundle the namespace ends up with (kept installed
	// bundles, upgrades, new bundles and their dependencies), each once,
	// dependencies before the bundles that need them. Empty when not
	// resolvable.
	Install []Install `json:"install"`
	// Conflicts is, when not resolvable, a minimal set of rules that cannot
	// all hold: drop any one of them and the rest can.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Error is set when resolution could not run to a verdict: an invalid
	// dependency property, a channel without a unique replaces chain. Not
	// resolvable either.
	Error string `json:"error,omitempty"`
	// Stats describe the problem the solver saw.
	Stats Stats `json:"-"`
}

// Install is one bundle of the solution.
type Install struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	Version string `json:"version"`
	// Catalog is where the bundle comes from (for a kept installed bundle,
	// the catalog it was installed from).
	Catalog string `json:"catalog"`
	// Channel is the channel of the catalog record selected (empty for a
	// kept installed bundle).
	Channel string `json:"channel,omitempty"`
	// Status is "new", "upgrade" (it replaces Replaces) or "installed"
	// (an installed bundle that stays).
	Status   string `json:"status"`
	Replaces string `json:"replaces,omitempty"`
	// Reasons say why the bundle is in the solution; the first is the one
	// that selected it.
	Reasons []Reason `json:"reasons"`
}

// Install statuses.
const (
	StatusNew       = "new"
	StatusUpgrade   = "upgrade"
	StatusInstalled = "installed"
)

// Reason is one reason a bundle is in the solution: a subscription it
// satisfies, a requirement of another bundle of the solution it meets, or
// being installed with no subscription to its package (it must stay).
type Reason struct {
	Subscription string `json:"subscription,omitempty"`
	// RequiredBy is the bundle whose requirement it meets, with that
	// bundle's catalog (empty for an installed bundle).
	RequiredBy        string `json:"requiredBy,omitempty"`
	RequiredByCatalog string `json:"requiredByCatalog,omitempty"`
	// Requirement is the requirement in words, Property its type
	// (olm.gvk.required, olm.package.required, olm.label.required,
	// olm.constraint).
	Requirement string `json:"requirement,omitempty"`
	Property    string `json:"property,omitempty"`
	// Installed is true for an installed bundle no subscription names.
	Installed bool `json:"installed,omitempty"`
}

// Conflict is one rule of an unsatisfiable set.
type Conflict struct {
	// Kind is one of the Conflict* constants.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Bundles are the bundles the rule is about, as CATALOG/CHANNEL/BUNDLE
	// (@installed/BUNDLE for installed bundles).
	Bundles []string `json:"bundles,omitempty"`
}

// Conflict kinds.
const (
	// ConflictSubscription: a subscription must get one of its candidates.
	ConflictSubscription = "subscription"
	// ConflictNoCandidates: a subscription has no candidate at all.
	ConflictNoCandidates = "subscription-without-candidates"
	// ConflictInstalled: an installed bundle no subscription names stays.
	ConflictInstalled = "installed"
	// ConflictDependency: a bundle needs one of the bundles that meet a
	// requirement.
	ConflictDependency = "dependency"
	// ConflictMissingDependency: nothing in the catalogs meets a
	// requirement, so the bundle cannot be installed.
	ConflictMissingDependency = "missing-dependency"
	// ConflictDeprecated: a bundle with olm.deprecated is never installed.
	ConflictDeprecated = "deprecated"
	// ConflictPackage: at most one bundle per package.
	ConflictPackage = "one-bundle-per-package"
	// ConflictAPI: at most one provider per API (group, version, kind).
	ConflictAPI = "one-provider-per-api"
)

// Stats describe the problem the solver saw.
type Stats struct {
	Variables   int // subscriptions and bundle records
	Rules       int
	Clauses     int
	SolverCalls int
	// Conflicts is the solver's work (see Request.Budget).
	Conflicts int64
}

// Universe is a set of catalogs, indexed once for any number of
// resolutions. Its methods are safe for concurrent use (resolutions run
// one at a time).
type Universe struct {
	mu         sync.Mutex
	cats       []*catalog // in the order given
	byName     map[string]*catalog
	byPriority []*catalog // priority descending, then name
	cel        compileCache
	deps       map[*bundle]parsedDeps
	candCache  map[candKey][]*record
}

type parsedDeps struct {
	deps []*dependency
	err  error
}

type candKey struct {
	dep *dependency
	own *catalog
}

// NewUniverse indexes catalogs. Names must be unique and non-empty.
func NewUniverse(cats []Catalog) (*Universe, error) {
	u := &Universe{byName: map[string]*catalog{}, cel: compileCache{rules: map[string]*celRule{}, meter: &celMeter{limit: celAggregateLimit}}, deps: map[*bundle]parsedDeps{}, candCache: map[candKey][]*record{}}
	for _, c := range cats {
		if c.Name == "" {
			return nil, inputErrorf("a catalog has no name")
		}
		if _, dup := u.byName[c.Name]; dup {
			return nil, inputErrorf("catalog %q is given twice", c.Name)
		}
		cat, err := newCatalog(c)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		u.cats = append(u.cats, cat)
		u.byName[c.Name] = cat
	}
	u.byPriority = append([]*catalog(nil), u.cats...)
	sort.SliceStable(u.byPriority, func(i, j int) bool {
		a, b := u.byPriority[i], u.byPriority[j]
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		return a.name < b.name
	})
	return u, nil
}

// Resolve resolves one request against the universe's catalogs in one go.
func Resolve(ctx context.Context, cats []Catalog, req Request) (*Result, error) {
	u, err := NewUniverse(cats)
	if err != nil {
		return nil, err
	}
	return u.Resolve(ctx, req)
}

// Resolve decides which bundles the namespace ends up with, as OLM
// classic's resolver does. The error is an *InputError for a request that
// names unknown catalogs or bundles, or the context's error; everything
// else (unsatisfiable, invalid dependency properties) is in the Result.
func (u *Universe) Resolve(ctx context.Context, req Request) (*Result, error) {
	res, _, err := u.resolve(ctx, req)
	return res, err
}

func (u *Universe) resolve(ctx context.Context, req Request) (*Result, *resolution, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := &resolution{u: u, ctx: ctx, recVar: map[*record]int{}, deps: map[*record][]*depInst{}, vars: []varInfo{{}}}
	if err := r.setup(req); err != nil {
		return nil, nil, err
	}
	if err := r.expand(); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var ie *InputError
		if errors.As(err, &ie) {
			return nil, nil, err
		}
		return &Result{Install: []Install{}, Error: err.Error()}, r, nil
	}
	res, err := r.solve(req.Budget)
	if errors.Is(err, errBudget) {
		return nil, nil, &BudgetError{Conflicts: res.Stats.Conflicts, Packages: r.packages()}
	}
	if err != nil {
		return nil, nil, err
	}
	return res, r, nil
}

// packages are the packages of the problem's candidates and
// subscriptions, sorted.
func (r *resolution) packages() []string {
	seen := map[string]bool{}
	for _, vi := range r.vars[1:] {
		switch {
		case vi.rec != nil:
			seen[vi.rec.bundle.pkg] = true
		case vi.sub != nil:
			seen[vi.sub.Package] = true
		}
	}
	return sortedKeys(seen)
}

// maxCandidateRefs bounds the dependency candidates of one resolution,
// summed over every dependency of every bundle reached: the clauses grow
// with it. Real catalogs stay far below (every package of a catalog of
// 900 bundles at once: about 20000); a hostile catalog whose every bundle
// requires something every bundle matches would grow quadratically.
var maxCandidateRefs = 5_000_000

// resolution is the state of one Resolve call.
type resolution struct {
	u   *Universe
	ctx context.Context

	installed       []*record // in the order given
	installedSorted []*record // by package name: dependency candidate order
	instByPkg       map[string]*record
	freestanding    []*record
	subs            []*sub

	vars   []varInfo // vars[v] describes variable v; vars[0] is unused
	recVar map[*record]int
	order  []*record // records in variable order
	deps   map[*record][]*depInst

	rules []*rule
	// candRefs counts dependency candidates, for maxCandidateRefs.
	candRefs int
	// selected is the solution, by variable (set when resolvable).
	selected []bool
	// core is the minimal unsatisfiable set of rules (when not).
	core []*rule
}

type varInfo struct {
	rec *record
	sub *sub
}

type sub struct {
	Subscription
	name    string
	cat     *catalog
	current *record
	cands   []*record
	// problem is set when the subscription has no candidates (§3.2).
	problem string
	v       int
}

// depInst is one dependency of one record with its ordered candidates.
type depInst struct {
	dep   *dependency
	cands []*record
	self  bool // the record is among its own candidates: always met
}

func (r *resolution) setup(req Request) error {
	r.instByPkg = map[string]*record{}
	for _, in := range req.Installed {
		cat := r.u.byName[in.Catalog]
		if cat == nil {
			return inputErrorf("installed bundle %s/%s: no catalog named %q", in.Catalog, in.Bundle, in.Catalog)
		}
		var found []*bundle
		for _, name := range sortedKeys(cat.pkgs) {
			if b := cat.pkgs[name].bundles[in.Bundle]; b != nil {
				found = append(found, b)
			}
		}
		switch len(found) {
		case 0:
			var names []string
			for _, p := range cat.pkgs {
				for n := range p.bundles {
					names = append(names, n)
				}
			}
			return &InputError{Err: fmt.Errorf("installed bundle %s/%s: %w", in.Catalog, in.Bundle,
				suggest.Unknown("bundle", in.Bundle, fmt.Sprintf("in catalog %q", in.Catalog), names))}
		case 1:
		default:
			return inputErrorf("installed bundle %s/%s: catalog %q has %d bundles named %q", in.Catalog, in.Bundle, in.Catalog, len(found), in.Bundle)
		}
		b := found[0]
		if prev := r.instByPkg[b.pkg]; prev != nil {
			return inputErrorf("installed bundles %s and %s are both of package %q; at most one bundle of a package can be installed", prev.bundle.name, b.name, b.pkg)
		}
		rec := &record{bundle: b, installedFrom: cat}
		r.installed = append(r.installed, rec)
		r.instByPkg[b.pkg] = rec
	}
	r.installedSorted = append([]*record(nil), r.installed...)
	sort.SliceStable(r.installedSorted, func(i, j int) bool {
		return r.installedSorted[i].bundle.pkg < r.installedSorted[j].bundle.pkg
	})
	subscribed := map[string]bool{}
	for _, s := range req.Subscriptions {
		if s.Package == "" {
			return inputErrorf("a subscription has no package")
		}
		if s.Catalog != "" && r.u.byName[s.Catalog] == nil {
			return inputErrorf("subscription %s: no catalog named %q", s.displayName(), s.Catalog)
		}
		subscribed[s.Package] = true
	}
	for _, in := range r.installed {
		if !subscribed[in.bundle.pkg] {
			r.freestanding = append(r.freestanding, in)
		}
	}
	for _, s := range req.Subscriptions {
		sb := &sub{Subscription: s, name: s.displayName(), current: r.instByPkg[s.Package]}
		switch {
		case s.Catalog != "":
			sb.cat = r.u.byName[s.Catalog]
		case sb.current != nil:
			sb.cat = sb.current.installedFrom
		default:
			for _, c := range r.u.byPriority {
				if c.pkgs[s.Package] != nil {
					sb.cat = c
					break
				}
			}
		}
		r.subs = append(r.subs, sb)
	}
	return nil
}

// addVar gives rec a variable if it has none.
func (r *resolution) addVar(rec *record) {
	if _, ok := r.recVar[rec]; ok {
		return
	}
	r.vars = append(r.vars, varInfo{rec: rec})
	r.recVar[rec] = len(r.vars) - 1
	r.order = append(r.order, rec)
}

// expand builds every variable: installed bundles, subscriptions and their
// candidates, and transitively every candidate of every dependency of
// every bundle reached (§6), whether or not it ends up selected.
func (r *resolution) expand() error {
	for _, in := range r.installed {
		r.addVar(in)
	}
	for _, s := range r.subs {
		r.vars = append(r.vars, varInfo{sub: s})
		s.v = len(r.vars) - 1
		if err := r.subCandidates(s); err != nil {
			return err
		}
		for _, c := range s.cands {
			r.addVar(c)
		}
	}
	for i := 0; i < len(r.order); i++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		rec := r.order[i]
		deps, err := r.u.dependencies(rec.bundle)
		if err != nil {
			return err
		}
		var insts []*depInst
		for _, d := range deps {
			cands, err := r.depCandidates(rec, d)
			if err != nil {
				return err
			}
			if r.candRefs += len(cands); r.candRefs > maxCandidateRefs {
				return fmt.Errorf("the problem is too large: more than %d dependency candidates in all (a requirement such as a top-level not, met by nearly every bundle, on many bundles)", maxCandidateRefs)
			}
			di := &depInst{dep: d, cands: cands}
			for _, c := range cands {
				if c == rec {
					di.self = true
				}
				r.addVar(c)
			}
			insts = append(insts, di)
		}
		r.deps[rec] = insts
	}
	return nil
}

// dependencies parses a bundle's dependency properties once.
func (u *Universe) dependencies(b *bundle) ([]*dependency, error) {
	pd, ok := u.deps[b]
	if !ok {
		pd.deps, pd.err = parseDependencies(b, u.cel)
		u.deps[b] = pd
	}
	return pd.deps, pd.err
}

// subCandidates computes a subscription's ordered candidates (§3).
func (r *resolution) subCandidates(s *sub) error {
	in := "the catalog referenced by subscription " + s.name
	if s.cat == nil {
		s.problem = fmt.Sprintf("no operators found in package %s in any of the given catalogs (subscription %s)", s.Package, s.name)
		return nil
	}
	if !s.cat.hasRecords {
		s.problem = fmt.Sprintf("no operators found from catalog %s referenced by subscription %s", s.cat.name, s.name)
		return nil
	}
	pkg := s.cat.pkgs[s.Package]
	if pkg == nil || len(pkg.channels) == 0 {
		s.problem = fmt.Sprintf("no operators found in package %s in %s", s.Package, in)
		return nil
	}
	var groups []*group
	if s.Channel != "" {
		if g := pkg.channels[s.Channel]; g != nil {
			groups = append(groups, g)
		}
	} else {
		if g := pkg.channels[pkg.defaultChannel]; g != nil {
			groups = append(groups, g)
		}
		for _, name := range pkg.channelNames {
			if name != pkg.defaultChannel {
				groups = append(groups, pkg.channels[name])
			}
		}
	}
	if len(groups) == 0 {
		s.problem = fmt.Sprintf("no operators found in channel %s of package %s in %s", s.Channel, s.Package, in)
		return nil
	}
	if s.current == nil && s.StartingCSV != "" {
		for _, g := range groups {
			var named []*record
			for _, rec := range g.records {
				if rec.bundle.name == s.StartingCSV {
					named = append(named, rec)
				}
			}
			if len(named) == 0 {
				continue
			}
			chain, err := chainOrder(named, g.pkg.name, g.channel)
			if err != nil {
				return err
			}
			s.cands = append(s.cands, chain...)
		}
		if len(s.cands) == 0 {
			s.problem = fmt.Sprintf("no operators found with name %s in channel %s of package %s in %s", s.StartingCSV, s.Channel, s.Package, in)
		}
		return nil
	}
	for _, g := range groups {
		chain, err := g.chainOf()
		if err != nil {
			return err
		}
		if s.current == nil {
			s.cands = append(s.cands, chain...)
			continue
		}
		cur := s.current.bundle
		for _, rec := range chain {
			if rec.replacesInstalled(cur) {
				s.cands = append(s.cands, rec)
			}
		}
	}
	if s.current != nil {
		s.cands = append(s.cands, s.current)
	}
	return nil
}

// replacesInstalled reports whether the record upgrades cur: it replaces
// it, skips it, or its skipRange contains cur's version.
func (rec *record) replacesInstalled(cur *bundle) bool {
	if rec.entry.Replaces == cur.name {
		return true
	}
	for _, s := range rec.entry.Skips {
		if s == cur.name {
			return true
		}
	}
	return rec.skipRange != nil && cur.versionOK && rec.skipRange.Contains(cur.version)
}

// depCandidates returns the ordered candidates of one dependency of owner
// (§6): installed bundles first, then owner's catalog, then the other
// catalogs by priority and name; within a catalog default channels first,
// then by package and channel name, each channel in chain order.
func (r *resolution) depCandidates(owner *record, d *dependency) ([]*record, error) {
	var out []*record
	for _, in := range r.installedSorted {
		if d.pred.match(r.ctx, in.bundle) {
			out = append(out, in)
		}
	}
	key := candKey{dep: d, own: owner.cat}
	cached, ok := r.u.candCache[key]
	if !ok {
		var err error
		cached, err = r.u.catalogCandidates(r.ctx, owner.cat, d)
		if err != nil {
			return nil, err
		}
		r.u.candCache[key] = cached
	}
	if err := r.u.cel.meter.err(); err != nil {
		return nil, err
	}
	return append(out, cached...), nil
}

func (u *Universe) catalogCandidates(ctx context.Context, own *catalog, d *dependency) ([]*record, error) {
	cats := make([]*catalog, 0, len(u.byPriority))
	if own != nil {
		cats = append(cats, own)
	}
	for _, c := range u.byPriority {
		if c != own {
			cats = append(cats, c)
		}
	}
	memo := map[*bundle]bool{}
	matches := func(b *bundle) bool {
		m, ok := memo[b]
		if !ok {
			m = d.pred.match(ctx, b)
			memo[b] = m
		}
		return m
	}
	var out []*record
	for _, cat := range cats {
		groups := cat.groups
		if pkgs, all := candidatePackages(d.pred, cat); !all {
			groups = nil
			for _, p := range pkgs {
				if pi := cat.pkgs[p]; pi != nil {
					groups = append(groups, pi.groups...)
				}
			}
			sort.Slice(groups, func(i, j int) bool { return groups[i].order < groups[j].order })
		}
		for _, g := range groups {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			found := false
			for _, rec := range g.records {
				if matches(rec.bundle) {
					found = true
					break
				}
			}
			if !found {
				continue
			}
			chain, err := g.chainOf()
			if err != nil {
				return nil, err
			}
			for _, rec := range chain {
				if matches(rec.bundle) {
					out = append(out, rec)
				}
			}
		}
	}
	return out, nil
}

// Rule kinds.
const (
	ruleSubMandatory = iota
	ruleSubRequires
	ruleInstalled
	ruleDeprecated
	ruleRequires
	ruleOnePackage
	ruleOneAPI
)

// rule is one instance of a hard rule (§7): a group of clauses with a
// selector variable that switches it on.
type rule struct {
	kind    int
	sub     *sub
	rec     *record
	di      *depInst
	members []int
	pkg     string
	gvk     property.GVK
	sel     int
}

// buildRules lists every rule instance, in the order explanations prefer
// them: subscriptions and installed bundles, then each bundle's rules in
// variable order, then the uniqueness rules.
func (r *resolution) buildRules() {
	for _, in := range r.freestanding {
		r.rules = append(r.rules, &rule{kind: ruleInstalled, rec: in})
	}
	for _, s := range r.subs {
		r.rules = append(r.rules, &rule{kind: ruleSubMandatory, sub: s}, &rule{kind: ruleSubRequires, sub: s})
	}
	for _, rec := range r.order {
		if rec.bundle.deprecated {
			r.rules = append(r.rules, &rule{kind: ruleDeprecated, rec: rec})
		}
		for _, di := range r.deps[rec] {
			if !di.self {
				r.rules = append(r.rules, &rule{kind: ruleRequires, rec: rec, di: di})
			}
		}
	}
	byPkg := map[string][]int{}
	byGVK := map[property.GVK][]int{}
	for _, rec := range r.order {
		v := r.recVar[rec]
		byPkg[rec.bundle.pkg] = append(byPkg[rec.bundle.pkg], v)
		for _, g := range rec.bundle.gvks {
			byGVK[g] = append(byGVK[g], v)
		}
	}
	for _, p := range sortedKeys(byPkg) {
		if len(byPkg[p]) > 1 {
			r.rules = append(r.rules, &rule{kind: ruleOnePackage, pkg: p, members: byPkg[p]})
		}
	}
	gvks := make([]property.GVK, 0, len(byGVK))
	for g, m := range byGVK {
		if len(m) > 1 {
			gvks = append(gvks, g)
		}
	}
	sort.Slice(gvks, func(i, j int) bool {
		a, b := gvks[i], gvks[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	for _, g := range gvks {
		r.rules = append(r.rules, &rule{kind: ruleOneAPI, gvk: g, members: byGVK[g]})
	}
}

// encode turns the rules into CNF. Every clause of a rule ends with the
// negation of the rule's selector, so no clause is a unit and a rule is
// on exactly when its selector is assumed.
func (r *resolution) encode() (nbVars int, clauses [][]int) {
	next := len(r.vars)
	fresh := func() int { v := next; next++; return v }
	for _, ru := range r.rules {
		ru.sel = fresh()
	}
	add := func(ru *rule, lits ...int) {
		clauses = append(clauses, append(lits, -ru.sel))
	}
	for _, ru := range r.rules {
		switch ru.kind {
		case ruleInstalled:
			add(ru, r.recVar[ru.rec])
		case ruleSubMandatory:
			add(ru, ru.sub.v)
		case ruleSubRequires:
			lits := []int{-ru.sub.v}
			for _, c := range ru.sub.cands {
				lits = append(lits, r.recVar[c])
			}
			add(ru, lits...)
		case ruleDeprecated:
			add(ru, -r.recVar[ru.rec])
		case ruleRequires:
			lits := []int{-r.recVar[ru.rec]}
			for _, c := range ru.di.cands {
				lits = append(lits, r.recVar[c])
			}
			add(ru, lits...)
		case ruleOnePackage, ruleOneAPI:
			m := ru.members
			if len(m) <= 6 {
				for i := range m {
					for j := i + 1; j < len(m); j++ {
						add(ru, -m[i], -m[j])
					}
				}
				continue
			}
			// Sequential counter (Sinz 2005): s[i] means "one of m[0..i]
			// is selected".
			s := make([]int, len(m)-1)
			for i := range s {
				s[i] = fresh()
			}
			add(ru, -m[0], s[0])
			for i := 1; i < len(m)-1; i++ {
				add(ru, -m[i], s[i])
				add(ru, -s[i-1], s[i])
				add(ru, -m[i], -s[i-1])
			}
			add(ru, -m[len(m)-1], -s[len(m)-2])
		}
	}
	return next - 1, clauses
}

// choice is a list of candidates of which at least one must be selected,
// with what made it.
type choice struct {
	cands []int
	by    *record  // the bundle whose dependency this is
	di    *depInst // that dependency
	sub   *sub     // the subscription whose candidates these are
}

func (r *resolution) solve(budget int64) (*Result, error) {
	r.buildRules()
	nbVars, clauses := r.encode()
	res := &Result{Install: []Install{}, Stats: Stats{Variables: len(r.vars) - 1, Rules: len(r.rules), Clauses: len(clauses)}}
	if len(r.rules) == 0 {
		res.Resolvable = true
		return res, nil
	}
	sel := make([]int, len(r.rules))
	for i, ru := range r.rules {
		sel[i] = ru.sel
	}

	s := newSatSolver(nbVars, clauses)
	switch {
	case budget == 0:
		s.budget = DefaultBudget
	case budget > 0:
		s.budget = budget
	}
	defer func() { res.Stats.SolverCalls, res.Stats.Conflicts = s.calls, s.conflicts }()
	ok, err := s.solve(r.ctx, sel)
	if err != nil {
		return res, err
	}
	if !ok {
		core, err := s.minimalCore(r.ctx, nil, sel)
		if err != nil {
			return res, err
		}
		bySel := make(map[int]*rule, len(r.rules))
		for _, ru := range r.rules {
			bySel[ru.sel] = ru
		}
		rules := make([]*rule, len(core))
		for i, c := range core {
			rules[i] = bySel[c]
		}
		r.core = rules
		res.Conflicts = r.explain(rules)
		return res, nil
	}

	// The preference search (§8): choices in a queue, breadth first; each
	// takes its first candidate that still leads to a complete solution,
	// unless a candidate is already selected. With a complete solver as
	// the test, no choice ever needs to be revisited: the result is the
	// first solution in preference order, the one OLM's backtracking
	// search returns.
	model := s.model(nil)
	selected := make([]bool, len(r.vars))
	chosenBy := make([]*choice, len(r.vars))
	assume := append([]int(nil), sel...)
	var queue []*choice
	for _, in := range r.freestanding {
		queue = append(queue, &choice{cands: []int{r.recVar[in]}})
	}
	for _, sb := range r.subs {
		queue = append(queue, &choice{cands: []int{sb.v}})
	}
	for len(queue) > 0 {
		ch := queue[0]
		queue = queue[1:]
		met := false
		for _, c := range ch.cands {
			if selected[c] {
				met = true
				break
			}
		}
		if met {
			continue
		}
		pick := 0
		for _, c := range ch.cands {
			if model[c] {
				pick = c
				break
			}
			ok, err := s.solve(r.ctx, append(assume, c))
			if err != nil {
				return res, err
			}
			if ok {
				model = s.model(model)
				pick = c
				break
			}
		}
		if pick == 0 {
			return nil, errors.New("internal error: the preference search found no candidate for a choice")
		}
		selected[pick] = true
		chosenBy[pick] = ch
		assume = append(assume, pick)
		vi := r.vars[pick]
		if vi.sub != nil {
			cands := make([]int, len(vi.sub.cands))
			for i, c := range vi.sub.cands {
				cands[i] = r.recVar[c]
			}
			queue = append(queue, &choice{cands: cands, sub: vi.sub})
			continue
		}
		for _, di := range r.deps[vi.rec] {
			if len(di.cands) == 0 {
				continue
			}
			cands := make([]int, len(di.cands))
			for i, c := range di.cands {
				cands[i] = r.recVar[c]
			}
			queue = append(queue, &choice{cands: cands, by: vi.rec, di: di})
		}
	}
	res.Resolvable = true
	r.selected = selected
	res.Install = r.installList(selected, chosenBy)
	return res, nil
}

// installList orders the selected bundles (dependencies first) and says
// why each is there.
func (r *resolution) installList(selected []bool, chosenBy []*choice) []Install {
	isSel := func(rec *record) bool { return selected[r.recVar[rec]] }
	// satisfier is the first selected candidate of a dependency.
	satisfier := func(owner *record, di *depInst) *record {
		for _, c := range di.cands {
			if c != owner && isSel(c) {
				return c
			}
		}
		return nil
	}
	var order []*record
	visited := map[*record]bool{}
	var visit func(rec *record)
	visit = func(rec *record) {
		if visited[rec] {
			return
		}
		visited[rec] = true
		for _, di := range r.deps[rec] {
			if s := satisfier(rec, di); s != nil {
				visit(s)
			}
		}
		order = append(order, rec)
	}
	for _, in := range r.freestanding {
		visit(in)
	}
	for _, s := range r.subs {
		for _, c := range s.cands {
			if isSel(c) {
				visit(c)
				break
			}
		}
	}
	for _, rec := range r.order {
		if isSel(rec) {
			visit(rec)
		}
	}

	reasons := map[*record][]Reason{}
	for _, in := range r.freestanding {
		reasons[in] = append(reasons[in], Reason{Installed: true})
	}
	for _, s := range r.subs {
		for _, c := range s.cands {
			if isSel(c) {
				reasons[c] = append(reasons[c], Reason{Subscription: s.name})
				break
			}
		}
	}
	for _, rec := range order {
		for _, di := range r.deps[rec] {
			if s := satisfier(rec, di); s != nil {
				reasons[s] = append(reasons[s], Reason{
					RequiredBy:        rec.bundle.name,
					RequiredByCatalog: catalogName(rec),
					Requirement:       di.dep.describe(),
					Property:          di.dep.kind,
				})
			}
		}
	}
	// The reason that selected the bundle goes first.
	for rec, rs := range reasons {
		ch := chosenBy[r.recVar[rec]]
		if ch == nil || len(rs) < 2 {
			continue
		}
		for i, x := range rs {
			if (ch.sub != nil && x.Subscription == ch.sub.name) ||
				(ch.by != nil && x.RequiredBy == ch.by.bundle.name && x.RequiredByCatalog == catalogName(ch.by) && x.Requirement == ch.di.dep.describe()) {
				copy(rs[1:i+1], rs[:i])
				rs[0] = x
				break
			}
		}
	}

	out := make([]Install, 0, len(order))
	for _, rec := range order {
		in := Install{
			Package: rec.bundle.pkg,
			Bundle:  rec.bundle.name,
			Version: rec.bundle.versionText,
			Catalog: catalogName(rec),
			Channel: rec.channel,
			Status:  StatusNew,
			Reasons: reasons[rec],
		}
		if in.Reasons == nil {
			in.Reasons = []Reason{}
		}
		if rec.installed() {
			in.Status = StatusInstalled
		} else if cur := r.instByPkg[rec.bundle.pkg]; cur != nil && !isSel(cur) {
			in.Status, in.Replaces = StatusUpgrade, cur.bundle.name
		}
		out = append(out, in)
	}
	return out
}

// catalogName is where a record's bundle comes from.
func catalogName(rec *record) string {
	if rec.installed() {
		return rec.installedFrom.name
	}
	return rec.cat.name
}

// recordID names a record in results: CATALOG/CHANNEL/BUNDLE, or
// @installed/BUNDLE.
func recordID(rec *record) string {
	if rec.installed() {
		return "@installed/" + rec.bundle.name
	}
	return rec.cat.name + "/" + rec.channel + "/" + rec.bundle.name
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// joinOr joins words as "a, b or c".
func joinOr(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// joinAnd joins words as "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
