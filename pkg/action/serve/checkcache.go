package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/serve"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// Checking a catalog's serve caches against the catalog.
//
// A catalog image carries the catalog at /configs, which reviewers, render
// and catalogd read, and serve caches the image's server answers from.
// Their digests and seals are not keyed, so an image can be re-packed with
// a cache built from another catalog and digests recomputed to match:
// /configs then shows one catalog while the server serves another.
// CheckCache builds the caches from the catalog again and compares.

// CacheFinding is one problem CheckCache found.
type CacheFinding struct {
	// NotChecked marks a cache that could not be checked (another opm's,
	// upstream's pogreb.v1); otherwise the cache does not hold what the
	// catalog does.
	NotChecked bool
	Message    string
}

// CheckCacheOptions say what CheckCache compares.
type CheckCacheOptions struct {
	// Catalog is the catalog directory.
	Catalog string
	// CacheDir is the cache directory, as `opm serve --cache-dir` takes it:
	// it may hold this opm's opm-serve/, upstream's JSON cache (cache/ and
	// digest) and upstream's pogreb.v1/.
	CacheDir string
	// Name and CatalogName are how messages name the cache directory and
	// the catalog (default CacheDir and Catalog), e.g. their paths inside
	// an image.
	Name, CatalogName string
	// TempDir is where the caches are rebuilt ("" = the system's).
	TempDir string
}

// CheckCache checks that the serve caches in o.CacheDir hold what the
// catalog in o.Catalog does: this opm's own (opm-serve/, when this opm
// version wrote it) is loaded, checked as `opm serve
// --cache-enforce-integrity` checks it, and compared with the index built
// from the catalog; upstream's JSON cache is written again from the catalog
// and compared file by file, and its digest checked as upstream's server
// checks it. A catalog the server refuses leaves the caches not checked (a
// finding); failures to read are errors; no cache at all is no finding.
func CheckCache(ctx context.Context, o CheckCacheOptions) ([]CacheFinding, error) {
	if o.Name == "" {
		o.Name = o.CacheDir
	}
	if o.CatalogName == "" {
		o.CatalogName = o.Catalog
	}
	if st, err := os.Stat(o.CacheDir); err != nil || !st.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a directory", o.CacheDir)
		}
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	fsys, err := safefs.OpenDir(ctx, o.Catalog)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	c := &cacheChecker{o: o, fsys: fsys}
	defer c.close()
	for _, check := range []func(context.Context) error{c.opmServe, c.upstreamJSON} {
		if err := check(ctx); err != nil {
			var ie *serve.InvalidCatalogError
			var le *declcfg.LoadError
			if !errors.As(err, &ie) && !errors.As(err, &le) {
				return nil, err
			}
			c.notChecked("%s: not checked: the server refuses the catalog: %v", o.Name, err)
			return c.out, nil
		}
	}
	if _, err := os.Lstat(filepath.Join(o.CacheDir, "pogreb.v1")); err == nil {
		c.notChecked("%s/pogreb.v1: upstream's pogreb cache, which this opm cannot read: it was not checked", o.Name)
	}
	return c.out, nil
}

type cacheChecker struct {
	o     CheckCacheOptions
	fsys  fs.FS
	out   []CacheFinding
	built *serve.Index // the index of the catalog, built once
	http  bool         // built with the HTTP API's data
}

func (c *cacheChecker) close() {
	if c.built != nil {
		c.built.Close()
	}
}

func (c *cacheChecker) mismatch(format string, args ...any) {
	c.out = append(c.out, CacheFinding{Message: fmt.Sprintf(format, args...)})
}

func (c *cacheChecker) notChecked(format string, args ...any) {
	c.out = append(c.out, CacheFinding{NotChecked: true, Message: fmt.Sprintf(format, args...)})
}

// index returns the index of the catalog, built with the HTTP API's data
// when http.
func (c *cacheChecker) index(ctx context.Context, http bool) (*serve.Index, error) {
	if c.built != nil && (c.http || !http) {
		return c.built, nil
	}
	c.close()
	x, _, err := serve.BuildTemp(ctx, c.fsys, c.o.TempDir, serve.BuildOptions{Name: c.o.CatalogName, HTTP: http})
	if err != nil {
		return nil, err
	}
	c.built, c.http = x, http
	return x, nil
}

// opmServe checks this opm's cache.
func (c *cacheChecker) opmServe(ctx context.Context) error {
	name := path.Join(c.o.Name, serve.CacheSubdir)
	meta, err := serve.ReadCacheMeta(c.o.CacheDir)
	var me *serve.CacheMismatchError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := os.Lstat(filepath.Join(c.o.CacheDir, serve.CacheSubdir)); serr == nil {
			c.mismatch("%s: %v", name, err)
		}
		return nil
	case errors.As(err, &me):
		c.mismatch("%s: %v", name, err)
		return nil
	case err != nil:
		return err
	}
	if meta.Format != serve.CacheFormat || meta.OpmVersion != opmVersion() {
		c.notChecked("%s: written by opm %s (cache format %s); this is opm %s (%s), which cannot tell what that opm serves from it: check it with opm %s",
			name, meta.OpmVersion, meta.Format, opmVersion(), serve.CacheFormat, meta.OpmVersion)
		return nil
	}
	cache, err := serve.OpenCache(ctx, c.o.CacheDir, cacheMeta("", meta.HTTP))
	if errors.As(err, &me) {
		c.mismatch("%s: %v", name, err)
		return nil
	}
	if err != nil {
		return err
	}
	defer cache.Close()
	digest, err := catalogDigest(ctx, c.fsys, c.o.CatalogName)
	if err != nil {
		return err
	}
	if err := cache.Check(digest); err != nil {
		c.mismatch("%s was built from another catalog: %v", name, err)
		return nil
	}
	x, err := cache.Load()
	if errors.As(err, &me) {
		c.mismatch("%s: %v", name, err)
		return nil
	}
	if err != nil {
		return err
	}
	defer x.Close()
	built, err := c.index(ctx, meta.HTTP)
	if err != nil {
		return err
	}
	d, err := serve.Compare(ctx, x, built)
	if err != nil {
		return err
	}
	c.differences(name, d)
	return nil
}

// differences reports each difference d found between the cache named
// what and the catalog, one finding each.
func (c *cacheChecker) differences(what string, d *serve.Differences) {
	for _, s := range d.List {
		c.mismatch("%s does not hold what the catalog does: %s", what, s)
	}
	if d.More == 1 {
		c.mismatch("%s does not hold what the catalog does: 1 more difference", what)
	} else if d.More > 1 {
		c.mismatch("%s does not hold what the catalog does: %d more differences", what, d.More)
	}
}

// upstreamJSON checks upstream's JSON cache: written again from the
// catalog, compared file by file, and its digest checked.
func (c *cacheChecker) upstreamJSON(ctx context.Context) error {
	_, errC := os.Lstat(filepath.Join(c.o.CacheDir, jsoncache.CacheSubdir))
	_, errD := os.Lstat(filepath.Join(c.o.CacheDir, jsoncache.DigestFile))
	switch {
	case errC != nil && errD != nil:
		return nil
	case errC != nil:
		c.mismatch("%s: upstream's JSON cache has a %s file but no %s/ directory", c.o.Name, jsoncache.DigestFile, jsoncache.CacheSubdir)
		return nil
	case errD != nil:
		c.mismatch("%s: upstream's JSON cache has a %s/ directory but no %s file (upstream's server rebuilds it, or refuses to start)", c.o.Name, jsoncache.CacheSubdir, jsoncache.DigestFile)
		return nil
	}
	x, err := c.index(ctx, false)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.o.TempDir, "opm-check-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	want := filepath.Join(tmp, "cache")
	if _, err := jsoncache.Write(ctx, x, c.o.Catalog, want, jsoncache.Options{}); err != nil {
		return err
	}
	d, err := compareTrees(ctx, filepath.Join(c.o.CacheDir, jsoncache.CacheSubdir), filepath.Join(want, jsoncache.CacheSubdir))
	if err != nil {
		return err
	}
	c.differences(path.Join(c.o.Name, jsoncache.CacheSubdir)+" (upstream's JSON cache)", d)
	if err := jsoncache.Check(ctx, c.o.Catalog, c.o.CacheDir); err != nil {
		if !errors.Is(err, jsoncache.ErrMismatch) {
			return err
		}
		c.mismatch("%s: upstream's server refuses to start on it (%v)", path.Join(c.o.Name, jsoncache.DigestFile), err)
	}
	return nil
}

// treeEntry is an entry of a directory tree: its type and, for a regular
// file, its size.
type treeEntry struct {
	mode fs.FileMode
	size int64
}

// listTree lists the entries below dir (links not followed).
func listTree(ctx context.Context, root *os.Root) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = treeEntry{mode: info.Mode().Type(), size: info.Size()}
		return nil
	})
	return out, err
}

// compareTrees compares the files below have (the cache being checked)
// with those below want (written from the catalog): names, types and
// contents.
func compareTrees(ctx context.Context, have, want string) (*serve.Differences, error) {
	rh, err := os.OpenRoot(have)
	if err != nil {
		return nil, err
	}
	defer rh.Close()
	rw, err := os.OpenRoot(want)
	if err != nil {
		return nil, err
	}
	defer rw.Close()
	th, err := listTree(ctx, rh)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", have, err)
	}
	tw, err := listTree(ctx, rw)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(th)+len(tw))
	for p := range th {
		names = append(names, p)
	}
	for p := range tw {
		if _, ok := th[p]; !ok {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	d := &serve.Differences{}
	add := d.Add
	for _, p := range names {
		eh, inH := th[p]
		ew, inW := tw[p]
		switch {
		case !inW:
			add("%s: in the cache, not in one built from the catalog", p)
		case !inH:
			add("%s: missing (a cache built from the catalog has it)", p)
		case eh.mode != ew.mode:
			add("%s: %s, not %s", p, safefs.Kind(eh.mode), safefs.Kind(ew.mode))
		case ew.mode.IsRegular() && eh.size != ew.size:
			add("%s: its content differs from a cache built from the catalog (%d bytes, not %d)", p, eh.size, ew.size)
		case ew.mode.IsRegular():
			same, err := sameFile(ctx, rh, rw, p)
			if err != nil {
				return nil, err
			}
			if !same {
				add("%s: its content differs from a cache built from the catalog", p)
			}
		}
	}
	return d, nil
}

// sameFile compares the file p of two trees.
func sameFile(ctx context.Context, a, b *os.Root, p string) (bool, error) {
	fa, _, err := safefs.OpenRegular(a, p)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, _, err := safefs.OpenRegular(b, p)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	return fsutil.SameContent(ctx, fa, fb)
}

// ImageCacheDir returns the cache directory a catalog image's command
// serves from: the value of serve's --cache-dir in its entrypoint and
// command, or "" when it names none.
func ImageCacheDir(entrypoint, cmd []string) string {
	args := append(slices.Clone(entrypoint), cmd...)
	dir := ""
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--cache-dir="):
			dir = strings.TrimPrefix(a, "--cache-dir=")
		case a == "--cache-dir" && i+1 < len(args):
			dir = args[i+1]
		}
	}
	return dir
}

// CheckImageCache checks the serve caches of the catalog image ref (see
// CheckCache): its configs directory (label
// operators.operatorframework.io.index.configs.v1) and the cache directory
// its command serves from (--cache-dir; cacheDir, when not "", names
// another) are extracted, with their modes, into a temporary directory. An
// image whose command names no cache directory, or without that directory,
// has nothing to check: no finding.
func CheckImageCache(ctx context.Context, ref, cacheDir string, reg render.RegistryOptions, tmpDir string) ([]CacheFinding, error) {
	img, err := image.Open(ctx, ref, append(reg.ImageOptions(), image.WithFileModes())...)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	configs, ok := img.Labels()[render.ConfigsLabel]
	if !ok {
		return nil, fmt.Errorf("image %q is not a file-based catalog image: it has no label %s", ref, render.ConfigsLabel)
	}
	if cacheDir == "" {
		cacheDir = ImageCacheDir(img.Command())
	}
	if cacheDir == "" {
		return nil, nil
	}
	configs, cacheDir = path.Clean("/"+configs), path.Clean("/"+cacheDir)
	tmp, err := os.MkdirTemp(tmpDir, "opm-check-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, err
	}
	if err := img.Extract(ctx, root, configs, cacheDir); err != nil {
		return nil, fmt.Errorf("extracting %s and %s from %q: %w", configs, cacheDir, ref, err)
	}
	local := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	if st, err := os.Stat(local(configs)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("image %q has no directory %s (label %s)", ref, configs, render.ConfigsLabel)
	}
	if st, err := os.Stat(local(cacheDir)); err != nil || !st.IsDir() {
		// The server builds its cache there at start-up: it serves the
		// catalog.
		return nil, nil
	}
	return CheckCache(ctx, CheckCacheOptions{Catalog: local(configs), CacheDir: local(cacheDir), Name: cacheDir, CatalogName: configs, TempDir: tmp})
}
