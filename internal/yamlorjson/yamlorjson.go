// Package yamlorjson is the one implementation of the Kubernetes
// YAML-or-JSON decoding rules (apimachinery's NewYAMLOrJSONDecoder) that
// upstream opm applies to every catalog file and every bundle file:
//
//   - a file whose first non-space byte, within the first N bytes (the
//     decoder's sniff buffer), is '{' is read as JSON;
//   - anything else is YAML, split into documents on lines that start with
//     "---" the way apimachinery's YAMLReader splits them.
//
// Catalog files (pkg/declcfg) and bundle files (pkg/bundle) use the same
// rules with two differences upstream has too: the sniff buffer (4096 bytes
// for catalogs, 30 for bundles) and what happens to a "---" line that
// opens a document (see [Splitter.KeepLeadingSeparator]).
//
// Both decoders must stay byte-identical to upstream; the conformance suite
// checks them through pkg/declcfg and pkg/bundle.
package yamlorjson

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode"
)

// Sniff buffer sizes upstream gives the decoder.
const (
	CatalogSniffLen = 4096 // declcfg's WalkMetasReader
	BundleSniffLen  = 30   // the bundle parser's decodeFileFromFS
)

// IsJSON reports whether the decoder, with a sniff buffer of sniffLen
// bytes, takes the JSON path for a file starting with head: the first
// non-space rune of head[:sniffLen] is '{'.
func IsJSON(head []byte, sniffLen int) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	return bytes.HasPrefix(bytes.TrimLeftFunc(head, unicode.IsSpace), []byte("{"))
}

// SeparatorError is apimachinery's error for a "---" line followed by
// anything but spaces or a comment. Offset is where the line starts in the
// data given to Split.
type SeparatorError struct {
	Text   string // what follows the separator, trimmed
	Offset int
}

func (e *SeparatorError) Error() string {
	return fmt.Sprintf("invalid Yaml document separator: %s", e.Text)
}

// Doc is one YAML document.
type Doc struct {
	// Data holds the document's lines, each ending in "\n" ("\r\n" line ends
	// become "\n", and a "\n" is added to a last line without one, as
	// apimachinery's LineReader does). It aliases the data given to Split
	// when no line needed rewriting, so it is only valid as long as that
	// data is.
	Data []byte
	// Start is the offset of the document's first line in the data given
	// to Split.
	Start int
}

// Splitter splits a YAML stream into documents.
type Splitter struct {
	// KeepLeadingSeparator keeps a "---" line that opens a document as the
	// document's first line, as apimachinery's YAMLReader does (so "---\n"
	// followed by another separator is a document of its own). The bundle
	// parser reads files this way. When false, separator lines before a
	// document's content are dropped, so a stream of bare separators holds
	// no document: upstream's catalog loader skips such files.
	KeepLeadingSeparator bool
}

// Split finds the first document of data. It returns the document (Data is
// nil when data holds none) and how many bytes of data it consumed: the
// document and the separator line that ends it. When data ends inside a
// document or inside a line and atEOF is false, Split consumes nothing and
// reports more: call again with more data.
func (s Splitter) Split(data []byte, atEOF bool) (doc Doc, advance int, more bool, err error) {
	start, end := -1, 0 // the document is data[start:end]
	clean := true       // every line of data[start:end] ends in a plain "\n"
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 && !atEOF {
			return Doc{}, 0, true, nil
		}
		next, body := len(data), data[off:]
		if nl >= 0 {
			// As bufio.Reader.ReadLine: "\n" or "\r\n" ends a line; a last
			// line without "\n" keeps a trailing "\r".
			next = off + nl + 1
			body = bytes.TrimSuffix(data[off:off+nl], []byte("\r"))
		}
		if bytes.HasPrefix(body, []byte("---")) {
			trimmed := bytes.TrimSpace(body[3:])
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return Doc{}, 0, false, &SeparatorError{Text: string(trimmed), Offset: off}
			}
			if start >= 0 {
				return s.doc(data, start, end, clean), next, false, nil
			}
			if !s.KeepLeadingSeparator {
				off = next
				continue
			}
		}
		if start < 0 {
			start = off
		}
		if nl < 0 || len(body) != nl {
			clean = false
		}
		off, end = next, next
	}
	if !atEOF {
		return Doc{}, 0, true, nil
	}
	if start < 0 {
		return Doc{}, len(data), false, nil
	}
	return s.doc(data, start, end, clean), len(data), false, nil
}

// doc returns data[start:end] as a document, rewriting line ends unless
// they are all plain "\n".
func (Splitter) doc(data []byte, start, end int, clean bool) Doc {
	if clean {
		return Doc{Data: data[start:end:end], Start: start}
	}
	buf := make([]byte, 0, end-start+1)
	for off := start; off < end; {
		next, line := end, data[off:end]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			next = off + i + 1
			line = bytes.TrimSuffix(line[:i], []byte("\r"))
		}
		buf = append(append(buf, line...), '\n')
		off = next
	}
	return Doc{Data: buf, Start: start}
}

// KeyString converts a YAML mapping key, as go.yaml.in/yaml/v2 decodes it,
// to the JSON object key sigs.k8s.io/yaml's YAMLToJSON makes of it: ints
// in decimal, floats in the shortest 32-bit form (with .inf, -.inf and .nan
// for the special values), booleans as true/false. ok is false for any
// other key type (a nested map or a sequence as a key).
func KeyString(k any) (s string, ok bool) {
	switch t := k.(type) {
	case string:
		return t, true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case float64:
		s := strconv.FormatFloat(t, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}
