package basic

import (
	"encoding/json"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/template"
)

// Converted is a basic template made from an FBC, in upstream's field
// order. Marshal it with template.WriteConverted.
type Converted struct {
	Schema  string            `json:"schema"`
	Entries []json.RawMessage `json:"entries"`
}

// FromFBC turns the FBC stream data (YAML or JSON, as catalogs are read)
// into a basic template: every blob becomes an entry, in order; bundles
// are reduced to {schema, image}; the others keep their normalised form.
// file names the input in messages.
func FromFBC(data []byte, file string) (*Converted, error) {
	out := &Converted{Schema: template.SchemaBasic}
	err := declcfg.WalkMetas(data, file, func(m declcfg.Meta) error {
		if m.Schema == declcfg.SchemaBundle {
			stub, err := BundleStub(m)
			if err != nil {
				return err
			}
			out.Entries = append(out.Entries, stub)
			return nil
		}
		out.Entries = append(out.Entries, json.RawMessage(m.Blob))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BundleStub returns the basic-template entry of an olm.bundle blob:
// {"schema":"olm.bundle","image":"..."}.
func BundleStub(m declcfg.Meta) (json.RawMessage, error) {
	var b declcfg.Bundle
	if err := json.Unmarshal(m.Blob, &b); err != nil {
		return nil, &declcfg.LoadError{Pos: m.Pos, Err: fmt.Errorf("parse bundle: %v", err)}
	}
	stub, err := json.Marshal(declcfg.Bundle{Schema: b.Schema, Image: b.Image})
	if err != nil {
		return nil, err
	}
	return stub, nil
}
