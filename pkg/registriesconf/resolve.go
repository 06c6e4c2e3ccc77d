package registriesconf

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBlocked is wrapped by the error of a reference whose registry is
// blocked.
var ErrBlocked = errors.New("blocked")

// BlockedError says that a reference matches a blocked registry.
type BlockedError struct {
	Ref      string
	Registry *Registry
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("registry %q is blocked (blocked = true in %s)", e.Registry.Prefix, e.Registry.Pos)
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Source is one place to pull a reference from.
type Source struct {
	// Ref is the reference to pull there: the original one with the
	// matched prefix replaced by the mirror's or registry's location.
	Ref string
	// Insecure allows plain HTTP and unverified TLS for Ref's registry.
	Insecure bool
	// Mirror is true for a [[registry.mirror]], false for the registry's
	// own location (or the unchanged reference).
	Mirror bool
	// Registry is the table that produced the source (nil when no table
	// matched and Ref is the original reference).
	Registry *Registry
}

// Rewritten reports whether the source differs from the original
// reference.
func (s Source) Rewritten(original string) bool { return s.Ref != original }

// matchLen returns how many leading bytes of ref prefix matches, or -1.
// ref is a fully qualified reference (host/path[:tag][@digest]). A plain
// prefix matches when ref equals it or continues with '/', ':' or '@'. A
// "*.domain" prefix matches any host ending in ".domain" and the match
// covers the host.
func matchLen(ref, prefix string) int {
	if strings.HasPrefix(prefix, "*.") {
		host := ref
		if i := strings.IndexAny(ref, "/@"); i >= 0 {
			host = ref[:i]
		}
		// A port is part of the host component but not of the domain.
		domain := host
		if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
			domain = host[:i]
		}
		if strings.HasSuffix(domain, prefix[1:]) {
			return len(domain)
		}
		return -1
	}
	switch {
	case len(ref) < len(prefix) || !strings.HasPrefix(ref, prefix):
		return -1
	case len(ref) == len(prefix):
		return len(prefix)
	}
	switch ref[len(prefix)] {
	case '/', ':', '@':
		return len(prefix)
	}
	return -1
}

// FindRegistry returns the registry table whose prefix matches ref and is
// the longest (the first among equals), or nil. ref must be fully
// qualified (host/repository[:tag][@digest]), as containers/image
// normalises it: Docker Hub is "docker.io" and its official images are
// under "library/".
func (c *Config) FindRegistry(ref string) *Registry {
	if c == nil {
		return nil
	}
	var best *Registry
	bestLen := 0
	for i := range c.Registries {
		r := &c.Registries[i]
		if matchLen(ref, r.Prefix) < 0 {
			continue
		}
		// containers/image ranks wildcard prefixes by their length
		// without the leading '*'.
		l := len(r.Prefix)
		if strings.HasPrefix(r.Prefix, "*.") {
			l--
		}
		if l > bestLen {
			best, bestLen = r, l
		}
	}
	return best
}

// PullSources returns where to pull ref from, in order: the matching
// registry's mirrors (those whose pull-from-mirror setting admits ref),
// then its location. With no matching registry it is ref itself. It fails
// with a *BlockedError when the registry is blocked. digest tells whether
// ref names a manifest digest (mirrors may be restricted to one kind).
func (c *Config) PullSources(ref string, digest bool) ([]Source, error) {
	r := c.FindRegistry(ref)
	if r == nil {
		return []Source{{Ref: ref}}, nil
	}
	if r.Blocked {
		return nil, &BlockedError{Ref: ref, Registry: r}
	}
	n := matchLen(ref, r.Prefix)
	rest := ref[n:]
	var out []Source
	for _, m := range r.Mirrors {
		switch {
		case r.MirrorByDigestOnly && !digest:
			continue
		case m.PullFromMirror == PullFromMirrorDigestOnly && !digest:
			continue
		case m.PullFromMirror == PullFromMirrorTagOnly && digest:
			continue
		}
		out = append(out, Source{Ref: m.Location + rest, Insecure: m.Insecure, Mirror: true, Registry: r})
	}
	return append(out, r.locationSource(ref, n)), nil
}

// PushTarget returns where a push of ref goes: containers/image applies
// the matching registry's location rewrite and blocked flag to pushes, not
// its mirrors. With no matching registry it is ref itself. It fails with a
// *BlockedError when the registry is blocked.
func (c *Config) PushTarget(ref string) (Source, error) {
	r := c.FindRegistry(ref)
	if r == nil {
		return Source{Ref: ref}, nil
	}
	if r.Blocked {
		return Source{}, &BlockedError{Ref: ref, Registry: r}
	}
	return r.locationSource(ref, matchLen(ref, r.Prefix)), nil
}

// locationSource is ref at r's location, n being the length of the prefix
// r matched.
func (r *Registry) locationSource(ref string, n int) Source {
	loc := ref
	if r.Location != "" {
		loc = r.Location + ref[n:]
	}
	return Source{Ref: loc, Insecure: r.Insecure, Registry: r}
}

// InsecureHosts returns the registry hosts (host[:port]) for which a
// location or mirror is marked insecure.
func (c *Config) InsecureHosts() map[string]bool {
	hosts := map[string]bool{}
	if c == nil {
		return hosts
	}
	for _, r := range c.Registries {
		if r.Insecure && r.Location != "" {
			hosts[hostOf(r.Location)] = true
		}
		for _, m := range r.Mirrors {
			if m.Insecure {
				hosts[hostOf(m.Location)] = true
			}
		}
	}
	return hosts
}

func hostOf(loc string) string {
	if i := strings.IndexByte(loc, '/'); i >= 0 {
		return loc[:i]
	}
	return loc
}
