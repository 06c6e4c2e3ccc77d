package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/sqlite"
)

// Image labels that classify images, as upstream reads them.
const (
	// ConfigsLabel holds the path of the FBC root in a catalog image.
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	// BundlePackageLabel marks a bundle image.
	BundlePackageLabel = "operators.operatorframework.io.bundle.package.v1"
	// DatabaseLabel holds the path of the sqlite database in an index
	// image (upstream's images before file-based catalogs). An image with
	// both this label and ConfigsLabel renders its file-based catalog.
	DatabaseLabel = "operators.operatorframework.io.index.database.v1"
)

// ImageOptions turns registry options into image.Open (or
// image.NewSession) options.
func (r RegistryOptions) ImageOptions() []image.Option {
	return []image.Option{
		image.WithSkipTLSVerify(r.SkipTLSVerify),
		image.WithUseHTTP(r.UseHTTP),
		image.WithCAFile(r.CAFile),
		image.WithCacheDir(r.CacheDir),
		image.WithPlatform(r.Platform),
		image.WithProgress(r.Progress),
		image.WithLimits(r.Limits),
	}
}

// renderImage pulls ref and renders it as a catalog or bundle image, or
// hands out the result prefetchImages computed. It reads the labels first
// and extracts only what the image type needs (the configs directory, or
// manifests/ and metadata/) into a private temporary directory, removed on
// return whatever happens.
// pre holds the images rendered ahead of time and their session (may be
// nil).
func renderImage(ctx context.Context, ref string, opts Options, pre *imageCache) (rendered, error) {
	if pre == nil {
		return renderImageWith(ctx, ref, opts, nil)
	}
	if r, ok := pre.take(ref); ok {
		return r.rendered, r.err
	}
	return renderImageWith(ctx, ref, opts, pre.session)
}

// renderImageWith renders ref, opening it with session when there is one.
func renderImageWith(ctx context.Context, ref string, opts Options, session *image.Session) (rendered, error) {
	var (
		img image.Image
		err error
	)
	if session != nil {
		img, err = session.Open(ctx, ref)
	} else {
		img, err = image.Open(ctx, ref, opts.Registry.ImageOptions()...)
	}
	if err != nil {
		return rendered{}, err
	}
	defer img.Close()
	return renderOpened(ctx, img, ref, opts)
}

// renderOpened renders an opened image.
func renderOpened(ctx context.Context, img image.Image, ref string, opts Options) (rendered, error) {
	labels := img.Labels()

	var (
		paths  []string
		bundle bool
	)
	if dir, ok := labels[ConfigsLabel]; ok {
		if opts.AllowedRefMask&RefDCImage == 0 {
			return rendered{}, fmt.Errorf("cannot render declarative config image: %w", ErrNotAllowed)
		}
		paths = []string{dir}
	} else if _, ok := labels[BundlePackageLabel]; ok {
		if opts.AllowedRefMask&RefBundleImage == 0 {
			return rendered{}, fmt.Errorf("cannot render bundle image: %w", ErrNotAllowed)
		}
		paths, bundle = []string{"manifests", "metadata"}, true
	} else if db, ok := labels[DatabaseLabel]; ok {
		if opts.AllowedRefMask&RefSqliteImage == 0 {
			return rendered{}, fmt.Errorf("cannot render sqlite image: %w", ErrNotAllowed)
		}
		return renderDatabaseImage(ctx, img, ref, db, opts)
	} else {
		return rendered{}, fmt.Errorf("render %q: %s", ref, unknownImageType(labels))
	}

	tmp, err := os.MkdirTemp("", "opm-render-*")
	if err != nil {
		return rendered{}, err
	}
	defer os.RemoveAll(tmp)
	if err := img.Extract(ctx, tmp, paths...); err != nil {
		return rendered{}, err
	}
	return loadExtracted(ctx, tmp, ref, paths[0], bundle, opts)
}

// loadExtracted renders what an image extracted into dir: the bundle at its
// root, or the FBC under rel. Every read goes through an os.Root, so a
// symbolic link in the image cannot lead to a host file, whatever the
// extraction let through.
func loadExtracted(ctx context.Context, dir, ref, rel string, bundle bool, opts Options) (rendered, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return rendered{}, err
	}
	defer root.Close()
	if bundle {
		return renderBundleFS(ctx, root.FS(), ref, opts)
	}
	rel = path.Clean("/" + rel)
	sub, err := root.OpenRoot("." + rel)
	if err == nil {
		defer sub.Close()
		var st os.FileInfo
		if st, err = sub.Stat("."); err == nil && !st.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil {
		return rendered{}, fmt.Errorf("render %q: the image has no directory %s (label %s)", ref, rel, ConfigsLabel)
	}
	cfg, err := declcfg.LoadFS(ctx, sub.FS(), declcfg.WithPathPrefix(ref+":"+rel))
	if err != nil {
		return rendered{}, err
	}
	return rendered{cfg: cfg}, nil
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
	c := &imageCache{session: image.NewSession(opts.Registry.ImageOptions()...)}
	if len(refs) > 1 {
		c.renderedAhead = renderAhead(ctx, refs, 4, func(ctx context.Context, ref string) (rendered, error) {
			return renderImageWith(ctx, ref, opts, c.session)
		})
	}
	return c
}

// renderDatabaseImage renders the sqlite database an index image holds at
// dbPath.
func renderDatabaseImage(ctx context.Context, img image.Image, ref, dbPath string, opts Options) (rendered, error) {
	db, cleanup, err := openDatabaseImage(ctx, img, ref, dbPath, opts)
	if err != nil {
		return rendered{}, err
	}
	defer cleanup()
	cfg, err := db.Render(ctx, opts.Warn)
	return rendered{cfg: cfg}, err
}

// openDatabaseImage opens the sqlite database an index image holds at
// dbPath. The file is extracted into a private directory and opened
// through an os.Root, so a symbolic link in the image cannot lead to a
// host file; cleanup closes the database and removes the directory.
func openDatabaseImage(ctx context.Context, img image.Image, ref, dbPath string, opts Options) (*sqlite.DB, func(), error) {
	rel := strings.TrimPrefix(path.Clean("/"+dbPath), "/")
	if rel == "" {
		return nil, nil, fmt.Errorf("render %q: label %s names no file", ref, DatabaseLabel)
	}
	tmp, err := os.MkdirTemp("", "opm-render-*")
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*sqlite.DB, func(), error) {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	if err := img.Extract(ctx, tmp, rel); err != nil {
		return fail(err)
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return fail(fmt.Errorf("render %q: the image has no file /%s (label %s)", ref, rel, DatabaseLabel))
	}
	defer f.Close()
	db, err := sqlite.OpenFile(ctx, f, ref+":/"+rel, opts.SQLite)
	if err != nil {
		return fail(err)
	}
	// the copy is made: the extracted file can go
	os.RemoveAll(tmp)
	return db, func() { db.Close() }, nil
}

// Index is an index to add bundles to (`opm index add --from-index`): a
// file-based catalog, or the rows of an sqlite database.
type Index struct {
	Catalog  *declcfg.DeclarativeConfig
	Database *sqlite.Contents
}

// OpenIndex reads ref as an index: a file-based catalog directory or
// image (rendered as Render renders it), or an sqlite database file or
// index image (its rows, migrated to the latest schema).
func OpenIndex(ctx context.Context, ref string, opts Options) (*Index, error) {
	opts.AllowedRefMask = RefDCDir | RefDCImage | RefSqliteFile | RefSqliteImage
	st, err := os.Stat(ref)
	if err == nil {
		if !st.IsDir() && sqlite.IsDatabase(ref) {
			db, err := sqlite.Open(ctx, ref, ref, opts.SQLite)
			if err != nil {
				return nil, err
			}
			defer db.Close()
			c, err := db.Contents(ctx)
			return &Index{Database: c}, err
		}
		if st.IsDir() && IsBundleDir(ref) {
			return nil, fmt.Errorf("%s is a bundle directory, not an index", ref)
		}
		cfg, err := Render(ctx, Options{Refs: []string{ref}, AllowedRefMask: RefDCDir, Registry: opts.Registry})
		return &Index{Catalog: cfg}, err
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	img, err := image.Open(ctx, ref, opts.Registry.ImageOptions()...)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	labels := img.Labels()
	_, configs := labels[ConfigsLabel]
	if dbPath, ok := labels[DatabaseLabel]; ok && !configs {
		db, cleanup, err := openDatabaseImage(ctx, img, ref, dbPath, opts)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		c, err := db.Contents(ctx)
		return &Index{Database: c}, err
	}
	if !configs {
		if _, ok := labels[BundlePackageLabel]; ok {
			return nil, fmt.Errorf("%s is a bundle image, not an index", ref)
		}
		return nil, fmt.Errorf("render %q: %s", ref, unknownImageType(labels))
	}
	r, err := renderOpened(ctx, img, ref, opts)
	if err != nil {
		return nil, err
	}
	Normalize(r.cfg)
	return &Index{Catalog: r.cfg}, nil
}

// Normalize does what Render does to each reference's blobs after reading
// them: olm.bundle.object and olm.csv.metadata properties moved to the end,
// relatedImages sorted by image.
func Normalize(cfg *declcfg.DeclarativeConfig) {
	moveBundleObjectsToEnd(cfg)
	sortRelatedImages(cfg)
}
