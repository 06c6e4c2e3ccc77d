package graph

import (
	"slices"
	"sort"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/versionrange"
)

// A channel of N entries with a skipRange each would cost N² range tests
// if every range were tested against every version: 20,000 entries whose
// ranges cover almost nothing take seconds to minutes. Two indexes answer
// both questions in O(log N + hits):
//
//   - [versionrange.Index]: which of these versions does a skipRange hold
//     (the edges into an entry);
//   - rangeIndex: which skipRanges hold this version (the edges out of a
//     bundle).
//
// Both search the spans of each range ([versionrange.SkipRange.Spans])
// and let the range itself decide each version found, so their answers
// are exactly those of testing everything.

// rangeTests, when set (by tests), counts the versions tested against
// skipRanges.
var rangeTests *int

// rangeIndex finds the skipRanges (of entries, by index) that hold a
// version: a segment tree over the elementary intervals that the ranges'
// span ends cut the versions into.
type rangeIndex struct {
	ends  []semver.Version // distinct span ends, increasing
	size  int              // leaves of the tree, a power of two
	lists [][]int          // by tree node: the ranges covering all its slots
}

// newRangeIndex indexes the ranges of the entries in ranged (rangeAt holds
// them by entry index).
func newRangeIndex(ranged []int, rangeAt []*versionrange.SkipRange) *rangeIndex {
	x := &rangeIndex{}
	for _, i := range ranged {
		for _, sp := range rangeAt[i].Spans() {
			if sp.Lo != nil {
				x.ends = append(x.ends, *sp.Lo)
			}
			if sp.Hi != nil {
				x.ends = append(x.ends, *sp.Hi)
			}
		}
	}
	slices.SortFunc(x.ends, func(a, b semver.Version) int { return a.Compare(b) })
	x.ends = slices.CompactFunc(x.ends, func(a, b semver.Version) bool { return a.Compare(b) == 0 })
	// Slot 2k+1 is ends[k] itself; slot 2k the versions between ends[k-1]
	// and ends[k]; slot 2m those above the last end.
	slots := 2*len(x.ends) + 1
	x.size = 1
	for x.size < slots {
		x.size *= 2
	}
	x.lists = make([][]int, 2*x.size)
	for _, i := range ranged {
		for _, sp := range rangeAt[i].Spans() {
			a, b := 0, slots-1
			if sp.Lo != nil {
				k := x.find(*sp.Lo)
				a = 2*k + 1
				if !sp.LoIncl {
					a++
				}
			}
			if sp.Hi != nil {
				k := x.find(*sp.Hi)
				b = 2*k + 1
				if !sp.HiIncl {
					b--
				}
			}
			for l, r := a+x.size, b+x.size+1; l < r; l, r = l/2, r/2 {
				if l&1 == 1 {
					x.lists[l] = append(x.lists[l], i)
					l++
				}
				if r&1 == 1 {
					r--
					x.lists[r] = append(x.lists[r], i)
				}
			}
		}
	}
	return x
}

// find returns the index of the first end not below v.
func (x *rangeIndex) find(v semver.Version) int {
	return sort.Search(len(x.ends), func(k int) bool { return x.ends[k].Compare(v) >= 0 })
}

// holding appends to dst the entries whose range contains v, in
// increasing entry order.
func (x *rangeIndex) holding(dst []int, v semver.Version, rangeAt []*versionrange.SkipRange) []int {
	k := x.find(v)
	slot := 2 * k
	if k < len(x.ends) && x.ends[k].Compare(v) == 0 {
		slot++
	}
	start := len(dst)
	for n := slot + x.size; n >= 1; n /= 2 {
		for _, i := range x.lists[n] {
			if rangeTests != nil {
				*rangeTests++
			}
			if rangeAt[i].Contains(v) {
				dst = append(dst, i)
			}
		}
	}
	slices.Sort(dst[start:])
	return dst
}
