package crd

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/docpath"
	"github.com/opmkit/opm/internal/yamlorjson"
)

// Source is the text a CRD was read from, for positions: a file (as the
// user names it) and the YAML or JSON document of the CRD in it.
type Source struct {
	File string
	// Doc is the document's text, and Line the file line of its first
	// byte.
	Doc  []byte
	Line int

	once sync.Once
	root *yamlv3.Node
}

// Locate returns the line and column in the file of the element at path
// (an element path such as spec.versions[1].schema.openAPIV3Schema), or
// of its deepest part that exists. ok is false when the document does not
// parse.
func (s *Source) Locate(path string) (line, col int, ok bool) {
	s.once.Do(func() {
		var root yamlv3.Node
		if yamlv3.Unmarshal(s.Doc, &root) == nil {
			s.root = &root
		}
	})
	if s.root == nil {
		return 0, 0, false
	}
	n, _ := docpath.Walk(s.root, docpath.Parse(path))
	if n == nil {
		return 0, 0, false
	}
	return s.Line + n.Line - 1, docpath.ByteColumn(s.Doc, n.Line, n.Column), true
}

// SplitDocuments splits a YAML stream (or one JSON value) into its
// documents, each converted to JSON, with its Source. file names the text
// in errors and positions. Empty and null documents are left out.
func SplitDocuments(file string, data []byte) ([]Object, error) {
	if yamlorjson.IsJSON(data, yamlorjson.CatalogSniffLen) {
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return []Object{{JSON: js, Source: &Source{File: file, Doc: data, Line: 1}}}, nil
	}
	var out []Object
	var sp yamlorjson.Splitter
	rest, offset := data, 0
	for len(rest) > 0 {
		doc, advance, _, err := sp.Split(rest, true)
		if err != nil {
			var se *yamlorjson.SeparatorError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s:%d: %w", file, lineOf(data, offset+se.Offset), err)
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if doc.Data != nil {
			start := offset + doc.Start
			js, err := yaml.YAMLToJSON(doc.Data)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, lineOf(data, start), err)
			}
			if !bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
				out = append(out, Object{JSON: js, Source: &Source{File: file, Doc: doc.Data, Line: lineOf(data, start)}})
			}
		}
		if advance <= 0 {
			break
		}
		rest, offset = rest[advance:], offset+advance
	}
	return out, nil
}

// lineOf returns the 1-based line of offset off in data.
func lineOf(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte("\n")) + 1
}
