package serve

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/opmkit/opm/internal/csvtypes"
	"github.com/opmkit/opm/pkg/api"
)

// Index is the compact, read-only form of a catalog that the servers answer
// from. It keeps names, upgrade edges, properties and dependencies in
// memory; the bulky parts (bundle manifests, synthesised CSVs, custom-schema
// blobs, the HTTP API's JSON lines) stay in a data file and are read on
// demand. An Index is safe for concurrent use.
type Index struct {
	packages []Package // sorted by name
	byName   map[string]int32
	bundles  []Bundle
	records  []Record // sorted by channel, package, bundle (ListBundles order)

	// providers maps a GVK to the records whose bundle provides it, in
	// record order.
	providers map[GVK][]int32
	// custom maps (schema, package) to the custom-schema blobs, in load
	// order.
	custom map[customKey][]span

	data io.ReaderAt // the data file
	// sums are the SHA-256 digests of the data file's sections, by
	// offset, for an index built with HashOnly (which has no data file).
	sums map[int64][sha256.Size]byte
	// http is the catalogd HTTP API's data, when built.
	http *httpIndex

	// templates holds each bundle's channel-independent api.Bundle, built
	// on first use.
	templates []atomic.Pointer[api.Bundle]
	// materialising bounds the answers whose manifests and stub CSVs are
	// made at the same time (see Objects).
	materialising chan struct{}
	// icons holds each package's icon as base64 (for stub CSVs), made on
	// first use.
	icons []atomic.Pointer[string]

	closer  io.Closer // the data file, when the index owns it
	cleanup string    // a temporary directory removed by Close
}

// Package is one package of the index.
type Package struct {
	Name           string
	DefaultChannel string
	Deprecation    Deprecation
	Channels       []Channel // sorted by name

	// Description and Icon go into stub CSVs.
	Description string
	Icon        *Icon
}

// Icon is a package icon.
type Icon struct {
	Data      []byte
	MediaType string
}

// RelatedImage is one of a bundle's related images.
type RelatedImage struct {
	Name, Image string
}

// Channel is one channel of a package.
type Channel struct {
	Name        string
	Head        int32 // record index of the channel head
	Deprecation Deprecation
	// Records are the channel's record indices, sorted by bundle name.
	Records []int32
}

// Deprecation is an olm.deprecations message; Set tells an empty message
// apart from none.
type Deprecation struct {
	Set     bool
	Message string
}

// Record is one bundle as a member of one channel.
type Record struct {
	Package   int32 // index into packages
	Channel   int32 // index into the package's channels
	Bundle    int32 // index into bundles
	Replaces  string
	Skips     []string
	SkipRange string
}

// Bundle is the channel-independent part of a bundle.
type Bundle struct {
	Name        string
	Package     string
	Image       string
	Version     string // the olm.package property's version, as written
	Properties  []KV   // every property but olm.bundle.object and olm.csv.metadata
	Provided    []GVK
	Required    []GVK
	Deps        []KV
	Deprecation Deprecation

	// Objects is the data file section of the manifests (see
	// appendBundleObject).
	Objects span
	// Meta is the section of the bundle's olm.csv.metadata value when it
	// has exactly one: a stub CSV is made from it when no object is a CSV.
	// SemVer and RelatedImages go into the stub too.
	Meta          span
	SemVer        string
	RelatedImages []RelatedImage
}

// KV is a property or dependency: a type and its JSON value.
type KV struct {
	Type  string
	Value string
}

// GVK is a group, version and kind.
type GVK struct {
	Group, Version, Kind string
}

type customKey struct {
	Schema, Package string
}

// span is a section of the data file.
type span struct {
	Off int64
	Len int64
}

// Stats summarises an index.
type Stats struct {
	Packages int `json:"packages"`
	Bundles  int `json:"bundles"`
	Records  int `json:"records"`
	Custom   int `json:"customBlobs"`
}

// Stats returns the index's counts.
func (x *Index) Stats() Stats {
	n := 0
	for _, c := range x.custom {
		n += len(c)
	}
	return Stats{Packages: len(x.packages), Bundles: len(x.bundles), Records: len(x.records), Custom: n}
}

// Packages returns the packages, sorted by name.
func (x *Index) Packages() []Package { return x.packages }

// Records returns every record in ListBundles order.
func (x *Index) Records() []Record { return x.records }

// Package returns the package named name.
func (x *Index) Package(name string) (*Package, bool) {
	i, ok := x.byName[name]
	if !ok {
		return nil, false
	}
	return &x.packages[i], true
}

// Channel returns the channel of p named name.
func (p *Package) Channel(name string) (int32, *Channel, bool) {
	i, ok := slices.BinarySearchFunc(p.Channels, name, func(c Channel, n string) int { return strings.Compare(c.Name, n) })
	if !ok {
		return -1, nil, false
	}
	return int32(i), &p.Channels[i], true
}

// RecordIn returns the record of bundle name in channel c.
func (x *Index) RecordIn(c *Channel, name string) (int32, bool) {
	i, ok := slices.BinarySearchFunc(c.Records, name, func(r int32, n string) int {
		return strings.Compare(x.bundles[x.records[r].Bundle].Name, n)
	})
	if !ok {
		return -1, false
	}
	return c.Records[i], true
}

// Record returns record r.
func (x *Index) Record(r int32) *Record { return &x.records[r] }

// BundleOf returns the bundle of record r.
func (x *Index) BundleOf(r int32) *Bundle { return &x.bundles[x.records[r].Bundle] }

// PackageOf and ChannelOf return the package and channel of record r.
func (x *Index) PackageOf(r int32) *Package { return &x.packages[x.records[r].Package] }

// ChannelOf returns the channel of record r.
func (x *Index) ChannelOf(r int32) *Channel {
	rec := &x.records[r]
	return &x.packages[rec.Package].Channels[rec.Channel]
}

// IsHead reports whether record r is its channel's head.
func (x *Index) IsHead(r int32) bool { return x.ChannelOf(r).Head == r }

// Providers returns the records whose bundle provides gvk.
func (x *Index) Providers(gvk GVK) []int32 { return x.providers[gvk] }

// Objects returns the manifests and csvJson of bundle b, as upstream serves
// them: the objects as written (JSON) or converted (YAML), and the CSV
// among them or the stub CSV made from olm.csv.metadata.
//
// At most [MaxMaterialising] calls make their objects at once; the others
// wait their turn. A burst of calls (OLM's package server asks for every
// channel head of every package at once) then needs the memory of a few
// answers, not of all of them.
func (x *Index) Objects(b *Bundle) (objects []string, csvJSON string, err error) {
	if x.materialising != nil {
		x.materialising <- struct{}{}
		defer func() { <-x.materialising }()
	}
	if b.Objects.Len > 0 {
		buf, err := x.read(b.Objects)
		if err != nil {
			return nil, "", err
		}
		objects, err = parseObjects(buf)
		if err != nil {
			return nil, "", fmt.Errorf("bundle %q: %w", b.Name, err)
		}
	}
	switch {
	case firstCSV(objects) >= 0:
		csvJSON = objects[firstCSV(objects)]
	case b.Meta.Len > 0:
		meta, err := x.read(b.Meta)
		if err != nil {
			return nil, "", err
		}
		in := csvInputs{Name: b.Name, Version: b.SemVer}
		if i, ok := x.byName[b.Package]; ok {
			p := &x.packages[i]
			in.PackageDescription = p.Description
			if p.Icon != nil {
				in.Icon = &csvtypes.Icon{Data: x.icon(i), MediaType: p.Icon.MediaType}
			}
		}
		for _, ri := range b.RelatedImages {
			in.RelatedImages = append(in.RelatedImages, csvtypes.RelatedImage(ri))
		}
		csv, err := synthesizeCSV(meta, in)
		if err != nil {
			return nil, "", fmt.Errorf("bundle %q: %w", b.Name, err)
		}
		// csv is not used again: share its bytes rather than copy them.
		csvJSON = unsafe.String(unsafe.SliceData(csv), len(csv))
		if len(objects) == 0 {
			objects = []string{csvJSON}
		}
	}
	return objects, csvJSON, nil
}

// icon returns package i's icon data as base64, encoded once.
func (x *Index) icon(i int32) string {
	if s := x.icons[i].Load(); s != nil {
		return *s
	}
	s := base64.StdEncoding.EncodeToString(x.packages[i].Icon.Data)
	x.icons[i].CompareAndSwap(nil, &s)
	return *x.icons[i].Load()
}

// CustomBlobs returns the custom-schema blobs (normalised JSON) of schema
// and package pkg ("" selects blobs without a package), in load order.
func (x *Index) CustomBlobs(schema, pkg string) ([][]byte, error) {
	spans := x.custom[customKey{schema, pkg}]
	out := make([][]byte, 0, len(spans))
	for _, s := range spans {
		b, err := x.read(s)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// MaxMaterialising is the number of answers whose objects are made at the
// same time: the number of CPUs Go uses, at most 4 (making them is a few
// milliseconds of CPU; more at once only holds more memory).
func MaxMaterialising() int { return min(runtime.GOMAXPROCS(0), 4) }

// CustomSchemas returns the (schema, package) pairs that have custom-schema
// blobs, sorted; CustomBlobs returns each pair's blobs.
func (x *Index) CustomSchemas() [][2]string {
	keys := sortedCustomKeys(x.custom)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = [2]string{k.Schema, k.Package}
	}
	return out
}

// maxSection bounds one read from the data file.
const maxSection = 1 << 30

func (x *Index) read(s span) ([]byte, error) {
	if s.Len < 0 || s.Len > maxSection || s.Off < 0 {
		return nil, errCorrupt
	}
	if x.data == nil {
		return nil, fmt.Errorf("no data file: %w", errCorrupt)
	}
	buf := make([]byte, s.Len)
	if _, err := x.data.ReadAt(buf, s.Off); err != nil {
		return nil, fmt.Errorf("reading the data file: %w", err)
	}
	return buf, nil
}

// finish sorts what the builders filled in and derives the lookup maps.
func (x *Index) finish() {
	x.materialising = make(chan struct{}, MaxMaterialising())
	x.icons = make([]atomic.Pointer[string], len(x.packages))
	x.templates = make([]atomic.Pointer[api.Bundle], len(x.bundles))
	x.byName = make(map[string]int32, len(x.packages))
	for i, p := range x.packages {
		x.byName[p.Name] = int32(i)
	}
	x.providers = map[GVK][]int32{}
	for r := range x.records {
		b := &x.bundles[x.records[r].Bundle]
		for i, g := range b.Provided {
			if slices.Contains(b.Provided[:i], g) {
				continue
			}
			x.providers[g] = append(x.providers[g], int32(r))
		}
	}
}

// sortRecords orders records by channel, package and bundle name and
// returns the old-to-new index mapping.
func sortRecords(recs []Record, pkgs []Package, bundles []Bundle) []int32 {
	order := make([]int32, len(recs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ra, rb := &recs[a], &recs[b]
		pa, pb := &pkgs[ra.Package], &pkgs[rb.Package]
		return cmp.Or(
			strings.Compare(pa.Channels[ra.Channel].Name, pb.Channels[rb.Channel].Name),
			strings.Compare(pa.Name, pb.Name),
			strings.Compare(bundles[ra.Bundle].Name, bundles[rb.Bundle].Name),
		)
	})
	return order
}
