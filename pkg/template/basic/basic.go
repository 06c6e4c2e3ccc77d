// Package basic is the basic catalog template (schema olm.template.basic):
// a list of FBC blobs in which bundles are given by image only, rendered
// from their images. It also converts an FBC back into a basic template.
//
// Behaviour, as upstream opm (v1.73), whose recorded runs are the
// reference:
//   - only the first YAML or JSON document of the file is read;
//   - every olm.bundle entry must be {schema, image} (a name is ignored):
//     anything else (package, properties, relatedImages) is refused;
//   - each bundle entry becomes the olm.bundle blob(s) rendered from its
//     image, which must be a bundle image; the same image twice gives the
//     bundle twice;
//   - packages, channels, deprecations and other blobs pass through
//     untouched; nothing is validated.
package basic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/template"
)

// Template is a parsed basic template.
type Template struct {
	// Entries are the template's blobs, in order, each positioned at its
	// entry in the file.
	Entries []declcfg.Meta

	doc *template.Document
}

// Parse parses the first document of data, a basic template; file names
// it in messages.
func Parse(data []byte, file string) (*Template, error) {
	doc, err := template.FirstDocument(data, file)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Schema  string            `json:"schema"`
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(doc.JSON, &raw); err != nil {
		return nil, template.DecodeError(doc, err)
	}
	if raw.Schema != template.SchemaBasic {
		return nil, doc.Errorf([]any{"schema"}, "template has unknown schema (%q), should be %q", raw.Schema, template.SchemaBasic)
	}
	t := &Template{doc: doc}
	for i, e := range raw.Entries {
		path := []any{"entries", i}
		pos := declcfg.Position{File: file, Line: doc.Line(path...)}
		if string(e) == "null" {
			return nil, doc.Errorf(path, "entries[%d] is null", i)
		}
		m, err := declcfg.NewMeta(e, pos)
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

// IsBundleStub reports whether b is what a basic template accepts for a
// bundle: an image and no package, properties or related images.
func IsBundleStub(b *declcfg.Bundle) bool {
	return b.Schema != "" && b.Image != "" && b.Package == "" && len(b.Properties) == 0 && len(b.RelatedImages) == 0
}

// Render renders t: every bundle entry is replaced by the bundles rendered
// from its image (through r, all images at once), other blobs are kept.
func (t *Template) Render(ctx context.Context, r template.Renderer) (*declcfg.DeclarativeConfig, error) {
	cfg, err := declcfg.LoadMetas(t.Entries)
	if err != nil {
		return nil, err
	}
	// Every bundle entry is checked before any image is pulled.
	images := make([]string, len(cfg.Bundles))
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if !IsBundleStub(b) {
			what := "unexpected fields present in basic template bundle"
			if b.Image == "" {
				what = "a basic template bundle needs an image (and only an image)"
			} else {
				what += " (a bundle entry is only {schema: olm.bundle, image: <bundle image>}; the rest is rendered from the image)"
			}
			return nil, t.bundleError(b, errors.New(what))
		}
		images[i] = b.Image
	}
	if len(images) == 0 {
		return cfg, nil
	}
	results, err := r(ctx, images)
	if err != nil {
		return nil, err
	}
	var out []declcfg.Bundle
	for i := range cfg.Bundles {
		res := results[i]
		if res.Err != nil {
			return nil, t.bundleError(&cfg.Bundles[i], explainRenderError(res.Err))
		}
		out = append(out, res.Config.Bundles...)
	}
	cfg.Bundles = out
	return cfg, nil
}

// bundleError positions err at the bundle's entry.
func (t *Template) bundleError(b *declcfg.Bundle, err error) error {
	return &template.Error{File: b.Pos.File, Line: b.Pos.Line, Err: fmt.Errorf("olm.bundle %s: %w", quoteOrEmpty(b.Image), err)}
}

func quoteOrEmpty(s string) string {
	if s == "" {
		return "(no image)"
	}
	return fmt.Sprintf("%q", s)
}

// explainRenderError adds what to do when the image is not a bundle.
func explainRenderError(err error) error {
	if errors.Is(err, render.ErrNotAllowed) {
		return fmt.Errorf("%w (a template bundle must name a bundle image)", err)
	}
	return err
}
