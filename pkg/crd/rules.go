package crd

import "encoding/json"

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
// docs/crd.md), then the changes both OLMs accept.
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
	RuleUnhandled             = "unhandled-change"
	RuleExampleInvalid        = "example-invalid"
	RuleCRDRemoved            = "crd-removed"

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

// RuleInfo describes a rule.
type RuleInfo struct {
	Name string
	// Refused is who refuses a change of this rule (0 for the safe ones).
	Refused Refusal
	Summary string
}

// maxRules maps the numeric keywords to their rules.
var maxRules = [numKeys]string{
	kMaximum: RuleMaximumTightened, kMinimum: RuleMinimumTightened,
	kMaxLength: RuleMaxLengthTightened, kMinLength: RuleMinLengthTightened,
	kMaxItems: RuleMaxItemsTightened, kMinItems: RuleMinItemsTightened,
	kMaxProperties: RuleMaxPropertiesTightend, kMinProperties: RuleMinPropertiesTightend,
}

// Rules lists every rule, in documentation order.
var Rules = []RuleInfo{
	{RuleScopeChanged, RefusedByV1 | RefusedByClassic, "The CRD's scope changed (Namespaced <-> Cluster); the API server refuses it too."},
	{RuleStoredVersionRemoved, RefusedByV1 | RefusedByClassic, "A version the cluster may store objects in (the old storage version, or status.storedVersions) is gone."},
	{RuleServedVersionRemoved, RefusedByClassic, "A served version that holds no stored objects is gone or no longer served: OLM v1 allows it; OLM classic's documented rule for CRDs several CSVs own refuses it."},
	{RuleFieldRemoved, RefusedByV1, "A field of an existing version is gone."},
	{RuleTypeChanged, RefusedByV1, "A field's type changed."},
	{RuleRequiredAdded, RefusedByV1, "A field became required."},
	{RuleEnumAdded, RefusedByV1, "An enum restriction was added to a field that had none."},
	{RuleEnumValueRemoved, RefusedByV1, "Values were removed from a field's enum."},
	{RuleDefaultAdded, RefusedByV1, "A default was added to a field that had none."},
	{RuleDefaultChanged, RefusedByV1, "A field's default changed."},
	{RuleDefaultRemoved, RefusedByV1, "A field's default was removed."},
	{RuleMaximumTightened, RefusedByV1, "maximum was added or decreased."},
	{RuleMaxLengthTightened, RefusedByV1, "maxLength was added or decreased."},
	{RuleMaxItemsTightened, RefusedByV1, "maxItems was added or decreased."},
	{RuleMaxPropertiesTightend, RefusedByV1, "maxProperties was added or decreased."},
	{RuleMinimumTightened, RefusedByV1, "minimum was added or increased."},
	{RuleMinLengthTightened, RefusedByV1, "minLength was added or increased."},
	{RuleMinItemsTightened, RefusedByV1, "minItems was added or increased."},
	{RuleMinPropertiesTightend, RefusedByV1, "minProperties was added or increased."},
	{RulePatternChanged, RefusedByV1, "A field's pattern was added, changed or removed."},
	{RuleNullableChanged, RefusedByV1, "A field's nullable was added or removed."},
	{RuleOneOfChanged, RefusedByV1, "A field's oneOf was added, or entries were added or removed."},
	{RuleUnhandled, RefusedByV1, "Any other change of a field's schema (format, x-kubernetes-*, allOf, anyOf, not, additionalProperties, ...): OLM v1 refuses what it cannot tell is safe."},
	{RuleExampleInvalid, RefusedByClassic, "An example custom resource of the old bundle (its CSV's alm-examples), valid under the old CRD, is invalid under the new one; OLM classic refuses an upgrade whose existing custom resources fail the new schema (unless the new CRD converts through a webhook)."},
	{RuleCRDRemoved, 0, "The new bundle no longer ships a CRD the old one did: neither OLM refuses it, but nothing upgrades that CRD any more."},

	{RuleDescriptionChanged, 0, "A description changed."},
	{RuleFieldAdded, 0, "An optional field was added."},
	{RuleVersionAdded, 0, "A version was added."},
	{RuleEnumValueAdded, 0, "Values were added to a field's enum (OLM v1 allows it)."},
	{RuleRequiredRemoved, 0, "A required field became optional."},
	{RuleConstraintLoosened, 0, "A minimum or maximum bound was removed, lowered (minimums) or raised (maximums)."},
	{RuleStorageMoved, 0, "Another version became the storage version; the old one stays."},
	{RuleCRDAdded, 0, "The new bundle ships a CRD the old one did not."},
}

// Rule returns the rule called name.
func Rule(name string) (RuleInfo, bool) {
	for _, r := range Rules {
		if r.Name == name {
			return r, true
		}
	}
	return RuleInfo{}, false
}

// UnsafeRules returns the names of the rules whose changes some OLM
// refuses.
func UnsafeRules() []string {
	var out []string
	for _, r := range Rules {
		if r.Refused != 0 || r.Name == RuleCRDRemoved {
			out = append(out, r.Name)
		}
	}
	return out
}
