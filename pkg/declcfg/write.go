package declcfg

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/internal/jsonscan"
	"github.com/opmkit/opm/pkg/property"
)

// Format is an FBC output format.
type Format string

// Output formats.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// WriteJSON writes cfg as upstream does: blobs grouped and ordered by
// package, each as 4-space indented JSON without HTML escaping, followed by
// a newline.
func WriteJSON(cfg DeclarativeConfig, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var compact, indented []byte
	err := walkOrdered(cfg, func(v any) error {
		compact = appendBlob(compact[:0], v)
		indented = appendIndent(indented[:0], compact, bw)
		indented = append(indented, '\n')
		_, err := bw.Write(indented)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// WriteYAML writes cfg as upstream does: each blob converted from JSON to
// YAML by sigs.k8s.io/yaml (yaml.v2 key order, quoting and folding) and
// prefixed with "---\n". Large blobs are converted in pieces, with the
// same result (see writeYAMLBlob).
func WriteYAML(cfg DeclarativeConfig, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var compact []byte
	err := walkOrdered(cfg, func(v any) error {
		compact = appendBlob(compact[:0], v)
		if _, err := bw.WriteString("---\n"); err != nil {
			return err
		}
		if err := writeYAMLBlob(bw, compact); err != nil {
			return yamlBlobError(v, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// yamlBlobError names the blob that could not be written as YAML: where it
// was read and what it is. yaml.v2 refuses some text that JSON holds
// (control characters such as U+007F).
func yamlBlobError(v any, err error) error {
	var pos Position
	var what string
	switch b := v.(type) {
	case *Package:
		pos, what = b.Pos, fmt.Sprintf("package %q", b.Name)
	case *Channel:
		pos, what = b.Pos, fmt.Sprintf("package %q, channel %q", b.Package, b.Name)
	case *Bundle:
		pos, what = b.Pos, fmt.Sprintf("package %q, bundle %q", b.Package, b.Name)
	case *Deprecation:
		pos, what = b.Pos, fmt.Sprintf("package %q, %s", b.Package, b.Schema)
	case *Meta:
		pos, what = b.Pos, fmt.Sprintf("blob of schema %q", b.Schema)
		if b.Package != "" {
			what = fmt.Sprintf("package %q, %s", b.Package, what)
		}
	}
	if pos.IsValid() {
		what = pos.String() + ": " + what
	}
	return fmt.Errorf("%s: cannot write as YAML: %w%s", what, err, YAMLHint(err))
}

// YAMLHint is the advice for an error of sigs.k8s.io/yaml converting JSON
// that holds text YAML cannot: nothing for other errors.
func YAMLHint(err error) string {
	if strings.Contains(err.Error(), "control characters are not allowed") {
		return " (YAML cannot hold control characters such as U+007F or U+0080-U+009F in text; JSON output can: -o json)"
	}
	return ""
}

// Write writes cfg in format f.
func Write(cfg DeclarativeConfig, w io.Writer, f Format) error {
	switch f {
	case FormatJSON:
		return WriteJSON(cfg, w)
	case FormatYAML:
		return WriteYAML(cfg, w)
	}
	return fmt.Errorf("unknown format %q", f)
}

// WriteContext is Write checking ctx at every write to w, so that
// writing a large output stops soon after ctx is done (with ctx's error).
func WriteContext(ctx context.Context, cfg DeclarativeConfig, w io.Writer, f Format) error {
	cw := &ContextWriter{Ctx: ctx, W: w}
	err := Write(cfg, cw, f)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// ContextWriter is W failing with Ctx's error once Ctx is done.
type ContextWriter struct {
	Ctx context.Context
	W   io.Writer
}

func (c *ContextWriter) Write(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.W.Write(p)
}

// walkOrdered calls fn for every blob in upstream's output order: packages
// byte-sorted; per package its olm.package blobs, channels by name, bundles
// by name, other blobs stable-sorted by schema, deprecations; then the
// other blobs that have no package. Channels, bundles and deprecations with
// no package, and packages with no name, are dropped, as upstream does.
func walkOrdered(cfg DeclarativeConfig, fn func(any) error) error {
	type group struct {
		packages     []*Package
		channels     []*Channel
		bundles      []*Bundle
		others       []*Meta
		deprecations []*Deprecation
	}
	groups := map[string]*group{}
	get := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
		}
		return g
	}
	for i := range cfg.Packages {
		g := get(cfg.Packages[i].Name)
		g.packages = append(g.packages, &cfg.Packages[i])
	}
	for i := range cfg.Channels {
		g := get(cfg.Channels[i].Package)
		g.channels = append(g.channels, &cfg.Channels[i])
	}
	for i := range cfg.Bundles {
		g := get(cfg.Bundles[i].Package)
		g.bundles = append(g.bundles, &cfg.Bundles[i])
	}
	for i := range cfg.Others {
		g := get(cfg.Others[i].Package)
		g.others = append(g.others, &cfg.Others[i])
	}
	for i := range cfg.Deprecations {
		g := get(cfg.Deprecations[i].Package)
		g.deprecations = append(g.deprecations, &cfg.Deprecations[i])
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			continue
		}
		g := groups[name]
		for _, p := range g.packages {
			if err := fn(p); err != nil {
				return err
			}
		}
		sort.SliceStable(g.channels, func(i, j int) bool { return g.channels[i].Name < g.channels[j].Name })
		for _, c := range g.channels {
			if err := fn(c); err != nil {
				return err
			}
		}
		sort.SliceStable(g.bundles, func(i, j int) bool { return g.bundles[i].Name < g.bundles[j].Name })
		for _, b := range g.bundles {
			if err := fn(b); err != nil {
				return err
			}
		}
		sort.SliceStable(g.others, func(i, j int) bool { return g.others[i].Schema < g.others[j].Schema })
		for _, o := range g.others {
			if err := fn(o); err != nil {
				return err
			}
		}
		for _, d := range g.deprecations {
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	if g := groups[""]; g != nil {
		for _, o := range g.others {
			if err := fn(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendBlob appends the compact JSON of a blob exactly as encoding/json
// would marshal the upstream struct (field order, omitempty, nil slices as
// null, no HTML escaping).
func appendBlob(dst []byte, v any) []byte {
	switch b := v.(type) {
	case *Package:
		return appendPackage(dst, b)
	case *Channel:
		return appendChannel(dst, b)
	case *Bundle:
		return appendBundle(dst, b)
	case *Deprecation:
		return appendDeprecation(dst, b)
	case *Meta:
		return appendRaw(dst, b.Blob)
	}
	panic(fmt.Sprintf("declcfg: cannot encode %T", v))
}

func appendKey(dst []byte, first bool, key string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendPackage(dst []byte, p *Package) []byte {
	dst = append(dst, '{')
	dst = appendKey(dst, true, "schema")
	dst = appendString(dst, p.Schema)
	dst = appendKey(dst, false, "name")
	dst = appendString(dst, p.Name)
	dst = appendKey(dst, false, "defaultChannel")
	dst = appendString(dst, p.DefaultChannel)
	if p.Icon != nil {
		dst = appendKey(dst, false, "icon")
		dst = append(dst, '{')
		dst = appendKey(dst, true, "base64data")
		if p.Icon.Data == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, p.Icon.Data)
			dst = append(dst, '"')
		}
		dst = appendKey(dst, false, "mediatype")
		dst = appendString(dst, p.Icon.MediaType)
		dst = append(dst, '}')
	}
	if p.Description != "" {
		dst = appendKey(dst, false, "description")
		dst = appendString(dst, p.Description)
	}
	dst = appendProperties(dst, p.Properties)
	return append(dst, '}')
}

func appendProperties(dst []byte, props []property.Property) []byte {
	if len(props) == 0 {
		return dst
	}
	dst = appendKey(dst, false, "properties")
	dst = append(dst, '[')
	for i, p := range props {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		dst = appendKey(dst, true, "type")
		dst = appendString(dst, p.Type)
		dst = appendKey(dst, false, "value")
		dst = appendRaw(dst, p.Value)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendRaw appends a json.RawMessage as encoding/json does: null when
// empty, otherwise compacted (insignificant whitespace dropped, strings
// untouched).
func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end := jsonscan.SkipString(raw, i)
			if end < 0 {
				return append(dst, raw[start:]...)
			}
			i = end - 1
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

func appendChannel(dst []byte, c *Channel) []byte {
	dst = append(dst, '{')
	dst = appendKey(dst, true, "schema")
	dst = appendString(dst, c.Schema)
	dst = appendKey(dst, false, "name")
	dst = appendString(dst, c.Name)
	dst = appendKey(dst, false, "package")
	dst = appendString(dst, c.Package)
	dst = appendKey(dst, false, "entries")
	if c.Entries == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, e := range c.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			dst = appendKey(dst, true, "name")
			dst = appendString(dst, e.Name)
			if e.Replaces != "" {
				dst = appendKey(dst, false, "replaces")
				dst = appendString(dst, e.Replaces)
			}
			if len(e.Skips) > 0 {
				dst = appendKey(dst, false, "skips")
				dst = appendStrings(dst, e.Skips)
			}
			if e.SkipRange != "" {
				dst = appendKey(dst, false, "skipRange")
				dst = appendString(dst, e.SkipRange)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = appendProperties(dst, c.Properties)
	return append(dst, '}')
}

func appendBundle(dst []byte, b *Bundle) []byte {
	dst = append(dst, '{')
	dst = appendKey(dst, true, "schema")
	dst = appendString(dst, b.Schema)
	if b.Name != "" {
		dst = appendKey(dst, false, "name")
		dst = appendString(dst, b.Name)
	}
	if b.Package != "" {
		dst = appendKey(dst, false, "package")
		dst = appendString(dst, b.Package)
	}
	dst = appendKey(dst, false, "image")
	dst = appendString(dst, b.Image)
	dst = appendProperties(dst, b.Properties)
	if len(b.RelatedImages) > 0 {
		dst = appendKey(dst, false, "relatedImages")
		dst = append(dst, '[')
		for i, ri := range b.RelatedImages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			dst = appendKey(dst, true, "name")
			dst = appendString(dst, ri.Name)
			dst = appendKey(dst, false, "image")
			dst = appendString(dst, ri.Image)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendDeprecation(dst []byte, d *Deprecation) []byte {
	dst = append(dst, '{')
	dst = appendKey(dst, true, "schema")
	dst = appendString(dst, d.Schema)
	dst = appendKey(dst, false, "package")
	dst = appendString(dst, d.Package)
	dst = appendKey(dst, false, "entries")
	if d.Entries == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, e := range d.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			dst = appendKey(dst, true, "reference")
			dst = append(dst, '{')
			dst = appendKey(dst, true, "schema")
			dst = appendString(dst, e.Reference.Schema)
			if e.Reference.Name != "" {
				dst = appendKey(dst, false, "name")
				dst = appendString(dst, e.Reference.Name)
			}
			dst = append(dst, '}')
			dst = appendKey(dst, false, "message")
			dst = appendString(dst, e.Message)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// indentFlush is how much indented output appendIndent holds before
// writing it out, when it has somewhere to write it.
const indentFlush = 64 << 10

// appendIndent re-indents compact JSON with four spaces exactly as
// json.Indent does (empty objects and arrays stay "{}" and "[]"). String
// contents are copied verbatim. With a writer w, output is written to it as
// it goes (what is returned is the rest), so that a large blob is not held
// twice; at w's first error it stops, and the error, sticky in w, is left
// to its caller.
func appendIndent(dst, src []byte, w *bufio.Writer) []byte {
	depth := 0
	needIndent := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			dst = appendNewline(dst, depth)
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) {
				k := jsonscan.IndexQuoteOrBackslash(src[j:])
				if k < 0 {
					j = len(src)
					break
				}
				j += k
				if src[j] == '\\' {
					j += 2
					continue
				}
				break
			}
			if w != nil && len(dst)+j-i > indentFlush {
				w.Write(dst)
				dst = dst[:0]
				if _, err := w.Write(src[i:min(j+1, len(src))]); err != nil {
					return dst // the error is w's: stop here
				}
			} else {
				dst = append(dst, src[i:min(j+1, len(src))]...)
			}
			i = j
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = appendNewline(dst, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				dst = appendNewline(dst, depth)
			}
			dst = append(dst, c)
		case ' ', '\t', '\n', '\r':
		default:
			dst = append(dst, c)
		}
		if w != nil && len(dst) > indentFlush {
			_, err := w.Write(dst)
			dst = dst[:0]
			if err != nil {
				return dst // the error is w's: stop here
			}
		}
	}
	return dst
}

const indentSpaces = "                                                                "

func appendNewline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	n := depth * 4
	for n > len(indentSpaces) {
		dst = append(dst, indentSpaces...)
		n -= len(indentSpaces)
	}
	return append(dst, indentSpaces[:n]...)
}

// WriteFS writes cfg under dir as upstream's WriteFS does: one directory
// per package holding catalog.<format>, and dir/catalog.<format> for
// blobs of other schemas without a package, when there are any (channels,
// bundles and deprecations without a package are dropped, as the writers
// drop them). The tree is built in a temporary directory beside dir
// and moved into place only when complete, so on error dir is left as it
// was. dir must not exist or be empty.
func WriteFS(cfg DeclarativeConfig, dir string, format Format) error {
	ext := string(format)
	if format != FormatJSON && format != FormatYAML {
		return fmt.Errorf("unknown format %q", format)
	}
	byPkg := map[string]*DeclarativeConfig{}
	get := func(name string) *DeclarativeConfig {
		c := byPkg[name]
		if c == nil {
			c = &DeclarativeConfig{}
			byPkg[name] = c
		}
		return c
	}
	for _, p := range cfg.Packages {
		c := get(p.Name)
		c.Packages = append(c.Packages, p)
	}
	for _, ch := range cfg.Channels {
		c := get(ch.Package)
		c.Channels = append(c.Channels, ch)
	}
	for _, b := range cfg.Bundles {
		c := get(b.Package)
		c.Bundles = append(c.Bundles, b)
	}
	for _, d := range cfg.Deprecations {
		c := get(d.Package)
		c.Deprecations = append(c.Deprecations, d)
	}
	for _, o := range cfg.Others {
		c := get(o.Package)
		c.Others = append(c.Others, o)
	}
	names := make([]string, 0, len(byPkg))
	for n := range byPkg {
		if n != "" && (!filepath.IsLocal(n) || strings.ContainsAny(n, `/\`)) {
			return fmt.Errorf("invalid package name %q: must be a single local path element", n)
		}
		names = append(names, n)
	}
	slices.Sort(names)

	empty, err := fsutil.EmptyOrAbsent(dir)
	if err != nil {
		return err
	}
	if !empty {
		return fmt.Errorf("output dir %q must be empty", dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return err
	}
	tmp, err := fsutil.MkdirUnique(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		sub := tmp
		if n == "" {
			// Channels, bundles and deprecations without a package are
			// dropped by the writer: only package-less Others make the
			// root file, and without them there is none (as upstream).
			if len(byPkg[n].Others) == 0 {
				continue
			}
		} else {
			sub = filepath.Join(tmp, n)
			if err := os.Mkdir(sub, 0o777); err != nil {
				return err
			}
		}
		if err := writeFile(filepath.Join(sub, "catalog."+ext), *byPkg[n], format); err != nil {
			return err
		}
	}
	if _, err := os.Stat(dir); err == nil {
		if err := os.Remove(dir); err != nil { // empty, checked above
			return err
		}
	}
	return os.Rename(tmp, dir)
}

func writeFile(name string, cfg DeclarativeConfig, format Format) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if err != nil {
		return err
	}
	if err := Write(cfg, f, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
