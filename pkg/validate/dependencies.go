package validate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/resolve"
)

// CodeDependenciesUnresolvable is a channel head whose dependencies OLM
// classic cannot resolve from the catalog (and the --with catalogs): a
// subscription to it would fail (`opm validate --check-dependencies`; a
// warning, an error under --strict).
const CodeDependenciesUnresolvable = "dependencies-unresolvable"

// CodeDependenciesUndecided is a channel head whose dependencies the
// check could not decide: the solver gave up (--solver-budget), or the
// CEL rules cost more than their limit. The head, and the heads after
// it, were not checked (a warning, an error under --strict).
const CodeDependenciesUndecided = "dependencies-undecided"

// DependencyOptions turn on the dependency check: every channel head is
// resolved as OLM classic would resolve a subscription to it, with the
// catalog and the extra catalogs in With as the only sources.
type DependencyOptions struct {
	// With are extra catalogs dependencies may come from (e.g. the one
	// that ships cert-manager). Names must be unique and not "catalog".
	With []resolve.Catalog
	// Budget bounds the solver's work over the whole check, in conflicts
	// (see resolve.Request.Budget): 0 means resolve.DefaultBudget, a
	// negative value no bound. Once spent, the heads left are not checked
	// and a dependencies-undecided finding says so.
	Budget int64
}

// ValidatedCatalog names the catalog under validation among the others:
// no catalog in DependencyOptions.With may take it.
const ValidatedCatalog = "catalog"

// CheckDependencies resolves a subscription to every channel head of cfg
// (its startingCSV set to the head, so that only the head is a candidate)
// and reports each head that cannot be installed. Channels without a
// single head are skipped (other rules report them), and so is a catalog
// the resolver cannot index (an entry without a bundle, which the model
// rules report).
func CheckDependencies(ctx context.Context, cfg *declcfg.DeclarativeConfig, opts DependencyOptions) ([]Finding, error) {
	cats := append([]resolve.Catalog{{Name: ValidatedCatalog, Config: cfg}}, opts.With...)
	u, err := resolve.NewUniverse(cats)
	var ie *resolve.InputError
	if errors.As(err, &ie) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}

	// Heads, with the channels each bundle heads.
	type head struct {
		pkg, name string
		channels  []string
	}
	heads := map[string]*head{}
	for _, ch := range cfg.Channels {
		g := graph.Channel{Package: ch.Package, Name: ch.Name}
		for _, e := range ch.Entries {
			g.Entries = append(g.Entries, graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		name, err := g.Head()
		if err != nil {
			continue
		}
		key := ch.Package + "\x00" + name
		if heads[key] == nil {
			heads[key] = &head{pkg: ch.Package, name: name}
		}
		heads[key].channels = append(heads[key].channels, ch.Name)
	}
	pos := map[string]declcfg.Position{}
	for _, b := range cfg.Bundles {
		key := b.Package + "\x00" + b.Name
		if _, ok := pos[key]; !ok {
			pos[key] = b.Pos
		}
	}

	keys := make([]string, 0, len(heads))
	for k := range heads {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Finding
	left := opts.Budget
	if left == 0 {
		left = resolve.DefaultBudget
	}
	for i, k := range keys {
		h := heads[k]
		sort.Strings(h.channels)
		res, err := u.Resolve(ctx, resolve.Request{Subscriptions: []resolve.Subscription{{
			Package: h.pkg, Channel: h.channels[0], StartingCSV: h.name, Catalog: ValidatedCatalog,
		}}, Budget: left})
		var be *resolve.BudgetError
		var ce *resolve.CelBudgetError
		if errors.As(err, &be) || errors.As(err, &ce) {
			p := pos[k]
			msg := fmt.Sprintf("bundle %q, head of channel %s: not checked: %v", h.name, quoteList(h.channels), err)
			if rest := len(keys) - i - 1; rest > 0 {
				msg += fmt.Sprintf("; the dependencies of the %d channel heads after it were not checked either", rest)
			}
			help := "raise the budget with --solver-budget (10000 conflicts take seconds on such a problem), or simplify the dependencies"
			if ce != nil {
				help = "simplify the olm.constraint CEL rules, or the candidates they are evaluated against"
			}
			out = append(out, Finding{
				Severity: SeverityWarning,
				Code:     CodeDependenciesUndecided,
				Message:  msg,
				File:     p.File, Line: p.Line, Column: p.Column,
				Package: h.pkg, Bundle: h.name,
				Help: help + "; undecided is not a pass: --strict fails on it",
			})
			return out, nil
		}
		if err != nil {
			if errors.As(err, &ie) {
				continue
			}
			return nil, err
		}
		if left > 0 {
			left = max(left-res.Stats.Conflicts, 1)
		}
		if res.Resolvable {
			continue
		}
		why := res.Error
		if why == "" {
			var lines []string
			for _, c := range res.Conflicts {
				if c.Kind == resolve.ConflictSubscription {
					continue // "the subscription needs this bundle": said already
				}
				lines = append(lines, c.Message)
			}
			why = strings.Join(lines, "; ")
		}
		p := pos[k]
		which := "channel " + quoteList(h.channels)
		if len(h.channels) > 1 {
			which = "channels " + quoteList(h.channels)
		}
		out = append(out, Finding{
			Severity: SeverityWarning,
			Code:     CodeDependenciesUnresolvable,
			Message:  fmt.Sprintf("bundle %q, head of %s, cannot be installed: %s", h.name, which, why),
			File:     p.File, Line: p.Line, Column: p.Column,
			Package: h.pkg, Bundle: h.name,
			Help: "give the catalogs its dependencies come from with --with, or fix its dependency properties; " +
				"opm resolve --catalog NAME=DIR --subscribe PACKAGE:CHANNEL explains in full",
		})
	}
	return out, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
