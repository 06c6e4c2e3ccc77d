// Package template holds what opm's catalog templates share: the template
// types and their schemas, reading a template file the way upstream opm
// reads it (the first YAML or JSON document), detecting the type from its
// schema, positions for error messages, and the interface through which a
// template renders bundle images.
//
// The templates themselves are in the sub-packages basic, semver and
// substitutes.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/pkg/render"
)

// Type names a template type.
type Type string

// The template types and the schemas that select them.
const (
	Basic       Type = "basic"
	Semver      Type = "semver"
	Substitutes Type = "substitutes"

	SchemaBasic       = "olm.template.basic"
	SchemaSemver      = "olm.semver"
	SchemaSubstitutes = "olm.template.substitutes"
)

// Types lists the template types, sorted.
func Types() []Type { return []Type{Basic, Semver, Substitutes} }

// ParseType returns the type named s, or an error in upstream's words.
func ParseType(s string) (Type, error) {
	for _, t := range Types() {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("invalid template type %q, must be one of: %v", s, Types())
}

// TypeForSchema returns the type whose schema is s.
func TypeForSchema(s string) (Type, bool) {
	switch s {
	case SchemaBasic:
		return Basic, true
	case SchemaSemver:
		return Semver, true
	case SchemaSubstitutes:
		return Substitutes, true
	}
	return "", false
}

// MaxInputSize bounds a template file. Real templates are kilobytes; the
// biggest public ones (hundreds of bundles) are well under a megabyte.
const MaxInputSize = 64 << 20

// ReadInput reads a whole template from r, refusing more than MaxInputSize
// bytes.
func ReadInput(r io.Reader) ([]byte, error) {
	return readBounded(r, MaxInputSize)
}

func readBounded(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// Error is a template problem positioned in its file.
type Error struct {
	File   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	Err    error
}

func (e *Error) Error() string {
	var pos string
	switch {
	case e.File == "":
		return e.Err.Error()
	case e.Line == 0:
		pos = e.File
	case e.Column == 0:
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	default:
		pos = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	return pos + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at file:line.
func Errorf(file string, line int, format string, args ...any) error {
	return &Error{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}

// Document is the first document of a template file, as JSON, with what
// is needed to position messages in the file.
type Document struct {
	// JSON is the document converted to JSON (for a JSON file, the first
	// value as written).
	JSON []byte
	// File names the template in messages.
	File string

	src   []byte // the document's source text
	line0 int    // line of src's first line in the file, minus one
	loc   *locator
}

// jsonSniffLen is how much of the input decides between JSON and YAML, as
// upstream's decoder.
const jsonSniffLen = 4096

// FirstDocument returns the first document of data as upstream's
// YAMLOrJSONDecoder decodes it: data whose first non-space byte (within
// 4096) is '{' is JSON and its first value is the document; otherwise
// data is YAML, split at lines starting with "---", and the first
// non-empty document is converted to JSON. JSON that does not parse is
// read as YAML instead (the reported error is the JSON one when YAML fails
// too). It fails with io.EOF when there is no document.
func FirstDocument(data []byte, file string) (*Document, error) {
	head := data
	if len(head) > jsonSniffLen {
		head = head[:jsonSniffLen]
	}
	if bytes.HasPrefix(bytes.TrimLeftFunc(head, unicode.IsSpace), []byte("{")) {
		start := len(data) - len(bytes.TrimLeftFunc(data, unicode.IsSpace))
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		var raw json.RawMessage
		jerr := dec.Decode(&raw)
		if jerr == nil {
			end := start + int(dec.InputOffset())
			return &Document{JSON: raw, File: file, src: data[start:end], line0: lineAt(data, start) - 1}, nil
		}
		if doc, err := firstYAMLDocument(data, file); err == nil {
			return doc, nil
		}
		e := &Error{File: file, Err: jerr}
		var se *json.SyntaxError
		if errors.As(jerr, &se) {
			off := start + int(se.Offset) - 1
			e.Line, e.Column = lineAt(data, off), colAt(data, off)
		} else if errors.Is(jerr, io.ErrUnexpectedEOF) {
			e.Err = fmt.Errorf("unexpected end of JSON input")
		}
		return nil, e
	}
	return firstYAMLDocument(data, file)
}

func firstYAMLDocument(data []byte, file string) (*Document, error) {
	src, start, err := firstYAMLSplit(data)
	if err != nil {
		return nil, &Error{File: file, Line: lineAt(data, start), Err: err}
	}
	if src == nil {
		return nil, io.EOF
	}
	line0 := lineAt(data, start) - 1
	j, err := yaml.YAMLToJSON(src)
	if err != nil {
		e := &Error{File: file, Line: line0 + 1, Err: fmt.Errorf("error converting YAML to JSON: %w", err)}
		if l := yamlErrLine(err); l > 0 {
			e.Line = line0 + l
			e.Err = fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), fmt.Sprintf("yaml: line %d: ", l)))
		}
		return nil, e
	}
	return &Document{JSON: j, File: file, src: src, line0: line0}, nil
}

// firstYAMLSplit returns the first non-empty document of data, split as
// upstream's YAMLReader splits: a line starting with "---" ends a
// document and may only be followed by a comment. Lines lose "\r\n" and
// get "\n". start is the offset of the document's first line.
func firstYAMLSplit(data []byte) (doc []byte, start int, err error) {
	start = -1
	off := 0
	for off < len(data) {
		lineStart := off
		var line []byte
		if nl := bytes.IndexByte(data[off:], '\n'); nl < 0 {
			line, off = data[off:], len(data)
		} else {
			line, off = data[off:off+nl], off+nl+1
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("---")) {
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				return nil, lineStart, fmt.Errorf("invalid YAML document separator: %s", rest)
			}
			if len(doc) > 0 {
				return doc, start, nil
			}
			continue
		}
		if start < 0 {
			start = lineStart
		}
		doc = append(doc, line...)
		doc = append(doc, '\n')
	}
	if len(doc) == 0 {
		return nil, 0, nil
	}
	return doc, start, nil
}

// yamlErrLine extracts the document-relative line of a yaml.v2 error.
func yamlErrLine(err error) int {
	msg := err.Error()
	if !strings.HasPrefix(msg, "yaml: line ") {
		return 0
	}
	n := 0
	for _, c := range msg[len("yaml: line "):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func colAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return off - bytes.LastIndexByte(data[:off], '\n')
}

// NewDocument returns a Document over the whole of data (whose first
// document is what positions refer to), for templates that decode the
// file themselves.
func NewDocument(data []byte, file string) *Document {
	return &Document{File: file, src: data}
}

// Anywhere, as a path element, matches a mapping key at any depth below
// (the first one in document order), for messages about a key whose
// place is not known.
type Anywhere string

// Line returns the line in the file of the value at path in the document:
// string elements are mapping keys (matched case-insensitively, the last
// match winning, as encoding/json matches struct fields), int elements are
// sequence indices. It returns the line of the deepest element found, and
// the document's first line when nothing is.
func (d *Document) Line(path ...any) int {
	if d == nil {
		return 0
	}
	if d.loc == nil {
		d.loc = newLocator(d.src)
	}
	l := d.loc.line(path)
	if l == 0 {
		l = 1
	}
	return d.line0 + l
}

// Errorf returns an *Error at the line of path.
func (d *Document) Errorf(path []any, format string, args ...any) error {
	return &Error{File: d.File, Line: d.Line(path...), Err: fmt.Errorf(format, args...)}
}

// Wrap positions err at the line of path.
func (d *Document) Wrap(path []any, err error) error {
	return &Error{File: d.File, Line: d.Line(path...), Err: err}
}

// DetectType returns the type of the template in data from the schema of
// its first document, with upstream's messages.
func DetectType(data []byte, file string) (Type, error) {
	doc, err := FirstDocument(data, file)
	if err != nil {
		return "", err
	}
	var v struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(doc.JSON, &v); err != nil {
		return "", DecodeError(doc, err)
	}
	if v.Schema == "" {
		return "", doc.Errorf(nil, "template input missing required 'schema' field")
	}
	t, ok := TypeForSchema(v.Schema)
	if !ok {
		return "", doc.Errorf([]any{"schema"}, "unknown template schema: %s", v.Schema)
	}
	return t, nil
}

// Renderer renders bundle image references, one result per reference in
// order (failures included). render.RenderEach with a bundle-image mask is
// the implementation; tests pass fakes.
type Renderer func(ctx context.Context, refs []string) ([]render.Rendered, error)

// DecodeError words an error decoding a template document into its Go
// form, positioned at the offending field: "entries" is a list, not a
// "[]json.RawMessage".
func DecodeError(doc *Document, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return doc.Wrap(nil, err)
	}
	if te.Field == "" {
		return doc.Errorf(nil, "a template is an object, not a JSON %s", te.Value)
	}
	var path []any
	for _, p := range strings.Split(te.Field, ".") {
		path = append(path, p)
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind().String() {
	case "slice", "array":
		want = "a list"
	case "struct", "map":
		want = "an object"
	}
	return doc.Errorf(path, "%s: cannot use a JSON %s here, want %s", te.Field, te.Value, want)
}
