// Package ignore implements .indexignore matching with gitignore semantics.
//
// Upstream opm skips every file matched by a `.indexignore` file (it uses
// github.com/joelanford/ignore, a thin fs.FS layer over go-git's gitignore
// matcher). This package reimplements those semantics without the dependency:
//
//   - Every ignore file in the tree is read before the catalog is walked. Its
//     patterns are scoped to the directory that holds it: a pattern in
//     a/b/.indexignore applies only to paths below a/b and is matched against
//     the path relative to a/b.
//   - Lines are read one by one (a trailing "\r" is dropped). Lines starting
//     with "#" and lines made only of white space are skipped; "\#" escapes a
//     leading "#". Trailing spaces are trimmed unless the line ends in "\ ".
//   - A leading "!" negates the pattern ("\!" escapes it). A trailing "/" makes
//     the pattern match directories only.
//   - A pattern without a "/" (after removing a trailing one) is matched
//     against every path component, so "README.md" ignores README.md at any
//     depth and "vendor" ignores everything below any directory named vendor.
//   - A pattern with a "/" anywhere (a leading one included) is anchored to
//     the ignore file's directory and matched component by component; "**"
//     as a whole component matches any number of directories (leading "**/",
//     middle "/**/", trailing "/**"). Matching a leading run of components is
//     enough, so "a/b" also ignores everything below a/b.
//   - Within a component, "*", "?", "[...]" classes (negated with "^", with
//     ranges) and "\" escapes follow [path.Match].
//   - The last matching pattern wins; ignore files deeper in the tree come
//     after those of their parents, so they override them for their subtree.
//   - Unlike git, but as go-git (and so upstream), a later "!" pattern can
//     re-include a file below an ignored directory.
//
// go-git quirks kept on purpose, so that the same files are loaded as
// upstream: "[!x]" is not a negated class (path.Match only knows "[^x]"); a
// component that contains "**" but is not exactly "**" makes an anchored
// pattern match nothing (an unanchored "a**b" is an ordinary glob); a
// malformed pattern such as "[" matches nothing and is not an error; "**"
// does not backtrack, so "**/a/b" finds only the first "a"; "a/**" also
// matches "a" itself; a UTF-8 byte order mark is not stripped.
//
// The loader asks only about files (directories are always descended into)
// and always skips the ignore files themselves; that is the loader's job, not
// this package's.
package ignore

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/safefs"
)

// Matcher reports whether slash-separated paths relative to the root of fsys are ignored.
// The zero value and a nil *Matcher ignore nothing. A Matcher is safe for concurrent use.
type Matcher struct {
	patterns []pattern // in ascending priority: the last match wins
	negation bool      // some pattern starts with "!"
}

// pattern is one compiled line of an ignore file.
type pattern struct {
	domain  []string // components of the ignore file's directory
	parts   []part   // the pattern split at "/"
	include bool     // "!" negation
	dirOnly bool     // trailing "/"
	// anchored patterns contain a "/" and are matched component by component from the
	// domain; the others match any single component.
	anchored bool
}

type partKind uint8

const (
	partGlob       partKind = iota // a path.Match pattern
	partLiteral                    // no metacharacter: plain comparison
	partAny                        // "*"
	partPrefix                     // "lit*"
	partSuffix                     // "*lit"
	partContains                   // "*lit*"
	partEmpty                      // "" from a leading "/" or "//"
	partDoubleStar                 // exactly "**"
	partNever                      // contains "**" but is not "**": fails an anchored match
)

type part struct {
	s    string // the pattern component
	lit  string // the literal of partLiteral, partPrefix, partSuffix and partContains
	kind partKind
}

// classify finds the fast forms of a glob component; path.Match stays the reference
// (components never hold a "/", which "*" would refuse to match).
func classify(c string) (partKind, string) {
	const meta = `*?[\`
	if !strings.ContainsAny(c, meta) {
		return partLiteral, c
	}
	if c == "*" {
		return partAny, ""
	}
	inner := c
	lead := strings.HasPrefix(inner, "*")
	inner = strings.TrimPrefix(inner, "*")
	trail := strings.HasSuffix(inner, "*")
	inner = strings.TrimSuffix(inner, "*")
	if inner == "" || strings.ContainsAny(inner, meta) {
		return partGlob, ""
	}
	switch {
	case lead && trail:
		return partContains, inner
	case lead:
		return partSuffix, inner
	default:
		return partPrefix, inner
	}
}

// New walks fsys from its root, reads every file named name (".indexignore") and compiles the patterns.
// Errors name the ignore file (and line for bad patterns, if any can be bad).
//
// No pattern is ever rejected: like upstream, a malformed glob simply matches nothing.
// Every directory is searched, ignored ones included, since a deeper ignore file may
// re-include what a shallower one ignores.
func New(fsys fs.FS, name string) (*Matcher, error) {
	m := &Matcher{}
	if err := m.readDir(fsys, name, "."); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Matcher) readDir(fsys fs.FS, name, dir string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("reading directory %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() != name || e.IsDir() {
			continue
		}
		file := path.Join(dir, name)
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return fmt.Errorf("reading ignore file %s: %w", file, safefs.Refusal(err, file))
		}
		m.add(dir, data)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := m.readDir(fsys, name, path.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// NewFromFiles builds a matcher from already-read ignore files: map of slash-separated dir ("" or "." = root) to content.
func NewFromFiles(files map[string][]byte) *Matcher {
	type file struct {
		dir    string
		domain []string
		data   []byte
	}
	list := make([]file, 0, len(files))
	for dir, data := range files {
		list = append(list, file{dir, splitDir(dir), data})
	}
	// Parents before children, as a depth-first walk reads them. The relative order
	// of unrelated directories does not matter: their patterns never see the same path.
	// Keys naming the same directory ("" and ".") keep a fixed order.
	slices.SortFunc(list, func(a, b file) int {
		return cmp.Or(slices.Compare(a.domain, b.domain), strings.Compare(a.dir, b.dir))
	})
	m := &Matcher{}
	for _, f := range list {
		m.addDomain(f.domain, f.data)
	}
	return m
}

// splitDir turns "", ".", "./a/b/" or "a/b" into its components.
func splitDir(dir string) []string {
	dir = path.Clean("/" + dir)[1:]
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

func (m *Matcher) add(dir string, data []byte) {
	m.addDomain(splitDir(dir), data)
}

func (m *Matcher) addDomain(domain []string, data []byte) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == '#' || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		p := compile(string(line), domain)
		m.negation = m.negation || p.include
		m.patterns = append(m.patterns, p)
	}
}

func compile(s string, domain []string) pattern {
	p := pattern{domain: domain}
	if strings.HasPrefix(s, "!") {
		p.include = true
		s = s[1:]
	}
	if !strings.HasSuffix(s, `\ `) {
		s = strings.TrimRight(s, " ")
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	p.anchored = strings.Contains(s, "/")
	for c := range strings.SplitSeq(s, "/") {
		pt := part{s: c}
		switch {
		case c == "":
			pt.kind = partEmpty
		case c == "**":
			pt.kind = partDoubleStar
		case strings.Contains(c, "**") && p.anchored:
			pt.kind = partNever
		default:
			pt.kind, pt.lit = classify(c)
		}
		p.parts = append(p.parts, pt)
	}
	return p
}

// matchName reports whether component name matches c, and false for a malformed glob.
func (c *part) matchName(name string) (ok bool, bad bool) {
	switch c.kind {
	case partLiteral:
		return c.lit == name, false
	case partAny:
		return true, false
	case partPrefix:
		return strings.HasPrefix(name, c.lit), false
	case partSuffix:
		return strings.HasSuffix(name, c.lit), false
	case partContains:
		return strings.Contains(name, c.lit), false
	}
	ok, err := path.Match(c.s, name)
	return ok, err != nil
}

// Match reports whether path (slash-separated, relative to the root, no leading "./") is ignored; isDir says
// whether path itself is a directory.
func (m *Matcher) Match(p string, isDir bool) bool {
	if m == nil || len(m.patterns) == 0 {
		return false
	}
	p = strings.TrimPrefix(p, "./")
	if p == "" || p == "." {
		return false
	}
	var buf [32]string
	comps := buf[:0]
	for c := range strings.SplitSeq(p, "/") {
		comps = append(comps, c)
	}
	// As go-git (and so upstream): the last pattern matching the path or one
	// of its leading components decides, so a later "!" pattern can
	// re-include a file below an ignored directory.
	return m.match(comps, isDir)
}

// match applies the patterns to comps alone, the last matching one deciding.
func (m *Matcher) match(comps []string, isDir bool) bool {
	for i := len(m.patterns) - 1; i >= 0; i-- {
		p := &m.patterns[i]
		if p.matches(comps, isDir) {
			return !p.include
		}
	}
	return false
}

func (p *pattern) matches(comps []string, isDir bool) bool {
	if len(comps) <= len(p.domain) {
		return false
	}
	for i, d := range p.domain {
		if comps[i] != d {
			return false
		}
	}
	comps = comps[len(p.domain):]
	if p.anchored {
		return p.matchAnchored(comps, isDir)
	}
	return p.matchAnyName(comps, isDir)
}

// matchAnyName matches a pattern without "/" against the first component it fits.
// A directory-only pattern fails when that component is the path itself and the
// path is not a directory.
func (p *pattern) matchAnyName(comps []string, isDir bool) bool {
	c := &p.parts[0]
	for i, name := range comps {
		ok, bad := c.matchName(name)
		if bad {
			return false
		}
		if !ok {
			continue
		}
		return !(p.dirOnly && !isDir && i == len(comps)-1)
	}
	return false
}

// matchAnchored matches an anchored pattern against the leading components of comps.
// A "**" part skips ahead to the first component that matches the next part
// (there is no backtracking, as in go-git).
func (p *pattern) matchAnchored(comps []string, isDir bool) bool {
	matched := false
	traverse := false
	for i := range p.parts {
		c := &p.parts[i]
		switch c.kind {
		case partEmpty:
			traverse = false
			continue
		case partDoubleStar:
			if i == len(p.parts)-1 {
				return p.finish(matched, comps, isDir)
			}
			traverse = true
			continue
		case partNever:
			return false
		}
		if len(comps) == 0 {
			return false
		}
		if !traverse {
			ok, bad := c.matchName(comps[0])
			if bad || !ok {
				return false
			}
			matched = true
			comps = comps[1:]
			continue
		}
		traverse = false
		matched = false
		for len(comps) > 0 {
			ok, bad := c.matchName(comps[0])
			comps = comps[1:]
			if bad {
				return false
			}
			if ok {
				matched = true
				break
			}
		}
	}
	return p.finish(matched, comps, isDir)
}

// finish applies the directory-only rule when the pattern consumed the whole path.
func (p *pattern) finish(matched bool, rest []string, isDir bool) bool {
	return matched && !(p.dirOnly && !isDir && len(rest) == 0)
}
