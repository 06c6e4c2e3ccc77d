package graph

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	gr "github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/olmv1"
)

// OLM v1 marks (opm graph show --olm-v1): the bundles OLM v1 refuses are
// drawn with a red border and listed in the legend; -o json lists them
// with their rule codes under olmV1.

// refusedLegend is the legend of the mark.
const refusedLegend = "red border: OLM v1 refuses the bundle (opm validate --target olm-v1 says why)"

// OLMv1Marks is what OLM v1 refuses among the drawn bundles.
type OLMv1Marks struct {
	// FeatureGates are the gates the verdicts assume.
	FeatureGates string `json:"featureGates"`
	// Refused lists the bundles OLM v1 refuses, by package then name,
	// each with its rule codes.
	Refused []RefusedBundle `json:"refused"`
	// NotRead lists the bundles whose manifests the catalog does not hold
	// (their verdicts rest on their properties).
	NotRead []string `json:"manifestsNotRead"`

	refused map[string]map[string]bool
}

// RefusedBundle is a bundle OLM v1 refuses.
type RefusedBundle struct {
	Package string   `json:"package"`
	Bundle  string   `json:"bundle"`
	Codes   []string `json:"codes"`
}

func (m *OLMv1Marks) is(pkg, name string) bool { return m != nil && m.refused[pkg][name] }

// olmv1Marks checks the bundles of cfg.
func olmv1Marks(cfg *declcfg.DeclarativeConfig, gates []string) (*OLMv1Marks, error) {
	g, err := olmv1.ParseGates(gates)
	if err != nil {
		return nil, err
	}
	m := &OLMv1Marks{FeatureGates: g.String(), Refused: []RefusedBundle{}, NotRead: []string{}, refused: map[string]map[string]bool{}}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		ob, _ := olmv1.FromDeclcfg(b)
		v := olmv1.Check(ob, g)
		if !v.ManifestsRead {
			m.NotRead = append(m.NotRead, b.Name)
		}
		if v.Installable {
			continue
		}
		if m.refused[b.Package] == nil {
			m.refused[b.Package] = map[string]bool{}
		}
		m.refused[b.Package][b.Name] = true
		m.Refused = append(m.Refused, RefusedBundle{Package: b.Package, Bundle: b.Name, Codes: v.Codes(olmv1.Refused)})
	}
	sort.Slice(m.Refused, func(i, j int) bool {
		a, b := m.Refused[i], m.Refused[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		return a.Bundle < b.Bundle
	})
	sort.Strings(m.NotRead)
	return m, nil
}

// markedJSON is the -o json form with the marks.
type markedJSON struct {
	gr.GraphJSON
	OLMv1 *OLMv1Marks `json:"olmV1"`
}

// writeDOTMarks writes dot, a DOT graph, with the refused bundles' nodes
// given a red border, and a legend.
func (r *ShowResult) writeDOTMarks(w io.Writer, dot []byte) error {
	end := bytes.LastIndex(dot, []byte("}"))
	if end < 0 {
		_, err := w.Write(dot)
		return err
	}
	var b strings.Builder
	b.Write(dot[:end])
	for _, p := range r.Graph.Packages {
		for _, c := range p.Channels {
			for _, name := range entryNames(c) {
				if r.OLMv1.is(p.Name, name) {
					fmt.Fprintf(&b, "  %s [color=\"#D00000\", penwidth=3];\n", gr.DOTString(p.Name+"/"+c.Name+"/"+name))
				}
			}
		}
	}
	fmt.Fprintf(&b, "  label=%s;\n  labelloc=b;\n}\n", gr.DOTString(refusedLegend))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMermaidMarks writes mermaid, a flowchart, with the refused bundles'
// nodes in class olmv1refused, and a legend.
func (r *ShowResult) writeMermaidMarks(w io.Writer, mermaid []byte) error {
	var ids []string
	for _, p := range r.Graph.Packages {
		for _, c := range p.Channels {
			for _, name := range entryNames(c) {
				if r.OLMv1.is(p.Name, name) {
					ids = append(ids, p.Name+"-"+c.Name+"-"+name)
				}
			}
		}
	}
	var b strings.Builder
	b.Write(mermaid)
	b.WriteString("  classDef olmv1refused stroke:#D00000,stroke-width:4px\n")
	fmt.Fprintf(&b, "  subgraph olmv1legend[\"legend\"]\n    olmv1refusedlegend[%q]\n  end\n", refusedLegend)
	ids = append(ids, "olmv1refusedlegend")
	fmt.Fprintf(&b, "class %s olmv1refused\n", strings.Join(ids, ","))
	_, err := io.WriteString(w, b.String())
	return err
}

// entryNames are the names of c's entries, each once.
func entryNames(c *gr.ChannelGraph) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range c.Entries {
		if !seen[e.Name] {
			seen[e.Name] = true
			out = append(out, e.Name)
		}
	}
	return out
}
