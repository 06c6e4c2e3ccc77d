package catalogedit

import (
	"bytes"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Shaping new values like their neighbours: key order (and spelling) of a
// sibling, or upstream's writer order when the file is written that way.

// orderLike returns o with its keys in the order (and spelling) they have
// in ref; keys ref lacks follow in o's order.
func orderLike(o *Object, ref *Object) *Object {
	if ref == nil {
		return o
	}
	rank := func(k string) int {
		for i, r := range ref.Keys {
			if strings.EqualFold(r, k) {
				return i
			}
		}
		return len(ref.Keys)
	}
	type kv struct {
		k    string
		v    any
		r, i int
	}
	kvs := make([]kv, len(o.Keys))
	for i, k := range o.Keys {
		r := rank(k)
		if r < len(ref.Keys) {
			k = ref.Keys[r]
		}
		kvs[i] = kv{k, o.Vals[i], r, i}
	}
	sort.SliceStable(kvs, func(a, b int) bool {
		if kvs[a].r != kvs[b].r {
			return kvs[a].r < kvs[b].r
		}
		return kvs[a].i < kvs[b].i
	})
	out := &Object{}
	for _, x := range kvs {
		out.Keys = append(out.Keys, x.k)
		out.Vals = append(out.Vals, x.v)
	}
	return out
}

// orderLikeDeep is orderLike applied at every level: nested objects
// follow ref's object under the same key, list items follow ref's first
// item of the list.
func orderLikeDeep(o *Object, ref *Object) *Object {
	if ref == nil {
		return o
	}
	out := orderLike(o, ref)
	for i, k := range out.Keys {
		rv, ok := ref.Get(k)
		if !ok {
			continue
		}
		out.Vals[i] = shapeLike(out.Vals[i], rv)
	}
	return out
}

func shapeLike(v, ref any) any {
	switch t := v.(type) {
	case *Object:
		if r, ok := ref.(*Object); ok {
			return orderLikeDeep(t, r)
		}
	case []any:
		ra, ok := ref.([]any)
		if !ok || len(ra) == 0 {
			return v
		}
		generic := mostKeys(ra)
		if generic == nil {
			return v
		}
		out := make([]any, len(t))
		for i, x := range t {
			xo, ok := x.(*Object)
			if !ok {
				out[i] = x
				continue
			}
			// a property follows a property of its own type; one of a
			// type the reference lacks only gets its own keys ordered
			if typ := xo.String("type"); typ != "" {
				if r := itemOfType(ra, typ); r != nil {
					out[i] = orderLikeDeep(xo, r)
				} else {
					out[i] = orderLike(xo, generic)
				}
				continue
			}
			out[i] = orderLikeDeep(xo, generic)
		}
		return out
	}
	return v
}

// itemOfType returns the first object of a list whose type is typ.
func itemOfType(list []any, typ string) *Object {
	for _, v := range list {
		if o, ok := v.(*Object); ok && o.String("type") == typ {
			return o
		}
	}
	return nil
}

// mostKeys returns the object with the most keys among vals, or nil.
func mostKeys(vals []any) *Object {
	var best *Object
	for _, v := range vals {
		if o, ok := v.(*Object); ok && (best == nil || len(o.Keys) > len(best.Keys)) {
			best = o
		}
	}
	return best
}

// keysSorted reports whether o's keys are in byte order (upstream's YAML
// writer sorts keys; for the keys FBC uses, its order is byte order).
func keysSorted(o *Object) bool {
	return o != nil && len(o.Keys) > 1 && sort.StringsAreSorted(o.Keys)
}

// writerOrder returns v with every object's keys as upstream's YAML writer
// orders them (a JSON-to-YAML round trip through sigs.k8s.io/yaml).
func writerOrder(v *Object) *Object {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v, jsonStyle{compact: true, kvSep: ":", itemSep: ","}, ""); err != nil {
		return v
	}
	y, err := yaml.JSONToYAML(buf.Bytes())
	if err != nil {
		return v
	}
	out, err := valueFromYAML(y)
	if err != nil {
		return v
	}
	if o, ok := out.(*Object); ok {
		return o
	}
	return v
}

// shapeNew orders a new blob's keys like the blob ref of its file (a blob
// of the same schema when there is one): upstream's writer order when ref
// lists its keys sorted, else ref's order.
func shapeNew(v *Object, ref *Object) *Object {
	if keysSorted(ref) {
		return writerOrder(v)
	}
	return orderLikeDeep(v, ref)
}
