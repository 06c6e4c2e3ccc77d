package validate

import (
	"context"
	"sort"

	"github.com/opmkit/opm/pkg/declcfg"
)

// One package at a time.
//
// Every rule upstream enforces, and every check of this package, is about
// one package: its olm.package, channels, bundles and deprecations (or,
// for blobs without a package, about one blob). Only three things look
// across packages, and they are cheap to gather as packages go by: which
// conversion error upstream reports first (an order over the whole
// catalog), which versions and APIs the catalog provides (for required
// packages and APIs), and the optional dependency resolution. So the
// catalog is validated one package (a group) at a time, in parallel, and
// only the group being checked is held in memory.

// nKinds is the number of blob kinds (declcfg.BlobKind values).
const nKinds = int(declcfg.KindDeprecation) + 1

// blobID names a blob of a group: its kind and its index in the group's
// slice of that kind. The zero value names no blob.
type blobID struct {
	kind declcfg.BlobKind
	i    int
	ok   bool
}

// idFile marks positions that encode a blobID: while a group is checked,
// its blobs' positions are replaced by their ids, so that every issue the
// model reports names the exact blob it comes from, even in catalogs whose
// positions are all zero.
const idFile = "\x00blob"

func idPos(kind declcfg.BlobKind, i int) declcfg.Position {
	return declcfg.Position{File: idFile, Line: int(kind) + 1, Column: i + 1}
}

func blobOf(pos declcfg.Position) blobID {
	if pos.File != idFile || pos.Line < 1 || pos.Line > nKinds || pos.Column < 1 {
		return blobID{}
	}
	return blobID{kind: declcfg.BlobKind(pos.Line - 1), i: pos.Column - 1, ok: true}
}

// group is the blobs of one package (or of no package), as the model sees
// them (positions replaced by ids), with what the ids stand for.
type group struct {
	name string
	cfg  *declcfg.DeclarativeConfig
	// pos, rank and ref are indexed by kind, then by the blob's index in
	// cfg: its real position, its rank among the catalog's blobs of its
	// kind in load order, and its index in the source (-1: none).
	pos  [nKinds][]declcfg.Position
	rank [nKinds][]int
	ref  [nKinds][]int
}

// newGroup takes cfg (which it modifies) as the blobs of group name. Ranks
// and refs are set by the caller.
func newGroup(name string, cfg *declcfg.DeclarativeConfig) *group {
	g := &group{name: name, cfg: cfg}
	take := func(kind declcfg.BlobKind, n int, pos func(i int) *declcfg.Position) {
		g.pos[kind] = make([]declcfg.Position, n)
		g.rank[kind] = make([]int, n)
		g.ref[kind] = make([]int, n)
		for i := range n {
			p := pos(i)
			g.pos[kind][i] = *p
			g.ref[kind][i] = -1
			*p = idPos(kind, i)
		}
	}
	take(declcfg.KindPackage, len(cfg.Packages), func(i int) *declcfg.Position { return &cfg.Packages[i].Pos })
	take(declcfg.KindChannel, len(cfg.Channels), func(i int) *declcfg.Position { return &cfg.Channels[i].Pos })
	take(declcfg.KindBundle, len(cfg.Bundles), func(i int) *declcfg.Position { return &cfg.Bundles[i].Pos })
	take(declcfg.KindDeprecation, len(cfg.Deprecations), func(i int) *declcfg.Position { return &cfg.Deprecations[i].Pos })
	take(declcfg.KindOther, len(cfg.Others), func(i int) *declcfg.Position { return &cfg.Others[i].Pos })
	return g
}

// catalogSource is a catalog read one group at a time.
type catalogSource interface {
	// groups returns the group names, sorted.
	groups() []string
	// load returns one group.
	load(ctx context.Context, name string) (*group, error)
	// text returns the source bytes of the blob ref (see group.ref).
	text(ctx context.Context, ref int) (blobText, error)
	// whole returns every blob at once, in load order.
	whole(ctx context.Context) (*declcfg.DeclarativeConfig, error)
}

// blobText is the source of one blob: its bytes, whether they are a YAML
// document or a JSON value, and the position of its first byte.
type blobText struct {
	data      []byte
	yaml      bool
	line, col int
	file      string
}

// memSource is a catalog already in memory. It has no source text, so its
// findings are positioned at their blobs.
type memSource struct {
	cfg   *declcfg.DeclarativeConfig
	names []string
	// members lists, per group, the indices of its blobs per kind.
	members map[string]*[nKinds][]int
}

func newMemSource(cfg *declcfg.DeclarativeConfig) *memSource {
	s := &memSource{cfg: cfg, members: map[string]*[nKinds][]int{}}
	add := func(name string, kind declcfg.BlobKind, i int) {
		m := s.members[name]
		if m == nil {
			m = &[nKinds][]int{}
			s.members[name] = m
			s.names = append(s.names, name)
		}
		m[kind] = append(m[kind], i)
	}
	for i, p := range cfg.Packages {
		add(p.Name, declcfg.KindPackage, i)
	}
	for i, c := range cfg.Channels {
		add(c.Package, declcfg.KindChannel, i)
	}
	for i, b := range cfg.Bundles {
		add(b.Package, declcfg.KindBundle, i)
	}
	for i, d := range cfg.Deprecations {
		add(d.Package, declcfg.KindDeprecation, i)
	}
	for i, o := range cfg.Others {
		add(o.Package, declcfg.KindOther, i)
	}
	sort.Strings(s.names)
	return s
}

func (s *memSource) groups() []string { return s.names }

func (s *memSource) load(_ context.Context, name string) (*group, error) {
	m := s.members[name]
	cfg := &declcfg.DeclarativeConfig{}
	for _, i := range m[declcfg.KindPackage] {
		cfg.Packages = append(cfg.Packages, s.cfg.Packages[i])
	}
	for _, i := range m[declcfg.KindChannel] {
		cfg.Channels = append(cfg.Channels, s.cfg.Channels[i])
	}
	for _, i := range m[declcfg.KindBundle] {
		cfg.Bundles = append(cfg.Bundles, s.cfg.Bundles[i])
	}
	for _, i := range m[declcfg.KindDeprecation] {
		cfg.Deprecations = append(cfg.Deprecations, s.cfg.Deprecations[i])
	}
	for _, i := range m[declcfg.KindOther] {
		cfg.Others = append(cfg.Others, s.cfg.Others[i])
	}
	g := newGroup(name, cfg)
	for k := range nKinds {
		copy(g.rank[k], m[k])
	}
	return g, nil
}

func (s *memSource) text(context.Context, int) (blobText, error) { return blobText{}, nil }

func (s *memSource) whole(context.Context) (*declcfg.DeclarativeConfig, error) { return s.cfg, nil }

// indexSource is a catalog indexed by declcfg: groups are decoded from
// their byte ranges when checked, and blobs with findings read again to
// position them.
type indexSource struct {
	ix *declcfg.Index
}

func (s indexSource) groups() []string { return s.ix.Groups() }

func (s indexSource) load(ctx context.Context, name string) (*group, error) {
	cfg, err := s.ix.LoadGroup(ctx, name)
	if err != nil {
		return nil, err
	}
	g := newGroup(name, cfg)
	var next [nKinds]int
	for _, b := range s.ix.GroupBlobs(name) {
		blob := s.ix.Blob(b)
		k := blob.Kind
		g.rank[k][next[k]] = int(blob.Seq)
		g.ref[k][next[k]] = b
		next[k]++
	}
	return g, nil
}

func (s indexSource) text(ctx context.Context, ref int) (blobText, error) {
	data, err := s.ix.ReadBlob(ctx, ref)
	if err != nil {
		return blobText{}, err
	}
	b := s.ix.Blob(ref)
	return blobText{data: data, yaml: b.YAML, line: int(b.Line), col: int(b.Column), file: s.ix.FileName(int(b.File))}, nil
}

func (s indexSource) whole(ctx context.Context) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	var counts [nKinds]int
	for i := 0; i < s.ix.Len(); i++ {
		counts[s.ix.Blob(i).Kind]++
	}
	out.Packages = make([]declcfg.Package, counts[declcfg.KindPackage])
	out.Channels = make([]declcfg.Channel, counts[declcfg.KindChannel])
	out.Bundles = make([]declcfg.Bundle, counts[declcfg.KindBundle])
	out.Deprecations = make([]declcfg.Deprecation, counts[declcfg.KindDeprecation])
	out.Others = make([]declcfg.Meta, counts[declcfg.KindOther])
	for _, name := range s.ix.Groups() {
		cfg, err := s.ix.LoadGroup(ctx, name)
		if err != nil {
			return nil, err
		}
		var next [nKinds]int
		for _, b := range s.ix.GroupBlobs(name) {
			blob := s.ix.Blob(b)
			k, j := blob.Kind, next[blob.Kind]
			next[k]++
			switch k {
			case declcfg.KindPackage:
				out.Packages[blob.Seq] = cfg.Packages[j]
			case declcfg.KindChannel:
				out.Channels[blob.Seq] = cfg.Channels[j]
			case declcfg.KindBundle:
				out.Bundles[blob.Seq] = cfg.Bundles[j]
			case declcfg.KindDeprecation:
				out.Deprecations[blob.Seq] = cfg.Deprecations[j]
			default:
				out.Others[blob.Seq] = cfg.Others[j]
			}
		}
	}
	return out, nil
}
