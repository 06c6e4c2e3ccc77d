package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// checkSchemas applies the CUE schemas to every blob of cfg with n workers.
// Each worker compiles the schemas once and caches the result of every
// property value it has checked, so values repeated across bundles (GVKs,
// stubbed bundle objects) are evaluated once per worker.
func checkSchemas(ctx context.Context, cfg *declcfg.DeclarativeConfig, s *Schemas, n int) ([]Finding, error) {
	total := len(cfg.Packages) + len(cfg.Channels) + len(cfg.Bundles) + len(cfg.Deprecations) + len(cfg.Others)
	if total == 0 {
		return nil, nil
	}
	n = min(n, total)
	p := &s.pool
	results := make([][]Finding, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := p.get()
			if err != nil {
				errs[w] = err
				return
			}
			defer p.put(c)
			sc := &schemaChecker{c: c, custom: s.custom}
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				if i%64 == 0 {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
				}
				results[i] = sc.checkIndex(cfg, i)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var out []Finding
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}

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
	pos                  declcfg.Position
	pkg, channel, bundle string
	customOnly           bool
	customData, builtin  func() []byte
	properties           []property.Property
}

func (sc *schemaChecker) checkIndex(cfg *declcfg.DeclarativeConfig, i int) []Finding {
	var ref blobRef
	switch {
	case i < len(cfg.Packages):
		p := cfg.Packages[i]
		ref = blobRef{schema: declcfg.SchemaPackage, pos: p.Pos, pkg: p.Name, properties: p.Properties}
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
	default:
		i -= len(cfg.Packages)
		switch {
		case i < len(cfg.Channels):
			ch := cfg.Channels[i]
			ref = blobRef{schema: declcfg.SchemaChannel, pos: ch.Pos, pkg: ch.Package, channel: ch.Name, properties: ch.Properties}
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
		default:
			i -= len(cfg.Channels)
			switch {
			case i < len(cfg.Bundles):
				b := &cfg.Bundles[i]
				ref = blobRef{schema: declcfg.SchemaBundle, pos: b.Pos, pkg: b.Package, bundle: b.Name, properties: b.Properties}
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
			default:
				i -= len(cfg.Bundles)
				if i < len(cfg.Deprecations) {
					d := cfg.Deprecations[i]
					ref = blobRef{schema: declcfg.SchemaDeprecations, pos: d.Pos, pkg: d.Package}
					ref.builtin = func() []byte {
						c := d
						if c.Entries == nil {
							c.Entries = []declcfg.DeprecationEntry{}
						}
						return mustJSON(c)
					}
					ref.customData = func() []byte { return mustJSON(d) }
				} else {
					m := cfg.Others[i-len(cfg.Deprecations)]
					ref = blobRef{schema: m.Schema, pos: m.Pos, pkg: m.Package, customOnly: true}
					ref.customData = func() []byte { return m.Blob }
				}
			}
		}
	}
	return sc.check(ref)
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

func (sc *schemaChecker) check(ref blobRef) []Finding {
	var out []Finding
	add := func(code string, sev Severity, errs []schemaError, prefix string) {
		for _, e := range errs {
			msg := e.Message
			if p := joinPath(prefix, e.Path); p != "" {
				msg = p + ": " + msg
			}
			out = append(out, Finding{Severity: sev, Code: code, Message: msg,
				File: ref.pos.File, Line: ref.pos.Line, Column: ref.pos.Column,
				Package: ref.pkg, Channel: ref.channel, Bundle: ref.bundle})
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
