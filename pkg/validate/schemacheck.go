package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

type schemaChecker struct {
	c      *compiled
	custom bool
}

// builtin checks data against a built-in definition by its shape.
func (sc *schemaChecker) builtin(kind string, def cue.Value, data []byte) []schemaError {
	shape, ok := shapeOf(data)
	if !ok {
		return trimPath(sc.c.check(def, data), 2)
	}
	key := kind + "\x00" + string(shape)
	good, hit := sc.c.shapeOK[key]
	if !hit {
		good = len(sc.c.check(def, shape)) == 0
		sc.c.shapeOK[key] = good
	}
	if good {
		return nil
	}
	return trimPath(sc.c.check(def, data), 2)
}

// blobRef identifies the blob being checked for findings.
type blobRef struct {
	schema               string
	at                   blobID
	pkg, channel, bundle string
	customOnly           bool
	customData, builtin  func() []byte
	properties           []property.Property
}

// checkGroup applies the schemas to every blob of g.
func (sc *schemaChecker) checkGroup(g *group) []Finding {
	cfg := g.cfg
	var out []Finding
	for i := range cfg.Packages {
		p := cfg.Packages[i]
		ref := blobRef{schema: declcfg.SchemaPackage, at: blobID{declcfg.KindPackage, i, true}, pkg: p.Name, properties: p.Properties}
		ref.builtin = func() []byte {
			q := p
			q.Properties = nil
			if q.Icon != nil && len(q.Icon.Data) > 0 {
				// Only the type of the icon data is checked.
				q.Icon = &declcfg.Icon{Data: []byte{0}, MediaType: q.Icon.MediaType}
			}
			return mustJSON(q)
		}
		ref.customData = func() []byte { return mustJSON(p) }
		out = append(out, sc.check(g, ref)...)
	}
	for i := range cfg.Channels {
		ch := cfg.Channels[i]
		ref := blobRef{schema: declcfg.SchemaChannel, at: blobID{declcfg.KindChannel, i, true}, pkg: ch.Package, channel: ch.Name, properties: ch.Properties}
		ref.builtin = func() []byte {
			c := ch
			c.Properties = nil
			if c.Entries == nil {
				// Missing and null entries load alike.
				c.Entries = []declcfg.ChannelEntry{}
			}
			return mustJSON(c)
		}
		ref.customData = func() []byte { return mustJSON(ch) }
		out = append(out, sc.check(g, ref)...)
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		ref := blobRef{schema: declcfg.SchemaBundle, at: blobID{declcfg.KindBundle, i, true}, pkg: b.Package, bundle: b.Name, properties: b.Properties}
		ref.builtin = func() []byte {
			return mustJSON(bundleEnvelope{Schema: b.Schema, Name: b.Name, Package: b.Package, Image: b.Image, RelatedImages: b.RelatedImages})
		}
		ref.customData = func() []byte {
			c := *b
			c.Properties = make([]property.Property, len(b.Properties))
			for j, p := range b.Properties {
				c.Properties[j] = property.Property{Type: p.Type, Value: stubValue(p)}
			}
			return mustJSON(c)
		}
		out = append(out, sc.check(g, ref)...)
	}
	for i := range cfg.Deprecations {
		d := cfg.Deprecations[i]
		ref := blobRef{schema: declcfg.SchemaDeprecations, at: blobID{declcfg.KindDeprecation, i, true}, pkg: d.Package}
		ref.builtin = func() []byte {
			c := d
			if c.Entries == nil {
				c.Entries = []declcfg.DeprecationEntry{}
			}
			return mustJSON(c)
		}
		ref.customData = func() []byte { return mustJSON(d) }
		out = append(out, sc.check(g, ref)...)
	}
	for i := range cfg.Others {
		m := cfg.Others[i]
		ref := blobRef{schema: m.Schema, at: blobID{declcfg.KindOther, i, true}, pkg: m.Package, customOnly: true}
		ref.customData = func() []byte { return m.Blob }
		out = append(out, sc.check(g, ref)...)
	}
	return out
}

// bundleEnvelope is an olm.bundle blob without its properties, which are
// checked one by one.
type bundleEnvelope struct {
	Schema        string                 `json:"schema"`
	Name          string                 `json:"name,omitempty"`
	Package       string                 `json:"package,omitempty"`
	Image         string                 `json:"image"`
	RelatedImages []declcfg.RelatedImage `json:"relatedImages,omitempty"`
}

func (sc *schemaChecker) check(g *group, ref blobRef) []Finding {
	var out []Finding
	add := func(code string, sev Severity, errs []schemaError, prefix string) {
		for _, e := range errs {
			msg := e.Message
			p := joinPath(prefix, e.Path)
			if p != "" {
				msg = p + ": " + msg
			}
			f := Finding{Severity: sev, Code: code, Message: msg, Path: p, at: ref.at,
				Package: ref.pkg, Channel: ref.channel, Bundle: ref.bundle}
			g.finish(&f)
			out = append(out, f)
		}
	}
	if !ref.customOnly {
		if def, ok := sc.c.def(sc.c.blobs, "b", ref.schema); ok {
			add(CodeSchema, SeverityWarning, sc.builtin("b:"+ref.schema, def, ref.builtin()), "")
		}
		for j, p := range ref.properties {
			prefix := "properties[" + strconv.Itoa(j) + "]"
			if p.Type == "" {
				add(CodeSchema, SeverityWarning, []schemaError{{Path: "type", Message: `invalid value "" (out of bound !="")`}}, prefix)
			}
			def, ok := sc.c.def(sc.c.properties, "p", p.Type)
			if !ok {
				continue
			}
			add(CodeSchema, SeverityWarning, sc.builtin("p:"+p.Type, def, stubValue(p)), prefix+".value")
		}
	}
	if sc.custom {
		if def, ok := sc.c.def(sc.c.custom, "c", ref.schema); ok {
			add(CodeCustomSchema, SeverityError, trimPath(sc.c.check(def, ref.customData()), 2), "")
		}
	}
	return out
}

// stubValue returns p's value, with the data of an olm.bundle.object
// replaced by "": it is large, and its content is checked when the model
// decodes it.
func stubValue(p property.Property) json.RawMessage {
	v := p.Value
	if p.Type == property.TypeBundleObject && bytes.HasPrefix(v, []byte(`{"data":"`)) && bytes.HasSuffix(v, []byte(`"}`)) && bytes.Count(v, []byte(`"`)) == 4 {
		return json.RawMessage(`{"data":""}`)
	}
	return v
}

// trimPath drops the first n path elements (the #Blobs or #PropertyValues
// lookup) from every error.
func trimPath(errs []schemaError, n int) []schemaError {
	if len(errs) == 0 {
		return nil
	}
	out := make([]schemaError, len(errs))
	for i, e := range errs {
		parts := splitCUEPath(e.Path)
		if len(parts) >= n {
			parts = parts[n:]
		}
		out[i] = schemaError{Path: formatPath(parts), Message: e.Message}
	}
	return out
}

// splitCUEPath splits a dotted CUE path, keeping quoted labels whole.
func splitCUEPath(p string) []string {
	if p == "" {
		return nil
	}
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '"':
			inQuote = !inQuote
			cur.WriteByte(ch)
		case ch == '\\' && inQuote && i+1 < len(p):
			cur.WriteByte(ch)
			i++
			cur.WriteByte(p[i])
		case ch == '.' && !inQuote:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	return append(parts, cur.String())
}

// formatPath renders path elements as a.b[2].c.
func formatPath(parts []string) string {
	var sb strings.Builder
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			sb.WriteString("[" + p + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(p)
	}
	return sb.String()
}

func joinPath(prefix, p string) string {
	switch {
	case prefix == "":
		return p
	case p == "":
		return prefix
	case strings.HasPrefix(p, "["):
		return prefix + p
	}
	return prefix + "." + p
}

func mustJSON(v any) []byte {
	b, err := property.MarshalNoEscape(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err))
	}
	return b
}
