package view

import (
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want, not []string
	}{
		{in: "**bold** and `code`", want: []string{"<strong>bold</strong>", "<code>code</code>"}},
		{in: "<script>alert(1)</script>", not: []string{"<script"}},
		{in: "x <img src=x onerror=alert(1)> y", not: []string{"<img", "onerror=alert(1)>"}},
		{in: "[a](javascript:alert(1)) [b](JAVASCRIPT:alert(1)) [c](data:text/html,x) [d](vbscript:x) [e](/relative) [f](#frag)", not: []string{"href"}},
		{in: "[ok](https://example.com/a?b=1&c=2)", want: []string{`<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">ok</a>`}},
		{in: "mail [me](mailto:a@example.com)", want: []string{`href="mailto:a@example.com"`}},
		{in: "![logo](https://example.com/logo.png)", want: []string{`<a href="https://example.com/logo.png"`, ">logo</a>"}, not: []string{"<img"}},
		{in: "![x](javascript:alert(1))", not: []string{"<img", "href", "javascript"}},
		{in: "see https://example.com and www.example.org", want: []string{`href="https://example.com"`, `href="http://www.example.org"`}},
		{in: "<javascript:alert(1)>", not: []string{"href"}},
		{in: "| a | b |\n|---|---|\n| 1 | 2 |", want: []string{"<table>", "<td>1</td>"}},
		{in: "<div onclick=\"x\">raw</div>", not: []string{"<div", "onclick"}},
		// Alignment by class: the pages' CSP refuses style attributes.
		{in: "| l | c | r | n |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |", want: []string{`<th class="align-left">l</th>`, `<td class="align-center">2</td>`, `<td class="align-right">3</td>`, "<td>4</td>"}, not: []string{"style", "align="}},
	} {
		got := string(Markdown(tc.in))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("Markdown(%q) = %q, want %q in it", tc.in, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("Markdown(%q) = %q, must not hold %q", tc.in, got, n)
			}
		}
	}
	long := strings.Repeat("a", maxMarkdown+10)
	if got := string(Markdown(long)); !strings.Contains(got, "description cut") {
		t.Errorf("a description above %d bytes is not cut", maxMarkdown)
	}
}

// FuzzMarkdown: whatever a catalog says, its rendered description holds no
// script, no event handler, no image and no link but http, https and
// mailto.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"**x**", "<script>x</script>", "[a](javascript:x)", "![i](http://x/y.png)", "<img src=x onerror=y>",
		"https://x.y", "[a](<javascript:x>)", "[a]: javascript:x\n\n[a]", "<a href=\"javascript:x\">a</a>", "`<script>`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := strings.ToLower(string(Markdown(s)))
		for _, bad := range []string{"<script", "<img", "<iframe", "<svg", "<object", "<embed", "<style", "<link", "<meta", "<form", "<input", ` style="`} {
			if strings.Contains(got, bad) {
				t.Fatalf("Markdown(%q) holds %s: %q", s, bad, got)
			}
		}
		for i := 0; ; {
			j := strings.Index(got[i:], "href=\"")
			if j < 0 {
				break
			}
			i += j + len("href=\"")
			if !strings.HasPrefix(got[i:], "http://") && !strings.HasPrefix(got[i:], "https://") && !strings.HasPrefix(got[i:], "mailto:") {
				t.Fatalf("Markdown(%q) links to %q", s, got[i:min(len(got), i+40)])
			}
		}
		// Tags the renderer writes carry no event handler.
		for _, tag := range strings.Split(got, "<")[1:] {
			end := strings.IndexByte(tag, '>')
			if end < 0 {
				continue
			}
			for _, attr := range strings.Fields(tag[:end])[1:] {
				if strings.HasPrefix(attr, "on") {
					t.Fatalf("Markdown(%q) writes an event handler: <%s>", s, tag[:end])
				}
			}
		}
	})
}
