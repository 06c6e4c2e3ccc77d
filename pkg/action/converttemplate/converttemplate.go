// Package converttemplate is the action of `opm alpha convert-template`:
// turn a file-based catalog into a basic or substitutes template.
package converttemplate

import (
	"fmt"
	"io"

	"github.com/opmkit/opm/pkg/template"
	"github.com/opmkit/opm/pkg/template/basic"
	"github.com/opmkit/opm/pkg/template/substitutes"
)

// Options configure a conversion.
type Options struct {
	// Type is basic or substitutes.
	Type template.Type
	// Input is the FBC (a YAML or JSON stream of blobs); Name names it in
	// messages.
	Input io.Reader
	Name  string
}

// Result is the template, ready for template.WriteConverted.
type Result struct {
	Template any
}

// Run converts the FBC.
func Run(opts Options) (*Result, error) {
	name := opts.Name
	if name == "" {
		name = "<stdin>"
	}
	data, err := template.ReadInput(opts.Input)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	var t any
	switch opts.Type {
	case template.Basic:
		t, err = basic.FromFBC(data, name)
	case template.Substitutes:
		t, err = substitutes.FromFBC(data, name)
	default:
		return nil, fmt.Errorf("cannot convert to a %q template (want basic or substitutes)", opts.Type)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Template: t}, nil
}
