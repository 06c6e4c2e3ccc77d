package substitutes

import (
	"encoding/json"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/template"
)

// Converted is a substitutes template made from an FBC, in upstream's field
// order. Marshal it with template.WriteConverted.
type Converted struct {
	Schema        string            `json:"schema"`
	Entries       []json.RawMessage `json:"entries"`
	Substitutions []Substitution    `json:"substitutions"`
}

// FromFBC turns the FBC stream data (YAML or JSON, as catalogs are read)
// into a substitutes template: every blob becomes an entry, as it is, in
// order, and the list of substitutions is empty. file names the input in
// messages.
func FromFBC(data []byte, file string) (*Converted, error) {
	out := &Converted{Schema: template.SchemaSubstitutes, Substitutions: []Substitution{}}
	err := declcfg.WalkMetas(data, file, func(m declcfg.Meta) error {
		out.Entries = append(out.Entries, json.RawMessage(m.Blob))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
