package registriesconf

import (
	"bytes"
	"fmt"
)

// MaxNesting bounds how deeply arrays and inline tables nest in a
// registries.conf file. Real files nest three levels at most (an array of
// inline tables holding an array); the TOML parser recurses once per
// level, so millions of '[' ended it in a stack overflow. The file is
// scanned before it is parsed, as JSON and YAML catalogs are bounded
// before they are decoded.
const MaxNesting = 64

// checkNesting returns an error at the position where data nests arrays
// or inline tables deeper than MaxNesting. It follows TOML's lexical rules
// for what is not structure: comments and the four kinds of strings
// (basic with escapes, literal, and their multi-line forms); brackets
// anywhere else count, those of table headers included, so the count is
// never below the parser's recursion. An unterminated string ends the
// scan: the parser refuses the file at that point.
func checkNesting(data []byte, file string) error {
	if depth, at := scanNesting(data, MaxNesting); depth > MaxNesting {
		line := 1 + bytes.Count(data[:at], []byte{'\n'})
		col := at - (bytes.LastIndexByte(data[:at], '\n') + 1) + 1
		return &Error{Pos: Position{File: file, Line: line}, Column: col,
			Err: fmt.Errorf("arrays and inline tables nest deeper than %d levels", MaxNesting)}
	}
	return nil
}

// scanNesting returns the deepest nesting of data's arrays and inline
// tables, or, as soon as it goes over limit, limit+1 and the offset of the
// bracket that does.
func scanNesting(data []byte, limit int) (maxDepth, at int) {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '#':
			nl := bytes.IndexByte(data[i:], '\n')
			if nl < 0 {
				return maxDepth, 0
			}
			i += nl
		case '[', '{':
			depth++
			if depth > limit {
				return depth, i
			}
			maxDepth = max(maxDepth, depth)
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			end := skipTOMLString(data, i)
			if end < 0 {
				return maxDepth, 0
			}
			i = end - 1
		}
	}
	return maxDepth, 0
}

// skipTOMLString returns the index just past the string that starts at
// data[i] (a quote), or -1 when it is not closed.
func skipTOMLString(data []byte, i int) int {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if multi {
		j = i + 3
	}
	for ; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\\' && q == '"':
			j++ // the escaped byte
		case c == '\n' && !multi:
			return -1
		case c == q && !multi:
			return j + 1
		case c == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
			// Up to two more quotes belong to the content ("""a""""
			// holds a").
			k := j + 3
			for n := 0; n < 2 && k < len(data) && data[k] == q; n++ {
				k++
			}
			return k
		}
	}
	return -1
}
