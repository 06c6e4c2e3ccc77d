package validate

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/ocpversion"
)

func TestPresetsParse(t *testing.T) {
	for _, name := range PolicyPresets {
		layers, err := LoadPolicy(name, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := ResolvePolicy(layers)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, r := range GateRules {
			if _, set := p.Levels[r.Code]; !set && r.Code != CodeGateNotChecked && r.Code != CodeDirectoryEmpty &&
				r.Code != CodePackageDirMissing && !strings.HasPrefix(r.Code, "lifecycle-") && r.Code != CodeRelatedImageRegistry {
				t.Errorf("preset %s does not set %s", name, r.Code)
			}
		}
		if len(p.Allow.PreReleaseChannels) == 0 || len(p.Allow.BundleRegistries) == 0 {
			t.Errorf("preset %s: allow = %+v", name, p.Allow)
		}
		target := ocpversion.Version{Major: 4, Minor: 18}
		o, err := p.Gate(&target, "test")
		if err != nil || o == nil || o.Kube == nil || o.Kube.String() != "1.31" {
			t.Fatalf("%s: gate = %+v, %v", name, o, err)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	files := map[string]string{
		"ci/policy.yaml":    "policy: base.yaml\nocpVersion: \"4.18\"\nrules:\n  bundle-image-not-pinned: warning\n",
		"ci/base.yaml":      "policy: konflux\nrules:\n  edge-target-missing: error\n  skipped-and-replaced: off\nallow:\n  kinds: [Deployment]\n",
		"loop/a.yaml":       "policy: b.yaml\n",
		"loop/b.yaml":       "policy: a.yaml\n",
		"bad/baseline.yaml": "baseline: x.json\n",
		"bad/level.yaml":    "rules:\n  channel-no-head: off\n",
		"bad/unknown.yaml":  "rules:\n  no-such-rule: error\n",
		"bad/both.yaml":     "rules:\n  schema: error\nignore: [schema]\n",
		"bad/shape.yaml":    "rules:\n  schema: loud\nallow:\n  registries: [x]\n",
		"off.yaml":          "rules:\n  schema: off\n",
	}
	read := func(name string) ([]byte, error) {
		s, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
	layers, err := LoadPolicy("ci/policy.yaml", read)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range layers {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, " "); got != "konflux ci/base.yaml ci/policy.yaml" {
		t.Errorf("layers = %s", got)
	}
	layers = append(layers, CommandLineLayer(false, []string{"skipped-and-replaced"}, nil))
	p, err := ResolvePolicy(layers)
	if err != nil {
		t.Fatal(err)
	}
	if p.Levels[CodeBundleImageDigest] != LevelWarning || p.Levels[CodeEdgeTargetMissing] != LevelError ||
		p.Levels[CodeSkippedAndReplaced] != LevelError || p.OCPVersion != "4.18" || p.Allow.Kinds[0] != "Deployment" ||
		len(p.Allow.BundleRegistries) != 2 {
		t.Errorf("policy = %+v", p)
	}
	strict, strictRules, ignore := p.RuleOptions()
	if strict || strings.Join(strictRules, ",") != "edge-target-missing,skipped-and-replaced" || len(ignore) != 0 {
		t.Errorf("rule options = %v %v %v", strict, strictRules, ignore)
	}
	if got := strings.Join(p.Names, " < "); got != "konflux < ci/base.yaml < ci/policy.yaml" {
		t.Errorf("names = %s", got)
	}
	tgt, err := p.Target()
	if err != nil || tgt == nil || tgt.String() != "4.18" {
		t.Fatalf("target = %v, %v", tgt, err)
	}
	o, err := p.Gate(tgt, "policy")
	if err != nil {
		t.Fatal(err)
	}
	if o.Levels[CodeBundleImageDigest] != SeverityWarning || o.on(CodeObjectKind) || o.Levels[CodeGateNotChecked] != SeverityWarning {
		t.Errorf("gate levels = %v", o.Levels)
	}

	for name, want := range map[string]string{
		"loop/a.yaml":       "loop/b.yaml: policy a.yaml starts from itself",
		"bad/baseline.yaml": "bad/baseline.yaml: baseline: a baseline belongs to one catalog",
		"bad/level.yaml":    `bad/level.yaml: rules: channel-no-head: rule "channel-no-head" cannot be turned off`,
		"bad/unknown.yaml":  `bad/unknown.yaml: rules: unknown rule "no-such-rule"`,
		"bad/both.yaml":     `bad/both.yaml: rule "schema" is both made an error and ignored`,
		"bad/shape.yaml":    "bad/shape.yaml:2:11: rules.schema: a rule's level is error, warning or off\nbad/shape.yaml:4:3: allow.registries: field not allowed",
		"missing.yaml":      "policy missing.yaml: file does not exist",
	} {
		layers, err := LoadPolicy(name, read)
		if err == nil {
			_, err = ResolvePolicy(layers)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want %q", name, err, want)
		}
	}
	// YAML 1.1 reads a bare off as false: it means off.
	layers, err = LoadPolicy("off.yaml", read)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := ResolvePolicy(layers); p.Levels[CodeSchema] != LevelOff {
		t.Errorf("off = %q", p.Levels[CodeSchema])
	}
	// The command line's conflicts are usage errors.
	_, err = ResolvePolicy([]PolicyLayer{CommandLineLayer(false, []string{"schema"}, []string{"schema"})})
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Errorf("command line conflict: %v", err)
	}
}

func TestPolicyGateAllowLists(t *testing.T) {
	p := &Policy{Levels: map[string]Level{CodeRelatedImageRegistry: LevelError}}
	if _, err := p.Gate(nil, ""); err == nil || !strings.Contains(err.Error(), "allow.relatedImageRegistries") {
		t.Errorf("err = %v", err)
	}
	p = &Policy{Levels: map[string]Level{}}
	if o, err := p.Gate(nil, ""); o != nil || err != nil {
		t.Errorf("no rule on: %+v, %v", o, err)
	}
	// A target alone turns the target rules on at their default level.
	five := ocpversion.Version{Major: 5, Minor: 0}
	p = &Policy{Levels: map[string]Level{CodeMetadataFormat: LevelOff}, KubeVersion: "1.36"}
	o, err := p.Gate(&five, "--ocp-version")
	if err != nil || o.on(CodeMetadataFormat) || o.Levels[CodeMinKubeAboveTarget] != SeverityError || o.Kube.String() != "1.36" {
		t.Errorf("target alone: %+v, %v", o, err)
	}
}
