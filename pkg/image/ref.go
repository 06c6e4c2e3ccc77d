package image

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Transport says where an image lives.
type Transport int

const (
	// Remote is an image in a registry (the default, or "docker://REF").
	Remote Transport = iota
	// OCILayout is an OCI image layout directory ("oci:DIR[:TAG|@DIGEST]").
	OCILayout
	// DockerArchive is a `docker save` tarball ("docker-archive:FILE[:REPO:TAG]").
	DockerArchive
	// OCIArchive is a tarred OCI image layout ("oci-archive:FILE[:TAG|@DIGEST]").
	OCIArchive
)

func (t Transport) String() string {
	switch t {
	case OCILayout:
		return "oci"
	case DockerArchive:
		return "docker-archive"
	case OCIArchive:
		return "oci-archive"
	}
	return "docker"
}

// Reference is a parsed image reference.
type Reference struct {
	// Raw is the reference exactly as given.
	Raw string
	// Transport is where the image lives.
	Transport Transport
	// Name is the registry reference (Remote only).
	Name name.Reference
	// Path is the layout directory or archive file (local transports).
	Path string
	// Tag selects an image in a layout or archive by its ref name or repo
	// tag ("" = the only image).
	Tag string
	// Digest selects an image in a layout or archive by manifest digest.
	Digest string
}

func (r Reference) String() string { return r.Raw }

// ErrNotCanonical is wrapped by errors for registry references that do not
// name their registry host.
var ErrNotCanonical = errors.New("repository name must be canonical")

// ParseReference parses ref. Registry references must be fully qualified
// (name a registry host, as upstream opm requires): "busybox" is rejected,
// "docker.io/library/busybox" is accepted; a missing tag means "latest".
// insecure allows plain HTTP for the registry.
func ParseReference(ref string, insecure bool) (Reference, error) {
	r := Reference{Raw: ref}
	switch {
	case strings.HasPrefix(ref, "oci:"):
		r.Transport = OCILayout
		return parseLocal(r, strings.TrimPrefix(ref, "oci:"), isDir)
	case strings.HasPrefix(ref, "oci-archive:"):
		r.Transport = OCIArchive
		return parseLocal(r, strings.TrimPrefix(ref, "oci-archive:"), isFile)
	case strings.HasPrefix(ref, "docker-archive:"):
		r.Transport = DockerArchive
		return parseLocal(r, strings.TrimPrefix(ref, "docker-archive:"), isFile)
	}
	s := strings.TrimPrefix(ref, "docker://")
	if !hasRegistryHost(s) {
		return r, fmt.Errorf("invalid image reference %q: %w (write it with its registry, e.g. docker.io/library/%s, or check the path: it does not exist)", ref, ErrNotCanonical, s)
	}
	opts := []name.Option{name.StrictValidation}
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var err error
	if !strings.Contains(s, "@") && !hasTag(s) {
		s += ":latest"
	}
	r.Name, err = name.ParseReference(s, opts...)
	if err != nil {
		return r, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	return r, nil
}

// hasRegistryHost reports whether the first path component of s names a
// registry host (has a dot or a port, or is localhost).
func hasRegistryHost(s string) bool {
	i := strings.IndexByte(s, '/')
	if i <= 0 {
		return false
	}
	host := s[:i]
	return strings.ContainsAny(host, ".:") || host == "localhost" || strings.HasPrefix(host, "[")
}

// hasTag reports whether the last path component of s has a ":tag".
func hasTag(s string) bool {
	last := s[strings.LastIndexByte(s, '/')+1:]
	return strings.Contains(last, ":")
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// parseLocal splits "PATH[:TAG|@DIGEST]": the whole string is the path when
// it exists; otherwise a "@sha256:..." suffix is a digest and the text after
// the first ':' that follows an existing path is the tag.
func parseLocal(r Reference, s string, exists func(string) bool) (Reference, error) {
	if s == "" {
		return r, fmt.Errorf("invalid image reference %q: missing path", r.Raw)
	}
	if exists(s) {
		r.Path = s
		return r, nil
	}
	if i := strings.LastIndex(s, "@"); i > 0 && strings.Contains(s[i+1:], ":") {
		r.Path, r.Digest = s[:i], s[i+1:]
		if !exists(r.Path) {
			return r, fmt.Errorf("invalid image reference %q: %s: %w", r.Raw, r.Path, os.ErrNotExist)
		}
		return r, nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && exists(s[:i]) {
			r.Path, r.Tag = s[:i], s[i+1:]
			if r.Tag == "" {
				return r, fmt.Errorf("invalid image reference %q: empty tag", r.Raw)
			}
			return r, nil
		}
	}
	return r, fmt.Errorf("invalid image reference %q: %s: %w", r.Raw, s, os.ErrNotExist)
}
