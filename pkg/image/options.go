package image

import (
	"io"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/opmkit/opm/pkg/registriesconf"
)

// Option configures [Open].
type Option func(*options)

type options struct {
	skipTLSVerify bool
	useHTTP       bool
	caFile        string
	cacheDir      string // "" = default; "-" = no persistent cache
	platform      string
	progress      io.Writer
	timeout       time.Duration
	retries       int
	backoff       time.Duration
	keychain      authn.Keychain
	transport     http.RoundTripper
	maxBytes      int64
	maxEntries    int
	jobs          int
	userAgent     string

	registriesConf *registriesconf.Config // nil = read from the environment
}

func defaultOptions() options {
	return options{
		timeout:    10 * time.Minute,
		retries:    3,
		backoff:    250 * time.Millisecond,
		maxBytes:   8 << 30,
		maxEntries: 1 << 20,
		jobs:       4,
		userAgent:  "opm",
	}
}

// WithSkipTLSVerify skips verification of registry TLS certificates.
func WithSkipTLSVerify(v bool) Option { return func(o *options) { o.skipTLSVerify = v } }

// WithUseHTTP allows plain HTTP to registries. Like upstream, it also skips
// TLS verification when the registry does speak HTTPS.
func WithUseHTTP(v bool) Option { return func(o *options) { o.useHTTP = v } }

// WithCAFile adds the PEM certificates in file to the trusted roots.
func WithCAFile(file string) Option { return func(o *options) { o.caFile = file } }

// WithCacheDir sets the blob cache directory. "" means the default
// (os.UserCacheDir()/opm); "-" disables the persistent cache.
func WithCacheDir(dir string) Option { return func(o *options) { o.cacheDir = dir } }

// WithPlatform selects the platform ("os/arch[/variant]") of multi-platform
// images; the default is linux/<host arch>.
func WithPlatform(p string) Option { return func(o *options) { o.platform = p } }

// WithProgress writes one line per downloaded blob to w (nil = silent).
// Callers pass a terminal here, never a pipe.
func WithProgress(w io.Writer) Option { return func(o *options) { o.progress = w } }

// WithTimeout bounds each registry operation of an Open or Extract call
// (default 10 minutes; 0 = none).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithRetries sets how many times transient registry errors are retried and
// the first backoff (doubled at each retry).
func WithRetries(n int, backoff time.Duration) Option {
	return func(o *options) { o.retries, o.backoff = n, backoff }
}

// WithKeychain replaces the default credential lookup.
func WithKeychain(k authn.Keychain) Option { return func(o *options) { o.keychain = k } }

// WithTransport sets the base HTTP transport (TLS options are then the
// caller's business).
func WithTransport(t http.RoundTripper) Option { return func(o *options) { o.transport = t } }

// WithLimits bounds extraction: total bytes written and number of entries
// (defaults 8 GiB and 1,048,576).
func WithLimits(maxBytes int64, maxEntries int) Option {
	return func(o *options) { o.maxBytes, o.maxEntries = maxBytes, maxEntries }
}

// WithJobs bounds concurrent blob downloads per image (default 4).
func WithJobs(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.jobs = n
		}
	}
}
