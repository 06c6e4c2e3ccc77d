package catalogedit

import (
	"bytes"
	"fmt"
	"strings"
)

// Unified diffs for --dry-run. The edit knows which byte ranges it
// changed, so only those regions (grown to whole lines and merged when
// their context touches) are compared line by line: a change in a 15 MB
// file costs what the change costs.

const diffContext = 3

// maxMyers bounds the lines compared by Myers' algorithm at once; a larger
// region is shown as all its old lines removed and all its new lines added.
const maxMyers = 4000

// region is a changed byte range: [o0, o1) of the old bytes became
// [n0, n1) of the new ones.
type region struct{ o0, o1, n0, n1 int }

// UnifiedDiff returns the diff of a change in git's format (a/ and b/
// prefixes, /dev/null for created and deleted files).
func UnifiedDiff(ch FileChange) string {
	var buf strings.Builder
	oldName, newName := "a/"+ch.Display, "b/"+ch.Display
	switch ch.Action {
	case ActionCreated:
		oldName = "/dev/null"
	case ActionDeleted:
		newName = "/dev/null"
	}
	fmt.Fprintf(&buf, "--- %s\n+++ %s\n", oldName, newName)
	regions := ch.regions
	if regions == nil {
		regions = []region{{0, len(ch.Old), 0, len(ch.New)}}
	}
	oldStarts, newStarts := lineStarts(ch.Old), lineStarts(ch.New)
	// grow regions to whole lines, merging those whose context meets
	type lreg struct{ o0, o1, n0, n1 int } // line indexes, [o0, o1)
	var lrs []lreg
	for _, r := range regions {
		l := lreg{
			o0: lineIndexAt(oldStarts, lineStartBefore(ch.Old, r.o0)),
			o1: lineIndexAt(oldStarts, lineEndAfter(ch.Old, r.o1)),
			n0: lineIndexAt(newStarts, lineStartBefore(ch.New, r.n0)),
			n1: lineIndexAt(newStarts, lineEndAfter(ch.New, r.n1)),
		}
		if n := len(lrs); n > 0 && l.o0 <= lrs[n-1].o1+2*diffContext {
			lrs[n-1].o1 = max(lrs[n-1].o1, l.o1)
			lrs[n-1].n1 = max(lrs[n-1].n1, l.n1)
			continue
		}
		lrs = append(lrs, l)
	}
	oldLines, newLines := splitLines(ch.Old), splitLines(ch.New)
	for _, r := range lrs {
		ops := diffLines(oldLines[r.o0:r.o1], newLines[r.n0:r.n1])
		first, last := 0, len(ops)
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		for last > first && ops[last-1].kind == ' ' {
			last--
		}
		if first == last {
			continue
		}
		// hunk: up to diffContext unchanged lines around the changes
		oStart := r.o0 + oldCount(ops[:first])
		nStart := r.n0 + newCount(ops[:first])
		oEnd := r.o0 + oldCount(ops[:last])
		pre := min(diffContext, oStart)
		post := min(diffContext, len(oldLines)-oEnd)
		body := ops[first:last]
		oc := oldCount(body) + pre + post
		nc := newCount(body) + pre + post
		fmt.Fprintf(&buf, "@@ -%s +%s @@\n", hunkRange(oStart-pre, oc), hunkRange(nStart-pre, nc))
		for i := oStart - pre; i < oStart; i++ {
			writeDiffLine(&buf, ' ', oldLines[i])
		}
		for _, op := range body {
			writeDiffLine(&buf, op.kind, op.line)
		}
		for i := oEnd; i < oEnd+post; i++ {
			writeDiffLine(&buf, ' ', oldLines[i])
		}
	}
	return buf.String()
}

// hunkRange formats a hunk's start (0-based line index) and length.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func writeDiffLine(buf *strings.Builder, kind byte, line string) {
	buf.WriteByte(kind)
	buf.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		buf.WriteString("\n\\ No newline at end of file\n")
	}
}

func oldCount(ops []diffOp) int {
	n := 0
	for _, op := range ops {
		if op.kind != '+' {
			n++
		}
	}
	return n
}

func newCount(ops []diffOp) int {
	n := 0
	for _, op := range ops {
		if op.kind != '-' {
			n++
		}
	}
	return n
}

// splitLines splits b after each newline.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// lineStarts returns the offsets at which lines start (not counting the
// end of the data).
func lineStarts(b []byte) []int {
	offs := []int{}
	if len(b) > 0 {
		offs = append(offs, 0)
	}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			offs = append(offs, i+1)
		}
	}
	return offs
}

// lineIndexAt returns the number of lines starting before off.
func lineIndexAt(starts []int, off int) int {
	lo, hi := 0, len(starts)
	for lo < hi {
		mid := (lo + hi) / 2
		if starts[mid] < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// lineStartBefore returns the start of the line holding off (off itself
// when it follows a newline or is 0).
func lineStartBefore(b []byte, off int) int {
	return bytes.LastIndexByte(b[:off], '\n') + 1
}

// lineEndAfter returns the offset past the newline that ends the line
// holding off (the end of b when there is none).
func lineEndAfter(b []byte, off int) int {
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(b)
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// diffLines compares two line lists: common ends first, then Myers' O(ND)
// algorithm on what is left (or all removed and all added when that is
// too large).
func diffLines(a, b []string) []diffOp {
	var head, tail []diffOp
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		head = append(head, diffOp{' ', a[0]})
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		tail = append(tail, diffOp{' ', a[len(a)-1]})
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	var mid []diffOp
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) > maxMyers {
		for _, l := range a {
			mid = append(mid, diffOp{'-', l})
		}
		for _, l := range b {
			mid = append(mid, diffOp{'+', l})
		}
	} else {
		mid = myers(a, b)
	}
	out := append(head, mid...)
	for i := len(tail) - 1; i >= 0; i-- {
		out = append(out, tail[i])
	}
	return out
}

// myers is Myers' O(ND) diff; the trace keeps only the 2d+1 diagonals of
// each step.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(trace, a, b, d, k)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return nil
}

// backtrack walks the trace from the end; trace[d][k+d] is step d's
// furthest x on diagonal k.
func backtrack(trace [][]int, a, b []string, d, k int) []diffOp {
	at := func(d, k int) int { return trace[d][k+d] }
	var ops []diffOp
	x, y := len(a), len(b)
	for ; d > 0; d-- {
		var pk int
		if k == -d || (k != d && at(d-1, k-1) < at(d-1, k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(d-1, pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			ops = append(ops, diffOp{' ', a[x]})
		}
		if x == px {
			y--
			ops = append(ops, diffOp{'+', b[y]})
		} else {
			x--
			ops = append(ops, diffOp{'-', a[x]})
		}
		k = pk
	}
	for x > 0 && y > 0 {
		x--
		y--
		ops = append(ops, diffOp{' ', a[x]})
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
