package bundlevalidate

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Alpha1 is operator-sdk's `-o json-alpha1` result of one bundle.
type Alpha1 struct {
	Passed  bool           `json:"passed"`
	Outputs []Alpha1Output `json:"outputs"`
}

// Alpha1Output is one message of an Alpha1 result.
type Alpha1Output struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Alpha1 returns r as operator-sdk prints it: the bundle format's errors
// as one message, then every other finding's upstream message, in
// upstream's order.
func (r *Report) Alpha1() Alpha1 {
	out := Alpha1{Passed: r.Passed()}
	var format []string
	for _, f := range r.Findings {
		if f.format {
			format = append(format, f.Upstream)
		}
	}
	if len(format) > 0 {
		out.Outputs = append(out.Outputs, Alpha1Output{Type: "error",
			Message: "error validating format in " + r.Dir + ": Bundle validation errors: " + strings.Join(format, ",")})
	}
	for _, f := range r.Findings {
		if f.format {
			continue
		}
		out.Outputs = append(out.Outputs, Alpha1Output{Type: string(f.Severity), Message: f.Upstream})
	}
	return out
}

// alpha1Named is an Alpha1 result with the bundle it is about, for
// several bundles at once.
type alpha1Named struct {
	Bundle  string         `json:"bundle"`
	Passed  bool           `json:"passed"`
	Outputs []Alpha1Output `json:"outputs"`
}

// WriteAlpha1 writes the reports in operator-sdk's json-alpha1 form: one
// bundle as operator-sdk prints it (4-space indent, HTML escaped), several
// as an array of such results, each with a "bundle" key naming its
// source.
func WriteAlpha1(w io.Writer, reports []*Report) error {
	var v any
	if len(reports) == 1 {
		v = reports[0].Alpha1()
	} else {
		list := make([]alpha1Named, len(reports))
		for i, r := range reports {
			a := r.Alpha1()
			list[i] = alpha1Named{Bundle: r.Source, Passed: a.Passed, Outputs: a.Outputs}
		}
		v = list
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(b)
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}
