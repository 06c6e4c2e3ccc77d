// Package dockerfile is the action of `opm generate dockerfile`: it
// generates the Dockerfile that builds a file-based catalog image, byte for
// byte as upstream does, and writes it beside the catalog directory (after
// validating the catalog) without ever overwriting a file.
package dockerfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
)

// DefaultImage is upstream's default base and builder image.
const DefaultImage = "quay.io/operator-framework/opm:latest"

// ConfigsLocationLabel is the image label naming the FBC root in the image.
const ConfigsLocationLabel = "operators.operatorframework.io.index.configs.v1"

// Options describe one Dockerfile.
type Options struct {
	// BaseImage is the final stage's image; "scratch" gives the binary-less
	// variant.
	BaseImage string
	// BuilderImage is the build stage's image; it must contain /bin/opm.
	BuilderImage string
	// IndexDir is the catalog directory's name, relative to the build
	// context (the directory holding the Dockerfile).
	IndexDir string
	// ExtraLabels are written as LABEL lines sorted by key.
	ExtraLabels map[string]string
}

// ErrScratchBuilder is returned for a "scratch" builder image, which cannot
// run opm.
var ErrScratchBuilder = errors.New(`invalid builder image: "scratch"`)

// Check rejects options upstream rejects.
func (o Options) Check() error {
	if o.BuilderImage == "scratch" {
		return ErrScratchBuilder
	}
	return nil
}

// Write writes the Dockerfile for o to w.
func Write(w io.Writer, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	_, err := io.WriteString(w, Render(o))
	return err
}

// Render returns the Dockerfile text for o, as upstream's template produces
// it. It does not check o.
func Render(o Options) string {
	var b strings.Builder
	b.WriteString("# The builder image is expected to contain\n")
	b.WriteString("# /bin/opm (with serve subcommand)\n")
	fmt.Fprintf(&b, "FROM %s as builder\n", o.BuilderImage)
	b.WriteString("\n")
	b.WriteString("# Copy FBC root into image at /configs and pre-populate serve cache\n")
	fmt.Fprintf(&b, "ADD %s /configs\n", o.IndexDir)
	b.WriteString(`RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]` + "\n")
	b.WriteString("\n")
	fmt.Fprintf(&b, "FROM %s\n", o.BaseImage)
	if o.BaseImage != "scratch" {
		b.WriteString("# The base image is expected to contain\n")
		b.WriteString("# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n")
		b.WriteString("\n")
		b.WriteString("# Configure the entrypoint and command\n")
		b.WriteString(`ENTRYPOINT ["/bin/opm"]` + "\n")
		b.WriteString(`CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]` + "\n")
	} else {
		b.WriteString("# OLMv0 CatalogSources that use binary-less images must set:\n")
		b.WriteString("# spec:\n")
		b.WriteString("#   grpcPodConfig:\n")
		b.WriteString("#     extractContent:\n")
		b.WriteString("#       catalogDir: /configs\n")
		b.WriteString("#       cacheDir: /tmp/cache\n")
	}
	b.WriteString("\n")
	b.WriteString("COPY --from=builder /configs /configs\n")
	b.WriteString("COPY --from=builder /tmp/cache /tmp/cache\n")
	b.WriteString("\n")
	b.WriteString("# Set FBC-specific label for the location of the FBC root directory\n")
	b.WriteString("# in the image\n")
	fmt.Fprintf(&b, "LABEL %s=/configs\n", ConfigsLocationLabel)
	if len(o.ExtraLabels) > 0 {
		b.WriteString("\n")
		b.WriteString("# Set other custom labels\n")
		keys := make([]string, 0, len(o.ExtraLabels))
		for k := range o.ExtraLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "LABEL \"%s\"=\"%s\"\n", quote(k), quote(o.ExtraLabels[k]))
		}
	}
	return b.String()
}

// quote escapes the characters that would end a double-quoted Dockerfile
// word early. Upstream writes labels unescaped, which is identical for every
// label without '"' or '\\' and broken for those.
var quoter = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func quote(s string) string { return quoter.Replace(s) }

// ParseLabels parses key=value strings; a later duplicate key wins. A string
// without "=" is an error naming it (upstream's "invalid label"), and so is
// an empty key or a line break, which would inject Dockerfile instructions.
func ParseLabels(labels []string) (map[string]string, error) {
	out := make(map[string]string, len(labels))
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("invalid label %q", l)
		}
		if k == "" {
			return nil, fmt.Errorf("invalid label %q: empty key", l)
		}
		if strings.ContainsAny(l, "\r\n") {
			return nil, fmt.Errorf("invalid label %q: labels cannot contain line breaks", l)
		}
		out[k] = v
	}
	return out, nil
}

// Paths returns the catalog directory's name (as used in ADD) and the path
// of the Dockerfile beside it: <parent>/<name>.Dockerfile.
//
// Upstream splits the cleaned path as given, so "." yields "..Dockerfile"
// inside the catalog itself (which then breaks the catalog). Here a path
// whose last element is "." or ".." is made absolute first, so
// `opm generate dockerfile .` in /x/catalog writes /x/catalog.Dockerfile.
func Paths(root string) (name, dockerfile string, err error) {
	clean := filepath.Clean(root)
	if base := filepath.Base(clean); base == "." || base == ".." {
		abs, err := filepath.Abs(clean)
		if err != nil {
			return "", "", fmt.Errorf("resolving %q: %w", root, err)
		}
		clean = abs
	}
	dir, name := filepath.Split(clean)
	if name == "" {
		return "", "", fmt.Errorf("cannot generate a Dockerfile for %q: the catalog directory needs a parent directory to hold its Dockerfile", root)
	}
	return name, filepath.Join(dir, name+".Dockerfile"), nil
}

// EnsureNotExist returns upstream's error when path exists:
// `path "p": file already exists` (wrapping fs.ErrExist).
func EnsureNotExist(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return fmt.Errorf("path %q: %w", path, fs.ErrExist)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return err
	}
}

// CheckRoot returns an error unless root is an existing directory, with
// upstream's wording for a non-directory.
func CheckRoot(root string) error {
	st, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("provided root path %q is not a directory", root)
	}
	return nil
}

// WriteNew atomically creates path holding data, with mode 0666 minus the
// umask, and fails (wrapping fs.ErrExist) if path already exists: the data
// is written to a temporary file in the same directory, which is then
// hard-linked to path, so a reader never sees a partial file and an
// existing file is never replaced, even one created meanwhile.
func WriteNew(path string, data []byte) error {
	return fsutil.WriteFile(path, data, 0o666, false)
}
