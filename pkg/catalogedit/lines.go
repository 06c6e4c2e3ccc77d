package catalogedit

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// lineIndex maps between byte offsets and 1-based lines and columns.
type lineIndex struct {
	data   []byte
	starts []int // offset of the start of each line
}

func newLineIndex(data []byte) *lineIndex {
	li := &lineIndex{data: data, starts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

// pos returns the 1-based line and byte column of off.
func (li *lineIndex) pos(off int) (line, col int) {
	i := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - li.starts[i] + 1
}

// lineStart returns the offset of the start of the 1-based line.
func (li *lineIndex) lineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(li.starts) {
		return len(li.data)
	}
	return li.starts[line-1]
}

// lineEnd returns the offset just past the 1-based line, its newline
// included.
func (li *lineIndex) lineEnd(line int) int {
	if line >= len(li.starts) {
		return len(li.data)
	}
	return li.starts[line]
}

// offset returns the offset of a 1-based line and a 1-based column counted
// in characters (as yaml.v3 counts them), or -1 when out of range.
func (li *lineIndex) offset(line, col int) int {
	if line < 1 || line > len(li.starts) || col < 1 {
		return -1
	}
	off := li.starts[line-1]
	end := li.lineEnd(line)
	for c := 1; c < col; c++ {
		if off >= end {
			return -1
		}
		_, n := utf8.DecodeRune(li.data[off:end])
		off += n
	}
	return off
}

// lineAt returns the index (0-based) of the line holding off.
func (li *lineIndex) lineAt(off int) int {
	l, _ := li.pos(off)
	return l - 1
}

// lineText returns the bytes of the 0-based line i without its line end.
func (li *lineIndex) lineText(i int) []byte {
	start := li.starts[i]
	end := len(li.data)
	if i+1 < len(li.starts) {
		end = li.starts[i+1]
	}
	t := li.data[start:end]
	t = bytes.TrimSuffix(t, []byte("\n"))
	return bytes.TrimSuffix(t, []byte("\r"))
}

// numLines is the number of lines (a trailing newline starts an empty
// last line).
func (li *lineIndex) numLines() int { return len(li.starts) }

// indentOf returns the number of leading spaces of a line.
func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// isBlank reports whether a line holds only spaces and tabs.
func isBlank(line []byte) bool {
	return len(bytes.TrimLeft(line, " \t")) == 0
}

// isComment reports whether a line holds only a comment.
func isComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) > 0 && t[0] == '#'
}
