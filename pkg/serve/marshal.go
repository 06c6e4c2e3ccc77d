package serve

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The index file of a cache: the in-memory index, serialised. Everything
// read back is bounds-checked: record, package, channel and bundle
// references must point inside their tables, and spans inside the data
// file, so a corrupt or hostile cache fails to load instead of serving
// garbage or panicking.

// indexMagic starts every index file; the trailing digit is the format
// version (bump it with any change to the encoding or to what it means).
const indexMagic = "opm-serve-index/1\n"

// MarshalBinary encodes the index (not its data file).
func (x *Index) MarshalBinary() ([]byte, error) {
	b := []byte(indexMagic)
	b = appendUvarint(b, uint64(len(x.packages)))
	for _, p := range x.packages {
		b = appendString(b, p.Name)
		b = appendString(b, p.DefaultChannel)
		b = appendDeprecation(b, p.Deprecation)
		b = appendString(b, p.Description)
		b = appendBool(b, p.Icon != nil)
		if p.Icon != nil {
			b = appendString(b, string(p.Icon.Data))
			b = appendString(b, p.Icon.MediaType)
		}
		b = appendUvarint(b, uint64(len(p.Channels)))
		for _, c := range p.Channels {
			b = appendString(b, c.Name)
			b = appendUvarint(b, uint64(c.Head+1))
			b = appendDeprecation(b, c.Deprecation)
			b = appendUvarint(b, uint64(len(c.Records)))
			for _, r := range c.Records {
				b = appendUvarint(b, uint64(r))
			}
		}
	}
	b = appendUvarint(b, uint64(len(x.bundles)))
	for _, bd := range x.bundles {
		b = appendString(b, bd.Name)
		b = appendString(b, bd.Package)
		b = appendString(b, bd.Image)
		b = appendString(b, bd.Version)
		b = appendKVs(b, bd.Properties)
		b = appendGVKs(b, bd.Provided)
		b = appendGVKs(b, bd.Required)
		b = appendKVs(b, bd.Deps)
		b = appendDeprecation(b, bd.Deprecation)
		b = appendSpan(b, bd.Objects)
		b = appendSpan(b, bd.Meta)
		b = appendString(b, bd.SemVer)
		b = appendUvarint(b, uint64(len(bd.RelatedImages)))
		for _, ri := range bd.RelatedImages {
			b = appendString(b, ri.Name)
			b = appendString(b, ri.Image)
		}
	}
	b = appendUvarint(b, uint64(len(x.records)))
	for _, r := range x.records {
		b = appendUvarint(b, uint64(r.Package))
		b = appendUvarint(b, uint64(r.Channel))
		b = appendUvarint(b, uint64(r.Bundle))
		b = appendString(b, r.Replaces)
		b = appendStrings(b, r.Skips)
		b = appendString(b, r.SkipRange)
	}
	b = appendUvarint(b, uint64(len(x.custom)))
	for _, k := range sortedCustomKeys(x.custom) {
		b = appendString(b, k.Schema)
		b = appendString(b, k.Package)
		b = appendSpans(b, x.custom[k])
	}
	b = appendBool(b, x.http != nil)
	if h := x.http; h != nil {
		b = appendUvarint(b, uint64(len(h.segs)))
		for _, sg := range h.segs {
			b = appendSpan(b, sg.span)
			b = appendUvarint(b, uint64(sg.virt))
		}
		b = appendUvarint(b, uint64(h.size))
		b = appendUvarint(b, uint64(h.modTime.UnixNano()))
		for _, m := range []map[string][]span{h.schema, h.pkg, h.name} {
			b = appendUvarint(b, uint64(len(m)))
			for _, k := range sortedKeys(m) {
				b = appendString(b, k)
				b = appendSpans(b, m[k])
			}
		}
	}
	return b, nil
}

func appendDeprecation(b []byte, d Deprecation) []byte {
	b = appendBool(b, d.Set)
	return appendString(b, d.Message)
}

func appendKVs(b []byte, kvs []KV) []byte {
	b = appendUvarint(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = appendString(b, kv.Type)
		b = appendString(b, kv.Value)
	}
	return b
}

func appendGVKs(b []byte, gvks []GVK) []byte {
	b = appendUvarint(b, uint64(len(gvks)))
	for _, g := range gvks {
		b = appendString(b, g.Group)
		b = appendString(b, g.Version)
		b = appendString(b, g.Kind)
	}
	return b
}

func appendSpan(b []byte, s span) []byte {
	b = appendUvarint(b, uint64(s.Off))
	return appendUvarint(b, uint64(s.Len))
}

func appendSpans(b []byte, ss []span) []byte {
	b = appendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendSpan(b, s)
	}
	return b
}

// UnmarshalIndex decodes an index file; data is its data file, of
// dataSize bytes.
func UnmarshalIndex(buf []byte, data io.ReaderAt, dataSize int64) (*Index, error) {
	x, err := unmarshalIndex(buf, dataSize)
	if err != nil {
		return nil, fmt.Errorf("decoding the cache index: %w", err)
	}
	x.data = data
	x.finish()
	return x, nil
}

func unmarshalIndex(buf []byte, dataSize int64) (*Index, error) {
	if len(buf) < len(indexMagic) || string(buf[:len(indexMagic)]) != indexMagic {
		return nil, errors.New("not an index of this format")
	}
	r := &reader{b: buf[len(indexMagic):]}
	x := &Index{custom: map[customKey][]span{}}
	spanOK := func(s span) {
		if s.Off < 0 || s.Len < 0 || s.Off > dataSize || s.Len > dataSize-s.Off {
			r.fail()
		}
	}
	readSpan := func() span {
		s := span{Off: r.int64(), Len: r.int64()}
		spanOK(s)
		return s
	}
	readSpans := func() []span {
		n := r.count(2)
		out := make([]span, 0, prealloc(n))
		for range n {
			out = append(out, readSpan())
		}
		return out
	}
	readDep := func() Deprecation { return Deprecation{Set: r.bool(), Message: r.str()} }

	np := r.count(4)
	x.packages = make([]Package, 0, prealloc(np))
	for range np {
		p := Package{Name: r.str(), DefaultChannel: r.str(), Deprecation: readDep(), Description: r.str()}
		if r.bool() {
			p.Icon = &Icon{Data: []byte(r.str()), MediaType: r.str()}
		}
		nc := r.count(4)
		p.Channels = make([]Channel, 0, prealloc(nc))
		for range nc {
			c := Channel{Name: r.str(), Head: r.int32() - 1, Deprecation: readDep()}
			nr := r.count(1)
			c.Records = make([]int32, 0, prealloc(nr))
			for range nr {
				c.Records = append(c.Records, r.int32())
			}
			p.Channels = append(p.Channels, c)
		}
		x.packages = append(x.packages, p)
	}
	nb := r.count(16)
	x.bundles = make([]Bundle, 0, prealloc(nb))
	for range nb {
		b := Bundle{Name: r.str(), Package: r.str(), Image: r.str(), Version: r.str()}
		b.Properties = readKVs(r)
		b.Provided = readGVKs(r)
		b.Required = readGVKs(r)
		b.Deps = readKVs(r)
		b.Deprecation = readDep()
		b.Objects = readSpan()
		b.Meta = readSpan()
		b.SemVer = r.str()
		if n := r.count(2); n > 0 {
			b.RelatedImages = make([]RelatedImage, 0, prealloc(n))
			for range n {
				b.RelatedImages = append(b.RelatedImages, RelatedImage{Name: r.str(), Image: r.str()})
			}
		}
		x.bundles = append(x.bundles, b)
	}
	nr := r.count(6)
	x.records = make([]Record, 0, prealloc(nr))
	for range nr {
		rec := Record{Package: r.int32(), Channel: r.int32(), Bundle: r.int32(), Replaces: r.str(), Skips: r.strs(), SkipRange: r.str()}
		x.records = append(x.records, rec)
	}
	ncu := r.count(3)
	for range ncu {
		k := customKey{Schema: r.str(), Package: r.str()}
		x.custom[k] = readSpans()
	}
	if r.bool() {
		h := &httpIndex{}
		nseg := r.count(3)
		var virt int64
		for range nseg {
			sg := segment{span: readSpan(), virt: r.int64()}
			if sg.virt != virt {
				r.fail()
			}
			virt += sg.Len
			h.segs = append(h.segs, sg)
		}
		h.size = r.int64()
		if h.size != virt {
			r.fail()
		}
		h.modTime = time.Unix(0, r.int64())
		maps := make([]map[string][]span, 3)
		for i := range maps {
			n := r.count(2)
			maps[i] = make(map[string][]span, prealloc(n))
			for range n {
				k := r.str()
				spans := readSpansWithin(r, h.size)
				maps[i][k] = spans
			}
		}
		h.schema, h.pkg, h.name = maps[0], maps[1], maps[2]
		x.http = h
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, errors.New("trailing bytes")
	}
	if err := x.check(len(buf)); err != nil {
		return nil, err
	}
	return x, nil
}

// prealloc bounds the capacity reserved for n decoded elements: a count
// read from the index is only bounded by the bytes left, and an element
// in memory is many times larger than its smallest encoding, so larger
// tables grow as their elements are actually decoded.
func prealloc(n int) int { return min(n, 1024) }

// readSpansWithin reads spans that must lie within [0, size), in
// increasing order.
func readSpansWithin(r *reader, size int64) []span {
	n := r.count(2)
	out := make([]span, 0, prealloc(n))
	for range n {
		s := span{Off: r.int64(), Len: r.int64()}
		if s.Off < 0 || s.Len < 0 || s.Off > size || s.Len > size-s.Off || (len(out) > 0 && s.Off < out[len(out)-1].Off+out[len(out)-1].Len) {
			r.fail()
			return nil
		}
		out = append(out, s)
	}
	return out
}

func readKVs(r *reader) []KV {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	out := make([]KV, 0, prealloc(n))
	for range n {
		out = append(out, KV{Type: r.str(), Value: r.str()})
	}
	return out
}

func readGVKs(r *reader) []GVK {
	n := r.count(3)
	if n == 0 {
		return nil
	}
	out := make([]GVK, 0, prealloc(n))
	for range n {
		out = append(out, GVK{Group: r.str(), Version: r.str(), Kind: r.str()})
	}
	return out
}

// check verifies that every reference of a decoded index points inside its
// table, that every record is listed by its channel exactly once, that the
// orders lookups rely on hold, and that the tables derived from the index
// (finish) stay within a multiple of its size, size bytes.
func (x *Index) check(size int) error {
	bad := func(format string, args ...any) error { return fmt.Errorf("inconsistent index: "+format, args...) }
	for i := range x.packages {
		p := &x.packages[i]
		if i > 0 && x.packages[i-1].Name >= p.Name {
			return bad("packages out of order at %q", p.Name)
		}
		for ci := range p.Channels {
			c := &p.Channels[ci]
			if ci > 0 && p.Channels[ci-1].Name >= c.Name {
				return bad("channels of %q out of order", p.Name)
			}
			if c.Head < -1 || int(c.Head) >= len(x.records) {
				return bad("channel %q of %q: head out of range", c.Name, p.Name)
			}
			if h := c.Head; h >= 0 && (int(x.records[h].Package) != i || int(x.records[h].Channel) != ci) {
				return bad("channel %q of %q: head in another channel", c.Name, p.Name)
			}
			for ri, r := range c.Records {
				if r < 0 || int(r) >= len(x.records) {
					return bad("channel %q of %q: record out of range", c.Name, p.Name)
				}
				rec := &x.records[r]
				if int(rec.Package) != i || int(rec.Channel) != ci {
					return bad("channel %q of %q: record of another channel", c.Name, p.Name)
				}
				if int(rec.Bundle) >= len(x.bundles) || rec.Bundle < 0 {
					return bad("record out of range")
				}
				if ri > 0 && x.bundles[x.records[c.Records[ri-1]].Bundle].Name >= x.bundles[rec.Bundle].Name {
					return bad("channel %q of %q: bundles out of order", c.Name, p.Name)
				}
			}
		}
	}
	listed := 0
	for i := range x.packages {
		for _, c := range x.packages[i].Channels {
			listed += len(c.Records)
		}
	}
	if listed != len(x.records) {
		return bad("%d records, %d listed by channels", len(x.records), listed)
	}
	// The providers table has an entry per record and API its bundle
	// provides: a bundle in many channels providing many APIs would make
	// it quadratic in the index's size.
	pairs := 0
	for _, rec := range x.records {
		if rec.Package < 0 || int(rec.Package) >= len(x.packages) ||
			rec.Channel < 0 || int(rec.Channel) >= len(x.packages[rec.Package].Channels) ||
			rec.Bundle < 0 || int(rec.Bundle) >= len(x.bundles) {
			return bad("record out of range")
		}
		pairs += len(x.bundles[rec.Bundle].Provided)
		if pairs > maxProviderPairs(size) {
			return bad("more provided APIs across channels than an index of %d bytes can hold", size)
		}
	}
	return nil
}

// maxProviderPairs is the most (record, provided API) pairs an index of
// size bytes may imply. A real index has far fewer: each pair is a record
// (6 bytes or more) or an API of its bundle (about 30 bytes).
func maxProviderPairs(size int) int { return 4*size + 1024 }

func sortedCustomKeys(m map[customKey][]span) []customKey {
	keys := make([]customKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b customKey) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Package, b.Package))
	})
	return keys
}

func sortedKeys(m map[string][]span) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
