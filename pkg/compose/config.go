package compose

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
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
// works; a file with a mirror section (or a kind or apiVersion) is read as
// an ImageSetConfiguration, written kind or not. The meaning is oc-mirror's: without full, a package or channel
// with no minVersion and no maxVersion keeps only channel heads (of every
// channel when no channel is listed); bounds keep the versions between
// them, inclusive; full keeps every version within the bounds.
// Fields opm does not implement (minBundle, bundles, ...) are errors, not
// silently ignored.

var (
	packageKeys = []string{"name", "channels", "minVersion", "maxVersion", "defaultChannel"}
	channelKeys = []string{"name", "minVersion", "maxVersion"}
)

// Keys of an ImageSetConfiguration's top level, of its mirror section and
// of a mirror.operators[] entry. Those that do not concern a catalog's
// content (where oc-mirror writes, other kinds of images) are accepted and
// ignored; any other key is an error, so that a misplaced or misspelt one
// is never silently dropped.
var (
	iscKeys    = []string{"kind", "apiVersion", "mirror", "archiveSize", "storageConfig"}
	mirrorKeys = []string{"operators", "platform", "additionalImages", "helm", "blockedImages", "samples"}
	entryKeys  = []string{"catalog", "full", "packages", "targetCatalog", "targetName", "targetTag"}
)

// ConfigEntryError reports a configuration whose mirror.operators[]
// entries do not say which one to use.
type ConfigEntryError struct {
	Line int
	// Catalogs are the entries' catalog fields, in order.
	Catalogs []string
	// Catalog is the catalog asked for; Chosen is set when it was chosen
	// explicitly rather than being the filtered catalog.
	Catalog string
	Chosen  bool
}

func (e *ConfigEntryError) Error() string {
	if e.Chosen {
		return fmt.Sprintf("line %d: no mirror.operators entry is for catalog %q (entries: %s)", e.Line, e.Catalog, strings.Join(e.Catalogs, ", "))
	}
	return fmt.Sprintf("line %d: %d mirror.operators entries (%s) and none is for %q", e.Line, len(e.Catalogs), strings.Join(e.Catalogs, ", "), e.Catalog)
}

// ParseFilterConfig reads a filter configuration for the catalog called
// catalog. An ImageSetConfiguration's mirror.operators[] entry is chosen
// by its catalog field: the one that is exactly entry when entry is set
// (the entry must then exist, even alone), else the one that is exactly
// catalog, else the only entry. Errors name the line.
func ParseFilterConfig(r io.Reader, catalog, entry string) ([]PackageSelection, error) {
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
	sel := root
	path := ""
	if lookup(root, "kind") != nil || lookup(root, "apiVersion") != nil || lookup(root, "mirror") != nil {
		// An ImageSetConfiguration, kind and apiVersion written or not.
		if sel, path, err = operatorsEntry(root, catalog, entry); err != nil {
			return nil, err
		}
	} else {
		if err := checkKeysHint(root, "", entryKeys, map[string]string{"operators": "mirror.operators"}); err != nil {
			return nil, err
		}
		if entry != "" {
			if c := scalar(lookup(root, "catalog")); c != entry {
				return nil, &ConfigEntryError{Line: root.Line, Catalogs: []string{c}, Catalog: entry, Chosen: true}
			}
		}
	}
	return parseEntry(sel, path)
}

// operatorsEntry checks an ImageSetConfiguration and returns the
// mirror.operators[] entry to use, with its path for messages.
func operatorsEntry(root *yaml.Node, catalog, entry string) (*yaml.Node, string, error) {
	misplaced := map[string]string{}
	for _, k := range entryKeys {
		misplaced[k] = "mirror.operators[]"
	}
	misplaced["operators"] = "mirror"
	if err := checkKeysHint(root, "", iscKeys, misplaced); err != nil {
		return nil, "", err
	}
	if k := lookup(root, "kind"); k != nil && k.Value != "ImageSetConfiguration" {
		return nil, "", fmt.Errorf("line %d: kind %q, expected ImageSetConfiguration", k.Line, k.Value)
	}
	if a := lookup(root, "apiVersion"); a != nil && !strings.HasPrefix(a.Value, "mirror.openshift.io/") {
		return nil, "", fmt.Errorf("line %d: apiVersion %q, expected mirror.openshift.io/v2alpha1 (or v1alpha2)", a.Line, a.Value)
	}
	mirror := lookup(root, "mirror")
	if mirror == nil || mirror.Kind != yaml.MappingNode {
		return nil, "", fmt.Errorf("line %d: no mirror section", root.Line)
	}
	delete(misplaced, "operators")
	if err := checkKeysHint(mirror, "mirror", mirrorKeys, misplaced); err != nil {
		return nil, "", err
	}
	ops := lookup(mirror, "operators")
	if ops == nil || ops.Kind != yaml.SequenceNode || len(ops.Content) == 0 {
		return nil, "", fmt.Errorf("line %d: no mirror.operators entries", mirror.Line)
	}
	want, chosen := catalog, entry != ""
	if chosen {
		want = entry
	}
	idx := -1
	var catalogs []string
	for i, op := range ops.Content {
		op = resolve(op)
		where := fmt.Sprintf("mirror.operators[%d]", i)
		if op.Kind != yaml.MappingNode {
			return nil, "", fmt.Errorf("line %d: %s is not a mapping", op.Line, where)
		}
		if err := checkKeys(op, where, entryKeys); err != nil {
			return nil, "", err
		}
		c := scalar(lookup(op, "catalog"))
		catalogs = append(catalogs, c)
		if c == want && idx < 0 {
			idx = i
		}
	}
	if idx < 0 {
		if chosen || len(ops.Content) > 1 {
			return nil, "", &ConfigEntryError{Line: ops.Line, Catalogs: catalogs, Catalog: want, Chosen: chosen}
		}
		idx = 0
	}
	return resolve(ops.Content[idx]), fmt.Sprintf("mirror.operators[%d].", idx), nil
}

// parseEntry reads the selections of one mirror.operators[] entry (or of
// a file holding one at the top); path prefixes its fields in messages.
func parseEntry(entry *yaml.Node, path string) ([]PackageSelection, error) {
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
	return checkKeysHint(n, where, allowed, nil)
}

// checkKeysHint is checkKeys, where a key of misplaced is said to belong
// under the path it maps to; where is "" for the top level.
func checkKeysHint(n *yaml.Node, where string, allowed []string, misplaced map[string]string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s is not a mapping", n.Line, where)
	}
	at := where + ": "
	if where == "" {
		at = "top level: "
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if slices.Contains(allowed, k.Value) {
			continue
		}
		if under, found := misplaced[k.Value]; found {
			return fmt.Errorf("line %d: %sfield %q belongs under %s", k.Line, at, k.Value, under)
		}
		return fmt.Errorf("line %d: %sfield %q is not supported (supported: %s)", k.Line, at, k.Value, strings.Join(allowed, ", "))
	}
	return nil
}
