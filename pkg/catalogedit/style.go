package catalogedit

import (
	"bytes"
	"sort"
	"strings"
)

// Style detection: how a file already writes JSON or YAML, so that new and
// rewritten text looks like its neighbours.

// detectJSONStyle reads the style of the first object blob of a file.
func detectJSONStyle(data []byte, l *Layout) jsonStyle {
	st := jsonStyle{compact: false, indent: "    ", kvSep: ":", itemSep: ",", newline: l.Newline}
	for _, s := range l.Blobs {
		n, _, err := parseJSON(data, s.Start)
		if err != nil || n.kind != '{' || len(n.keys) == 0 {
			continue
		}
		return jsonStyleOf(data, n, l.Newline)
	}
	return st
}

// jsonStyleOf reads the style of one JSON value: compact when it is on
// one line, else pretty with the indentation of its second line.
func jsonStyleOf(data []byte, n *jnode, nl string) jsonStyle {
	st := jsonStyle{kvSep: ":", itemSep: ",", indent: "    ", newline: nl}
	text := n.text(data)
	if !bytes.Contains(text, []byte("\n")) {
		st.compact = true
		if n.kind == '{' && len(n.keys) > 0 {
			st.kvSep = compactSep(data[n.keys[0].end:n.elems[0].start], ":")
			if len(n.keys) > 1 {
				st.itemSep = compactSep(data[n.elems[0].end:n.keys[1].start], ",")
			}
		} else if n.kind == '[' && len(n.elems) > 1 {
			st.itemSep = compactSep(data[n.elems[0].end:n.elems[1].start], ",")
		}
		return st
	}
	base := lineIndent(data, n.start)
	nlAt := bytes.IndexByte(text, '\n')
	rest := text[nlAt+1:]
	ws := rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))]
	if len(ws) > len(base) && strings.HasPrefix(string(ws), base) {
		st.indent = string(ws[len(base):])
	}
	return st
}

// compactSep returns sep with a following space when gap has one.
func compactSep(gap []byte, sep string) string {
	if bytes.HasSuffix(gap, []byte(" ")) {
		return sep + " "
	}
	return sep
}

// lineIndent returns the leading spaces and tabs of the line holding off.
func lineIndent(data []byte, off int) string {
	ls := bytes.LastIndexByte(data[:off], '\n') + 1
	i := ls
	for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
		i++
	}
	return string(data[ls:i])
}

// detectYAMLStyle reads how a YAML file indents: the most common step
// between a key and the keys of the mapping under it, and whether block
// sequences sit under their key's column or further right.
func detectYAMLStyle(data []byte, nl string) yamlStyle {
	li := newLineIndex(data)
	units := map[int]int{}
	seqIn, seqOut := 0, 0
	n := li.numLines()
	for i := 0; i < n; i++ {
		t := li.lineText(i)
		if isBlank(t) || isComment(t) {
			continue
		}
		trimmed := bytes.TrimRight(t, " \t")
		if !bytes.HasSuffix(trimmed, []byte(":")) {
			continue
		}
		ind := indentOf(t)
		body := bytes.TrimLeft(trimmed, " ")
		if bytes.HasPrefix(body, []byte("- ")) {
			ind += 2 // "- key:": the key sits after the dash
		}
		// the next line with content
		j := i + 1
		for j < n && (isBlank(li.lineText(j)) || isComment(li.lineText(j))) {
			j++
		}
		if j >= n {
			break
		}
		next := li.lineText(j)
		nind := indentOf(next)
		nbody := next[nind:]
		if bytes.HasPrefix(nbody, []byte("- ")) || bytes.Equal(nbody, []byte("-")) {
			switch {
			case nind > ind:
				seqIn++
			case nind == ind:
				seqOut++
			}
			continue
		}
		if nind > ind {
			units[nind-ind]++
		}
	}
	st := yamlStyle{indent: 2, newline: nl, seqIndent: seqIn > seqOut}
	best := 0
	keys := make([]int, 0, len(units))
	for k := range units {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		if units[k] > best {
			best, st.indent = units[k], k
		}
	}
	return st
}
