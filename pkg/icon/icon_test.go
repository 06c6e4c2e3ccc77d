package icon

import "testing"

func TestMediaType(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"Success/PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "image/png"},
		{"Success/JPEG", []byte{0xFF, 0xD8, 0xFF, 0xE0}, "image/jpeg"},
		{"Success/GIF", []byte("GIF89a"), "image/gif"},
		{"Success/SVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "image/svg+xml"},
		{"Success/SVGWithDeclarationAndComment", []byte("<?xml version=\"1.0\"?>\n<!-- c -->\n<svg>"), "image/svg+xml"},
		{"Success/WebP", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp"},
		{"Error/PDF", []byte("%PDF-1.7"), "application/pdf"},
		{"Error/Text", []byte("# hello"), ""},
		{"Error/HTML", []byte("<html><svg></svg></html>"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MediaType(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
