package template

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// locator finds the lines of values in a document (YAML or JSON, which is
// YAML too) for messages. A document it cannot parse yields no lines.
type locator struct {
	root *yamlv3.Node
}

func newLocator(src []byte) *locator {
	var n yamlv3.Node
	if len(src) > MaxInputSize || yamlv3.Unmarshal(src, &n) != nil || len(n.Content) == 0 {
		return &locator{}
	}
	return &locator{root: n.Content[0]}
}

// line returns the 1-based line (within the document) of the deepest node
// of path that exists, or 0.
func (l *locator) line(path []any) int {
	n := l.root
	if n == nil {
		return 0
	}
	line := n.Line
	for _, p := range path {
		n = resolveAlias(n)
		var next *yamlv3.Node
		switch p := p.(type) {
		case Anywhere:
			if k := findKey(n, string(p)); k != nil {
				next = k
			}
		case string:
			if n.Kind != yamlv3.MappingNode {
				return line
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				if strings.EqualFold(n.Content[i].Value, p) {
					next = n.Content[i+1]
					// A value on its own lines (a block) is placed at
					// its key.
					if next.Kind != yamlv3.ScalarNode && next.Style&yamlv3.FlowStyle == 0 {
						next = &yamlv3.Node{Kind: next.Kind, Line: n.Content[i].Line, Content: next.Content, Style: next.Style, Alias: next.Alias}
					}
				}
			}
		case int:
			if n.Kind != yamlv3.SequenceNode || p < 0 || p >= len(n.Content) {
				return line
			}
			next = n.Content[p]
		}
		if next == nil {
			return line
		}
		n, line = next, next.Line
	}
	return line
}

func resolveAlias(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; i < 16 && n.Kind == yamlv3.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

// findKey returns the first key node named key below n, in document
// order. Aliases are not followed (a document of aliases of aliases would
// make the walk exponential) and the walk visits a bounded number of nodes.
func findKey(n *yamlv3.Node, key string) *yamlv3.Node {
	budget := 1 << 20
	var walk func(n *yamlv3.Node, depth int) *yamlv3.Node
	walk = func(n *yamlv3.Node, depth int) *yamlv3.Node {
		budget--
		if budget < 0 || depth > 256 || n.Kind == yamlv3.AliasNode {
			return nil
		}
		if n.Kind == yamlv3.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					return n.Content[i]
				}
			}
		}
		for _, c := range n.Content {
			if k := walk(c, depth+1); k != nil {
				return k
			}
		}
		return nil
	}
	return walk(n, 0)
}
