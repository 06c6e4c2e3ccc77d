package compose

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// smallValue is the largest property value (in bytes) a Summary keeps
// verbatim, so that a diff can show it; larger ones are kept as a hash.
const smallValue = 256

// hashSeed is shared by every Summary of the process, so that their
// hashes compare.
var hashSeed = maphash.MakeSeed()

func hashBytes(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// Summary is what [Diff] needs to know of a catalog, without its blobs:
// the upgrade graphs (channels, entries, versions, deprecations) and, per
// bundle, its image, related images and a hash of each property value.
// Building it keeps no reference into the catalog, so the catalog can be
// freed before the next one is loaded.
type Summary struct {
	// Source names the catalog in reports (the reference it was loaded
	// from).
	Source   string
	Packages map[string]*PackageSummary
	Graph    *graph.Graph
}

// PackageSummary is one package of a Summary.
type PackageSummary struct {
	Name string
	// Pos is where the package's blobs start.
	Pos            declcfg.Position
	HasBlob        bool
	DefaultChannel string
	Bundles        map[string]*BundleSummary
	// Deprecations maps each deprecated reference to its message.
	Deprecations map[declcfg.PackageScopedReference]string

	meta   map[string]uint64   // olm.package fields other than name and defaultChannel
	others map[string][]uint64 // other blobs, by "schema name", sorted hashes
}

// BundleSummary is one bundle of a Summary.
type BundleSummary struct {
	Name    string
	Version string
	Image   string
	// RelatedImages are "image" or "image (name)", sorted.
	RelatedImages []string
	Pos           declcfg.Position
	// relatedRefs are the related images' references.
	relatedRefs []string

	props []propSum // by type, then hash
}

type propSum struct {
	typ   string
	hash  uint64
	value json.RawMessage // when at most smallValue bytes
}

// Summarize builds the Summary of cfg; source names it in reports.
// Bundles must have a single olm.package property with a strict semver
// version (the graph needs it); the error names the bundle and its file.
func Summarize(cfg *declcfg.DeclarativeConfig, source string) (*Summary, error) {
	g, err := graphOf(cfg, nil)
	if err != nil {
		return nil, err
	}
	s := &Summary{Source: source, Packages: map[string]*PackageSummary{}, Graph: g}
	get := func(name string, pos declcfg.Position) *PackageSummary {
		p := s.Packages[name]
		if p == nil {
			p = &PackageSummary{
				Name:         name,
				Pos:          pos,
				Bundles:      map[string]*BundleSummary{},
				Deprecations: map[declcfg.PackageScopedReference]string{},
				meta:         map[string]uint64{},
				others:       map[string][]uint64{},
			}
			s.Packages[name] = p
		}
		return p
	}
	for i := range cfg.Packages {
		pk := &cfg.Packages[i]
		p := get(pk.Name, pk.Pos)
		if p.HasBlob {
			continue // a duplicate package: the first one counts (validation reports it)
		}
		p.HasBlob = true
		p.Pos = pk.Pos
		p.DefaultChannel = pk.DefaultChannel
		if pk.Description != "" {
			p.meta["description"] = hashBytes([]byte(pk.Description))
		}
		if pk.Icon != nil {
			p.meta["icon"] = hashBytes(append([]byte(pk.Icon.MediaType+"\x00"), pk.Icon.Data...))
		}
		if len(pk.Properties) > 0 {
			raw, _ := json.Marshal(pk.Properties)
			p.meta["properties"] = hashBytes(raw)
		}
	}
	for i := range cfg.Channels {
		get(cfg.Channels[i].Package, cfg.Channels[i].Pos)
	}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		p := get(b.Package, b.Pos)
		if _, dup := p.Bundles[b.Name]; dup {
			continue
		}
		bs := &BundleSummary{Name: b.Name, Image: b.Image, Pos: b.Pos}
		if pg := g.Package(b.Package); pg != nil {
			if n := pg.Nodes[b.Name]; n != nil {
				bs.Version = n.VersionString()
			}
		}
		for _, ri := range b.RelatedImages {
			if ri.Image != "" {
				bs.relatedRefs = append(bs.relatedRefs, ri.Image)
			}
			if ri.Name == "" {
				bs.RelatedImages = append(bs.RelatedImages, ri.Image)
			} else {
				bs.RelatedImages = append(bs.RelatedImages, ri.Image+" ("+ri.Name+")")
			}
		}
		sort.Strings(bs.RelatedImages)
		for _, pr := range b.Properties {
			ps := propSum{typ: pr.Type, hash: hashBytes(pr.Value)}
			if len(pr.Value) <= smallValue {
				ps.value = append(json.RawMessage(nil), pr.Value...)
			}
			bs.props = append(bs.props, ps)
		}
		sort.Slice(bs.props, func(i, j int) bool {
			if bs.props[i].typ != bs.props[j].typ {
				return bs.props[i].typ < bs.props[j].typ
			}
			return bs.props[i].hash < bs.props[j].hash
		})
		p.Bundles[b.Name] = bs
	}
	for i := range cfg.Deprecations {
		d := &cfg.Deprecations[i]
		p := get(d.Package, d.Pos)
		for _, e := range d.Entries {
			if _, dup := p.Deprecations[e.Reference]; !dup {
				p.Deprecations[e.Reference] = e.Message
			}
		}
	}
	for i := range cfg.Others {
		o := &cfg.Others[i]
		p := get(o.Package, o.Pos)
		key := o.Schema + " " + o.Name
		p.others[key] = append(p.others[key], hashBytes(bytes.TrimSpace(o.Blob)))
	}
	for _, p := range s.Packages {
		for _, hs := range p.others {
			sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
		}
	}
	return s, nil
}

// propertyTypes lists the property types of a bundle summary, sorted.
func (b *BundleSummary) propertyTypes() []string {
	var out []string
	for _, p := range b.props {
		if len(out) == 0 || out[len(out)-1] != p.typ {
			out = append(out, p.typ)
		}
	}
	return out
}

func (b *BundleSummary) propsOf(typ string) []propSum {
	i := sort.Search(len(b.props), func(i int) bool { return b.props[i].typ >= typ })
	j := i
	for j < len(b.props) && b.props[j].typ == typ {
		j++
	}
	return b.props[i:j]
}
