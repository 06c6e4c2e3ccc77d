package render

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
)

// Image labels that classify images, as upstream reads them.
const (
	// ConfigsLabel holds the path of the FBC root in a catalog image.
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	// BundlePackageLabel marks a bundle image.
	BundlePackageLabel = "operators.operatorframework.io.bundle.package.v1"
	// DatabaseLabel marks a (no longer supported) sqlite index image.
	DatabaseLabel = "operators.operatorframework.io.index.database.v1"
)

// imageOptions turns registry options into image.Open options.
func imageOptions(r RegistryOptions) []image.Option {
	return []image.Option{
		image.WithSkipTLSVerify(r.SkipTLSVerify),
		image.WithUseHTTP(r.UseHTTP),
		image.WithCAFile(r.CAFile),
		image.WithCacheDir(r.CacheDir),
		image.WithPlatform(r.Platform),
		image.WithProgress(r.Progress),
	}
}

// renderImage pulls ref and renders it as a catalog or bundle image, or
// hands out the result prefetchImages computed. It reads the labels first
// and extracts only what the image type needs (the configs directory, or
// manifests/ and metadata/) into a private temporary directory, removed on
// return whatever happens.
// pre holds the images rendered ahead of time and their session (may be
// nil).
func renderImage(ctx context.Context, ref string, opts Options, pre *imageCache) (*declcfg.DeclarativeConfig, error) {
	if pre == nil {
		return renderImageWith(ctx, ref, opts, nil)
	}
	if r, ok := pre.take(ref); ok {
		return r.cfg, r.err
	}
	return renderImageWith(ctx, ref, opts, pre.session)
}

// renderImageWith renders ref, opening it with session when there is one.
func renderImageWith(ctx context.Context, ref string, opts Options, session *image.Session) (*declcfg.DeclarativeConfig, error) {
	var (
		img image.Image
		err error
	)
	if session != nil {
		img, err = session.Open(ctx, ref)
	} else {
		img, err = image.Open(ctx, ref, imageOptions(opts.Registry)...)
	}
	if err != nil {
		return nil, err
	}
	defer img.Close()
	labels := img.Labels()

	var (
		paths  []string
		bundle bool
	)
	if dir, ok := labels[ConfigsLabel]; ok {
		if opts.AllowedRefMask&RefDCImage == 0 {
			return nil, fmt.Errorf("cannot render declarative config image: %w", ErrNotAllowed)
		}
		paths = []string{dir}
	} else if _, ok := labels[BundlePackageLabel]; ok {
		if opts.AllowedRefMask&RefBundleImage == 0 {
			return nil, fmt.Errorf("cannot render bundle image: %w", ErrNotAllowed)
		}
		paths, bundle = []string{"manifests", "metadata"}, true
	} else if _, ok := labels[DatabaseLabel]; ok {
		return nil, fmt.Errorf("render %q: sqlite-based index images are no longer supported, migrate to a file-based catalog: %w", ref, ErrNotAllowed)
	} else {
		return nil, fmt.Errorf("render %q: %s", ref, unknownImageType(labels))
	}

	tmp, err := os.MkdirTemp("", "opm-render-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := img.Extract(ctx, tmp, paths...); err != nil {
		return nil, err
	}
	if bundle {
		return renderBundleRoot(ctx, tmp, ref, opts)
	}
	rel := path.Clean("/" + paths[0])
	root := filepath.Join(tmp, filepath.FromSlash(rel))
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("render %q: the image has no directory %s (label %s)", ref, rel, ConfigsLabel)
	}
	cfg, err := declcfg.LoadDir(ctx, root, declcfg.WithPathPrefix(ref+":"+rel))
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// unknownImageType is upstream's error for images without a usable label.
func unknownImageType(labels map[string]string) string {
	if len(labels) == 0 {
		return "image type could not be determined: image has no labels"
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("image type could not be determined, found labels")
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s=%s", k, labels[k])
	}
	return b.String()
}

// imageCache holds images rendered ahead of Render's in-order loop (each
// result is used once) and the session that opened them.
type imageCache struct {
	session *image.Session
	*renderedAhead
}

// close releases the session; a nil cache is fine.
func (c *imageCache) close() {
	if c != nil {
		c.session.Close()
	}
}

// prefetchImages renders every image reference among opts.Refs
// concurrently (4 at a time: downloads overlap with rendering) with one
// image session, so that connections, auth tokens and blobs are shared, and
// returns the results, which renderImage then hands out in argument order.
// The output and the error reported (the first failing ref in order) are
// the same as without it. It returns nil when there is no image reference
// or the mask rejects images; otherwise call close when the render is done.
func prefetchImages(ctx context.Context, opts Options) *imageCache {
	mask := opts.AllowedRefMask
	if mask == 0 {
		mask = RefAll
	}
	if mask&(RefDCImage|RefBundleImage) == 0 {
		return nil
	}
	refs := uniqueRefs(opts.Refs, func(ref string) bool {
		_, err := os.Stat(ref)
		return err != nil
	})
	if len(refs) == 0 {
		return nil
	}
	opts.AllowedRefMask = mask
	c := &imageCache{session: image.NewSession(imageOptions(opts.Registry)...)}
	if len(refs) > 1 {
		c.renderedAhead = renderAhead(ctx, refs, 4, func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
			return renderImageWith(ctx, ref, opts, c.session)
		})
	}
	return c
}
