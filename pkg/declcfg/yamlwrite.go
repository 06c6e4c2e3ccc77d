package declcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/jsonscan"
)

// YAML output of large blobs.
//
// Upstream converts each blob with sigs.k8s.io/yaml's JSONToYAML: yaml.v2
// decodes the whole JSON into a tree of nodes and values, then encodes it.
// That costs hundreds of bytes per byte of input: a 20 MB blob holding a
// flat array took 6 to 7 GB. writeYAMLBlob converts a large blob in
// pieces instead, each piece by JSONToYAML itself, so that every scalar,
// key, quoting and line folding is yaml.v2's own, and pieces are joined the
// way yaml.v2's block emitter joins them:
//
//   - A block mapping whose keys are at column n is its pairs, in yaml.v2's
//     key order, each emitted on its own: M(n, A∪B) = M(n, A) + M(n, B).
//   - A block sequence whose dashes are at column n is its items, each on
//     its own: S(n, A+B) = S(n, A) + S(n, B). A sequence that is a
//     mapping's value is not indented: its dashes are at the key's column.
//   - A pair whose value is a non-empty container is the key line ("k:")
//     followed by the value as a mapping at n+2 or a sequence at n.
//   - A non-empty container that is a sequence item is the same container
//     emitted at n+2, with the first line's two columns at n (spaces)
//     replaced by the dash: "- ".
//
// A piece at column n is converted inside a wrapper of single-key
// mappings ("a:") that puts it at that column, and the wrapper's lines are
// removed; so a piece's line folding (which depends on the column) is
// what it would be in place. FuzzYAMLPieces checks the result against
// JSONToYAML of the whole, byte for byte, with pieces as small as they go.

// yamlPiece is the size of the pieces (compact JSON bytes) a large blob is
// converted in; blobs up to this size are converted whole.
var yamlPiece = 64 << 10

// errYAMLShape is a piece whose conversion does not have the expected
// shape: a bug (FuzzYAMLPieces guards against it), reported rather than
// written wrong.
var errYAMLShape = errors.New("internal error: unexpected YAML piece")

// writeYAMLBlob writes compact, the compact JSON of one blob, as
// JSONToYAML would convert it.
func writeYAMLBlob(w io.Writer, compact []byte) error {
	if len(compact) <= yamlPiece || compact[0] != '{' {
		y, err := yaml.JSONToYAML(compact)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	e := &yamlEmitter{w: w}
	return e.mapping(0, compact)
}

type yamlEmitter struct {
	w io.Writer
	// dashes are the columns where the next line written gets "- " in
	// place of two spaces (the first line of a container that is a
	// sequence item).
	dashes []int
}

// write writes YAML text, putting in the pending dashes.
func (e *yamlEmitter) write(text []byte) error {
	if len(e.dashes) > 0 {
		for _, n := range e.dashes {
			if len(text) < n+2 || text[n] != ' ' || text[n+1] != ' ' {
				return errYAMLShape
			}
			text[n], text[n+1] = '-', ' '
		}
		e.dashes = e.dashes[:0]
	}
	_, err := e.w.Write(text)
	return err
}

// yamlMember is one pair of a JSON object: its key (decoded) and the raw key
// and value.
type yamlMember struct {
	key        string
	rawKey     []byte
	rawValue   []byte
	rawMember  []byte // "key":value
	splittable bool   // a non-empty container
}

// yamlMembers returns obj's pairs in yaml.v2's key order; ok is false when
// the object is not split (duplicate keys, a "<<" key, keys yaml.v2 does
// not order consistently).
func yamlMembers(obj []byte) ([]yamlMember, bool) {
	var out []yamlMember
	seen := map[string]bool{}
	i := 1
	for i < len(obj) && obj[i] != '}' {
		ks := i
		ke := jsonscan.SkipString(obj, ks)
		if ke < 0 || ke >= len(obj) || obj[ke] != ':' {
			return nil, false
		}
		vs := ke + 1
		ve := jsonscan.SkipValue(obj, vs)
		if ve < 0 {
			return nil, false
		}
		var key string
		if bytes.IndexByte(obj[ks+1:ke-1], '\\') < 0 {
			key = string(obj[ks+1 : ke-1])
		} else if json.Unmarshal(obj[ks:ke], &key) != nil {
			return nil, false
		}
		if seen[key] || key == "<<" {
			return nil, false
		}
		seen[key] = true
		v := obj[vs:ve]
		out = append(out, yamlMember{key: key, rawKey: obj[ks:ke], rawValue: v, rawMember: obj[ks:ve],
			splittable: (v[0] == '{' || v[0] == '[') && len(v) > 2})
		i = ve
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	slices.SortFunc(out, func(a, b yamlMember) int {
		switch {
		case yamlKeyLess(a.key, b.key):
			return -1
		case yamlKeyLess(b.key, a.key):
			return 1
		}
		return 0
	})
	keys := make([]string, len(out))
	for i, m := range out {
		keys[i] = m.key
	}
	return out, yamlKeysOrdered(keys)
}

// yamlKeysOrdered reports whether sorted keys are in an order every sort
// agrees on: yaml.v2's comparison is not transitive for some keys mixing
// digits and other characters ("0x1F", "010 a", ...), and yaml.v2 sorts a
// map's keys from Go's random map order, so upstream's own output for
// such an object varies from run to run; it is then converted whole. Up
// to 1024 keys every pair is checked, beyond that neighbours only.
func yamlKeysOrdered(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if !yamlKeyLess(keys[i-1], keys[i]) || yamlKeyLess(keys[i], keys[i-1]) {
			return false
		}
	}
	if len(keys) > 1024 {
		return true
	}
	for i := range keys {
		for j := i + 2; j < len(keys); j++ {
			if !yamlKeyLess(keys[i], keys[j]) || yamlKeyLess(keys[j], keys[i]) {
				return false
			}
		}
	}
	return true
}

// nextItem returns the item of the JSON array arr that starts at or after
// i (after a separating comma), and the offset just past it; ok is false
// at the end of the array, bad when arr is not well formed.
func nextItem(arr []byte, i int) (item []byte, next int, ok, bad bool) {
	if i < len(arr) && arr[i] == ',' {
		i++
	}
	if i >= len(arr) || arr[i] == ']' {
		return nil, i, false, false
	}
	end := jsonscan.SkipValue(arr, i)
	if end < 0 {
		return nil, i, false, true
	}
	return arr[i:end], end, true, false
}

// mapping writes the JSON object obj as a block mapping with keys at
// column n.
func (e *yamlEmitter) mapping(n int, obj []byte) error {
	ms, ok := yamlMembers(obj)
	if !ok || len(ms) == 0 {
		return e.piece(n, obj, false)
	}
	batch := pieceBatch{e: e, n: n, open: '{', close: '}'}
	flush := batch.flush
	for _, m := range ms {
		if m.splittable && len(m.rawMember) > yamlPiece {
			if key, ok := e.keyLine(n, m.rawKey); ok {
				if err := flush(); err != nil {
					return err
				}
				err := e.write(key)
				if err != nil {
					return err
				}
				if m.rawValue[0] == '{' {
					err = e.mapping(n+2, m.rawValue)
				} else {
					err = e.sequence(n, m.rawValue)
				}
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := batch.add(m.rawMember); err != nil {
			return err
		}
	}
	return flush()
}

// pieceBatch gathers consecutive members or items into one piece.
type pieceBatch struct {
	e           *yamlEmitter
	n           int
	open, close byte
	buf         bytes.Buffer
}

// add adds a member or item, converting the piece once it is large
// enough.
func (b *pieceBatch) add(v []byte) error {
	if b.buf.Len() == 0 {
		b.buf.WriteByte(b.open)
	} else {
		b.buf.WriteByte(',')
	}
	b.buf.Write(v)
	if b.buf.Len() > yamlPiece {
		return b.flush()
	}
	return nil
}

// flush converts and writes what was gathered.
func (b *pieceBatch) flush() error {
	if b.buf.Len() == 0 {
		return nil
	}
	b.buf.WriteByte(b.close)
	err := b.e.piece(b.n, b.buf.Bytes(), b.open == '[')
	b.buf.Reset()
	return err
}

// sequence writes the JSON array arr as a block sequence with dashes at
// column n.
func (e *yamlEmitter) sequence(n int, arr []byte) error {
	for i := 1; ; {
		_, next, ok, bad := nextItem(arr, i)
		if bad {
			return e.piece(n, arr, true)
		}
		if !ok {
			break
		}
		i = next
	}
	batch := pieceBatch{e: e, n: n, open: '[', close: ']'}
	flush := batch.flush
	var line []byte
	for i := 1; ; {
		it, next, ok, _ := nextItem(arr, i)
		if !ok {
			break
		}
		i = next
		if len(it) > yamlPiece && (it[0] == '{' || it[0] == '[') && len(it) > 2 {
			if err := flush(); err != nil {
				return err
			}
			e.dashes = append(e.dashes, n)
			var err error
			if it[0] == '{' {
				err = e.mapping(n+2, it)
			} else {
				err = e.sequence(n+2, it)
			}
			if err != nil {
				return err
			}
			continue
		}
		if plainScalar(it) {
			// Written as yaml.v2 writes it, without a round trip.
			if err := flush(); err != nil {
				return err
			}
			line = line[:0]
			for range n {
				line = append(line, ' ')
			}
			line = append(append(append(line, "- "...), it...), '\n')
			if err := e.write(line); err != nil {
				return err
			}
			continue
		}
		if err := batch.add(it); err != nil {
			return err
		}
	}
	return flush()
}

// plainScalar reports whether the JSON scalar v is one yaml.v2 writes as
// it is: null, true, false, or an integer of at most 18 digits without a
// leading zero (an int64 once decoded; -0 is written 0).
func plainScalar(v []byte) bool {
	switch string(v) {
	case "null", "true", "false":
		return true
	case "-0":
		return false
	}
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// piece converts v, a mapping (keys at column n) or a sequence (dashes at
// column n), with JSONToYAML inside a wrapper that puts it there, and
// writes it without the wrapper's lines.
func (e *yamlEmitter) piece(n int, v []byte, seq bool) error {
	levels := n / 2
	if seq {
		levels++
	}
	y, err := yaml.JSONToYAML(wrapJSON(v, levels))
	if err != nil {
		return err
	}
	body, ok := unwrapYAML(y, levels)
	if !ok {
		return errYAMLShape
	}
	return e.write(body)
}

// keyLine returns the line of key (raw JSON) as a mapping key at column n
// whose value is a block container ("k:"), or false when the key is not
// written on one line (long or multi-line keys take yaml.v2's "? " form).
func (e *yamlEmitter) keyLine(n int, rawKey []byte) ([]byte, bool) {
	obj := make([]byte, 0, len(rawKey)+4)
	obj = append(append(append(obj, '{'), rawKey...), ":[]}"...)
	levels := n / 2
	y, err := yaml.JSONToYAML(wrapJSON(obj, levels))
	if err != nil {
		return nil, false
	}
	body, ok := unwrapYAML(y, levels)
	if !ok || bytes.Count(body, []byte{'\n'}) != 1 || !bytes.HasSuffix(body, []byte(": []\n")) ||
		bytes.HasPrefix(bytes.TrimLeft(body, " "), []byte("? ")) {
		return nil, false
	}
	return append(body[:len(body)-len(" []\n")], '\n'), true
}

// wrapJSON nests v in levels single-key objects {"a": ...}.
func wrapJSON(v []byte, levels int) []byte {
	if levels == 0 {
		return v
	}
	out := make([]byte, 0, len(v)+6*levels)
	for range levels {
		out = append(out, `{"a":`...)
	}
	out = append(out, v...)
	for range levels {
		out = append(out, '}')
	}
	return out
}

// unwrapYAML removes the levels lines "a:" (at columns 0, 2, ...) a
// wrapper adds.
func unwrapYAML(y []byte, levels int) ([]byte, bool) {
	for i := range levels {
		line := strings.Repeat(" ", 2*i) + "a:\n"
		if !bytes.HasPrefix(y, []byte(line)) {
			return nil, false
		}
		y = y[len(line):]
	}
	return y, true
}

// yamlKeyLess orders mapping keys (strings) as yaml.v2 sorts a map's keys
// when it encodes one (its sorter.go, for two strings): rune by rune; letters by code point and before
// other characters; runs of digits by numeric value, a shorter run of
// equal value first.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
