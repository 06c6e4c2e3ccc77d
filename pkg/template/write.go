package template

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/pkg/declcfg"
)

// WriteConverted writes a template made by convert-template as upstream
// does: JSON indented by four spaces (with HTML characters escaped) and a
// newline, or "---\n" and the YAML form (keys sorted) and an empty line.
func WriteConverted(w io.Writer, v any, format string) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	switch format {
	case "json":
		b = append(b, '\n')
	case "yaml":
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return fmt.Errorf("cannot write as YAML: %w%s", err, declcfg.YAMLHint(err))
		}
		b = append(append([]byte("---\n"), y...), '\n')
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	_, err = w.Write(b)
	return err
}
