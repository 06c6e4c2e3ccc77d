package manifest

import (
	"bytes"

	"go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/internal/docpath"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Positions.
//
// A file is parsed a second time, with a position-aware parser, only when
// an element of it is located, and at most once: a clean bundle costs
// nothing.

// Locate returns the position of the element at path (docpath syntax:
// "spec.install.spec.deployments[0].name", "" for the object) in the
// manifest's file, or of the deepest part of path that exists. The
// position's File is the manifest's path relative to the bundle root; the
// column counts bytes. A catalog bundle's manifests have no file: the
// position is zero.
func (m *Manifest) Locate(path string) declcfg.Position {
	if m.Property >= 0 {
		return declcfg.Position{}
	}
	return locate(m.File, m.Data, m.node(), path)
}

// Locate returns the position of the element at path in the metadata
// file (see Manifest.Locate).
func (f *MetadataFile) Locate(path string) declcfg.Position {
	return locate(f.File, f.Data, f.node(), path)
}

func locate(file string, data []byte, root *yaml.Node, path string) declcfg.Position {
	pos := declcfg.Position{File: file}
	if root == nil {
		return pos
	}
	n, _ := docpath.Walk(root, docpath.Parse(path))
	if n == nil || n.Line == 0 {
		return pos
	}
	pos.Line = n.Line
	pos.Column = docpath.ByteColumn(data, n.Line, n.Column)
	return pos
}

// node returns the first document of the manifest's file as a YAML node
// tree (JSON parses as YAML), or nil.
func (m *Manifest) node() *yaml.Node {
	m.once.Do(func() { m.root = firstNode(m.Data) })
	return m.root
}

func (f *MetadataFile) node() *yaml.Node {
	f.once.Do(func() { f.root = firstNode(f.Data) })
	return f.root
}

func firstNode(data []byte) *yaml.Node {
	if len(data) == 0 {
		return nil
	}
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&root); err != nil {
		return nil
	}
	return &root
}
