package validate

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte("# rules\nstrict: true\nwarnAsError: [edge-target-missing]\nignore:\n  - gvk-required-unsatisfied\nbaseline: ci/baseline.json\n"), ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Strict || len(c.WarnAsError) != 1 || c.Ignore[0] != "gvk-required-unsatisfied" || c.Baseline != "ci/baseline.json" {
		t.Errorf("config = %+v", c)
	}
	if c, err := ParseConfig([]byte("  \n"), ConfigFile); err != nil || c.Strict {
		t.Errorf("empty config = %+v, %v", c, err)
	}
	for in, want := range map[string]string{
		"strict: yes please\n":     ConfigFile + `:1:9: strict: conflicting values bool and "yes please" (mismatched types bool and string)`,
		"ignor: [schema]\n":        ConfigFile + `:1:1: ignor: field not allowed`,
		"ignore: [no-such-rule]\n": `ignore: unknown rule "no-such-rule"`,
		"warnAsError: [nope]\n":    `warnAsError: unknown rule "nope"`,
		strings.Repeat("#", 2<<20): "larger than",
	} {
		if _, err := ParseConfig([]byte(in), ConfigFile); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%.30q) error = %v, want %q", in, err, want)
		}
	}
}
