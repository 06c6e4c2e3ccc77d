package compose

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// MaxConfigSize bounds a filter configuration file.
const MaxConfigSize = 4 << 20

// Filter configuration files.
//
// They take the shape oc-mirror users know: an ImageSetConfiguration whose
// mirror.operators[] entries name a catalog and, under packages[], what to
// keep of each package:
//
//	kind: ImageSetConfiguration
//	apiVersion: mirror.openshift.io/v2alpha1
//	mirror:
//	  operators:
//	  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18
//	    full: false
//	    packages:
//	    - name: advanced-cluster-management
//	      defaultChannel: release-2.13
//	      channels:
//	      - name: release-2.13
//	        minVersion: 2.13.1
//	    - name: web-terminal
//
// A file holding one such entry (catalog, full, packages) at the top also
// works. The meaning is oc-mirror's: without full, a package or channel
// with no minVersion and no maxVersion keeps only channel heads (of every
// channel when no channel is listed); bounds keep the versions between
// them, inclusive; full keeps every version within the bounds.
// Fields opm does not implement (minBundle, bundles, ...) are errors, not
// silently ignored.

var (
	packageKeys = []string{"name", "channels", "minVersion", "maxVersion", "defaultChannel"}
	channelKeys = []string{"name", "minVersion", "maxVersion"}
)

// ParseFilterConfig reads a filter configuration for the catalog called
// catalog (used to pick among several mirror.operators[] entries; an entry
// whose catalog is exactly it wins, and a lone entry is used whatever its
// catalog). Errors name the line.
func ParseFilterConfig(r io.Reader, catalog string) ([]PackageSelection, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxConfigSize)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty configuration")
		}
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("line 1: expected a mapping at the top")
	}
	root := doc.Content[0]
	entry := root
	path := ""
	if k := lookup(root, "kind"); k != nil {
		if k.Value != "ImageSetConfiguration" {
			return nil, fmt.Errorf("line %d: kind %q, expected ImageSetConfiguration", k.Line, k.Value)
		}
		mirror := lookup(root, "mirror")
		if mirror == nil || mirror.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: no mirror section", root.Line)
		}
		ops := lookup(mirror, "operators")
		if ops == nil || ops.Kind != yaml.SequenceNode || len(ops.Content) == 0 {
			return nil, fmt.Errorf("line %d: no mirror.operators entries", mirror.Line)
		}
		idx := -1
		var catalogs []string
		for i, op := range ops.Content {
			op = resolve(op)
			if op.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: mirror.operators[%d] is not a mapping", op.Line, i)
			}
			c := scalar(lookup(op, "catalog"))
			catalogs = append(catalogs, c)
			if c == catalog && idx < 0 {
				idx = i
			}
		}
		if idx < 0 {
			if len(ops.Content) > 1 {
				return nil, fmt.Errorf("line %d: %d mirror.operators entries (%s) and none is for %q; keep one entry or name its catalog", ops.Line, len(ops.Content), strings.Join(catalogs, ", "), catalog)
			}
			idx = 0
		}
		entry = resolve(ops.Content[idx])
		path = fmt.Sprintf("mirror.operators[%d].", idx)
	}
	full := false
	if f := lookup(entry, "full"); f != nil {
		if err := f.Decode(&full); err != nil {
			return nil, fmt.Errorf("line %d: %sfull: %v", f.Line, path, err)
		}
	}
	pkgs := lookup(entry, "packages")
	if pkgs == nil {
		return nil, fmt.Errorf("line %d: no %spackages to keep", entry.Line, path)
	}
	if pkgs.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: %spackages is not a list", pkgs.Line, path)
	}
	var out []PackageSelection
	for i, pn := range pkgs.Content {
		pn = resolve(pn)
		where := fmt.Sprintf("%spackages[%d]", path, i)
		if err := checkKeys(pn, where, packageKeys); err != nil {
			return nil, err
		}
		var p struct {
			Name           string `yaml:"name"`
			MinVersion     string `yaml:"minVersion"`
			MaxVersion     string `yaml:"maxVersion"`
			DefaultChannel string `yaml:"defaultChannel"`
			Channels       []struct {
				Name       string `yaml:"name"`
				MinVersion string `yaml:"minVersion"`
				MaxVersion string `yaml:"maxVersion"`
			} `yaml:"channels"`
		}
		if ch := lookup(pn, "channels"); ch != nil {
			if ch.Kind != yaml.SequenceNode {
				return nil, fmt.Errorf("line %d: %s.channels is not a list", ch.Line, where)
			}
			for j, cn := range ch.Content {
				if err := checkKeys(resolve(cn), fmt.Sprintf("%s.channels[%d]", where, j), channelKeys); err != nil {
					return nil, err
				}
			}
		}
		if err := pn.Decode(&p); err != nil {
			return nil, fmt.Errorf("line %d: %s: %v", pn.Line, where, err)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("line %d: %s has no name", pn.Line, where)
		}
		sel := PackageSelection{Name: p.Name, MinVersion: p.MinVersion, MaxVersion: p.MaxVersion, DefaultChannel: p.DefaultChannel}
		bounded := p.MinVersion != "" || p.MaxVersion != ""
		if len(p.Channels) == 0 {
			sel.HeadsOnly = !full && !bounded
		}
		for j, c := range p.Channels {
			if c.Name == "" {
				return nil, fmt.Errorf("line %d: %s.channels[%d] has no name", pn.Line, where, j)
			}
			sel.Channels = append(sel.Channels, ChannelSelection{
				Name:       c.Name,
				MinVersion: c.MinVersion,
				MaxVersion: c.MaxVersion,
				HeadsOnly:  !full && !bounded && c.MinVersion == "" && c.MaxVersion == "",
			})
		}
		out = append(out, sel)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("line %d: %spackages is empty", pkgs.Line, path)
	}
	return out, nil
}

// resolve follows aliases (a few levels at most: a loop stays an alias).
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n != nil && n.Kind == yaml.AliasNode; i++ {
		n = n.Alias
	}
	return n
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func checkKeys(n *yaml.Node, where string, allowed []string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s is not a mapping", n.Line, where)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("line %d: %s: field %q is not supported (supported: %s)", k.Line, where, k.Value, strings.Join(allowed, ", "))
		}
	}
	return nil
}
