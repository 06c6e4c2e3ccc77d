// Package registriesconf reads containers-registries.conf(5), the file
// podman, skopeo, CRI-O and upstream opm (through containers/image) consult
// before pulling an image, and resolves an image reference to the places it
// is pulled from.
//
// Supported: the version 2 format (`[[registry]]` tables with prefix,
// location, insecure, blocked, mirror-by-digest-only and
// `[[registry.mirror]]` tables with location, insecure and
// pull-from-mirror), the version 1 format (`[registries.insecure]` and
// `[registries.block]` lists), and drop-in files (registries.conf.d/*.conf).
// Keys that only matter to other tools (unqualified-search-registries,
// short-name-mode, aliases, credential-helpers, ...) are accepted and
// ignored, as containers/image ignores keys it does not know.
//
// Resolution follows containers/image: the [[registry]] with the longest
// prefix matching the reference wins (the first one among equals); its
// mirrors are tried in order, then its location; the part of the reference
// after the prefix is appended to the location. A blocked registry refuses
// the pull.
//
// The package does no I/O except in [Load] and [LoadFiles]: parsing and
// resolution are pure functions of their input.
package registriesconf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxFileSize bounds a registries.conf file (or drop-in): real ones are a
// few kilobytes.
const MaxFileSize = 4 << 20

// Position is where a [[registry]] or [[registry.mirror]] table starts: a
// file and a 1-based line (0 when unknown, e.g. inline tables).
type Position struct {
	File string
	Line int
}

func (p Position) String() string {
	switch {
	case p.File == "":
		return "registries.conf"
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Config is a parsed registries.conf, with its drop-ins merged.
type Config struct {
	// Registries are the [[registry]] tables (and the registries of the
	// version 1 format), in file order.
	Registries []Registry
	// Files lists the files read, in order (for messages).
	Files []string
}

// Registry is one [[registry]] table.
type Registry struct {
	// Prefix selects the references the table applies to: a host, a
	// namespace or repository under it, or "*.example.com" (any subdomain).
	// It defaults to Location.
	Prefix string
	// Location replaces Prefix in the references pulled ("" with a
	// wildcard prefix: unchanged).
	Location string
	// Insecure allows plain HTTP and unverified TLS to Location.
	Insecure bool
	// Blocked refuses every pull matching Prefix.
	Blocked bool
	// MirrorByDigestOnly uses the mirrors only for references by digest
	// (deprecated upstream in favour of Mirror.PullFromMirror).
	MirrorByDigestOnly bool
	// Mirrors are tried in order before Location.
	Mirrors []Mirror

	Pos Position
}

// Mirror is one [[registry.mirror]] table.
type Mirror struct {
	Location string
	Insecure bool
	// PullFromMirror is "" or "all" (every reference), "digest-only" or
	// "tag-only".
	PullFromMirror string

	Pos Position
}

// Values of Mirror.PullFromMirror.
const (
	PullFromMirrorAll        = "all"
	PullFromMirrorDigestOnly = "digest-only"
	PullFromMirrorTagOnly    = "tag-only"
)

// Error is a problem in a registries.conf file, positioned when possible.
type Error struct {
	Pos    Position
	Column int
	Err    error
}

func (e *Error) Error() string {
	pos := e.Pos.String()
	if e.Pos.Line > 0 && e.Column > 0 {
		pos = fmt.Sprintf("%s:%d", pos, e.Column)
	}
	return pos + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// File formats, decoded with go-toml. Unknown keys are ignored.
type fileTOML struct {
	Registries []registryTOML `toml:"registry"`
	V1         *struct {
		Search   v1List `toml:"search"`
		Insecure v1List `toml:"insecure"`
		Block    v1List `toml:"block"`
	} `toml:"registries"`
	// Version 2 keys that must not be mixed with the version 1 format.
	UnqualifiedSearch []string `toml:"unqualified-search-registries"`
}

type v1List struct {
	Registries []string `toml:"registries"`
}

type registryTOML struct {
	Prefix             string       `toml:"prefix"`
	Location           string       `toml:"location"`
	Insecure           bool         `toml:"insecure"`
	Blocked            bool         `toml:"blocked"`
	MirrorByDigestOnly bool         `toml:"mirror-by-digest-only"`
	Mirrors            []mirrorTOML `toml:"mirror"`
}

type mirrorTOML struct {
	Location       string `toml:"location"`
	Insecure       bool   `toml:"insecure"`
	PullFromMirror string `toml:"pull-from-mirror"`
}

// Parse parses one registries.conf file (or drop-in); file names it in
// positions and errors. The result is validated as containers/image does.
func Parse(data []byte, file string) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Pos: Position{File: file}, Err: fmt.Errorf("file larger than %d bytes", MaxFileSize)}
	}
	if err := checkNesting(data, file); err != nil {
		return nil, err
	}
	var f fileTOML
	if err := toml.Unmarshal(data, &f); err != nil {
		e := &Error{Pos: Position{File: file}, Err: err}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			e.Pos.Line, e.Column = de.Position()
		}
		return nil, e
	}
	regLines, mirLines := tableLines(data)
	cfg := &Config{Files: []string{file}}

	if f.V1 != nil {
		if len(f.Registries) > 0 || len(f.UnqualifiedSearch) > 0 {
			return nil, &Error{Pos: Position{File: file}, Err: errors.New("mixing the version 1 format ([registries.*]) with the version 2 format ([[registry]], unqualified-search-registries) is not supported")}
		}
		return fromV1(cfg, f, file)
	}

	for i, rt := range f.Registries {
		r := Registry{
			Prefix:             rt.Prefix,
			Location:           rt.Location,
			Insecure:           rt.Insecure,
			Blocked:            rt.Blocked,
			MirrorByDigestOnly: rt.MirrorByDigestOnly,
			Pos:                Position{File: file},
		}
		if i < len(regLines) {
			r.Pos.Line = regLines[i]
		}
		for j, mt := range rt.Mirrors {
			m := Mirror{Location: mt.Location, Insecure: mt.Insecure, PullFromMirror: mt.PullFromMirror, Pos: Position{File: file}}
			if i < len(mirLines) && j < len(mirLines[i]) {
				m.Pos.Line = mirLines[i][j]
			}
			r.Mirrors = append(r.Mirrors, m)
		}
		cfg.Registries = append(cfg.Registries, r)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// fromV1 converts the version 1 lists: every insecure or blocked registry
// becomes a [[registry]] with that location.
func fromV1(cfg *Config, f fileTOML, file string) (*Config, error) {
	byLoc := map[string]int{}
	add := func(loc string) *Registry {
		if i, ok := byLoc[loc]; ok {
			return &cfg.Registries[i]
		}
		byLoc[loc] = len(cfg.Registries)
		cfg.Registries = append(cfg.Registries, Registry{Prefix: loc, Location: loc, Pos: Position{File: file}})
		return &cfg.Registries[len(cfg.Registries)-1]
	}
	for _, loc := range f.V1.Insecure.Registries {
		add(loc).Insecure = true
	}
	for _, loc := range f.V1.Block.Registries {
		add(loc).Blocked = true
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// validate normalises locations and prefixes and checks them, with
// containers/image's rules.
func (c *Config) validate() error {
	for i := range c.Registries {
		r := &c.Registries[i]
		fail := func(format string, args ...any) error {
			return &Error{Pos: r.Pos, Err: fmt.Errorf(format, args...)}
		}
		loc, err := parseLocation(r.Location)
		if err != nil {
			return fail("%v", err)
		}
		r.Location = loc
		if r.Prefix == "" {
			if r.Location == "" {
				return fail("invalid location: cannot be empty")
			}
			r.Prefix = r.Location
		}
		if err := checkPrefix(r.Prefix); err != nil {
			return fail("%v", err)
		}
		if r.Location == "" && !strings.HasPrefix(r.Prefix, "*.") {
			return fail("invalid location for prefix %q: cannot be empty", r.Prefix)
		}
		for j := range r.Mirrors {
			m := &r.Mirrors[j]
			mfail := func(format string, args ...any) error {
				pos := m.Pos
				if pos.Line == 0 {
					pos = r.Pos
				}
				return &Error{Pos: pos, Err: fmt.Errorf(format, args...)}
			}
			loc, err := parseLocation(m.Location)
			if err != nil {
				return mfail("mirror: %v", err)
			}
			if loc == "" {
				return mfail("mirror of %q: location is unset", r.Prefix)
			}
			m.Location = loc
			switch m.PullFromMirror {
			case "", PullFromMirrorAll, PullFromMirrorDigestOnly, PullFromMirrorTagOnly:
			default:
				return mfail("mirror %q: unsupported pull-from-mirror value %q (want %q, %q or %q)", m.Location, m.PullFromMirror, PullFromMirrorAll, PullFromMirrorDigestOnly, PullFromMirrorTagOnly)
			}
			if r.MirrorByDigestOnly && m.PullFromMirror != "" {
				return mfail("mirror %q: cannot set mirror-by-digest-only for the registry and pull-from-mirror for the mirror at the same time", m.Location)
			}
		}
	}
	// A location named by several tables must agree on insecure and
	// blocked.
	first := map[string]*Registry{}
	for i := range c.Registries {
		r := &c.Registries[i]
		if r.Location == "" {
			continue
		}
		o, ok := first[r.Location]
		if !ok {
			first[r.Location] = r
			continue
		}
		if o.Insecure != r.Insecure {
			return &Error{Pos: r.Pos, Err: fmt.Errorf("registry %q is defined multiple times with conflicting 'insecure' settings (first at %s)", r.Location, o.Pos)}
		}
		if o.Blocked != r.Blocked {
			return &Error{Pos: r.Pos, Err: fmt.Errorf("registry %q is defined multiple times with conflicting 'blocked' settings (first at %s)", r.Location, o.Pos)}
		}
	}
	return nil
}

// parseLocation trims trailing slashes and rejects URL schemes.
func parseLocation(s string) (string, error) {
	t := strings.TrimRight(s, "/")
	if strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") {
		return "", fmt.Errorf("invalid location %q: URI schemes are not supported", s)
	}
	if strings.ContainsAny(t, " \t\n\r") {
		return "", fmt.Errorf("invalid location %q: contains white space", s)
	}
	return t, nil
}

// checkPrefix accepts a host[:port][/path] prefix or "*.domain".
func checkPrefix(p string) error {
	if strings.ContainsAny(p, " \t\n\r") {
		return fmt.Errorf("invalid prefix %q: contains white space", p)
	}
	if strings.HasPrefix(p, "*.") {
		if len(p) == 2 || strings.ContainsAny(p[2:], "*/:@") {
			return fmt.Errorf("invalid prefix %q: a wildcard prefix is *.domain, with no port, path or other wildcard", p)
		}
		return nil
	}
	if strings.Contains(p, "*") {
		return fmt.Errorf("invalid prefix %q: a wildcard is only allowed as a leading \"*.\"", p)
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("invalid prefix %q: must start with a registry host", p)
	}
	return nil
}

// tableLines returns the line of every [[registry]] header and, per
// registry, of its [[registry.mirror]] headers. Registries written as
// inline tables are not seen; the caller uses the lines only when they
// line up.
func tableLines(data []byte) (regs []int, mirrors [][]int) {
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		n := p.Expression()
		if n.Kind != unstable.ArrayTable {
			continue
		}
		var parts []string
		var first *unstable.Node
		it := n.Key()
		for it.Next() {
			k := it.Node()
			if first == nil {
				first = k
			}
			parts = append(parts, string(k.Data))
		}
		if first == nil {
			continue
		}
		line := lineOf(data, first)
		switch strings.Join(parts, ".") {
		case "registry":
			regs = append(regs, line)
			mirrors = append(mirrors, nil)
		case "registry.mirror":
			if len(mirrors) > 0 {
				mirrors[len(mirrors)-1] = append(mirrors[len(mirrors)-1], line)
			}
		}
	}
	if p.Error() != nil {
		return nil, nil
	}
	return regs, mirrors
}

func lineOf(data []byte, n *unstable.Node) int {
	off := int(n.Raw.Offset)
	if off > len(data) {
		return 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// merge applies a drop-in over c: a registry with the prefix of an
// existing one replaces it, others are appended.
func (c *Config) merge(d *Config) {
	c.Files = append(c.Files, d.Files...)
	for _, r := range d.Registries {
		replaced := false
		for i := range c.Registries {
			if c.Registries[i].Prefix == r.Prefix {
				c.Registries[i] = r
				replaced = true
				break
			}
		}
		if !replaced {
			c.Registries = append(c.Registries, r)
		}
	}
}
