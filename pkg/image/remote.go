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
	"os"
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

// downloads bounds blob downloads across all images of the process.
var downloads = make(chan struct{}, 8)

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
// registry client (so pings and auth tokens are reused), the blob cache, and
// a memo of the manifests and labels it resolved, so that opening a
// reference again (after a prefetch, say) costs no request. Tags are
// resolved once per session: use one session per operation. A Session is
// safe for concurrent use.
type Session struct {
	o options

	once    sync.Once
	initErr error
	kc      authn.Keychain
	puller  *remote.Puller
	cache   *blobCache
	tmp     string // private blob directory when the cache is off
	regs    *registriesconf.Config

	mu       sync.Mutex
	resolved map[string]*resolvedImage
	flights  singleflight.Group
}

type resolvedImage struct {
	repo     name.Repository // where the blobs are (registries.conf may rewrite it)
	manifest *v1.Manifest
	digest   string
	labels   map[string]string
}

// NewSession returns a session with the given options.
func NewSession(opts ...Option) *Session {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return &Session{o: o, resolved: map[string]*resolvedImage{}}
}

// Close removes the session's private files (the blob directory used when
// the cache is disabled). Images opened by the session must not be used
// after it.
func (s *Session) Close() error {
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
		img, err = openLayoutDir(r, o)
	case OCIArchive:
		img, err = openOCIArchive(r, o)
	case DockerArchive:
		img, err = openDockerArchive(r, o)
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
		s.kc = o.keychain
		if s.kc == nil {
			s.kc = DefaultKeychain()
		}
		steps := o.retries + 1
		if steps < 1 {
			steps = 1
		}
		s.puller, err = remote.NewPuller(
			remote.WithTransport(tr),
			remote.WithAuthFromKeychain(s.kc),
			remote.WithUserAgent(o.userAgent),
			remote.WithRetryBackoff(remote.Backoff{Duration: o.backoff, Factor: 2, Jitter: 0.1, Steps: steps}),
			remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
				http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
		)
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
	img = &image{digest: res.digest, labels: res.labels}
	for _, ld := range m.Layers {
		d := ld.Digest
		img.layers = append(img.layers, layer{
			digest: d.String(),
			open: func(context.Context) (io.ReadCloser, error) {
				return os.Open(s.cache.path(d))
			},
		})
	}
	img.fetch = func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.SetLimit(o.jobs)
		for _, ld := range m.Layers {
			d := ld.Digest
			g.Go(func() error {
				select {
				case downloads <- struct{}{}:
				case <-ctx.Done():
					return ctx.Err()
				}
				defer func() { <-downloads }()
				_, fetched, err := s.cache.ensure(ctx, d, s.blobFetcher(repo, d))
				if err != nil {
					return fmt.Errorf("layer %s: %w", d, s.explain(err))
				}
				if fetched && o.progress != nil {
					fmt.Fprintf(o.progress, "%s: downloaded layer %s (%s)\n", r.Raw, d.String()[:19], humanSize(ld.Size))
				}
				return nil
			})
		}
		return g.Wait()
	}
	return img, nil
}

// resolve fetches the manifest (resolving indexes to the platform) and the
// config's labels.
func (s *Session) resolve(ctx context.Context, r Reference) (*resolvedImage, error) {
	m, digest, err := s.manifest(ctx, r)
	if err != nil {
		return nil, err
	}
	cfgPath, _, err := s.cache.ensure(ctx, m.Config.Digest, s.blobFetcher(r.Name.Context(), m.Config.Digest))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", m.Config.Digest, err)
	}
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, err
	}
	labels, err := labelsOf(raw)
	if err != nil {
		return nil, err
	}
	return &resolvedImage{manifest: m, digest: digest, labels: labels}, nil
}

// manifest fetches the image manifest, resolving indexes to the platform.
func (s *Session) manifest(ctx context.Context, r Reference) (*v1.Manifest, string, error) {
	want, err := wantPlatform(s.o)
	if err != nil {
		return nil, "", err
	}
	ref := r.Name
	for depth := 0; depth < 4; depth++ {
		desc, err := s.puller.Get(ctx, ref)
		if err != nil {
			return nil, "", err
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
			ref = ref.Context().Digest(child.Digest.String())
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

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
