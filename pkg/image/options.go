package image

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/opmkit/opm/pkg/registriesconf"
)

// Option configures [Open] and [NewSession].
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
	limits        Limits
	jobs          int
	downloads     int
	userAgent     string
	fileModes     bool

	registriesConf *registriesconf.Config // nil = read from the environment
}

func defaultOptions() options {
	return options{
		timeout:   10 * time.Minute,
		retries:   3,
		backoff:   250 * time.Millisecond,
		limits:    DefaultLimits(),
		jobs:      4,
		downloads: 8,
		userAgent: "opm",
	}
}

// Limits bound what reading one image may cost. A zero field means its
// default ([DefaultLimits]). Whatever exceeds a limit is refused with an
// error naming the image, the blob or entry, and the limit; nothing is
// truncated silently.
type Limits struct {
	// Manifest bounds a manifest or index (registry, index.json of a
	// layout, manifest.json of a docker archive) and every other registry
	// response that is not a blob: tokens, errors. Default 4 MiB, as
	// containers/image (upstream opm's client).
	Manifest int64
	// Config bounds an image config blob. Default 4 MiB, as
	// containers/image.
	Config int64
	// Blob bounds one layer as stored (compressed). A manifest declaring a
	// larger layer is refused before anything is downloaded. Default 8 GiB.
	Blob int64
	// Extract bounds the bytes one Extract writes. Default 8 GiB.
	Extract int64
	// Uncompressed bounds the tar bytes one Extract reads, summed over the
	// layers, including entries it skips (a decompression bomb stops
	// here). Default 32 GiB.
	Uncompressed int64
	// Entries bounds the tar entries one Extract reads, and the entries
	// of a docker or OCI archive. Default 1,048,576.
	Entries int
	// PathDepth bounds the components of an extracted path and of a
	// symbolic link's resolution. Default 128.
	PathDepth int
}

// DefaultLimits returns the limits used when none is set.
func DefaultLimits() Limits {
	return Limits{
		Manifest:     4 << 20,
		Config:       4 << 20,
		Blob:         8 << 30,
		Extract:      8 << 30,
		Uncompressed: 32 << 30,
		Entries:      1 << 20,
		PathDepth:    128,
	}
}

// withDefaults fills l's zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Manifest <= 0 {
		l.Manifest = d.Manifest
	}
	if l.Config <= 0 {
		l.Config = d.Config
	}
	if l.Blob <= 0 {
		l.Blob = d.Blob
	}
	if l.Extract <= 0 {
		l.Extract = d.Extract
	}
	if l.Uncompressed <= 0 {
		l.Uncompressed = d.Uncompressed
	}
	if l.Entries <= 0 {
		l.Entries = d.Entries
	}
	if l.PathDepth <= 0 {
		l.PathDepth = d.PathDepth
	}
	return l
}

// limitNames are the keys ParseLimits accepts, in documentation order.
var limitNames = []string{"manifest", "config", "blob", "extract", "uncompressed", "entries", "depth"}

// ParseLimits parses "key=value,..." into limits over the defaults. Keys:
// manifest, config, blob, extract, uncompressed (sizes, with an optional
// KiB, MiB, GiB or TiB suffix), entries and depth (counts).
func ParseLimits(s string) (Limits, error) {
	l := DefaultLimits()
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return l, fmt.Errorf("image limit %q: want KEY=VALUE (keys: %s)", kv, strings.Join(limitNames, ", "))
		}
		switch k {
		case "entries", "depth":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return l, fmt.Errorf("image limit %s=%q: want a positive count", k, v)
			}
			if k == "entries" {
				l.Entries = n
			} else {
				l.PathDepth = n
			}
			continue
		}
		n, err := parseSize(v)
		if err != nil {
			return l, fmt.Errorf("image limit %s=%q: %w", k, v, err)
		}
		switch k {
		case "manifest":
			l.Manifest = n
		case "config":
			l.Config = n
		case "blob":
			l.Blob = n
		case "extract":
			l.Extract = n
		case "uncompressed":
			l.Uncompressed = n
		default:
			return l, fmt.Errorf("image limit %q: unknown key (keys: %s)", k, strings.Join(limitNames, ", "))
		}
	}
	return l, nil
}

// parseSize parses "123", "4KiB", "4MiB", "8GiB" or "1TiB" (K, KB, M, MB,
// ... are accepted too, all powers of 1024).
func parseSize(s string) (int64, error) {
	i := len(s)
	for i > 0 && (s[i-1] < '0' || s[i-1] > '9') {
		i--
	}
	unit := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s[i:]), "B"), "I")
	sh, ok := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if !ok || err != nil || n <= 0 || n > (1<<62)>>sh {
		return 0, fmt.Errorf("want a positive size such as 4194304, 4MiB or 8GiB")
	}
	return n << sh, nil
}

// humanSize prints n in B, KiB, MiB or GiB.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// WithSkipTLSVerify skips verification of registry TLS certificates.
func WithSkipTLSVerify(v bool) Option { return func(o *options) { o.skipTLSVerify = v } }

// WithUseHTTP allows plain HTTP to registries. Like upstream, it also skips
// TLS verification when the registry does speak HTTPS.
func WithUseHTTP(v bool) Option { return func(o *options) { o.useHTTP = v } }

// WithFileModes makes Extract give files and directories the permission
// bits (and sticky bit) their tar entries carry, applied once every layer
// is written; setuid and setgid are never applied. By default extracted
// entries are private to the caller (0600 files, 0700 directories), which
// is all reading a catalog needs; an image's root filesystem, to run it,
// needs its modes.
func WithFileModes() Option { return func(o *options) { o.fileModes = true } }

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
// caller's business). Response size limits still apply.
func WithTransport(t http.RoundTripper) Option { return func(o *options) { o.transport = t } }

// WithLimits sets the size and count limits (see [Limits]); zero fields
// keep their defaults.
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l.withDefaults() } }

// WithJobs bounds concurrent blob downloads per image (default 4).
func WithJobs(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.jobs = n
		}
	}
}

// WithDownloads bounds concurrent blob downloads across every image of a
// session (default 8). [Open] makes a session per image.
func WithDownloads(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.downloads = n
		}
	}
}
