package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/action"
	graphaction "github.com/opmkit/opm/pkg/action/graph"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/graph"
)

// Options configure a [Server].
type Options struct {
	// Catalogs holds one catalog, or two (OLD then NEW) whose diff is
	// Diff.
	Catalogs []*Catalog
	Diff     *compose.Report
	// Hosts are the host:port values the Host header may carry (the
	// listening address and its localhost spelling); empty allows any,
	// for tests through httptest. Refusing other hosts defeats DNS
	// rebinding: a web page cannot read the catalog through a name that
	// resolves to 127.0.0.1.
	Hosts []string
}

// Server serves the pages and their JSON twins.
type Server struct {
	cats  []*Catalog
	diff  *compose.Report
	hosts map[string]bool
	mux   *http.ServeMux
	pages map[string]*template.Template
	// cache keeps computed answers; work bounds the computations running
	// at once (limit.go).
	cache *answerCache
	work  *work
}

// New builds a server over loaded catalogs.
func New(opts Options) (*Server, error) {
	switch {
	case len(opts.Catalogs) == 1:
		opts.Catalogs[0].prefix = ""
	case len(opts.Catalogs) == 2 && opts.Diff != nil:
		opts.Catalogs[0].prefix, opts.Catalogs[1].prefix = "/old", "/new"
	default:
		return nil, errors.New("view: one catalog, or two with their diff")
	}
	s := &Server{cats: opts.Catalogs, diff: opts.Diff, mux: http.NewServeMux(),
		cache: newAnswerCache(defaultCacheBytes), work: newWork(0, 0)}
	if len(opts.Hosts) > 0 {
		s.hosts = map[string]bool{}
		for _, h := range opts.Hosts {
			s.hosts[strings.ToLower(h)] = true
		}
	}
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(assets, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static)))
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, c := range s.cats {
		s.routes(c)
	}
	if s.diff != nil {
		s.page("/{$}", "diff", s.diffPage)
		s.page("/diff/packages/{pkg}/channels/{ch}", "diffchannel", s.diffChannelPage)
	}
	return s, nil
}

// routes registers a catalog's pages under its prefix.
func (s *Server) routes(c *Catalog) {
	p := c.prefix
	s.page(p+"/{$}", "catalog", func(r *http.Request) (*page, error) { return s.catalogPage(c, r) })
	s.page(p+"/packages/{pkg}", "package", func(r *http.Request) (*page, error) { return s.packagePage(c, r) })
	s.page(p+"/packages/{pkg}/channels/{ch}", "channel", func(r *http.Request) (*page, error) { return s.channelPage(c, r) })
	s.page(p+"/packages/{pkg}/bundles/{bundle}", "bundle", func(r *http.Request) (*page, error) { return s.bundlePage(c, r) })
	s.page(p+"/packages/{pkg}/path", "path", func(r *http.Request) (*page, error) { return s.pathPage(c, r) })
	s.mux.HandleFunc("GET /api"+p+"/packages/{pkg}/graph", s.computed(func(w http.ResponseWriter, r *http.Request) { s.graphAPI(c, w, r) }, jsonError))
	s.mux.HandleFunc("GET "+p+"/packages/{pkg}/icon", func(w http.ResponseWriter, r *http.Request) { s.icon(c, w, r) })
}

// page is what a page handler returns: the template's data, for the HTML
// page, and the JSON twin's body.
type page struct {
	Title  string
	Crumbs []crumb
	Cat    *Catalog
	Data   any
	// HTML holds rendered markdown for the template, by name.
	HTML map[string]template.HTML
	// Graph is the URL of the graph JSON the page draws ("" for none);
	// PathSrc that of the path JSON it highlights.
	Graph   string
	PathSrc string
	// API is the URL of the page's JSON twin.
	API string
	// Bundles is the URL prefix of the bundle pages the graph links to
	// (OldBundles: of the OLD catalog, on diff graphs).
	Bundles, OldBundles string
	// status, for pages that answer with an error in their data.
	status int
}

type crumb struct {
	Name string
	URL  string
}

// httpError is an error with its status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// unknown is the 404 of a name that is not there, in the one shape of
// every command (internal/suggest).
func unknown(e *suggest.UnknownError) error {
	return &httpError{http.StatusNotFound, e.Error()}
}

// page registers a page at pattern and its JSON twin at /api+pattern.
func (s *Server) page(pattern, tmpl string, h func(*http.Request) (*page, error)) {
	s.mux.HandleFunc("GET "+pattern, s.computed(func(w http.ResponseWriter, r *http.Request) {
		pg, err := h(r)
		if err != nil {
			s.errorPage(w, r, err)
			return
		}
		pg.apiURL(r)
		s.render(w, tmpl, pg)
	}, s.errorPage))
	s.mux.HandleFunc("GET /api"+pattern, s.computed(func(w http.ResponseWriter, r *http.Request) {
		pg, err := h(r)
		if err != nil {
			writeJSONError(w, err)
			return
		}
		status := pg.status
		if status == 0 {
			status = http.StatusOK
		}
		writeJSON(w, status, pg.Data)
	}, jsonError))
}

func jsonError(w http.ResponseWriter, _ *http.Request, err error) { writeJSONError(w, err) }

// apiURL is the URL of the page's JSON twin.
func (p *page) apiURL(r *http.Request) {
	u := *r.URL
	u.Path, u.RawPath = "/api"+r.URL.Path, ""
	if r.URL.RawPath != "" {
		u.RawPath = "/api" + r.URL.RawPath
	}
	p.API = u.RequestURI()
}

// ServeHTTP checks the Host header, sets the security headers every
// response carries and dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Content-Security-Policy", pageCSP)
	if s.hosts != nil && !s.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "unexpected Host header: opm view answers only on its own address", http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// pageCSP allows nothing but this server's own scripts, styles and images:
// no inline script, no other origin.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// iconCSP is sent with icons: an SVG opened on its own runs nothing and
// loads nothing.
const iconCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func statusOf(err error) int {
	var he *httpError
	var ue *action.UsageError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.As(err, &ue):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func writeJSONError(w http.ResponseWriter, err error) {
	writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	pg := &page{Title: http.StatusText(code), Data: err.Error(), status: code}
	if len(s.cats) == 1 {
		pg.Cat = s.cats[0]
	}
	s.render(w, "error", pg)
}

func (s *Server) render(w http.ResponseWriter, name string, pg *page) {
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout", struct {
		*page
		Server *Server
	}{pg, s}); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if pg.status != 0 {
		w.WriteHeader(pg.status)
	}
	_, _ = w.Write(b.Bytes())
}

// url joins escaped path segments under the catalog's prefix.
func (s *Server) url(c *Catalog, segs ...string) string {
	var b strings.Builder
	b.WriteString(c.prefix)
	for _, sg := range segs {
		b.WriteByte('/')
		b.WriteString(pathSegment(sg))
	}
	if len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

func (s *Server) catalogCrumbs(c *Catalog) []crumb {
	var out []crumb
	if s.diff != nil {
		out = append(out, crumb{Name: "diff", URL: "/"})
	}
	name := "catalog"
	switch c.prefix {
	case "/old":
		name = "old catalog"
	case "/new":
		name = "new catalog"
	}
	return append(out, crumb{Name: name, URL: s.url(c)})
}

func (s *Server) lookupPkg(c *Catalog, r *http.Request) (*pkgIndex, error) {
	name := pathValue(r, "pkg")
	p := c.pkg(name)
	if p == nil {
		return nil, unknown(suggest.Unknown("package", name, "in "+c.Source, c.names))
	}
	return p, nil
}

func (s *Server) catalogPage(c *Catalog, r *http.Request) (*page, error) {
	q := r.URL.Query().Get("q")
	d := s.catalogData(r.Context(), c, q)
	return &page{Title: c.Source, Crumbs: s.catalogCrumbs(c), Cat: c, Data: d}, nil
}

func (s *Server) packagePage(c *Catalog, r *http.Request) (*page, error) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		return nil, err
	}
	d := s.packageData(r.Context(), c, p)
	pg := &page{Title: p.name, Cat: c, Data: d, HTML: map[string]template.HTML{}}
	pg.Crumbs = append(s.catalogCrumbs(c), crumb{Name: p.name, URL: s.url(c, "packages", p.name)})
	if d.Description != "" {
		pg.HTML["description"] = Markdown(d.Description)
	}
	return pg, nil
}

// graphQuery reads the semantics, page, limit and cluster version of a
// graph request.
func graphQuery(r *http.Request) (graphOptions, error) {
	q := r.URL.Query()
	o := graphOptions{ctx: r.Context(), semantics: graph.Classic}
	if v := q.Get("semantics"); v != "" {
		sem, err := graph.ParseSemantics(v)
		if err != nil {
			return o, &httpError{http.StatusBadRequest, err.Error()}
		}
		o.semantics = sem
	}
	for name, dst := range map[string]*int{"page": &o.page, "limit": &o.limit} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return o, &httpError{http.StatusBadRequest, fmt.Sprintf("%s must be a positive number, not %q", name, v)}
			}
			*dst = n
		}
	}
	if v := q.Get("cluster-version"); v != "" {
		next, err := graph.NextMinor(v)
		if err != nil {
			return o, &httpError{http.StatusBadRequest, "invalid cluster-version: " + err.Error()}
		}
		o.next = &next
	}
	return o, nil
}

func (s *Server) channelPage(c *Catalog, r *http.Request) (*page, error) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		return nil, err
	}
	name := pathValue(r, "ch")
	ch := p.graph.Channel(name)
	if ch == nil {
		return nil, unknown(p.graph.UnknownChannel(name))
	}
	o, err := graphQuery(r)
	if err != nil {
		return nil, err
	}
	d := channelGraph(p, []*graph.ChannelGraph{ch}, o)
	pg := &page{Title: p.name + " / " + ch.Name, Cat: c, Data: d}
	pg.Crumbs = append(s.catalogCrumbs(c), crumb{p.name, s.url(c, "packages", p.name)}, crumb{ch.Name, s.url(c, "packages", p.name, "channels", ch.Name)})
	pg.Graph = "/api" + s.url(c, "packages", p.name, "channels", ch.Name) + "?" + r.URL.RawQuery
	pg.Bundles = s.url(c, "packages", p.name, "bundles") + "/"
	return pg, nil
}

// graphAPI draws the union of the channels named by channel= (default:
// all) for path pages.
func (s *Server) graphAPI(c *Catalog, w http.ResponseWriter, r *http.Request) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		writeJSONError(w, err)
		return
	}
	o, err := graphQuery(r)
	if err != nil {
		writeJSONError(w, err)
		return
	}
	chans := p.graph.Channels
	if names := r.URL.Query()["channel"]; len(names) > 0 {
		chans = nil
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			ch := p.graph.Channel(n)
			if ch == nil {
				writeJSONError(w, unknown(p.graph.UnknownChannel(n)))
				return
			}
			chans = append(chans, ch)
		}
	}
	writeJSON(w, http.StatusOK, channelGraph(p, chans, o))
}

func (s *Server) bundlePage(c *Catalog, r *http.Request) (*page, error) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		return nil, err
	}
	name := pathValue(r, "bundle")
	d, ok := bundleData(p, name)
	if !ok {
		return nil, unknown(p.graph.UnknownBundle(name))
	}
	pg := &page{Title: name, Cat: c, Data: d, HTML: map[string]template.HTML{}}
	pg.Crumbs = append(s.catalogCrumbs(c), crumb{p.name, s.url(c, "packages", p.name)}, crumb{name, s.url(c, "packages", p.name, "bundles", name)})
	if d.CSV != nil && d.CSV.Description != "" {
		pg.HTML["description"] = Markdown(d.CSV.Description)
	}
	return pg, nil
}

// PathQuery is a path page's query, as given.
type PathQuery struct {
	From           string   `json:"from,omitempty"`
	FromBundle     string   `json:"fromBundle,omitempty"`
	To             string   `json:"to,omitempty"`
	Version        string   `json:"version,omitempty"`
	Semantics      string   `json:"semantics"`
	Channels       []string `json:"channels,omitempty"`
	ClusterVersion string   `json:"clusterVersion,omitempty"`
}

// PathData is the path page: the query, and the answers of `opm graph
// path -o json` and (with a cluster version) `opm graph upgradeable -o
// json` for it, computed by the same code.
type PathData struct {
	Package string    `json:"package"`
	Query   PathQuery `json:"query"`
	graphaction.PathsJSON
	Cluster *graphaction.OperatorJSON `json:"cluster,omitempty"`
	Next    string                    `json:"nextOpenShift,omitempty"`
	Error   string                    `json:"error,omitempty"`
}

func (s *Server) pathPage(c *Catalog, r *http.Request) (*page, error) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	pq := PathQuery{From: strings.TrimSpace(q.Get("from")), FromBundle: strings.TrimSpace(q.Get("from-bundle")),
		To: strings.TrimSpace(q.Get("to")), Version: strings.TrimSpace(q.Get("version")), Semantics: q.Get("semantics"),
		ClusterVersion: strings.TrimSpace(q.Get("cluster-version"))}
	for _, ch := range q["channel"] {
		if ch != "" {
			pq.Channels = append(pq.Channels, ch)
		}
	}
	if pq.Semantics == "" {
		pq.Semantics = string(graph.Classic)
	}
	d := &PathData{Package: p.name, Query: pq, PathsJSON: graphaction.PathsJSON{Paths: []graphaction.PathJSON{}}}
	pg := &page{Title: p.name + ": upgrade path", Cat: c, Data: d}
	pg.Crumbs = append(s.catalogCrumbs(c), crumb{p.name, s.url(c, "packages", p.name)}, crumb{"upgrade path", s.url(c, "packages", p.name, "path")})
	if pq.From == "" && pq.FromBundle == "" {
		return pg, nil // the form alone
	}
	opts := graphaction.PathOptions{Options: graphaction.Options{Packages: []string{p.name}, Channels: pq.Channels},
		From: pq.From, FromBundle: pq.FromBundle, To: pq.To, Version: pq.Version, Semantics: pq.Semantics}
	res, err := graphaction.PathIn(r.Context(), c.Graph, opts)
	if err != nil {
		d.Error, pg.status = err.Error(), http.StatusBadRequest
		return pg, nil
	}
	d.PathsJSON = res.JSON()
	if pq.ClusterVersion != "" {
		uo := graphaction.UpgradeableOptions{ClusterVersion: pq.ClusterVersion, Semantics: pq.Semantics,
			Installed: []graphaction.InstalledOperator{{Package: p.name, From: pq.From, Bundle: pq.FromBundle, Channels: pq.Channels}}}
		ur, err := graphaction.UpgradeableIn(r.Context(), c.Graph, uo)
		if err != nil {
			d.Error, pg.status = err.Error(), http.StatusBadRequest
			return pg, nil
		}
		j := ur.JSON()
		d.Next = j.NextMinorVersion
		if len(j.Operators) == 1 {
			d.Cluster = &j.Operators[0]
		}
	}
	// The graph drawn beside the steps: the path's channels, as many of
	// their nodes as a graph holds (a path starts at an old version).
	gq := url.Values{"semantics": {pq.Semantics}, "limit": {strconv.Itoa(MaxNodeLimit)}}
	seen := map[string]bool{}
	for _, p := range res.Paths {
		for _, ch := range p.Channels {
			if !seen[ch] {
				seen[ch] = true
				gq.Add("channel", ch)
			}
		}
	}
	if pq.ClusterVersion != "" {
		gq.Set("cluster-version", pq.ClusterVersion)
	}
	pg.Graph = "/api" + s.url(c, "packages", p.name, "graph") + "?" + gq.Encode()
	pg.PathSrc = "/api" + r.URL.RequestURI()
	pg.Bundles = s.url(c, "packages", p.name, "bundles") + "/"
	return pg, nil
}

// icon serves a package icon with its detected media type; an SVG runs
// nothing (the CSP's sandbox) and pages only ever show it through <img>.
func (s *Server) icon(c *Catalog, w http.ResponseWriter, r *http.Request) {
	p, err := s.lookupPkg(c, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if p.blob == nil || p.blob.Icon == nil || !p.iconOK {
		http.Error(w, "no icon that can be shown", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", p.iconType)
	h.Set("Content-Security-Policy", iconCSP)
	h.Set("Content-Disposition", "inline; filename=icon")
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("Content-Length", strconv.Itoa(len(p.blob.Icon.Data)))
	_, _ = w.Write(p.blob.Icon.Data)
}

// A name is a path segment of the pages' URLs. Browsers resolve the
// segments "." and ".." (and "%2E", "%2E%2E": they are the same to a URL
// parser) before asking, so /packages/.. would open the start page. Such
// names are written with "~2E" for each dot, and a leading "~" of another
// name as "~7E", so that every name has one segment and reads back;
// app.js writes the graph's links alike.

// pathSegment is name as one escaped path segment.
func pathSegment(name string) string {
	switch {
	case name == "." || name == "..":
		return strings.Repeat("~2E", len(name))
	case strings.HasPrefix(name, "~"):
		name = "~7E" + name[1:]
	}
	return url.PathEscape(name)
}

// pathValue is the name a path segment of r holds (see pathSegment).
func pathValue(r *http.Request, key string) string {
	v := r.PathValue(key)
	switch {
	case v == "~2E" || v == "~2E~2E":
		return strings.Repeat(".", len(v)/3)
	case strings.HasPrefix(v, "~7E"):
		return "~" + v[3:]
	}
	return v
}

// LoopbackHosts returns the Host header values a browser sends for a
// server listening on addr (127.0.0.1:PORT or [::1]:PORT): the address and
// localhost with the port.
func LoopbackHosts(addr string) []string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr}
	}
	return []string{addr, net.JoinHostPort("localhost", port)}
}
