package image

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/opmkit/opm/pkg/registriesconf"
)

// registries.conf support: every registry reference is resolved through
// containers-registries.conf (see package registriesconf) before it is
// fetched. A matching [[registry]] rewrites the reference's prefix to its
// location and lists mirrors to try first; insecure locations may be
// reached over plain HTTP or unverified TLS; blocked ones are refused. The
// image keeps the reference the caller gave (Ref, progress lines, errors
// name it), only the place it is fetched from changes.

// WithRegistriesConf sets the registries.conf configuration applied to
// registry references. nil (the default) reads the files of the
// environment ($CONTAINERS_REGISTRIES_CONF, else
// ~/.config/containers/registries.conf, else
// /etc/containers/registries.conf, and their drop-in directories) when the
// first registry image is opened; an empty &registriesconf.Config{}
// disables it.
func WithRegistriesConf(c *registriesconf.Config) Option {
	return func(o *options) { o.registriesConf = c }
}

// applyRegistriesConf loads the configuration (once per session, from
// init) and returns tr, switched to an unverified-TLS copy of itself for
// the hosts the configuration marks insecure (a caller-supplied transport
// that is not an *http.Transport is used as it is).
func (s *Session) applyRegistriesConf(tr http.RoundTripper) (http.RoundTripper, error) {
	cfg := s.o.registriesConf
	if cfg == nil {
		var err error
		if cfg, err = registriesconf.Load(); err != nil {
			return nil, fmt.Errorf("registries.conf: %w", err)
		}
	}
	s.regs = cfg
	hosts := cfg.InsecureHosts()
	base, ok := tr.(*http.Transport)
	if len(hosts) == 0 || !ok {
		return tr, nil
	}
	insecure := base.Clone()
	if insecure.TLSClientConfig == nil {
		insecure.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	insecure.TLSClientConfig.InsecureSkipVerify = true // registries.conf: insecure = true
	return &hostSwitch{secure: tr, insecure: insecure, hosts: hosts}, nil
}

// hostSwitch sends requests for the insecure hosts through a transport
// that does not verify TLS certificates.
type hostSwitch struct {
	secure, insecure http.RoundTripper
	hosts            map[string]bool
}

func (h *hostSwitch) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.hosts[req.URL.Host] {
		return h.insecure.RoundTrip(req)
	}
	return h.secure.RoundTrip(req)
}

// trySources calls try at each place registries.conf lists for the
// registry reference r (its mirrors, then its location; r itself when no
// [[registry]] matches), in order, and returns the first result. The
// reference try gets says where to fetch; the image keeps r.
func trySources[T any](ctx context.Context, s *Session, r Reference, try func(name.Reference) (T, error)) (T, error) {
	var zero T
	ref, digest := confReference(r.Name)
	srcs, err := s.regs.PullSources(ref, digest)
	if err != nil {
		return zero, err
	}
	if len(srcs) == 1 && srcs[0].Registry == nil {
		return try(r.Name)
	}
	var tries []sourceError
	for _, src := range srcs {
		var v T
		at, err := s.sourceRef(src)
		if err == nil {
			if v, err = try(at); err == nil {
				return v, nil
			}
		}
		tries = append(tries, sourceError{src: src, err: err})
		if ctx.Err() != nil {
			break
		}
	}
	return zero, &sourcesError{tries: tries}
}

// resolveSources resolves r at the places registries.conf lists for it.
func (s *Session) resolveSources(ctx context.Context, r Reference) (*resolvedImage, error) {
	return trySources(ctx, s, r, func(at name.Reference) (*resolvedImage, error) {
		return s.resolveAt(ctx, at)
	})
}

// sourceRef parses a registries.conf source as a reference, reached over
// plain HTTP when the source is insecure (or --use-http).
func (s *Session) sourceRef(src registriesconf.Source) (name.Reference, error) {
	opts := []name.Option{name.StrictValidation}
	if src.Insecure || s.o.useHTTP {
		opts = append(opts, name.Insecure)
	}
	return name.ParseReference(src.Ref, opts...)
}

// pushTarget returns where a push to ref goes: registries.conf's location
// rewrite and blocked flag apply to pushes, its mirrors do not (as in
// containers/image).
func (s *Session) pushTarget(ref name.Reference) (name.Reference, error) {
	conf, _ := confReference(ref)
	src, err := s.regs.PushTarget(conf)
	if err != nil {
		return nil, err
	}
	if src.Registry == nil {
		return ref, nil
	}
	return s.sourceRef(src)
}

// confReference writes n as containers/image normalises references:
// registry host (docker.io for Docker Hub), repository, then ":tag" or
// "@digest". digest reports the latter.
func confReference(n name.Reference) (ref string, digest bool) {
	reg := n.Context().RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	base := reg + "/" + n.Context().RepositoryStr()
	switch v := n.(type) {
	case name.Digest:
		return base + "@" + v.DigestStr(), true
	case name.Tag:
		return base + ":" + v.TagStr(), false
	}
	return base + ":" + n.Identifier(), strings.Contains(n.Identifier(), ":")
}

// sourceError is a failed attempt at one pull source.
type sourceError struct {
	src registriesconf.Source
	err error
}

// sourcesError lists every source tried, in order.
type sourcesError struct {
	tries []sourceError
}

func (e *sourcesError) Error() string {
	var b strings.Builder
	for i, t := range e.tries {
		if i > 0 {
			b.WriteString("; ")
		}
		kind := "from"
		if t.src.Mirror {
			kind = "from mirror"
		}
		fmt.Fprintf(&b, "%s %s (%s): %v", kind, t.src.Ref, t.src.Registry.Pos, t.err)
	}
	return b.String()
}

func (e *sourcesError) Unwrap() []error {
	errs := make([]error, len(e.tries))
	for i, t := range e.tries {
		errs[i] = t.err
	}
	return errs
}
