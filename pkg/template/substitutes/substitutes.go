// Package substitutes is the substitutes catalog template (schema
// olm.template.substitutes): a valid FBC plus a list of substitutions, each
// naming a bundle image that takes the place of an existing bundle (a
// rebuild of the same version, with a newer release) in every channel.
//
// Behaviour, as upstream opm (v1.73), whose recorded runs are the
// reference:
//   - the entries must form a valid catalog;
//   - a base may be substituted once, and one image may not substitute two
//     bases; names and bases must be set and differ;
//   - the substitute is rendered from its image and must be newer than its
//     base: same version with a higher release, or a higher version (the
//     legacy encoding, build metadata plus an olm.substitutesFor
//     annotation, counts as a release);
//   - in every channel, each entry of the base gets a sibling entry for the
//     substitute, appended, which takes over the base's replaces, skips
//     and skipRange and also skips the base; the base entry loses its
//     edges; the channel's other entries that replaced the base replace
//     the substitute and skip the base, and those that skipped the base
//     skip the substitute instead;
//   - the substitute bundle is added once, and the result must be a valid
//     catalog.
package substitutes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/template"
)

// Template is a parsed substitutes template.
type Template struct {
	Entries       []declcfg.Meta
	Substitutions []Substitution

	doc *template.Document
}

// Substitution replaces the bundle named Base by the bundle rendered from
// the image Name.
type Substitution struct {
	Name string `json:"name"`
	Base string `json:"base"`
}

// Parse parses the first document of data, a substitutes template; file
// names it in messages.
func Parse(data []byte, file string) (*Template, error) {
	doc, err := template.FirstDocument(data, file)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Schema        string            `json:"schema"`
		Entries       []json.RawMessage `json:"entries"`
		Substitutions []Substitution    `json:"substitutions"`
	}
	if err := json.Unmarshal(doc.JSON, &raw); err != nil {
		return nil, template.DecodeError(doc, err)
	}
	if raw.Schema != template.SchemaSubstitutes {
		return nil, doc.Errorf([]any{"schema"}, "template has unknown schema (%q), should be %q", raw.Schema, template.SchemaSubstitutes)
	}
	t := &Template{Substitutions: raw.Substitutions, doc: doc}
	for i, e := range raw.Entries {
		path := []any{"entries", i}
		if string(e) == "null" {
			return nil, doc.Errorf(path, "entries[%d] is null", i)
		}
		m, err := declcfg.NewMeta(e, declcfg.Position{File: file, Line: doc.Line(path...)})
		if err != nil {
			return nil, doc.Wrap(path, fmt.Errorf("entries[%d]: %w", i, err))
		}
		if m.Schema == "" {
			return nil, doc.Errorf(path, "entries[%d] has no schema: every entry is an FBC blob (olm.package, olm.channel, olm.bundle, olm.deprecations or another schema)", i)
		}
		t.Entries = append(t.Entries, m)
	}
	return t, nil
}

func (t *Template) at(i int) []any { return []any{"substitutions", i} }

// Render applies the substitutions to the entries, rendering every
// substitute image through r (all at once, after the checks that need no
// image).
func (t *Template) Render(ctx context.Context, r template.Renderer) (*declcfg.DeclarativeConfig, error) {
	cfg, err := declcfg.LoadMetas(t.Entries)
	if err != nil {
		return nil, err
	}
	if _, err := model.ConvertToModel(*cfg); err != nil {
		return nil, t.doc.Wrap([]any{"entries"}, fmt.Errorf("entries are not valid FBC: %w", err))
	}

	bases := map[string]bool{}
	names := map[string]string{}
	for i, s := range t.Substitutions {
		if bases[s.Base] {
			return nil, t.doc.Errorf(t.at(i), "cannot reuse the same substitution base %q", s.Base)
		}
		if b, ok := names[s.Name]; ok && b != s.Base {
			return nil, t.doc.Errorf(t.at(i), "cannot reuse the same substitution %q for different bases (%q and %q)", s.Name, b, s.Base)
		}
		bases[s.Base] = true
		names[s.Name] = s.Base
	}
	var images []string
	for i, s := range t.Substitutions {
		if err := checkFields(s); err != nil {
			return nil, t.subError(i, err)
		}
		images = append(images, s.Name)
	}
	if len(images) == 0 {
		return cfg, nil
	}
	results, err := r(ctx, images)
	if err != nil {
		return nil, err
	}
	for i, s := range t.Substitutions {
		res := results[i]
		if res.Err != nil {
			return nil, t.subError(i, fmt.Errorf("failed to render bundle image reference %q: %w", s.Name, res.Err))
		}
		if len(res.Config.Bundles) != 1 {
			return nil, t.subError(i, fmt.Errorf("bundle image reference %q resulted in %d bundles, expected 1", s.Name, len(res.Config.Bundles)))
		}
		if err := apply(cfg, s, res.Config.Bundles[0]); err != nil {
			return nil, t.subError(i, err)
		}
	}
	if _, err := model.ConvertToModel(*cfg); err != nil {
		return nil, t.doc.Errorf(nil, "resulting config is not valid FBC: %v", err)
	}
	return cfg, nil
}

func (t *Template) subError(i int, err error) error {
	s := t.Substitutions[i]
	return t.doc.Wrap(t.at(i), fmt.Errorf("error processing substitution %q -> %q: %w", s.Base, s.Name, err))
}

func checkFields(s Substitution) error {
	switch {
	case s.Name == "":
		return errors.New("substitution name cannot be empty")
	case s.Base == "":
		return errors.New("substitution base cannot be empty")
	case s.Name == s.Base:
		return errors.New("substitution name and base cannot be the same")
	}
	return nil
}

// apply substitutes sub for the bundle named s.Base in cfg.
func apply(cfg *declcfg.DeclarativeConfig, s Substitution, sub declcfg.Bundle) error {
	var base *declcfg.Bundle
	for i := range cfg.Bundles {
		if cfg.Bundles[i].Name == s.Base {
			base = &cfg.Bundles[i]
			break
		}
	}
	if base == nil {
		return fmt.Errorf("base bundle %q does not exist in catalog", s.Base)
	}
	bv, br, err := VersionRelease(base)
	if err != nil {
		return fmt.Errorf("base bundle %q: %w", s.Base, err)
	}
	sv, sr, err := VersionRelease(&sub)
	if err != nil {
		return fmt.Errorf("substitute bundle %q: %w", sub.Name, err)
	}
	if c := bv.Compare(sv); c > 0 || (c == 0 && br.Compare(sr) >= 0) {
		return fmt.Errorf("base bundle %q is not less than substitute bundle %q", s.Base, s.Name)
	}

	for ci := range cfg.Channels {
		ch := &cfg.Channels[ci]
		original := len(ch.Entries)
		for j := 0; j < original; j++ {
			e := &ch.Entries[j]
			if e.Name != s.Base {
				continue
			}
			ch.Entries = append(ch.Entries, declcfg.ChannelEntry{
				Name:      sub.Name,
				Replaces:  e.Replaces,
				Skips:     append(slices.Clone(e.Skips), s.Base),
				SkipRange: e.SkipRange,
			})
			e = &ch.Entries[j] // the append may have moved the entries
			e.Replaces, e.Skips, e.SkipRange = "", nil, ""
		}
		for j := 0; j < original; j++ {
			e := &ch.Entries[j]
			if e.Name == s.Base {
				continue
			}
			if e.Replaces == s.Base {
				e.Replaces = sub.Name
				e.Skips = append(e.Skips, s.Base)
			} else if i := slices.Index(e.Skips, s.Base); i >= 0 {
				e.Skips = append(slices.Delete(slices.Clone(e.Skips), i, i+1), sub.Name)
			}
		}
	}
	cfg.Bundles = append(cfg.Bundles, sub)
	return nil
}

// VersionRelease returns a bundle's version and release. A bundle without
// a release whose version has build metadata and whose CSV carries the
// olm.substitutesFor annotation uses the legacy encoding: the build
// metadata is the release.
func VersionRelease(b *declcfg.Bundle) (semver.Version, model.Release, error) {
	props, err := property.Parse(b.Properties)
	if err != nil {
		return semver.Version{}, nil, err
	}
	if len(props.Packages) != 1 {
		return semver.Version{}, nil, fmt.Errorf("must be exactly one property with type %q", property.TypePackage)
	}
	v, err := semver.Parse(props.Packages[0].Version)
	if err != nil {
		return semver.Version{}, nil, fmt.Errorf("invalid version %q: %w", props.Packages[0].Version, err)
	}
	r, err := model.NewRelease(props.Packages[0].Release)
	if err != nil {
		return semver.Version{}, nil, err
	}
	if len(r) == 0 && len(v.Build) > 0 && substitutesFor(b) {
		r, err = model.NewRelease(strings.Join(v.Build, "."))
		if err != nil {
			return semver.Version{}, nil, err
		}
		v.Build = nil
	}
	return v, r, nil
}

// substitutesFor reports whether the bundle's CSV has the
// olm.substitutesFor annotation, read from olm.csv.metadata or from the
// CSV among the olm.bundle.object properties.
func substitutesFor(b *declcfg.Bundle) bool {
	for _, p := range b.Properties {
		if p.Type != property.TypeCSVMetadata {
			continue
		}
		var m struct {
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal(p.Value, &m) == nil {
			if _, ok := m.Annotations["olm.substitutesFor"]; ok {
				return true
			}
		}
	}
	csv := b.CsvJSON
	if csv == "" {
		c := declcfg.Bundle{Properties: b.Properties}
		if c.LoadObjects() == nil {
			csv = c.CsvJSON
		}
	}
	if csv == "" {
		return false
	}
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(csv), &obj) != nil {
		return false
	}
	_, ok := obj.Metadata.Annotations["olm.substitutesFor"]
	return ok
}
