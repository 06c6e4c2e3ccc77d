package serve

import (
	"context"
	"path/filepath"
	"time"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/serve"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// ImageCacheOptions describe the serve cache pre-built into a catalog
// image.
type ImageCacheOptions struct {
	// Catalog is the catalog directory, as it goes into the image.
	Catalog string
	// Dir is the directory the cache is written to (created if needed; it
	// must hold no cache yet).
	Dir string
	// OpmServe also writes this opm's own cache (opm-serve/, what
	// `opm serve --cache-dir DIR --cache-only` writes), which only this very
	// opm version loads. Upstream's JSON cache (cache/ and digest) is always
	// written.
	OpmServe bool
	// Created is the time the opm-serve cache records (the image's build
	// time, so that the image is reproducible).
	Created time.Time
	// Mode gives the modes the catalog and the cache will have in the image
	// (an image layer normalises them), over which upstream's digest is
	// computed.
	Mode jsoncache.ModeFunc
}

// ImageCache describes a cache written by BuildImageCache.
type ImageCache struct {
	// JSONDigest is the digest of upstream's JSON cache.
	JSONDigest string
	// OpmServe reports whether this opm's own cache was written.
	OpmServe bool
	Stats    serve.Stats
}

// BuildImageCache indexes the catalog once (as `opm serve` does, refusing
// what it refuses) and writes the cache a catalog image carries: this
// opm's own (with OpmServe; the same code as `opm serve --cache-dir DIR
// --cache-only`) and upstream's JSON cache, which upstream's
// `opm serve CATALOG --cache-dir DIR` loads after checking its digest. The
// files are parsed one at a time, so that the same catalog always gives
// the same bytes.
func BuildImageCache(ctx context.Context, o ImageCacheOptions) (*ImageCache, error) {
	// Read as `opm serve` reads a catalog: names resolved inside it,
	// regular files only, within --max-file-size, cancellable.
	fsys, err := safefs.OpenDir(ctx, o.Catalog)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	name := filepath.ToSlash(filepath.Clean(o.Catalog))
	bopts := serve.BuildOptions{Name: name, Concurrency: 1}
	var x *serve.Index
	if o.OpmServe {
		digest, err := catalogDigest(ctx, fsys, name)
		if err != nil {
			return nil, err
		}
		meta := cacheMeta(digest, false)
		meta.Created = o.Created.UTC()
		if x, err = serve.BuildCache(ctx, fsys, o.Dir, meta, bopts); err != nil {
			return nil, err
		}
	} else {
		if x, _, err = serve.BuildTemp(ctx, fsys, "", bopts); err != nil {
			return nil, err
		}
	}
	defer x.Close()
	digest, err := jsoncache.Write(ctx, x, o.Catalog, o.Dir, jsoncache.Options{FileMode: 0o644, DirMode: 0o755, Mode: o.Mode})
	if err != nil {
		return nil, err
	}
	return &ImageCache{JSONDigest: digest, OpmServe: o.OpmServe, Stats: x.Stats()}, nil
}
