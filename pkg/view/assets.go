package view

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/opmkit/opm/pkg/graph"
)

// assets are the pages' templates and static files, embedded in the
// binary: the pages load nothing from anywhere else.
//
//go:embed templates/*.html static/*
var assets embed.FS

// staticHandler serves the embedded static files with their types and
// the security headers of ServeHTTP; nothing is listed.
func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		switch path.Ext(r.URL.Path) {
		case ".js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		case ".css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// parseTemplates parses each page with the layout.
func (s *Server) parseTemplates() error {
	funcs := template.FuncMap{
		"pkgURL": func(c *Catalog, pkg string, more ...string) string {
			return s.url(c, append([]string{"packages", pkg}, more...)...)
		},
		"catURL": func(c *Catalog) string { return s.url(c) },
		"old":    func() *Catalog { return s.cats[0] },
		"new":    func() *Catalog { return s.cats[len(s.cats)-1] },
		"query": func(kv ...string) string {
			v := url.Values{}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] != "" {
					v.Add(kv[i], kv[i+1])
				}
			}
			return v.Encode()
		},
		"pathForm": s.pathForm,
		"diffURL": func(pkg, ch string) string {
			return "/diff/packages/" + pathSegment(pkg) + "/channels/" + pathSegment(ch)
		},
		"safeURL": safeURL,
		"seq":     func(n int) []int { return make([]int, n) },
		"first": func(n int, list any) any {
			switch l := list.(type) {
			case []BundleRow:
				return l[:min(n, len(l))]
			case []PackageRow:
				return l[:min(n, len(l))]
			}
			return list
		},
		"join":   strings.Join,
		"plural": plural,
		"edges":  edgeCount,
		"add":    func(a, b int) int { return a + b },
		"deref":  func(p *int) int { return *p },
		"md":     Markdown,
		"has": func(list []string, s string) bool {
			for _, v := range list {
				if v == s {
					return true
				}
			}
			return false
		},
	}
	s.pages = map[string]*template.Template{}
	for _, name := range []string{"catalog", "package", "channel", "bundle", "path", "diff", "diffchannel", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("view: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// edgeCount shows an edge count, which graph.ChannelGraph.EdgeCount stops
// just above graph.MaxEdges.
func edgeCount(n int) string {
	if n > graph.MaxEdges {
		return fmt.Sprintf("more than %d", graph.MaxEdges)
	}
	return fmt.Sprint(n)
}

// maxFormVersions bounds the versions the path form suggests.
const maxFormVersions = 500

// formData fills the path form.
type formData struct {
	Action   string
	Q        PathQuery
	Versions []string
	Channels []string
	Default  string
}

// pathForm is the path form of package pkg, with the query q (none:
// empty) or, for a channel page, that channel chosen.
func (s *Server) pathForm(c *Catalog, pkg, channel string, q ...PathQuery) formData {
	f := formData{Action: s.url(c, "packages", pkg, "path"), Q: PathQuery{Semantics: "classic"}}
	if len(q) > 0 {
		f.Q = q[0]
	}
	if channel != "" {
		f.Q.Channels = []string{channel}
	}
	if p := c.pkg(pkg); p != nil {
		f.Channels, f.Default = p.graph.ChannelNames(), p.defaultChannel()
		// The newest versions are offered; any can be typed.
		for _, n := range sortedNodes(p.graph) {
			if n.HasVersion && n.HasBundle && len(f.Versions) < maxFormVersions {
				f.Versions = append(f.Versions, n.VersionString())
			}
		}
	}
	return f
}
