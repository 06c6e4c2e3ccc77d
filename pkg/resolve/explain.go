package resolve

import (
	"fmt"
)

// explain turns a minimal unsatisfiable set of rules into words, one
// Conflict per rule (a subscription's two rules, "it exists" and "it needs
// one of its candidates", make one). Uniqueness rules name only the
// bundles the other rules of the set force, which are the ones that
// clash.
func (r *resolution) explain(core []*rule) []Conflict {
	involved := map[int]bool{}
	for _, ru := range core {
		switch ru.kind {
		case ruleInstalled, ruleDeprecated:
			involved[r.recVar[ru.rec]] = true
		case ruleSubRequires:
			for _, c := range ru.sub.cands {
				involved[r.recVar[c]] = true
			}
		case ruleRequires:
			involved[r.recVar[ru.rec]] = true
			for _, c := range ru.di.cands {
				involved[r.recVar[c]] = true
			}
		}
	}
	multiCatalog := len(r.u.cats) > 1
	label := func(rec *record) string { return recordLabel(rec, multiCatalog) }

	var out []Conflict
	doneSub := map[*sub]bool{}
	for _, ru := range core {
		switch ru.kind {
		case ruleInstalled:
			out = append(out, Conflict{
				Kind:    ConflictInstalled,
				Message: fmt.Sprintf("%s is installed and no subscription names its package %s, so it stays", ru.rec.bundle.name, ru.rec.bundle.pkg),
				Bundles: []string{recordID(ru.rec)},
			})
		case ruleSubMandatory, ruleSubRequires:
			s := ru.sub
			if doneSub[s] {
				continue
			}
			doneSub[s] = true
			if len(s.cands) == 0 {
				msg := s.problem
				if msg == "" {
					msg = fmt.Sprintf("subscription %s has no candidates", s.name)
				}
				out = append(out, Conflict{Kind: ConflictNoCandidates, Message: msg})
				continue
			}
			ids := make([]string, len(s.cands))
			for i, c := range s.cands {
				ids[i] = recordID(c)
			}
			out = append(out, Conflict{
				Kind:    ConflictSubscription,
				Message: fmt.Sprintf("subscription %s needs %s", s.name, describeChoices(s.cands, multiCatalog)),
				Bundles: ids,
			})
		case ruleDeprecated:
			out = append(out, Conflict{
				Kind:    ConflictDeprecated,
				Message: fmt.Sprintf("%s is deprecated (it has an olm.deprecated property) and is never installed", label(ru.rec)),
				Bundles: []string{recordID(ru.rec)},
			})
		case ruleRequires:
			ids := []string{recordID(ru.rec)}
			for _, c := range ru.di.cands {
				ids = append(ids, recordID(c))
			}
			if len(ru.di.cands) == 0 {
				out = append(out, Conflict{
					Kind:    ConflictMissingDependency,
					Message: missingMessage(label(ru.rec), ru.di.dep),
					Bundles: ids,
				})
				continue
			}
			out = append(out, Conflict{
				Kind:    ConflictDependency,
				Message: fmt.Sprintf("%s requires %s, which only %s %s", label(ru.rec), ru.di.dep.describe(), joinOr(labels(ru.di.cands, multiCatalog)), provideVerb(ru.di.cands)),
				Bundles: ids,
			})
		case ruleOnePackage, ruleOneAPI:
			var members []*record
			for _, v := range ru.members {
				if involved[v] {
					members = append(members, r.vars[v].rec)
				}
			}
			if len(members) < 2 {
				members = members[:0]
				for _, v := range ru.members {
					members = append(members, r.vars[v].rec)
				}
			}
			ids := make([]string, len(members))
			for i, m := range members {
				ids[i] = recordID(m)
			}
			both := "both"
			if len(members) > 2 {
				both = "all"
			}
			if ru.kind == ruleOnePackage {
				out = append(out, Conflict{
					Kind:    ConflictPackage,
					Message: fmt.Sprintf("%s %s belong to package %s, and only one bundle of a package can be installed", joinAnd(labels(members, multiCatalog)), both, ru.pkg),
					Bundles: ids,
				})
				continue
			}
			out = append(out, Conflict{
				Kind: ConflictAPI,
				Message: fmt.Sprintf("%s %s provide kind %s in group %s (version %s), and only one bundle can provide an API",
					joinAnd(labels(members, multiCatalog)), both, ru.gvk.Kind, ru.gvk.Group, ru.gvk.Version),
				Bundles: ids,
			})
		}
	}
	return out
}

func provideVerb(cands []*record) string {
	if len(cands) == 1 {
		return "meets"
	}
	return "meet"
}

// missingMessage says that nothing meets a requirement.
func missingMessage(who string, d *dependency) string {
	switch p := d.pred.(type) {
	case gvkPredicate:
		return fmt.Sprintf("%s requires an API that nothing in the given catalogs provides: %s", who, p.describe())
	case packagePredicate:
		return fmt.Sprintf("%s requires %s, and no bundle in the given catalogs matches", who, p.describe())
	}
	return fmt.Sprintf("%s requires %s, and no bundle in the given catalogs matches", who, d.describe())
}

// describeChoices lists a subscription's candidates: "a.v2 or a.v1
// (channel stable)", "an upgrade of the installed a.v1 (a.v2 from channel
// stable) or keeping it".
func describeChoices(cands []*record, multiCatalog bool) string {
	var words []string
	for _, c := range cands {
		if c.installed() {
			words = append(words, "keeping the installed "+c.bundle.name)
			continue
		}
		words = append(words, recordLabel(c, multiCatalog))
	}
	if len(words) == 1 {
		return words[0]
	}
	return "one of " + joinOr(words)
}

// recordLabel names a record for people: "a.v1 (channel stable)",
// "a.v1 (catalog c, channel stable)", "a.v1 (installed)".
func recordLabel(rec *record, multiCatalog bool) string {
	if rec.installed() {
		return rec.bundle.name + " (installed)"
	}
	if multiCatalog {
		return fmt.Sprintf("%s (catalog %s, channel %s)", rec.bundle.name, rec.cat.name, rec.channel)
	}
	return fmt.Sprintf("%s (channel %s)", rec.bundle.name, rec.channel)
}

func labels(recs []*record, multiCatalog bool) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = recordLabel(r, multiCatalog)
	}
	return out
}
