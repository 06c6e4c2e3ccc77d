package image

import (
	"errors"
	"fmt"
	"io/fs"
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

// PathError is the error for a reference that is written as a filesystem
// path (see [IsPath]) rather than an image reference. It wraps
// fs.ErrNotExist when the path does not exist.
type PathError struct {
	Path string
	Err  error // fs.ErrNotExist, or why the path cannot be used
}

func (e *PathError) Error() string {
	if errors.Is(e.Err, fs.ErrNotExist) {
		if strings.HasPrefix(e.Path, "~") {
			return fmt.Sprintf("%s does not exist (\"~\" is not expanded here: write $HOME)", e.Path)
		}
		return e.Path + " does not exist"
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// IsPath reports whether ref is written as a filesystem path rather than an
// image reference: it starts with "/", "./", "../" or "~", ends with "/",
// is "." or "..", or names an existing file or directory.
func IsPath(ref string) bool {
	if ref == "." || ref == ".." || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "./") ||
		strings.HasPrefix(ref, "../") || strings.HasPrefix(ref, "~") || strings.HasSuffix(ref, "/") {
		return true
	}
	_, err := os.Lstat(ref)
	return err == nil
}

// checkPath returns the *PathError for a reference that is a path: that it
// does not exist, or that an existing file is not an image reference.
func checkPath(ref string) error {
	if _, err := os.Stat(ref); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &PathError{Path: ref, Err: fs.ErrNotExist}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &PathError{Path: ref, Err: err}
	}
	return &PathError{Path: ref, Err: errors.New("a local file or directory, not an image reference (write oci:PATH, oci-archive:PATH or docker-archive:PATH for an image layout or archive)")}
}

// ParseReference parses ref. Registry references must be fully qualified
// (name a registry host, as upstream opm requires): "busybox" is rejected,
// "docker.io/library/busybox" is accepted; a missing tag means "latest".
// A reference written as a path ([IsPath]) is never a registry reference:
// it fails with a *[PathError] at once. insecure allows plain HTTP for the
// registry.
func ParseReference(ref string, insecure bool) (Reference, error) {
	r := Reference{Raw: ref}
	switch {
	case strings.HasPrefix(ref, "oci:"):
		r.Transport = OCILayout
		return parseLocal(r, strings.TrimPrefix(ref, "oci:"), true)
	case strings.HasPrefix(ref, "oci-archive:"):
		r.Transport = OCIArchive
		return parseLocal(r, strings.TrimPrefix(ref, "oci-archive:"), false)
	case strings.HasPrefix(ref, "docker-archive:"):
		r.Transport = DockerArchive
		return parseLocal(r, strings.TrimPrefix(ref, "docker-archive:"), false)
	}
	if IsPath(ref) {
		return r, checkPath(ref)
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

// localExists reports whether p is a directory (wantDir) or a regular
// file.
func localExists(p string, wantDir bool) bool {
	st, err := os.Stat(p)
	if err != nil {
		return false
	}
	if wantDir {
		return st.IsDir()
	}
	return st.Mode().IsRegular()
}

// parseLocal splits "PATH[:TAG|@DIGEST]": the whole string is the path when
// it exists; otherwise a "@sha256:..." suffix is a digest and the text after
// the first ':' that follows an existing path is the tag.
func parseLocal(r Reference, s string, wantDir bool) (Reference, error) {
	exists := func(p string) bool { return localExists(p, wantDir) }
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
			return r, fmt.Errorf("invalid image reference %q: %w", r.Raw, checkLocal(r.Path, wantDir))
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
	return r, fmt.Errorf("invalid image reference %q: %w", r.Raw, checkLocal(s, wantDir))
}

// checkLocal says why the path of a local transport is unusable.
func checkLocal(p string, wantDir bool) error {
	st, err := os.Stat(p)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &PathError{Path: p, Err: fs.ErrNotExist}
	case errors.As(err, &pe):
		return &PathError{Path: p, Err: pe.Err}
	case err != nil:
		return &PathError{Path: p, Err: err}
	case wantDir:
		return &PathError{Path: p, Err: errors.New("not a directory")}
	case st.IsDir():
		return &PathError{Path: p, Err: errors.New("a directory, not an archive file")}
	}
	return &PathError{Path: p, Err: errors.New("not a regular file")}
}
