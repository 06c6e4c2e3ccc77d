package validate

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	cueyaml "cuelang.org/go/encoding/yaml"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/schemas"
)

// Release policies.
//
// A policy is a configuration file with the fields of .opm-validate.yaml
// (strict, warnAsError, ignore) and the release gate's: the level of any
// rule (rules: {code: error|warning|off}), the target OpenShift version,
// and the allow-lists. A policy may start from another (policy: konflux,
// or a file); the catalog's .opm-validate.yaml may name one too. The
// layers apply in order, later ones overriding earlier ones: the policy
// and those it starts from (base first), the catalog's .opm-validate.yaml,
// the command line. Every file is checked against schemas/policy.cue.

// Level is how a rule's findings count.
type Level string

// Levels.
const (
	LevelError   Level = "error"
	LevelWarning Level = "warning"
	LevelOff     Level = "off"
)

// UnmarshalJSON accepts error, warning and off, and false for off (YAML
// 1.1 reads a bare off as false, which the YAML decoder hands over as
// false or "false").
func (l *Level) UnmarshalJSON(b []byte) error {
	if string(b) == "false" {
		*l = LevelOff
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a rule's level is error, warning or off")
	}
	switch Level(s) {
	case "false":
		*l = LevelOff
		return nil
	case LevelError, LevelWarning, LevelOff:
		*l = Level(s)
		return nil
	}
	return fmt.Errorf("level %q: expected error, warning or off", s)
}

// Allow are the release gate's allow-lists.
type Allow struct {
	// BundleRegistries and RelatedImageRegistries are the prefixes bundle
	// and related images must start with.
	BundleRegistries       []string `json:"bundleRegistries,omitempty"`
	RelatedImageRegistries []string `json:"relatedImageRegistries,omitempty"`
	// Kinds are bundle object kinds accepted besides those OLM installs
	// on the target.
	Kinds []string `json:"kinds,omitempty"`
	// PreReleaseChannels: channels whose names contain one of these may
	// lose entries (opm catalog diff --fail-on pruned).
	PreReleaseChannels []string `json:"preReleaseChannels,omitempty"`
}

// DefaultPreReleaseChannels are the substrings that make a channel a
// pre-release one, as Konflux's fbc-target-index-pruning-check reads them.
var DefaultPreReleaseChannels = []string{"candidate", "dev-preview", "pre-ga"}

//go:embed policies/*.yaml
var presetFS embed.FS

// PolicyPresets are the names of the built-in policies.
var PolicyPresets = []string{"community", "konflux"}

// Preset returns the text of a built-in policy.
func Preset(name string) ([]byte, bool) {
	if !slices.Contains(PolicyPresets, name) {
		return nil, false
	}
	data, err := presetFS.ReadFile("policies/" + name + ".yaml")
	return data, err == nil
}

// checkRules checks the rules map of a configuration file: known codes,
// and no rule upstream enforces turned off or made a warning.
func (c *Config) checkRules(file string) error {
	codes := make([]string, 0, len(c.Rules))
	for code := range c.Rules {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	if err := CheckRules(file+": rules", codes); err != nil {
		return errors.New(err.Error())
	}
	for _, code := range codes {
		if lv := c.Rules[code]; lv != LevelError && !Ignorable(code) {
			return fmt.Errorf("%s: rules: %s: rule %q cannot be %s: upstream opm rejects catalogs that break it", file, code, code, levelWord(lv))
		}
	}
	return nil
}

func levelWord(l Level) string {
	if l == LevelOff {
		return "turned off"
	}
	return "made a warning"
}

// policySchema is schemas/policy.cue, compiled once. A cue.Context is not
// safe for concurrent use: mu guards it.
var policySchema struct {
	once sync.Once
	mu   sync.Mutex
	ctx  *cue.Context
	def  cue.Value
	err  error
}

// checkPolicySchema checks a configuration or policy file against
// #Policy, naming the file, line and column of each problem.
func checkPolicySchema(data []byte, file string) error {
	ps := &policySchema
	ps.once.Do(func() {
		src, err := schemas.FS.ReadFile("policy.cue")
		if err != nil {
			ps.err = err
			return
		}
		ps.ctx = cuecontext.New()
		v := ps.ctx.CompileBytes(src, cue.Filename("schemas/policy.cue"))
		ps.def = v.LookupPath(cue.ParsePath("#Policy"))
		ps.err = ps.def.Err()
	})
	if ps.err != nil {
		return fmt.Errorf("schemas/policy.cue: %w", ps.err)
	}
	f, err := cueyaml.Extract(file, data)
	if err != nil {
		return fmt.Errorf("%s: %s", file, strings.TrimSpace(cueerrors.Details(err, nil)))
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	v := ps.ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		return fmt.Errorf("%s: %s", file, strings.TrimSpace(cueerrors.Details(err, nil)))
	}
	err = ps.def.Unify(v).Validate(cue.Concrete(true))
	if err == nil {
		return nil
	}
	var lines []string
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if strings.HasSuffix(msg, "errors in empty disjunction:") {
			continue
		}
		where := file
		for _, p := range append([]token.Pos{e.Position()}, e.InputPositions()...) {
			if p.Filename() == file && p.Line() > 0 {
				where = fmt.Sprintf("%s:%d:%d", file, p.Line(), p.Column())
				break
			}
		}
		path := trimDef(e.Path())
		if len(path) == 2 && path[0] == "rules" {
			// the disjunction of levels fails four times: say it once
			msg = "a rule's level is error, warning or off"
		}
		if p := formatPath(path); p != "" {
			msg = p + ": " + msg
		}
		if l := where + ": " + msg; !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return errors.New(strings.Join(lines, "\n"))
}

// trimDef drops the definition CUE starts a path with.
func trimDef(p []string) []string {
	if len(p) > 0 && strings.HasPrefix(p[0], "#") {
		return p[1:]
	}
	return p
}

// maxPolicyDepth bounds the chain of policies starting from others.
const maxPolicyDepth = 8

// PolicyLayer is one configuration applied: a policy, the catalog's
// .opm-validate.yaml, or the command line.
type PolicyLayer struct {
	Name   string
	Config *Config
	// option marks the command line, whose problems are usage errors.
	option bool
}

// CommandLineLayer is the layer of the command line's rule options.
func CommandLineLayer(strict bool, warnAsError, ignore []string) PolicyLayer {
	return PolicyLayer{Name: "the command line", Config: &Config{Strict: strict, WarnAsError: warnAsError, Ignore: ignore}, option: true}
}

// LoadPolicy reads the policy name, a preset or a file, and the policies
// it starts from, base first. Files are read with read; a file named in
// a file is relative to its directory. A preset name wins over a file of
// that name (write ./konflux for the file).
func LoadPolicy(name string, read func(file string) ([]byte, error)) ([]PolicyLayer, error) {
	var chain []PolicyLayer
	seen := map[string]bool{}
	dir, from := "", ""
	for name != "" {
		if len(chain) == maxPolicyDepth {
			return nil, fmt.Errorf("%s: policies start from one another more than %d deep", from, maxPolicyDepth)
		}
		data, ok := Preset(name)
		file := name
		if !ok {
			if !path.IsAbs(name) && dir != "" {
				file = path.Join(dir, name)
			}
			var err error
			if data, err = read(file); err != nil {
				if from != "" {
					return nil, fmt.Errorf("%s: policy %s: %w", from, name, err)
				}
				return nil, fmt.Errorf("policy %s: %w", name, err)
			}
			dir = path.Dir(file)
		}
		if seen[file] {
			return nil, fmt.Errorf("%s: policy %s starts from itself", from, name)
		}
		seen[file] = true
		c, err := ParseConfig(data, file)
		if err != nil {
			return nil, err
		}
		if c.Baseline != "" {
			return nil, fmt.Errorf("%s: baseline: a baseline belongs to one catalog, in its %s", file, ConfigFile)
		}
		chain = append([]PolicyLayer{{Name: file, Config: c}}, chain...)
		from, name = file, c.Policy
	}
	return chain, nil
}

// Policy is the result of applying policy layers.
type Policy struct {
	// Names are the policies applied (presets and files), base first.
	Names  []string
	Strict bool
	// Levels are the rule levels set by some layer.
	Levels      map[string]Level
	OCPVersion  string
	KubeVersion string
	Allow       Allow
}

// ResolvePolicy applies the layers in order. Within one layer a rule set
// to two levels is an error (an *OptionError for the command line); a
// later layer overrides an earlier one.
func ResolvePolicy(layers []PolicyLayer) (*Policy, error) {
	p := &Policy{Levels: map[string]Level{}}
	for _, l := range layers {
		c := l.Config
		mine := map[string]Level{}
		var conflict error
		set := func(code string, lv Level) {
			if prev, ok := mine[code]; ok && prev != lv && conflict == nil {
				msg := fmt.Sprintf("%s: rule %q is both %s and %s", l.Name, code, levelName(prev), levelName(lv))
				if l.option {
					conflict = &OptionError{Msg: fmt.Sprintf("rule %q is both %s and %s", code, levelName(prev), levelName(lv))}
				} else {
					conflict = errors.New(msg)
				}
			}
			mine[code] = lv
		}
		codes := make([]string, 0, len(c.Rules))
		for code := range c.Rules {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			set(code, c.Rules[code])
		}
		for _, code := range c.WarnAsError {
			set(code, LevelError)
		}
		for _, code := range c.Ignore {
			set(code, LevelOff)
		}
		if conflict != nil {
			return nil, conflict
		}
		for code, lv := range mine {
			p.Levels[code] = lv
		}
		if !l.option && l.Name != ConfigFile && !strings.HasSuffix(l.Name, "/"+ConfigFile) {
			p.Names = append(p.Names, l.Name)
		}
		p.Strict = p.Strict || c.Strict
		if c.OCPVersion != "" {
			p.OCPVersion = c.OCPVersion
		}
		if c.KubeVersion != "" {
			p.KubeVersion = c.KubeVersion
		}
		if a := c.Allow; a != nil {
			if a.BundleRegistries != nil {
				p.Allow.BundleRegistries = a.BundleRegistries
			}
			if a.RelatedImageRegistries != nil {
				p.Allow.RelatedImageRegistries = a.RelatedImageRegistries
			}
			if a.Kinds != nil {
				p.Allow.Kinds = a.Kinds
			}
			if a.PreReleaseChannels != nil {
				p.Allow.PreReleaseChannels = a.PreReleaseChannels
			}
		}
	}
	return p, nil
}

func levelName(l Level) string {
	switch l {
	case LevelError:
		return "made an error"
	case LevelOff:
		return "ignored"
	}
	return "a warning"
}

// Name names the policy: the last one applied, and those it starts from.
func (p *Policy) Name() string {
	n := len(p.Names)
	if n == 0 {
		return ""
	}
	name := p.Names[n-1]
	if n > 1 {
		base := slices.Clone(p.Names[:n-1])
		slices.Reverse(base)
		name += " (starts from " + strings.Join(base, ", ") + ")"
	}
	return name
}

// RuleOptions returns the options of the rules that are not release gate
// rules: every warning an error (strict), the rules made errors, the
// rules ignored.
func (p *Policy) RuleOptions() (strict bool, strictRules, ignore []string) {
	for code, lv := range p.Levels {
		if _, gate := GateRuleByCode(code); gate {
			continue
		}
		switch lv {
		case LevelError:
			strictRules = append(strictRules, code)
		case LevelOff:
			ignore = append(ignore, code)
		}
	}
	sort.Strings(strictRules)
	sort.Strings(ignore)
	return p.Strict, strictRules, ignore
}

// WantsTarget reports whether some layer turned on a release gate rule:
// the target OpenShift version is then looked for (image labels, the
// catalog's Dockerfile) when neither --ocp-version nor the policy gives it.
func (p *Policy) WantsTarget() bool {
	for code, lv := range p.Levels {
		if _, gate := GateRuleByCode(code); gate && lv != LevelOff {
			return true
		}
	}
	return p.OCPVersion != ""
}

// Target returns the policy's ocpVersion, parsed (nil when it has none).
func (p *Policy) Target() (*ocpversion.Version, error) {
	if p.OCPVersion == "" {
		return nil, nil
	}
	v, err := ocpversion.Parse(p.OCPVersion)
	if err != nil {
		return nil, fmt.Errorf("policy: ocpVersion: %w", err)
	}
	return &v, nil
}

// Gate returns the release gate options: the gate rules some layer turned
// on, and, when there is a target, the target rules no layer set, at
// their default level. It returns nil when no rule is on. A registry rule
// on with an empty allow-list is an error.
func (p *Policy) Gate(target *ocpversion.Version, from string) (*GateOptions, error) {
	levels := map[string]Severity{}
	for _, r := range GateRules {
		lv, set := p.Levels[r.Code]
		switch {
		case set && lv == LevelOff:
			continue
		case set:
			levels[r.Code] = Severity(lv)
		case r.Target && target != nil:
			levels[r.Code] = r.Level
		}
	}
	if len(levels) == 0 {
		return nil, nil
	}
	if _, set := p.Levels[CodeGateNotChecked]; !set {
		levels[CodeGateNotChecked] = SeverityWarning
	}
	o := &GateOptions{Levels: levels, Target: target, TargetFrom: from, Policy: p.Name(),
		BundleRegistries: p.Allow.BundleRegistries, RelatedImageRegistries: p.Allow.RelatedImageRegistries, Kinds: p.Allow.Kinds}
	if o.on(CodeBundleImageRegistry) && len(o.BundleRegistries) == 0 {
		return nil, fmt.Errorf("rule %s is on, but the policy allows no registry: give allow.bundleRegistries", CodeBundleImageRegistry)
	}
	if o.on(CodeRelatedImageRegistry) && len(o.RelatedImageRegistries) == 0 {
		return nil, fmt.Errorf("rule %s is on, but the policy allows no registry: give allow.relatedImageRegistries", CodeRelatedImageRegistry)
	}
	if target != nil {
		if p.KubeVersion != "" {
			k, err := ocpversion.ParseKube(p.KubeVersion)
			if err != nil {
				return nil, fmt.Errorf("policy: kubeVersion: %w", err)
			}
			o.Kube = &k
		} else if k, ok := ocpversion.Kube(*target); ok {
			o.Kube = &k
		}
	}
	return o, nil
}
