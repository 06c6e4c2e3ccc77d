package crd

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/opmkit/opm/internal/jsonscan"
	"github.com/opmkit/opm/pkg/property"
)

// member returns the raw value of key in the JSON object data, or nil
// (jsonscan.Member): the kind of a bundle's every manifest is known
// without decoding the manifests that are not CRDs or CSVs.
func member(data []byte, key string) []byte { return jsonscan.Member(data, key) }

// stringMember returns the string value of key in the object data ("" when
// absent or not a string).
func stringMember(data []byte, key string) string { return jsonscan.StringMember(data, key) }

// bundleObjectData decodes the value of an olm.bundle.object property
// (property.BundleObjectData).
func bundleObjectData(value []byte) ([]byte, bool) { return property.BundleObjectData(value) }

// Cache shares the CRDs parsed from identical manifests: the bundles of a
// package mostly ship the same CRDs, and a CRD parsed once is compared
// with itself in no time. It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	m     map[uint64]*CRD
	nodes map[[2]uint64]*Schema
}

// intern returns the node already built with s's content, or s. Nodes are
// never modified once built, so they can be shared.
func (c *Cache) intern(s *Schema) *Schema {
	if c == nil {
		return s
	}
	key := [2]uint64{s.hash, s.ownHash}
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.nodes[key]; ok {
		return got
	}
	if c.nodes == nil {
		c.nodes = map[[2]uint64]*Schema{}
	}
	c.nodes[key] = s
	return s
}

// parse parses data, or returns the CRD already parsed from the same
// bytes.
func (c *Cache) parse(ctx context.Context, data []byte) (*CRD, error) {
	if c == nil {
		return parse(ctx, data, nil)
	}
	// key on what the comparison reads: metadata.name, spec and status
	// (other metadata, such as a generator's version annotation, changes
	// between bundles without changing the CRD)
	var mh maphash.Hash
	mh.SetSeed(hashSeed)
	spec := member(data, "spec")
	if spec == nil {
		mh.Write(data)
	} else {
		mh.WriteString(stringMember(data, "apiVersion"))
		mh.WriteByte(0)
		mh.WriteString(stringMember(member(data, "metadata"), "name"))
		mh.WriteByte(0)
		mh.Write(spec)
		mh.WriteByte(0)
		mh.Write(member(data, "status"))
	}
	h := mh.Sum64()
	c.mu.Lock()
	got, ok := c.m[h]
	c.mu.Unlock()
	if ok {
		return got, nil
	}
	crd, err := parse(ctx, data, c)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[uint64]*CRD{}
	}
	c.m[h] = crd
	c.mu.Unlock()
	return crd, nil
}
