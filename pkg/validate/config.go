package validate

import (
	"bytes"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ConfigFile is the name of the configuration file `opm validate` reads
// from the root of a catalog directory, so that a repository states its
// rule options once.
//
// Upstream opm loads every file of a catalog directory as FBC, dotfiles
// included: a repository keeps the file out of its catalog by listing it
// in .indexignore, as it does for a README (the file is then invisible to
// upstream, render and serve, and the catalog's verdict is unchanged).
const ConfigFile = ".opm-validate.yaml"

// MaxConfigSize bounds the size of a configuration file read.
const MaxConfigSize = 1 << 20

// Config is the content of a ConfigFile, and of a policy file (see
// policy.go): the rule options of the command line, which add to it
// (--strict and --warn-as-error add rules, --ignore adds ignored rules,
// --baseline replaces the baseline), and the release gate's settings.
type Config struct {
	// Strict turns every warning into an error.
	Strict bool `json:"strict,omitempty"`
	// WarnAsError turns the warnings of these rules into errors.
	WarnAsError []string `json:"warnAsError,omitempty"`
	// Ignore drops the findings of these rules.
	Ignore []string `json:"ignore,omitempty"`
	// Baseline is a baseline file (see Baseline), relative to the catalog
	// root and inside it.
	Baseline string `json:"baseline,omitempty"`

	// Policy is the policy this configuration starts from: a preset name
	// or a file, relative to this one (see LoadPolicy).
	Policy string `json:"policy,omitempty"`
	// OCPVersion is the OpenShift version the catalog is built for, and
	// KubeVersion the Kubernetes version it ships (for versions opm does
	// not know).
	OCPVersion  string `json:"ocpVersion,omitempty"`
	KubeVersion string `json:"kubeVersion,omitempty"`
	// Rules sets the level of rules: error, warning or off.
	Rules map[string]Level `json:"rules,omitempty"`
	// Allow are the release gate's allow-lists.
	Allow *Allow `json:"allow,omitempty"`
}

// ParseConfig parses a ConfigFile: YAML (or JSON) with only the fields of
// Config, whose rule codes must all be known. Errors name file.
func ParseConfig(data []byte, file string) (*Config, error) {
	if len(data) > MaxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, MaxConfigSize)
	}
	var c Config
	if len(bytes.TrimSpace(data)) > 0 {
		if err := checkPolicySchema(data, file); err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	// A file's unknown rule is a problem of the file read, not of the
	// command line: a plain error (exit 1), not an *OptionError.
	if err := CheckRules(file+": warnAsError", c.WarnAsError); err != nil {
		return nil, errors.New(err.Error())
	}
	if err := CheckRules(file+": ignore", c.Ignore); err != nil {
		return nil, errors.New(err.Error())
	}
	if err := c.checkRules(file); err != nil {
		return nil, err
	}
	return &c, nil
}
