package image

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/opmkit/opm/pkg/registriesconf"
)

// httpTransport builds the HTTP transport for o: TLS verification, extra
// CA certificates, and dial/handshake/header timeouts.
func httpTransport(o options) (http.RoundTripper, error) {
	if o.transport != nil {
		return o.transport, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 15 * time.Second
	t.ResponseHeaderTimeout = 2 * time.Minute
	t.MaxIdleConnsPerHost = 16
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.skipTLSVerify || o.useHTTP {
		cfg.InsecureSkipVerify = true // the user asked for it
	}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate found", o.caFile)
		}
		cfg.RootCAs = pool
	}
	t.TLSClientConfig = cfg
	return t, nil
}

// Session opens images with shared state: one HTTP transport, one
// registry client (so pings and auth tokens are reused), the blob cache, a
// bound on concurrent downloads ([WithDownloads]), and a memo of the
// manifests and labels it resolved, so that opening a reference again
// (after a prefetch, say) costs no request. Tags are resolved once per
// session: use one session per operation. A Session is safe for concurrent
// use.
type Session struct {
	o options

	once    sync.Once
	initErr error
	kc      authn.Keychain
	tr      http.RoundTripper // TLS, registries.conf's insecure hosts, the manifest limit
	puller  *remote.Puller
	cache   *blobCache
	tmp     string // private blob directory when the cache is off
	regs    *registriesconf.Config

	downloads chan struct{} // bounds blob downloads across the session's images

	mu       sync.Mutex
	resolved map[string]*resolvedImage
	flights  singleflight.Group
}

type resolvedImage struct {
	repo     name.Repository // where the manifest was found (registries.conf may rewrite it); blobs come from there
	manifest *v1.Manifest
	digest   string
	config   v1.Config
}

// NewSession returns a session with the given options.
func NewSession(opts ...Option) *Session {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return &Session{o: o, resolved: map[string]*resolvedImage{}, downloads: make(chan struct{}, o.downloads)}
}

// Close removes the session's private files (the blob directory used when
// the cache is disabled). Images opened by the session must not be used
// after it.
func (s *Session) Close() error {
	if s.cache != nil {
		s.cache.close()
	}
	if s.tmp == "" {
		return nil
	}
	err := os.RemoveAll(s.tmp)
	s.tmp = ""
	return err
}

// Open opens ref like the package-level [Open], with the session's state.
func (s *Session) Open(ctx context.Context, ref string) (Image, error) {
	img, err := s.open(ctx, ref)
	if err != nil {
		return nil, err
	}
	return img, nil
}

func (s *Session) open(ctx context.Context, ref string) (*image, error) {
	o := s.o
	r, err := ParseReference(ref, o.useHTTP)
	if err != nil {
		return nil, err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	var img *image
	switch r.Transport {
	case Remote:
		img, err = s.openRemote(ctx, r)
	case OCILayout:
		img, err = openLayoutDir(ctx, r, o)
	case OCIArchive:
		img, err = openOCIArchive(ctx, r, o)
	case DockerArchive:
		img, err = openDockerArchive(ctx, r, o)
	}
	if err != nil {
		return nil, err
	}
	img.ref, img.o = ref, o
	if img.labels == nil {
		img.labels = map[string]string{}
	}
	return img, nil
}

// init builds the transport, registry client and cache once.
func (s *Session) init() error {
	s.once.Do(func() {
		o := s.o
		tr, err := httpTransport(o)
		if err == nil {
			tr, err = s.applyRegistriesConf(tr)
		}
		if err != nil {
			s.initErr = err
			return
		}
		s.tr = &limitTransport{base: tr, manifest: o.limits.Manifest}
		s.kc = o.keychain
		if s.kc == nil {
			s.kc = DefaultKeychain()
		}
		s.puller, err = remote.NewPuller(s.remoteOptions(o.downloads)...)
		if err != nil {
			s.initErr = err
			return
		}
		dir := o.cacheDir
		if dir == "" {
			// An unusable default cache (no home, read-only) degrades to
			// a private temporary one instead of failing the pull.
			dir = DefaultCacheDir()
			if dir != "" && os.MkdirAll(dir, 0o700) != nil {
				dir = ""
			}
		}
		if dir == "" || dir == "-" {
			if dir, err = os.MkdirTemp("", "opm-blobs-*"); err != nil {
				s.initErr = err
				return
			}
			s.tmp = dir
		}
		s.cache = &blobCache{dir: dir}
	})
	return s.initErr
}

// remoteOptions are the go-containerregistry options of the session's
// pulls and pushes, with at most jobs concurrent blob transfers.
func (s *Session) remoteOptions(jobs int) []remote.Option {
	return []remote.Option{
		remote.WithTransport(s.tr),
		remote.WithAuthFromKeychain(s.kc),
		remote.WithUserAgent(s.o.userAgent),
		remote.WithJobs(jobs),
		remote.WithRetryBackoff(remote.Backoff{Duration: s.o.backoff, Factor: 2, Jitter: 0.1, Steps: max(s.o.retries+1, 1)}),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
	}
}

func (s *Session) openRemote(ctx context.Context, r Reference) (img *image, err error) {
	defer func() {
		if err != nil {
			img, err = nil, fmt.Errorf("pulling %s: %w", r.Raw, s.explain(err))
		}
	}()
	if err := s.init(); err != nil {
		return nil, err
	}
	key := r.Name.String()
	s.mu.Lock()
	res := s.resolved[key]
	s.mu.Unlock()
	if res == nil {
		v, err, _ := s.flights.Do(key, func() (any, error) {
			res, err := s.resolveSources(ctx, r)
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			s.resolved[key] = res
			s.mu.Unlock()
			return res, nil
		})
		if err != nil {
			return nil, err
		}
		res = v.(*resolvedImage)
	}
	o, m, repo := s.o, res.manifest, res.repo
	img = &image{digest: res.digest, labels: res.config.Labels, config: res.config}
	for _, ld := range m.Layers {
		fetch := s.blobFetcher(repo, ld.Digest)
		img.layers = append(img.layers, layer{
			digest: ld.Digest.String(),
			open: func(ctx context.Context) (io.ReadCloser, error) {
				for range 2 {
					rc, ok, err := s.cache.open(ctx, ld)
					if err != nil || ok {
						return rc, err
					}
					if _, err := s.ensureBlob(ctx, r, ld, false, fetch); err != nil {
						return nil, err
					}
				}
				return nil, fmt.Errorf("blob cache: %s vanished after its download", ld.Digest)
			},
			refetch: func(ctx context.Context) error {
				_, err := s.ensureBlob(ctx, r, ld, true, fetch)
				return err
			},
		})
	}
	img.fetch = func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.SetLimit(o.jobs)
		for _, ld := range m.Layers {
			g.Go(func() error {
				_, err := s.ensureBlob(ctx, r, ld, false, s.blobFetcher(repo, ld.Digest))
				return err
			})
		}
		return g.Wait()
	}
	return img, nil
}

// ensureBlob puts layer ld in the cache (again when refetch is set), within
// the session's download bound, reporting progress.
func (s *Session) ensureBlob(ctx context.Context, r Reference, ld v1.Descriptor, refetch bool, fetch func(context.Context) (io.ReadCloser, error)) (bool, error) {
	if !refetch && s.cache.present(ld) {
		return false, nil
	}
	select {
	case s.downloads <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s.downloads }()
	fetched, err := s.cache.ensure(ctx, ld, refetch, fetch)
	if err != nil {
		return false, fmt.Errorf("layer %s: %w", ld.Digest, s.explain(err))
	}
	if fetched && s.o.progress != nil {
		fmt.Fprintf(s.o.progress, "%s: downloaded layer %s (%s)\n", r.Raw, ld.Digest.String()[:19], humanSize(ld.Size))
	}
	return fetched, nil
}

// resolveAt fetches the manifest at ref (resolving indexes to the
// platform) and its config. registries.conf decides which refs
// are tried, in which order (resolveSources).
func (s *Session) resolveAt(ctx context.Context, ref name.Reference) (*resolvedImage, error) {
	m, digest, err := s.manifest(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := checkManifest(m, s.o.limits); err != nil {
		return nil, err
	}
	repo := ref.Context()
	raw, err := s.config(ctx, repo, m.Config)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config.Digest, err)
	}
	cfg, err := configOf(raw)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config.Digest, err)
	}
	return &resolvedImage{repo: repo, manifest: m, digest: digest, config: cfg}, nil
}

// config reads the config blob through the cache, downloading it again
// once when the cached copy does not verify.
func (s *Session) config(ctx context.Context, repo name.Repository, d v1.Descriptor) ([]byte, error) {
	fetch := s.blobFetcher(repo, d.Digest)
	refetch := false
	for {
		if _, err := s.cache.ensure(ctx, d, refetch, fetch); err != nil {
			return nil, s.explain(err)
		}
		rc, ok, err := s.cache.open(ctx, d)
		if err != nil {
			return nil, err
		}
		if !ok {
			if refetch {
				return nil, fmt.Errorf("blob cache: %s vanished after its download", d.Digest)
			}
			refetch = true
			continue
		}
		b, err := readExact(rc, d.Size)
		rc.Close()
		var ce *corruptError
		if errors.As(err, &ce) && !refetch {
			refetch = true
			continue
		}
		return b, err
	}
}

// checkManifest refuses a manifest whose config or layers exceed the
// limits, before anything is downloaded.
func checkManifest(m *v1.Manifest, l Limits) error {
	if m.Config.Size < 0 || m.Config.Size > l.Config {
		return tooLarge("config %s: %d bytes declared, over the %s config limit", m.Config.Digest, m.Config.Size, humanSize(l.Config))
	}
	for _, ld := range m.Layers {
		if ld.Size < 0 || ld.Size > l.Blob {
			return tooLarge("layer %s: %d bytes declared, over the %s blob limit", ld.Digest, ld.Size, humanSize(l.Blob))
		}
	}
	return nil
}

// manifest fetches the image manifest, resolving indexes to the platform.
// The limit transport bounds each response; a child manifest must have the
// size its index declares (its digest is checked by the client).
func (s *Session) manifest(ctx context.Context, ref name.Reference) (*v1.Manifest, string, error) {
	want, err := wantPlatform(s.o)
	if err != nil {
		return nil, "", err
	}
	wantSize := int64(-1)
	for depth := 0; depth < 4; depth++ {
		desc, err := s.puller.Get(ctx, ref)
		if err != nil {
			return nil, "", err
		}
		if wantSize >= 0 && int64(len(desc.Manifest)) != wantSize {
			return nil, "", fmt.Errorf("manifest %s: %d bytes, the index declares %d: %w", desc.Digest, len(desc.Manifest), wantSize, ErrDigest)
		}
		switch {
		case desc.MediaType.IsIndex():
			idx, err := v1.ParseIndexManifest(bytesReader(desc.Manifest))
			if err != nil {
				return nil, "", fmt.Errorf("parsing index %s: %w", desc.Digest, err)
			}
			child, err := pickPlatform(idx, want)
			if err != nil {
				return nil, "", err
			}
			if child.Size < 0 || child.Size > s.o.limits.Manifest {
				return nil, "", tooLarge("manifest %s: %d bytes declared, over the %s manifest limit", child.Digest, child.Size, humanSize(s.o.limits.Manifest))
			}
			ref, wantSize = ref.Context().Digest(child.Digest.String()), child.Size
		case desc.MediaType.IsSchema1():
			return nil, "", fmt.Errorf("docker schema 1 manifests are not supported (%s)", desc.MediaType)
		default:
			m, err := v1.ParseManifest(bytesReader(desc.Manifest))
			if err != nil {
				return nil, "", fmt.Errorf("parsing manifest %s: %w", desc.Digest, err)
			}
			return m, desc.Digest.String(), nil
		}
	}
	return nil, "", errors.New("image indexes nested too deeply")
}

func (s *Session) blobFetcher(repo name.Repository, d v1.Hash) func(context.Context) (io.ReadCloser, error) {
	return func(ctx context.Context) (io.ReadCloser, error) {
		l, err := s.puller.Layer(ctx, repo.Digest(d.String()))
		if err != nil {
			return nil, err
		}
		return l.Compressed()
	}
}

// explain adds the credential files consulted to authentication errors.
func (s *Session) explain(err error) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		if fk, ok := s.kc.(*fileKeychain); ok {
			return fmt.Errorf("%w (%s)", err, fk.describe())
		}
	}
	return err
}

// limitTransport is the transport under every HTTP client of a session
// (go-containerregistry's pullers, pushers, token and foreign-layer
// clients all send their requests through it). It bounds:
//
//   - redirects: go-containerregistry gives its clients a redirect check
//     of its own, which replaces net/http's cap of 10, so a registry that
//     redirects a request to itself would be followed forever. A request
//     reached through more than MaxRedirects redirects is refused here;
//   - manifest responses: a body longer than manifest bytes (declared or
//     streamed) fails the read, so that neither an oversized nor an
//     endless manifest is held in memory. Blob bodies are bounded by the
//     reader, which takes the descriptor's size and no more.
type limitTransport struct {
	base     http.RoundTripper
	manifest int64
}

// MaxRedirects is the most redirects followed for one request, as
// net/http's default.
const MaxRedirects = 10

// ErrTooManyRedirects is wrapped by the error of a request redirected
// more than MaxRedirects times.
var ErrTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)

// redirects counts the redirects that led to req (at most MaxRedirects+1)
// and returns the request that started them: net/http sets Response on a
// request it makes to follow a redirect, and that response's Request is
// the one redirected.
func redirects(req *http.Request) (int, *http.Request) {
	n, first := 0, req
	for first.Response != nil && first.Response.Request != nil && n <= MaxRedirects {
		n++
		first = first.Response.Request
	}
	return n, first
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if n, first := redirects(req); n > MaxRedirects {
		// The client's error names the method and the last URL.
		if first.URL.String() == req.URL.String() {
			return nil, fmt.Errorf("%w (each to the same URL)", ErrTooManyRedirects)
		}
		return nil, fmt.Errorf("%w, starting from %s", ErrTooManyRedirects, redactURL(first.URL))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/manifests/") {
		return resp, err
	}
	what := req.URL.Path[strings.LastIndex(req.URL.Path, "/manifests/")+len("/manifests/"):]
	resp.Body = &limitedBody{rc: resp.Body, left: t.manifest, declared: resp.ContentLength, limit: t.manifest, what: what}
	return resp, nil
}

// limitedBody fails once more than limit bytes are read, or at once when
// the response declares more.
type limitedBody struct {
	rc       io.ReadCloser
	left     int64
	declared int64
	limit    int64
	what     string
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.declared > b.limit {
		return 0, tooLarge("manifest %s: %d bytes declared, over the %s manifest limit", b.what, b.declared, humanSize(b.limit))
	}
	if b.left < 0 {
		return 0, tooLarge("manifest %s: over the %s manifest limit", b.what, humanSize(b.limit))
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, tooLarge("manifest %s: over the %s manifest limit", b.what, humanSize(b.limit))
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// redactURL writes u for an error message without its query and user
// information (presigned blob URLs carry credentials there).
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}
