package declcfg

import (
	"strings"
	"testing"
)

// yamlGen builds a YAML document from a fuzzer's bytes: each byte read is a
// choice. The documents are mostly block YAML of the kind the fast path
// takes, with the edges that matter to it (indentation one off, folded and
// chomped scalars, escapes, comments, tabs, document markers, special
// scalars and keys), so that differential fuzzing reaches them far more
// often than mutating bytes does.
type yamlGen struct {
	data []byte
	sb   strings.Builder
}

func (g *yamlGen) next() int {
	if len(g.data) == 0 {
		return 0
	}
	c := int(g.data[0])
	g.data = g.data[1:]
	return c
}

func (g *yamlGen) pick(n int) int { return g.next() % n }

func (g *yamlGen) pickOf(s []string) string { return s[g.pick(len(s))] }

// pickMost picks from the first common entries of s most of the time.
func (g *yamlGen) pickMost(s []string, common int) string {
	if g.pick(8) != 0 {
		return s[g.pick(common)]
	}
	return g.pickOf(s)
}

var (
	genKeys = []string{"a", "b", "schema", "name", "package", "Name", "A", "a b", "a:b", "a#b", "-k", "?k", ":k",
		"'q'", `"d"`, `"e\u00e9"`, `'it''s'`, "y", "no", "1", "1.5", "~", "<<", "'<<'", "k ", "é", "a\tb", "[k]", "k]", "{k", "\"a\nb\""}
	genScalars = []string{"x", "hello world", "a  b", "1", "-1", "+1", "012", "0x1F", "0o17", "0b101", "-0b11", "1_000", "1e3", "1E-7",
		".5", "1.", "-0.0", ".inf", "-.Inf", ".nan", "1e400", "12345678901234567890", "123456789012345678", "9007199254740993",
		"2001-12-14", "2001-12-14t21:59:43.10-05:00", "1.2.3", "true", "False", "yes", "ON", "n", "~", "null", "NULL", "<<",
		"a: b", "a:b", "a :b", "a #b", "a#b", "#x", "-", "- x", "-x", "--x", "? x", "?x", ":x", ":", "x:", "[]", "{}", "[x]", "[ ]", "{ }",
		"x]", "x}", "x,y", "'x'", "'x''y'", "'x", `"x"`, `"x\ty"`, `"x\\n"`, `"\u00e9\x41\U0001F600"`, `"\/"`, `"a\ "`,
		"*a", "&a x", "!t x", "!!str 1", "%x", "@x", "`x", "|", ">", "<b>&amp;</b>", "é😀", "a\tb", "a\t#b", "a \t", "\"\"", "''",
		"...", "---", "... x", "--- x", "x\r", "\u2028", "\u0085", "\ufeff", "\x7f"}
	genBlockHeaders = []string{"|", ">", "|-", "|+", ">-", ">+", "|1", "|2", ">2", "|2-", "|-2", ">+1", "|0", "| #c", "|#c", "|x", "|\t", "| "}
	genLines        = []string{"text", "more text", "", "  indented", "#not a comment", "- x", "a: b", "\tt", " ", "'q", "\"q", "x  ", "---", "..."}
)

func (g *yamlGen) doc() string {
	switch g.pick(16) {
	case 0:
		g.sb.WriteString(g.pickOf([]string{"", "# c\n", "%YAML 1.1\n", "...\n", "---\n", "\n", "  \n", "\t\n", "- a\n", "x\n"}))
	case 1:
		g.sb.WriteString(strings.Repeat(" ", g.pick(3)))
	}
	g.mapping(g.pick(2), 0)
	if g.pick(8) == 0 {
		g.sb.WriteString(g.pickOf([]string{"x\n", "...\n", "# c\n", " y: 1\n", "- 1\n", "\n\n"}))
	}
	return g.sb.String()
}

func (g *yamlGen) indent(n int) { g.sb.WriteString(strings.Repeat(" ", max(n, 0))) }

// jitter returns an indentation near n: usually n, sometimes one off.
func (g *yamlGen) jitter(n int) int {
	switch g.pick(24) {
	case 0:
		return n - 1
	case 1:
		return n + 1
	case 2:
		return n + 2
	}
	return n
}

func (g *yamlGen) mapping(n, depth int) {
	entries := 1 + g.pick(4)
	for e := 0; e < entries; e++ {
		if e > 0 {
			g.filler(n)
			g.indent(g.jitter(n))
		}
		g.sb.WriteString(g.pickMost(genKeys, 13))
		g.sb.WriteString(g.pickMost([]string{":", " :", ":\t"}, 1))
		g.value(n, depth, false)
	}
}

func (g *yamlGen) sequence(m, depth int) {
	entries := 1 + g.pick(3)
	for e := 0; e < entries; e++ {
		if e > 0 {
			g.filler(m)
			g.indent(g.jitter(m))
		}
		g.sb.WriteString(g.pickMost([]string{"-", "-\t"}, 1))
		g.value(m, depth, true)
	}
}

// filler writes empty, blank and comment lines.
func (g *yamlGen) filler(n int) {
	for range g.pick(4) / 2 {
		switch g.pick(5) {
		case 0:
			g.sb.WriteString("\n")
		case 1:
			g.indent(g.pick(n + 3))
			g.sb.WriteString("\n")
		case 2:
			g.indent(g.pick(n + 3))
			g.sb.WriteString("# comment\n")
		case 3:
			g.sb.WriteString(" \t \n")
		default:
			g.sb.WriteString("#\n")
		}
	}
}

// value writes what follows a key's ':' or an entry's '-', then ends the
// line(s).
func (g *yamlGen) value(n, depth int, seq bool) {
	choice := g.pick(16)
	if depth > 4 && choice >= 10 {
		choice = 0
	}
	switch choice {
	case 0, 1, 2, 3:
		g.sb.WriteString(g.pickMost([]string{" ", "  ", "\t", ""}, 2))
		g.sb.WriteString(g.pickMost(genScalars, 46))
		g.trailer()
	case 4:
		// A multi-line plain scalar.
		g.sb.WriteString(" " + g.pickMost(genScalars, 46))
		for range 1 + g.pick(3) {
			g.sb.WriteString(g.pickMost([]string{"\n", "\n\n", "\n  \n", " \n", "\n\t\n"}, 4))
			g.indent(n + g.pick(4))
			g.sb.WriteString(g.pickMost(genLines, 5))
		}
		g.trailer()
	case 5:
		// A quoted scalar over lines.
		q := g.pickOf([]string{"'", `"`})
		g.sb.WriteString(" " + q + g.pickOf(genLines))
		for range g.pick(3) {
			g.sb.WriteString(g.pickOf([]string{"\n", "\n\n", " \n", "\\\n", "\\\n\n", "\n \t\n"}))
			g.indent(g.pick(n + 3))
			g.sb.WriteString(g.pickOf([]string{"x", "y z", `\"`, `\t`, `\u00e9`, "''", "  ", "\t", "\\ ", "...", "--- x", `\`, "#c"}))
		}
		g.sb.WriteString(q)
		g.trailer()
	case 6, 7:
		// A block scalar.
		g.sb.WriteString(" " + g.pickMost(genBlockHeaders, 13) + "\n")
		base := n + 1 + g.pick(3)
		for range 1 + g.pick(5) {
			switch g.pick(6) {
			case 0:
				g.sb.WriteString("\n")
			case 1:
				g.indent(g.pick(base + 3))
				g.sb.WriteString("\n")
			default:
				g.indent(base + g.pick(5) - 1)
				g.sb.WriteString(g.pickMost(genLines, 10) + "\n")
			}
		}
	case 8:
		g.sb.WriteString(g.pickOf([]string{"", " ", " # c", "#c", "\t"}))
		g.sb.WriteString("\n")
	case 9:
		g.sb.WriteString(g.pickMost([]string{" {}", " []", " {} # c", " [x]", " {a: 1}", " []x", " &a", " *a", " !t"}, 3))
		g.sb.WriteString("\n")
	case 10, 11, 12:
		// A nested mapping.
		if seq && g.pick(2) == 0 {
			g.sb.WriteString(g.pickOf([]string{" ", "  ", "   "}))
			g.mapping(n+2, depth+1) // a compact mapping ("- a: b")
			return
		}
		g.sb.WriteString(g.pickOf([]string{"\n", " # c\n", "\n\n"}))
		m := n + 1 + g.pick(3)
		g.indent(m)
		g.mapping(m, depth+1)
	default:
		// A nested sequence, indented or not.
		if seq && g.pick(3) == 0 {
			g.sb.WriteString(" ")
			g.sequence(n+2, depth+1) // "- - a"
			return
		}
		g.sb.WriteString("\n")
		m := n + g.pick(3)
		g.indent(m)
		g.sequence(m, depth+1)
	}
}

// trailer ends a scalar's line: a comment, spaces, or nothing.
func (g *yamlGen) trailer() {
	g.sb.WriteString(g.pickMost([]string{"\n", " # c\n", "  \n", "#c\n", "\t\n", " \t# c\n"}, 3))
}

// FuzzYAMLFastGrammar compares the fast and slow paths on documents built
// by yamlGen from the fuzzer's bytes.
func FuzzYAMLFastGrammar(f *testing.F) {
	for _, s := range []string{"", "\x00\x01\x02", "\x04\x07\x0a\x0b\x0c\x0d\x0e\x0f", "\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13",
		"\x0d\x0d\x0d\x0d\x04\x04\x04\x04", "\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06", "\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, choices []byte) {
		g := yamlGen{data: choices}
		doc := g.doc()
		if !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		compareYAMLFast(t, []byte(doc))
	})
}

// TestYAMLGenReach checks that the generator makes documents the fast
// path takes, and ones it declines, so that FuzzYAMLFastGrammar compares
// something.
func TestYAMLGenReach(t *testing.T) {
	taken := 0
	const n = 3000
	state := uint32(1)
	for i := 0; i < n; i++ {
		choices := make([]byte, 64)
		for k := range choices {
			state = state*1664525 + 1013904223
			choices[k] = byte(state >> 24)
		}
		g := yamlGen{data: choices}
		doc := []byte(g.doc())
		if len(doc) == 0 || doc[len(doc)-1] != '\n' {
			doc = append(doc, '\n')
		}
		if compareYAMLFast(t, doc) {
			taken++
		}
	}
	t.Logf("the fast path took %d of %d generated documents", taken, n)
	if taken < n/20 || taken > n*19/20 {
		t.Errorf("the fast path took %d of %d generated documents", taken, n)
	}
}
