package bundle

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// itemLines returns the 1-based line of every item of the top-level list
// key in a metadata file (its first document), for error messages. It
// returns nil when the file cannot be read that way.
func itemLines(data []byte, key string) []int {
	doc := data
	if !looksLikeJSON(data) {
		d, err := firstYAMLDocument(data)
		if err != nil {
			return nil
		}
		doc = d
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil
	}
	n := &root
	if n.Kind == yamlv3.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		// encoding/json matches keys case-insensitively.
		if !strings.EqualFold(n.Content[i].Value, key) || n.Content[i+1].Kind != yamlv3.SequenceNode {
			continue
		}
		var lines []int
		for _, item := range n.Content[i+1].Content {
			lines = append(lines, item.Line)
		}
		return lines
	}
	return nil
}

func lineAt(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// nodeLine returns the 1-based line of the value at path (string keys,
// int indexes) in the first document of a YAML or JSON file, or 0.
func nodeLine(data []byte, path ...any) int {
	doc := data
	if !looksLikeJSON(data) {
		d, err := firstYAMLDocument(data)
		if err != nil {
			return 0
		}
		doc = d
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return 0
	}
	n := &root
	if n.Kind == yamlv3.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if n.Kind != yamlv3.MappingNode {
				return 0
			}
			var next *yamlv3.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return 0
			}
			n = next
		case int:
			if n.Kind != yamlv3.SequenceNode || p >= len(n.Content) {
				return 0
			}
			n = n.Content[p]
		}
	}
	return n.Line
}
