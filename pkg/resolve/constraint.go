package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxConstraintSize is the largest olm.constraint value accepted, in bytes
// (OLM's limit).
const MaxConstraintSize = 131072

// maxConstraintDepth bounds the nesting of all, any and not. OLM has no
// such limit; encoding/json stops at 10000 levels, and 131072 bytes allow
// a few thousand, so this only refuses values no catalog writes.
const maxConstraintDepth = 100

// Constraint is the value of an olm.constraint property: an optional
// failure message and one constraint. When a value has several, the first
// of GVK, Package, All, Any, Not and Cel is the one used (OLM's order).
type Constraint struct {
	FailureMessage string              `json:"failureMessage,omitempty"`
	GVK            *GVKConstraint      `json:"gvk,omitempty"`
	Package        *PackageConstraint  `json:"package,omitempty"`
	All            *CompoundConstraint `json:"all,omitempty"`
	Any            *CompoundConstraint `json:"any,omitempty"`
	Not            *CompoundConstraint `json:"not,omitempty"`
	Cel            *CelConstraint      `json:"cel,omitempty"`
}

// GVKConstraint requires a bundle that provides an API (an olm.gvk
// property with the same group, version and kind).
type GVKConstraint struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// PackageConstraint requires a bundle of a package whose version is in a
// range (blang/semver syntax, as olm.package.required).
type PackageConstraint struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// CompoundConstraint holds the children of all, any and not.
type CompoundConstraint struct {
	Constraints []Constraint `json:"constraints"`
}

// CelConstraint is a CEL rule evaluated against a candidate's properties.
type CelConstraint struct {
	Rule string `json:"rule"`
}

// ErrEmptyConstraint is the error for a constraint with none of the keys.
var ErrEmptyConstraint = errors.New("constraint is empty")

// ParseConstraint decodes an olm.constraint value as OLM does: unknown
// fields are errors at every level, the value may not exceed
// MaxConstraintSize bytes, and every constraint (nested ones too) must have
// one of gvk, package, all, any, not or cel. It does not check version
// ranges or CEL rules; building a predicate does.
func ParseConstraint(raw []byte) (*Constraint, error) {
	if len(raw) > MaxConstraintSize {
		return nil, fmt.Errorf("total constraint size of %d bytes exceeds the limit of %d bytes", len(raw), MaxConstraintSize)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c Constraint
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	if err := c.check(0); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Constraint) check(depth int) error {
	if depth > maxConstraintDepth {
		return fmt.Errorf("constraints nested more than %d levels deep", maxConstraintDepth)
	}
	if c.GVK != nil || c.Package != nil {
		return nil
	}
	comp := c.compound()
	if comp == nil {
		if c.Cel != nil {
			return nil
		}
		return ErrEmptyConstraint
	}
	for i := range comp.Constraints {
		if err := comp.Constraints[i].check(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

// compound returns the all, any or not constraint in effect, if the
// constraint is compound.
func (c *Constraint) compound() *CompoundConstraint {
	switch {
	case c.GVK != nil, c.Package != nil:
		return nil
	case c.All != nil:
		return c.All
	case c.Any != nil:
		return c.Any
	case c.Not != nil:
		return c.Not
	}
	return nil
}
