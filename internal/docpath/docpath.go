// Package docpath names elements of a YAML or JSON document by path, such
// as entries[3].skips[1] or properties."a.b".value, and finds their line
// and column: the positions of opm validate's findings and of CRD changes.
package docpath

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Elem is one step of a path: a key, or an index when Index >= 0.
type Elem struct {
	Key   string
	Index int
}

// Parse splits an element path such as `entries[3].skips[1]` or
// `properties[0].value."a.b"` into steps. It never fails: what does not
// parse becomes a key.
func Parse(p string) []Elem {
	var out []Elem
	for i := 0; i < len(p); {
		switch c := p[i]; {
		case c == '.':
			i++
		case c == '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				out = append(out, Elem{Key: p[i:], Index: -1})
				return out
			}
			n, err := strconv.Atoi(p[i+1 : i+j])
			if err != nil || n < 0 {
				out = append(out, Elem{Key: p[i+1 : i+j], Index: -1})
			} else {
				out = append(out, Elem{Index: n})
			}
			i += j + 1
		case c == '"':
			// A quoted label, as CUE writes keys that are not identifiers.
			j := i + 1
			for j < len(p) && p[j] != '"' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p) {
				out = append(out, Elem{Key: p[i:], Index: -1})
				return out
			}
			k, err := strconv.Unquote(p[i : j+1])
			if err != nil {
				k = p[i+1 : j]
			}
			out = append(out, Elem{Key: k, Index: -1})
			i = j + 1
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			out = append(out, Elem{Key: p[i:j], Index: -1})
			i = j
		}
	}
	return out
}

// LocateYAML returns the 1-based line and column (in characters, as the
// YAML parser counts them) in doc, one YAML document, of the node at path
// or of the deepest step of path that exists, and how many steps were
// found. It returns line 0 when doc does not parse.
func LocateYAML(doc []byte, path []Elem) (line, col, found int) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&root); err != nil {
		return 0, 0, 0
	}
	n, found := Walk(&root, path)
	if n == nil {
		return 0, 0, 0
	}
	return n.Line, n.Column, found
}

// Walk returns the node at path below root (a document or any node), or
// the deepest step of path that exists, and how many steps were found. It
// returns nil for an empty document.
func Walk(root *yaml.Node, path []Elem) (n *yaml.Node, found int) {
	n = root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil, 0
		}
		n = n.Content[0]
	}
	for found < len(path) {
		next := child(deref(n), path[found], 0)
		if next == nil {
			break
		}
		n = next
		found++
	}
	return n, found
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// child returns the child of n for e: the value of a key (exact
// match, else case-insensitive; the last of duplicates; merge keys
// followed) or an element of a sequence.
func child(n *yaml.Node, e Elem, depth int) *yaml.Node {
	if depth > 10 {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		if e.Index >= 0 && e.Index < len(n.Content) {
			return n.Content[e.Index]
		}
	case yaml.MappingNode:
		if e.Index >= 0 {
			return nil
		}
		var exact, folded *yaml.Node
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Kind == yaml.ScalarNode && k.Tag == "!!merge":
				merges = append(merges, v)
			case k.Kind == yaml.ScalarNode && k.Value == e.Key:
				exact = v
			case k.Kind == yaml.ScalarNode && strings.EqualFold(k.Value, e.Key):
				folded = v
			}
		}
		if exact != nil {
			return exact
		}
		if folded != nil {
			return folded
		}
		for _, m := range merges {
			m = deref(m)
			targets := []*yaml.Node{m}
			if m.Kind == yaml.SequenceNode {
				targets = m.Content
			}
			for _, t := range targets {
				if v := child(deref(t), e, depth+1); v != nil {
					return v
				}
			}
		}
	}
	return nil
}

// ByteColumn turns a character column of line (1-based) of doc into a
// byte column.
func ByteColumn(doc []byte, line, col int) int {
	start := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(doc[start:], '\n')
		if i < 0 {
			return col
		}
		start += i + 1
	}
	b := start
	for c := 1; c < col && b < len(doc) && doc[b] != '\n'; c++ {
		_, size := utf8.DecodeRune(doc[b:])
		b += size
	}
	return b - start + 1
}
