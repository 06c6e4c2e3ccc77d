package crd

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
)

// Refusal says which OLM refuses an upgrade because of a change.
type Refusal uint8

// Refusal bits.
const (
	// RefusedByV1 is OLM v1's CRD Upgrade Safety preflight
	// (operator-controller), with its default configuration.
	RefusedByV1 Refusal = 1 << iota
	// RefusedByClassic is OLM classic's catalog operator (or the API
	// server it sends the new CRD to).
	RefusedByClassic
)

// String names the refusing OLMs: "OLM v1 and OLM classic", "OLM v1",
// "OLM classic" or "neither".
func (r Refusal) String() string {
	switch r {
	case RefusedByV1 | RefusedByClassic:
		return "OLM v1 and OLM classic"
	case RefusedByV1:
		return "OLM v1"
	case RefusedByClassic:
		return "OLM classic"
	}
	return "neither"
}

// MarshalJSON writes the list of refusing OLMs (see List).
func (r Refusal) MarshalJSON() ([]byte, error) { return json.Marshal(r.List()) }

// List returns "v1" and/or "classic", for JSON.
func (r Refusal) List() []string {
	out := []string{}
	if r&RefusedByV1 != 0 {
		out = append(out, "v1")
	}
	if r&RefusedByClassic != 0 {
		out = append(out, "classic")
	}
	return out
}

// Rule names, one per kind of change. Unsafe rules first (in the order of
// docs/crd.md), then the checks that could not run, then the changes both
// OLMs accept.
const (
	RuleScopeChanged          = "scope-changed"
	RuleStoredVersionRemoved  = "stored-version-removed"
	RuleServedVersionRemoved  = "served-version-removed"
	RuleFieldRemoved          = "field-removed"
	RuleTypeChanged           = "type-changed"
	RuleRequiredAdded         = "required-added"
	RuleEnumAdded             = "enum-added"
	RuleEnumValueRemoved      = "enum-value-removed"
	RuleDefaultAdded          = "default-added"
	RuleDefaultChanged        = "default-changed"
	RuleDefaultRemoved        = "default-removed"
	RuleMaximumTightened      = "maximum-tightened"
	RuleMaxLengthTightened    = "max-length-tightened"
	RuleMaxItemsTightened     = "max-items-tightened"
	RuleMaxPropertiesTightend = "max-properties-tightened"
	RuleMinimumTightened      = "minimum-tightened"
	RuleMinLengthTightened    = "min-length-tightened"
	RuleMinItemsTightened     = "min-items-tightened"
	RuleMinPropertiesTightend = "min-properties-tightened"
	RulePatternChanged        = "pattern-changed"
	RuleNullableChanged       = "nullable-changed"
	RuleOneOfChanged          = "one-of-changed"
	// RuleUnclassified is a change OLM v1 has no rule for, and so refuses.
	RuleUnclassified   = "unclassified-change"
	RuleExampleInvalid = "example-invalid"
	RuleCRDRemoved     = "crd-removed"

	// Checks that could not run: neither OLM refuses the upgrade for them,
	// but the upgrade was not checked in full.
	RuleLimitReached       = "limit-reached"
	RuleExamplesNotChecked = "examples-not-checked"

	// Changes both OLMs accept.
	RuleDescriptionChanged = "description-changed"
	RuleFieldAdded         = "field-added"
	RuleVersionAdded       = "version-added"
	RuleEnumValueAdded     = "enum-value-added"
	RuleRequiredRemoved    = "required-removed"
	RuleConstraintLoosened = "constraint-loosened"
	RuleStorageMoved       = "storage-version-changed"
	RuleCRDAdded           = "crd-added"
)

// RuleAliases are former rule names, still accepted where users name
// rules (e.g. --ignore), and the rules they name now.
var RuleAliases = map[string]string{
	"unhandled-change": RuleUnclassified,
}

// RuleInfo describes a rule.
type RuleInfo struct {
	Name string
	// Refused is who refuses a change of this rule (0 for the safe ones,
	// crd-removed and the checks that could not run).
	Refused Refusal
	// Safe is set for the changes that lose nothing and neither OLM
	// refuses.
	Safe bool
	// NotChecked is set for the rules that say a check could not run.
	NotChecked bool
	Summary    string
	// Hint says how to fix a change of the rule (unsafe rules only).
	Hint string
}

// maxRules maps the numeric keywords to their rules.
var maxRules = [numKeys]string{
	kMaximum: RuleMaximumTightened, kMinimum: RuleMinimumTightened,
	kMaxLength: RuleMaxLengthTightened, kMinLength: RuleMinLengthTightened,
	kMaxItems: RuleMaxItemsTightened, kMinItems: RuleMinItemsTightened,
	kMaxProperties: RuleMaxPropertiesTightend, kMinProperties: RuleMinPropertiesTightend,
}

const (
	hintBound       = "keep the bound as loose as it was; tighten it in a new API version (served beside the old one, with a conversion webhook)"
	hintNewVersion  = "in a new API version (served beside the old one, with a conversion webhook)"
	hintLimit       = "opm does not compare CRDs this large (docs/crd.md, \"Limits\"): check the upgrade on a test cluster, or make the CRD smaller"
	hintExampleFix  = "make the CSV's alm-examples a JSON list of at most 1000 objects, each small enough to validate"
	hintDefaultKeep = "keep the default as it was; "
)

// Rules lists every rule, in documentation order.
var Rules = []RuleInfo{
	{Name: RuleScopeChanged, Refused: RefusedByV1 | RefusedByClassic,
		Summary: "The CRD's scope changed (Namespaced <-> Cluster); the API server refuses it too.",
		Hint:    "keep the scope; a CRD of the other scope is a new CRD (another group or plural), and its custom resources must be recreated"},
	{Name: RuleStoredVersionRemoved, Refused: RefusedByV1 | RefusedByClassic,
		Summary: "A version the cluster may store objects in (the old storage version, or status.storedVersions) is gone.",
		Hint:    "keep the version (served: false stops serving it) until a storage migration has rewritten every object in another version and status.storedVersions no longer lists it"},
	{Name: RuleServedVersionRemoved, Refused: RefusedByClassic,
		Summary: "A served version that holds no stored objects is gone or no longer served: OLM v1 allows it; OLM classic's documented rule for CRDs several CSVs own refuses it.",
		Hint:    "keep serving the version for a release (deprecated: true warns its clients), then remove it; under OLM v1 alone (--olm v1) the removal is accepted"},
	{Name: RuleFieldRemoved, Refused: RefusedByV1,
		Summary: "A field of an existing version is gone.",
		Hint:    "keep the field (say in its description that it is deprecated and ignored), or remove it " + hintNewVersion},
	{Name: RuleTypeChanged, Refused: RefusedByV1,
		Summary: "A field's type changed.",
		Hint:    "keep the type and add a field of the new type beside it, or change it " + hintNewVersion},
	{Name: RuleRequiredAdded, Refused: RefusedByV1,
		Summary: "A field became required.",
		Hint:    "keep the field optional (the operator can default it), or require it " + hintNewVersion},
	{Name: RuleEnumAdded, Refused: RefusedByV1,
		Summary: "An enum restriction was added to a field that had none.",
		Hint:    "leave the field without an enum (the operator can reject bad values), or restrict it " + hintNewVersion},
	{Name: RuleEnumValueRemoved, Refused: RefusedByV1,
		Summary: "Values were removed from a field's enum.",
		Hint:    "keep the values in the enum (the operator can reject them), or remove them " + hintNewVersion},
	{Name: RuleDefaultAdded, Refused: RefusedByV1,
		Summary: "A default was added to a field that had none.",
		Hint:    "leave the field without a default (the operator can apply one), or add it " + hintNewVersion},
	{Name: RuleDefaultChanged, Refused: RefusedByV1,
		Summary: "A field's default changed.",
		Hint:    hintDefaultKeep + "change it " + hintNewVersion},
	{Name: RuleDefaultRemoved, Refused: RefusedByV1,
		Summary: "A field's default was removed.",
		Hint:    hintDefaultKeep + "remove it " + hintNewVersion},
	{Name: RuleMaximumTightened, Refused: RefusedByV1, Summary: "maximum was added or decreased.", Hint: hintBound},
	{Name: RuleMaxLengthTightened, Refused: RefusedByV1, Summary: "maxLength was added or decreased.", Hint: hintBound},
	{Name: RuleMaxItemsTightened, Refused: RefusedByV1, Summary: "maxItems was added or decreased.", Hint: hintBound},
	{Name: RuleMaxPropertiesTightend, Refused: RefusedByV1, Summary: "maxProperties was added or decreased.", Hint: hintBound},
	{Name: RuleMinimumTightened, Refused: RefusedByV1, Summary: "minimum was added or increased.", Hint: hintBound},
	{Name: RuleMinLengthTightened, Refused: RefusedByV1, Summary: "minLength was added or increased.", Hint: hintBound},
	{Name: RuleMinItemsTightened, Refused: RefusedByV1, Summary: "minItems was added or increased.", Hint: hintBound},
	{Name: RuleMinPropertiesTightend, Refused: RefusedByV1, Summary: "minProperties was added or increased.", Hint: hintBound},
	{Name: RulePatternChanged, Refused: RefusedByV1,
		Summary: "A field's pattern was added, changed or removed.",
		Hint:    "keep the pattern as it was; change it " + hintNewVersion},
	{Name: RuleNullableChanged, Refused: RefusedByV1,
		Summary: "A field's nullable was added or removed.",
		Hint:    "keep nullable as it was; change it " + hintNewVersion},
	{Name: RuleOneOfChanged, Refused: RefusedByV1,
		Summary: "A field's oneOf was added, or entries were added or removed.",
		Hint:    "keep the oneOf entries as they were; change them " + hintNewVersion},
	{Name: RuleUnclassified, Refused: RefusedByV1,
		Summary: "Any other change of a field's schema (format, x-kubernetes-* including CEL rules, allOf, anyOf, not, additionalProperties, ...): OLM v1 has no rule for it, and refuses what it cannot tell is safe (formerly unhandled-change).",
		Hint:    "keep the keyword as it was; OLM v1 accepts no change it has no rule for, so make it " + hintNewVersion},
	{Name: RuleExampleInvalid, Refused: RefusedByClassic,
		Summary: "An example custom resource of the old bundle (its CSV's alm-examples), valid under the old CRD, is invalid under the new one; OLM classic refuses an upgrade whose existing custom resources fail the new schema (unless the new CRD converts through a webhook).",
		Hint:    "keep the new schema accepting what the old one accepted (the error names the field), or convert through a webhook"},
	{Name: RuleCRDRemoved,
		Summary: "The new bundle no longer ships a CRD the old one did: neither OLM refuses it, but nothing upgrades that CRD any more.",
		Hint:    "keep shipping the CRD, or tell users to delete it and its custom resources: no bundle upgrades or removes it any more"},

	{Name: RuleLimitReached, NotChecked: true,
		Summary: "The comparison of a CRD stopped at a limit (too many served versions, schema nodes compared, or changes): the rest of the CRD was not checked.",
		Hint:    hintLimit},
	{Name: RuleExamplesNotChecked, NotChecked: true,
		Summary: "The old bundle's examples (alm-examples) could not be checked against the new CRDs: they do not parse, there are more than 1,000, or validating one took more than its budget of steps.",
		Hint:    hintExampleFix},

	{Name: RuleDescriptionChanged, Safe: true, Summary: "A description changed."},
	{Name: RuleFieldAdded, Safe: true, Summary: "An optional field was added."},
	{Name: RuleVersionAdded, Safe: true, Summary: "A version was added."},
	{Name: RuleEnumValueAdded, Safe: true, Summary: "Values were added to a field's enum (OLM v1 allows it)."},
	{Name: RuleRequiredRemoved, Safe: true, Summary: "A required field became optional."},
	{Name: RuleConstraintLoosened, Safe: true, Summary: "A minimum or maximum bound was removed, lowered (minimums) or raised (maximums)."},
	{Name: RuleStorageMoved, Safe: true, Summary: "Another version became the storage version; the old one stays."},
	{Name: RuleCRDAdded, Safe: true, Summary: "The new bundle ships a CRD the old one did not."},
}

// ruleIndex is Rules by name.
var ruleIndex = func() map[string]RuleInfo {
	m := make(map[string]RuleInfo, len(Rules))
	for _, r := range Rules {
		m[r.Name] = r
	}
	return m
}()

// Rule returns the rule called name (or a former name of it, see
// RuleAliases).
func Rule(name string) (RuleInfo, bool) {
	if to, ok := RuleAliases[name]; ok {
		name = to
	}
	r, ok := ruleIndex[name]
	return r, ok
}

// UnsafeRules returns the names of the rules that are not safe: those
// some OLM refuses, crd-removed, and the checks that could not run.
func UnsafeRules() []string {
	var out []string
	for _, r := range Rules {
		if !r.Safe {
			out = append(out, r.Name)
		}
	}
	return out
}

// CodePrefix prefixes a rule's name in opm validate's rule codes:
// crd-field-removed is field-removed (crd-removed is itself).
const CodePrefix = "crd-"

// Code returns the opm validate rule code of a rule: crd-field-removed
// for field-removed, crd-removed for crd-removed.
func Code(rule string) string {
	return CodePrefix + strings.TrimPrefix(rule, CodePrefix)
}

// SelectRules returns the rules that names select: rule names, their opm
// validate codes (crd-field-removed), former names (see RuleAliases), and
// globs of either (path.Match's syntax: crd-*, *-tightened). A name that
// is none of these, or a glob that matches no rule, is an error.
func SelectRules(names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, n := range names {
		if !strings.ContainsAny(n, "*?[") {
			r, ok := Rule(n)
			if !ok {
				r, ok = Rule(strings.TrimPrefix(n, CodePrefix))
			}
			if !ok {
				all := make([]string, len(Rules))
				for i, r := range Rules {
					all[i] = r.Name
				}
				e := suggest.Unknown("rule", n, "", all)
				e.Hint = "docs/crd.md lists the rules"
				return nil, e
			}
			out[r.Name] = true
			continue
		}
		if _, err := path.Match(n, ""); err != nil {
			return nil, fmt.Errorf("%q: %w", n, err)
		}
		found := false
		for _, r := range Rules {
			a, _ := path.Match(n, r.Name)
			b, _ := path.Match(n, Code(r.Name))
			if a || b {
				out[r.Name] = true
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%q matches no rule; docs/crd.md lists the rules", n)
		}
	}
	return out, nil
}

// OLM names accepted by ParseOLM.
var OLMNames = []string{"both", "v1", "classic"}

// ParseOLM reads the name of the OLM a check is aimed at: "v1" (OLM v1),
// "classic" (OLM classic) or "both" (and "").
func ParseOLM(s string) (Refusal, error) {
	switch s {
	case "", "both":
		return RefusedByV1 | RefusedByClassic, nil
	case "v1":
		return RefusedByV1, nil
	case "classic":
		return RefusedByClassic, nil
	}
	return 0, fmt.Errorf("unknown OLM %q: want %s", s, strings.Join(OLMNames, ", "))
}
