package crd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"hash/maphash"
	"sync"

	"github.com/opmkit/opm/internal/jsonscan"
)

// member returns the raw value of key in the JSON object data (the last
// one, as decoding keeps), or nil when data is not an object or has no
// such key. It scans without decoding, so that the kind of a bundle's
// every manifest is known without decoding the manifests that are not
// CRDs or CSVs.
func member(data []byte, key string) []byte {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	var found []byte
	i = jsonscan.SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := jsonscan.SkipString(data, i)
		if end < 0 {
			return nil
		}
		quoted := data[i:end]
		k := quoted[1 : len(quoted)-1]
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil
		}
		v := jsonscan.SkipSpace(data, i+1)
		ve := jsonscan.SkipValue(data, v)
		if ve < 0 {
			return nil
		}
		if string(k) == key || bytes.IndexByte(k, '\\') >= 0 && unquoteKey(quoted) == key {
			found = data[v:ve]
		}
		i = jsonscan.SkipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return found
}

func unquoteKey(q []byte) string {
	var s string
	if json.Unmarshal(bytes.TrimSpace(q), &s) != nil {
		return ""
	}
	return s
}

// stringMember returns the string value of key in the object data ("" when
// absent or not a string).
func stringMember(data []byte, key string) string {
	v := member(data, key)
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// bundleObjectData decodes the value of an olm.bundle.object property,
// {"data": "<base64>"}, straight from its bytes.
func bundleObjectData(value []byte) ([]byte, bool) {
	v := member(value, "data")
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		var o struct {
			Data []byte `json:"data"`
		}
		if json.Unmarshal(value, &o) != nil {
			return nil, false
		}
		return o.Data, true
	}
	s := v[1 : len(v)-1]
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(out, s)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

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
