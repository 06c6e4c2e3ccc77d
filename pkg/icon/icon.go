// Package icon detects the media type of package icons from their content,
// as upstream opm does with h2non/filetype plus an SVG matcher.
package icon

import (
	"bytes"
	"regexp"
	"strings"
)

type matcher struct {
	mime  string
	match func([]byte) bool
}

func prefix(p ...byte) func([]byte) bool {
	return func(b []byte) bool { return bytes.HasPrefix(b, p) }
}

func at(off int, p string) func([]byte) bool {
	return func(b []byte) bool { return len(b) >= off+len(p) && string(b[off:off+len(p)]) == p }
}

// matchers follow h2non/filetype's order: images first, then the common
// non-image kinds that should be named in errors, then SVG (registered last
// upstream).
var matchers = []matcher{
	{"image/jpeg", prefix(0xFF, 0xD8, 0xFF)},
	{"image/jp2", prefix(0x0, 0x0, 0x0, 0xC, 0x6A, 0x50, 0x20, 0x20, 0xD, 0xA, 0x87, 0xA)},
	{"image/png", prefix(0x89, 0x50, 0x4E, 0x47)},
	{"image/gif", prefix(0x47, 0x49, 0x46)},
	{"image/webp", func(b []byte) bool { return at(8, "WEBP")(b) }},
	{"image/x-canon-cr2", func(b []byte) bool {
		return len(b) > 9 && ((b[0] == 0x49 && b[1] == 0x49 && b[2] == 0x2A && b[3] == 0x0) || (b[0] == 0x4D && b[1] == 0x4D && b[2] == 0x0 && b[3] == 0x2A)) && b[8] == 0x43 && b[9] == 0x52
	}},
	{"image/tiff", func(b []byte) bool {
		return len(b) > 9 && ((b[0] == 0x49 && b[1] == 0x49 && b[2] == 0x2A && b[3] == 0x0) || (b[0] == 0x4D && b[1] == 0x4D && b[2] == 0x0 && b[3] == 0x2A)) && !(b[8] == 0x43 && b[9] == 0x52)
	}},
	{"image/bmp", prefix(0x42, 0x4D)},
	{"image/vnd.ms-photo", prefix(0x49, 0x49, 0xBC)},
	{"image/vnd.adobe.photoshop", prefix(0x38, 0x42, 0x50, 0x53)},
	{"image/vnd.microsoft.icon", prefix(0x00, 0x00, 0x01, 0x00)},
	{"image/heif", func(b []byte) bool {
		return at(4, "ftyp")(b) && len(b) >= 12 && (at(8, "heic")(b) || at(8, "heix")(b) || at(8, "mif1")(b) || at(8, "msf1")(b))
	}},
	{"image/avif", func(b []byte) bool { return at(4, "ftyp")(b) && (at(8, "avif")(b) || at(8, "avis")(b)) }},
	{"image/x-exr", prefix(0x76, 0x2F, 0x31, 0x01)},
	{"application/pdf", prefix('%', 'P', 'D', 'F')},
	{"application/zip", prefix('P', 'K', 0x3, 0x4)},
	{"application/gzip", prefix(0x1F, 0x8B, 0x8)},
	{"application/x-executable", prefix(0x7F, 'E', 'L', 'F')},
	{"image/svg+xml", isSVG},
}

var (
	svgRE     = regexp.MustCompile(`(?is)^\s*(?:<\?xml\b[^>]*>\s*)?(?:<!doctype\s+svg\b[^>]*>\s*)?<svg[\s>]`)
	commentRE = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// isSVG reports whether b is SVG text (ported, like upstream, from
// sindresorhus/is-svg): not binary, and an <svg> root after an optional
// XML declaration, doctype and comments.
func isSVG(b []byte) bool {
	head := b
	if len(head) > 4096 {
		head = head[:4096]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	return svgRE.Match(commentRE.ReplaceAll(b, nil))
}

// MediaType returns the detected MIME type of data, or "" when unknown.
func MediaType(data []byte) string {
	for _, m := range matchers {
		if m.match(data) {
			return m.mime
		}
	}
	return ""
}

// IsImage reports whether mime is an image type.
func IsImage(mime string) bool { return strings.HasPrefix(mime, "image/") }
