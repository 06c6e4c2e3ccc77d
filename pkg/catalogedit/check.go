package catalogedit

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/validate"
)

// Problem is one validation error.
type Problem struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// Pos is "file:line:col" with the file as the user names it, when known.
	Pos string `json:"position,omitempty"`
}

func (p Problem) String() string {
	s := p.Message
	if p.Code != "" {
		s += " [" + p.Code + "]"
	}
	if p.Pos != "" {
		s = p.Pos + ": " + s
	}
	return s
}

// key identifies a problem across an edit (positions move).
func (p Problem) key() string { return p.Code + "\x00" + p.Message }

// Check validates cfg and returns its errors (warnings do not count). A
// catalog goes through pkg/validate, as `opm validate` checks it; a
// template, whose bundles are unrendered stubs, through the model's checks
// of its packages, channels and deprecations, with each channel entry
// standing for its bundle.
func (c *Catalog) Check(ctx context.Context, cfg *declcfg.DeclarativeConfig) ([]Problem, error) {
	if c.Template {
		return c.checkTemplate(cfg), nil
	}
	res, err := validate.Validate(ctx, cfg, validate.Options{})
	if err != nil {
		return nil, err
	}
	var out []Problem
	for _, f := range res.Findings {
		if f.Severity != validate.SeverityError {
			continue
		}
		p := Problem{Code: f.Code, Message: f.Message}
		if pos := f.Pos(); pos.IsValid() {
			pos.File = c.DisplayName(pos.File)
			p.Pos = pos.String()
		}
		out = append(out, p)
	}
	return out, nil
}

// NewProblems returns the problems of after that before does not have.
func NewProblems(before, after []Problem) []Problem {
	seen := map[string]int{}
	for _, p := range before {
		seen[p.key()]++
	}
	var out []Problem
	for _, p := range after {
		if seen[p.key()] > 0 {
			seen[p.key()]--
			continue
		}
		out = append(out, p)
	}
	return out
}

// checkTemplate runs the model's checks over a template: its packages,
// channels and deprecations, and for every channel entry a stand-in bundle
// (the template's stubs get their names only when rendered).
func (c *Catalog) checkTemplate(cfg *declcfg.DeclarativeConfig) []Problem {
	var out []Problem
	pos := func(p declcfg.Position) string {
		if !p.IsValid() {
			return ""
		}
		p.File = c.DisplayName(p.File)
		return p.String()
	}
	synth := declcfg.DeclarativeConfig{
		Packages:     cfg.Packages,
		Channels:     cfg.Channels,
		Deprecations: cfg.Deprecations,
	}
	for _, b := range cfg.Bundles {
		if b.Package != "" || len(b.Properties) > 0 || len(b.RelatedImages) > 0 || b.Image == "" {
			out = append(out, Problem{Code: "template-bundle-not-stub", Message: "unexpected fields present in basic template bundle", Pos: pos(b.Pos)})
		}
	}
	seen := map[string]bool{}
	n := 0
	for _, ch := range cfg.Channels {
		for _, e := range ch.Entries {
			k := ch.Package + "\x00" + e.Name
			if seen[k] || e.Name == "" {
				continue
			}
			seen[k] = true
			n++
			v, _ := json.Marshal(property.Package{PackageName: ch.Package, Version: fmt.Sprintf("0.0.%d", n)})
			synth.Bundles = append(synth.Bundles, declcfg.Bundle{
				Schema:     declcfg.SchemaBundle,
				Package:    ch.Package,
				Name:       e.Name,
				Image:      "template.invalid/stub:latest",
				Properties: []property.Property{{Type: property.TypePackage, Value: v}},
				Pos:        ch.Pos,
			})
		}
	}
	m, issues := model.Convert(synth)
	if len(issues) == 0 {
		issues = model.Issues(m.Validate())
	}
	for _, is := range issues {
		out = append(out, Problem{Code: is.Code, Message: is.Message, Pos: pos(is.Pos)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// TouchedPackages returns the packages whose blobs the edits change.
func (c *Catalog) TouchedPackages() map[string]bool {
	out := map[string]bool{}
	for _, b := range c.blobs {
		if (b.created && !b.deleted) || (!b.created && (b.deleted || b.dirty)) {
			out[b.Package] = true
		}
	}
	return out
}

// OnlyPackages returns the blobs of cfg that belong to the packages in
// keep. Validation errors never cross packages (only warnings do), so
// checking the packages an edit touched checks everything it can break.
func OnlyPackages(cfg *declcfg.DeclarativeConfig, keep map[string]bool) *declcfg.DeclarativeConfig {
	out := &declcfg.DeclarativeConfig{}
	for _, p := range cfg.Packages {
		if keep[p.Name] {
			out.Packages = append(out.Packages, p)
		}
	}
	for _, ch := range cfg.Channels {
		if keep[ch.Package] {
			out.Channels = append(out.Channels, ch)
		}
	}
	for _, b := range cfg.Bundles {
		if keep[b.Package] {
			out.Bundles = append(out.Bundles, b)
		}
	}
	for _, d := range cfg.Deprecations {
		if keep[d.Package] {
			out.Deprecations = append(out.Deprecations, d)
		}
	}
	for _, m := range cfg.Others {
		if keep[m.Package] {
			out.Others = append(out.Others, m)
		}
	}
	return out
}
