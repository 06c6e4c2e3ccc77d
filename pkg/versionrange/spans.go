package versionrange

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// Span is an interval of versions: from Lo to Hi, each end included or
// not; a nil end is unbounded. Versions compare as a skipRange compares
// them (pre-releases ordinary, build metadata ignored).
type Span struct {
	Lo, Hi         *semver.Version
	LoIncl, HiIncl bool
}

// Holds reports whether v lies in the span.
func (s Span) Holds(v semver.Version) bool {
	if s.Lo != nil {
		if c := v.Compare(*s.Lo); c < 0 || (c == 0 && !s.LoIncl) {
			return false
		}
	}
	if s.Hi != nil {
		if c := v.Compare(*s.Hi); c > 0 || (c == 0 && !s.HiIncl) {
			return false
		}
	}
	return true
}

// Spans returns disjoint spans, in increasing order, that hold every
// version the range contains (and maybe others: a != comparison does not
// split a span). An index of versions finds a range's members by
// searching each span, in O(log N + hits) rather than testing every
// version; [SkipRange.Contains] still decides each one found.
func (r *SkipRange) Spans() []Span { return r.spans }

// skipRangeSpans reads the bounds of each || alternative of a skipRange
// that blang/semver's ParseRange accepted: the same split into
// alternatives and comparisons, the same wildcard expansion, then the
// intersection of each alternative's comparisons. A comparison it cannot
// read leaves its alternative unbounded on that side, which only widens
// the result.
func skipRangeSpans(s string) []Span {
	var out []Span
	for _, alt := range splitOr(splitRangeParts(s)) {
		sp := Span{}
		for _, t := range expandWildcards(alt) {
			op, vs, ok := splitOpVersion(t)
			if !ok {
				continue
			}
			v, err := semver.Parse(vs)
			if err != nil {
				continue
			}
			switch op {
			case ">":
				sp.narrowLo(v, false)
			case ">=":
				sp.narrowLo(v, true)
			case "<":
				sp.narrowHi(v, false)
			case "<=":
				sp.narrowHi(v, true)
			case "", "=", "==":
				sp.narrowLo(v, true)
				sp.narrowHi(v, true)
			}
		}
		if !sp.empty() {
			out = append(out, sp)
		}
	}
	return mergeSpans(out)
}

func (s *Span) narrowLo(v semver.Version, incl bool) {
	if s.Lo == nil {
		s.Lo, s.LoIncl = &v, incl
		return
	}
	switch c := v.Compare(*s.Lo); {
	case c > 0:
		s.Lo, s.LoIncl = &v, incl
	case c == 0:
		s.LoIncl = s.LoIncl && incl
	}
}

func (s *Span) narrowHi(v semver.Version, incl bool) {
	if s.Hi == nil {
		s.Hi, s.HiIncl = &v, incl
		return
	}
	switch c := v.Compare(*s.Hi); {
	case c < 0:
		s.Hi, s.HiIncl = &v, incl
	case c == 0:
		s.HiIncl = s.HiIncl && incl
	}
}

func (s Span) empty() bool {
	if s.Lo == nil || s.Hi == nil {
		return false
	}
	c := s.Lo.Compare(*s.Hi)
	return c > 0 || (c == 0 && !(s.LoIncl && s.HiIncl))
}

// mergeSpans sorts spans by their low end and joins those that overlap or
// touch, so that no version is in two of them.
func mergeSpans(in []Span) []Span {
	if len(in) < 2 {
		return in
	}
	sort.Slice(in, func(i, j int) bool { return loLess(in[i], in[j]) })
	out := in[:1]
	for _, s := range in[1:] {
		last := &out[len(out)-1]
		if last.Hi != nil && s.Lo != nil && s.Lo.Compare(*last.Hi) > 0 {
			out = append(out, s)
			continue
		}
		// s starts at or before last's end: widen last to cover s.
		switch {
		case last.Hi == nil:
		case s.Hi == nil:
			last.Hi = nil
		case s.Hi.Compare(*last.Hi) > 0:
			last.Hi, last.HiIncl = s.Hi, s.HiIncl
		case s.Hi.Compare(*last.Hi) == 0:
			last.HiIncl = last.HiIncl || s.HiIncl
		}
	}
	return out
}

// loLess orders spans by their low end, unbounded first, an included end
// before an excluded one at the same version.
func loLess(a, b Span) bool {
	switch {
	case a.Lo == nil:
		return b.Lo != nil
	case b.Lo == nil:
		return false
	}
	if c := a.Lo.Compare(*b.Lo); c != 0 {
		return c < 0
	}
	return a.LoIncl && !b.LoIncl
}

// splitRangeParts splits a range at spaces, except after '>', '<' or '='
// (so ">= 1.0.0" is one comparison), and drops the spaces left inside
// each part: blang/semver's reading.
func splitRangeParts(s string) []string {
	var out []string
	last := 0
	var prev byte
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ' && prev != '>' && prev != '<' && prev != '=':
			if last < i-1 {
				out = append(out, s[last:i])
			}
			last = i + 1
		case s[i] != ' ':
			prev = s[i]
		}
	}
	if last < len(s)-1 {
		out = append(out, s[last:])
	}
	for i, p := range out {
		out[i] = strings.ReplaceAll(p, " ", "")
	}
	return out
}

// splitOr groups parts into the alternatives that "||" parts separate.
func splitOr(parts []string) [][]string {
	var out [][]string
	last := 0
	for i, p := range parts {
		if p == "||" {
			out = append(out, parts[last:i])
			last = i + 1
		}
	}
	return append(out, parts[last:])
}

// splitOpVersion splits a comparison at its first digit.
func splitOpVersion(s string) (op, version string, ok bool) {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(s[:i]), s[i:], true
}

// expandWildcards rewrites the comparisons of an alternative that hold an
// "x" as blang/semver does before reading them: "1.2.x" is ">=1.2.0
// <1.3.0", ">1.2.x" is ">=1.3.0", "<=1.x" is "<2.0.0" and so on.
func expandWildcards(parts []string) []string {
	var out []string
	for _, p := range parts {
		if !strings.Contains(p, "x") {
			out = append(out, p)
			continue
		}
		op, vs, ok := splitOpVersion(p)
		if !ok {
			out = append(out, p)
			continue
		}
		n := strings.Split(vs, ".")
		wild := 0 // 2: minor (1.x), 3: patch (1.2.x)
		if n[len(n)-1] == "x" && (len(n) == 2 || len(n) == 3) {
			wild = len(n)
		}
		flat := strings.Replace(strings.Replace(vs, ".x.x", ".x", 1), ".x", ".0", 1)
		if len(strings.Split(flat, ".")) == 2 {
			flat += ".0"
		}
		var resOp string
		inc := false
		switch op {
		case ">":
			resOp, inc = ">=", true
		case ">=":
			resOp = ">="
		case "<":
			resOp = "<"
		case "<=":
			resOp, inc = "<", true
		case "", "=", "==":
			out = append(out, ">="+flat)
			resOp, inc = "<", true
		case "!=", "!":
			out = append(out, "<"+flat)
			resOp, inc = ">=", true
		}
		res := flat
		if inc {
			res = ""
			switch wild {
			case 3:
				res = incrementPart(flat, 1)
			case 2:
				res = incrementPart(flat, 0)
			}
		}
		out = append(out, resOp+res)
	}
	return out
}

// incrementPart adds one to the i-th dot-separated number of v ("" when
// it is no number).
func incrementPart(v string, i int) string {
	parts := strings.Split(v, ".")
	n, err := strconv.Atoi(parts[i])
	if err != nil {
		return ""
	}
	parts[i] = strconv.Itoa(n + 1)
	return strings.Join(parts, ".")
}

// Index holds versions (by position) sorted, so that a skipRange finds
// the ones it contains in O(log N + hits) instead of testing every one: a
// channel of 20,000 skipRanges that cover almost nothing costs 400
// million tests otherwise.
type Index struct {
	vers []semver.Version // by position
	pos  []int            // the indexed positions, by version then position
}

// NewIndex indexes the positions of vers that keep accepts (all, when
// keep is nil).
func NewIndex(vers []semver.Version, keep func(int) bool) *Index {
	x := &Index{vers: vers}
	for i := range vers {
		if keep == nil || keep(i) {
			x.pos = append(x.pos, i)
		}
	}
	sort.SliceStable(x.pos, func(a, b int) bool { return vers[x.pos[a]].Compare(vers[x.pos[b]]) < 0 })
	return x
}

// Versions returns the versions the index was built on, by position.
func (x *Index) Versions() []semver.Version { return x.vers }

// Visit calls fn with the indexed positions whose version r contains, by
// increasing version, until fn returns false. Each version looked at is
// tested with r; tested counts them, when not nil.
func (x *Index) Visit(r *SkipRange, tested *int, fn func(p int) bool) {
	for _, sp := range r.spans {
		k := 0
		if sp.Lo != nil {
			k = sort.Search(len(x.pos), func(k int) bool {
				c := x.vers[x.pos[k]].Compare(*sp.Lo)
				return c > 0 || (c == 0 && sp.LoIncl)
			})
		}
		for ; k < len(x.pos); k++ {
			p := x.pos[k]
			v := x.vers[p]
			if sp.Hi != nil {
				if c := v.Compare(*sp.Hi); c > 0 || (c == 0 && !sp.HiIncl) {
					break
				}
			}
			if tested != nil {
				*tested++
			}
			if r.Contains(v) && !fn(p) {
				return
			}
		}
	}
}

// Members appends to dst the indexed positions whose version r contains,
// in increasing position order.
func (x *Index) Members(dst []int, r *SkipRange, tested *int) []int {
	start := len(dst)
	x.Visit(r, tested, func(p int) bool {
		dst = append(dst, p)
		return true
	})
	slices.Sort(dst[start:]) // already in order when versions grow with positions
	return dst
}
