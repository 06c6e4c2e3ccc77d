package view

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxMarkdown bounds the description text rendered as markdown; beyond it
// the text is cut (and the page says so).
const maxMarkdown = 256 << 10

// md renders catalog descriptions: CommonMark with GitHub's tables,
// strikethrough and autolinks. goldmark escapes text and, without its
// unsafe option, drops raw HTML; the transformer below keeps only links to
// http, https and mailto URLs and turns images into links, so that a page
// never loads anything from outside. Table cells are aligned by class
// (align-left, align-center, align-right in app.css): the pages' CSP
// refuses style attributes.
var md = goldmark.New(
	goldmark.WithExtensions(extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignNone)),
		extension.Strikethrough, extension.Linkify),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
)

// Markdown renders a catalog description as safe HTML.
func Markdown(src string) template.HTML {
	cut := false
	if len(src) > maxMarkdown {
		src, cut = src[:maxMarkdown], true
	}
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	if cut {
		b.WriteString("<p class=\"note\">(description cut at 256 KiB)</p>")
	}
	return template.HTML(b.String()) // #nosec: goldmark escapes text and drops raw HTML; safeLinks vets URLs
}

// safeURL reports whether a link may be kept: an absolute http, https or
// mailto URL.
func safeURL(dest string) bool {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// safeLinks rewrites links, images and autolinks, and gives aligned table
// cells their class.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var links []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch c := n.(type) {
			case *ast.Link, *ast.Image, *ast.AutoLink:
				links = append(links, n)
			case *extast.TableCell:
				if c.Alignment != extast.AlignNone {
					c.SetAttributeString("class", []byte("align-"+c.Alignment.String()))
				}
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range links {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n := n.(type) {
		case *ast.Link:
			if safeURL(string(n.Destination)) {
				n.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
				continue
			}
			unwrap(parent, n)
		case *ast.Image:
			// Never load an image: link to it (when the URL is safe) with
			// its alt text.
			if safeURL(string(n.Destination)) {
				l := ast.NewLink()
				l.Destination, l.Title = n.Destination, n.Title
				l.SetAttributeString("rel", []byte("nofollow noopener noreferrer"))
				for c := n.FirstChild(); c != nil; {
					next := c.NextSibling()
					l.AppendChild(l, c)
					c = next
				}
				if l.ChildCount() == 0 {
					l.AppendChild(l, ast.NewString([]byte("image")))
				}
				parent.ReplaceChild(parent, n, l)
				continue
			}
			unwrap(parent, n)
		case *ast.AutoLink:
			if safeURL(string(n.URL(src))) {
				continue
			}
			parent.ReplaceChild(parent, n, ast.NewString(n.Label(src)))
		}
	}
}

// unwrap replaces n by its children.
func unwrap(parent, n ast.Node) {
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
