package jsoncache

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/serve"
)

// Options tune [Write].
type Options struct {
	// FileMode and DirMode are the modes of the files and directories
	// written (default 0640 and 0750, upstream's). They are set exactly,
	// whatever the umask.
	FileMode, DirMode fs.FileMode
	// Mode gives the modes the catalog's and the cache's entries will have
	// where the server reads them, for the digest (nil: as on disk).
	Mode ModeFunc
}

func (o Options) withDefaults() Options {
	if o.FileMode == 0 {
		o.FileMode = 0o640
	}
	if o.DirMode == 0 {
		o.DirMode = 0o750
	}
	return o
}

// Write writes the index x of the catalog in catalogDir as upstream's JSON
// cache into dir: dir/cache (which must not exist yet) and, last,
// dir/digest. It returns the digest. x must be freshly built from the
// catalog (serve.Build, BuildTemp or BuildCache), not loaded from an
// opm-serve cache, which does not keep an empty skips list apart from a
// missing one.
func Write(ctx context.Context, x *serve.Index, catalogDir, dir string, o Options) (string, error) {
	o = o.withDefaults()
	if err := os.MkdirAll(dir, o.DirMode); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if _, err := root.Lstat(DigestFile); err == nil {
		return "", fmt.Errorf("%s: a cache is already there", filepath.Join(dir, DigestFile))
	}
	w := &writer{root: root, dir: dir, o: o, dirs: map[string]bool{}}
	if err := w.mkdir(CacheSubdir); err != nil {
		return "", err
	}
	if err := w.metas(ctx, x); err != nil {
		return "", err
	}
	if err := w.bundles(ctx, x); err != nil {
		return "", err
	}
	pkgs, err := marshalPackages(x)
	if err != nil {
		return "", err
	}
	if err := w.file(path.Join(CacheSubdir, "packages.json"), pkgs); err != nil {
		return "", err
	}
	digest, err := Digest(ctx, catalogDir, dir, o.Mode)
	if err != nil {
		return "", err
	}
	if err := w.file(DigestFile, []byte(digest)); err != nil {
		return "", err
	}
	return digest, nil
}

type writer struct {
	root *os.Root
	dir  string
	o    Options
	dirs map[string]bool
}

// mkdir creates p (relative to the cache directory) with the exact
// directory mode; it must not exist yet.
func (w *writer) mkdir(p string) error {
	if err := w.root.Mkdir(p, w.o.DirMode); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(w.dir, p), safefs.UnwrapPath(err))
	}
	if err := w.root.Chmod(p, w.o.DirMode); err != nil {
		return err
	}
	w.dirs[p] = true
	return nil
}

// mkdirAll creates p's missing directories below cache/.
func (w *writer) mkdirAll(p string) error {
	if w.dirs[p] || p == "." {
		return nil
	}
	if err := w.mkdirAll(path.Dir(p)); err != nil {
		return err
	}
	return w.mkdir(p)
}

// file writes a new file p with the exact file mode.
func (w *writer) file(p string, data []byte) error {
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, w.o.FileMode)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(w.dir, p), safefs.UnwrapPath(err))
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(w.o.FileMode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// metas writes every custom-schema blob, as its normalised JSON and a
// newline, to metas/<schema>/<package>/<h>.json (metas/<schema>/<h>.json
// without a package), h being FNV-1a 64 of the content: identical blobs
// share a file.
func (w *writer) metas(ctx context.Context, x *serve.Index) error {
	for _, k := range x.CustomSchemas() {
		if err := ctx.Err(); err != nil {
			return err
		}
		schema, pkg := k[0], k[1]
		dir := path.Join(CacheSubdir, "metas", schema, pkg)
		blobs, err := x.CustomBlobs(schema, pkg)
		if err != nil {
			return err
		}
		if err := w.mkdirAll(dir); err != nil {
			return err
		}
		written := map[string]bool{}
		for _, b := range blobs {
			content := append(b[:len(b):len(b)], '\n')
			name := path.Join(dir, fnvHex(content)+".json")
			if written[name] {
				continue
			}
			written[name] = true
			if err := w.file(name, content); err != nil {
				return err
			}
		}
	}
	return nil
}

// bundles writes one file per (package, channel, bundle): the bundle as
// upstream stores it, the api.Bundle with its channel entry's replaces,
// skips and skipRange and its objects, marshalled by encoding/json.
func (w *writer) bundles(ctx context.Context, x *serve.Index) error {
	names := map[string]string{}
	for r := range x.Records() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := int32(r)
		pkg, ch, b := x.PackageOf(rec).Name, x.ChannelOf(rec).Name, x.BundleOf(rec).Name
		name := pkg + "_" + ch + "_" + b + ".json"
		who := fmt.Sprintf("package %q, channel %q, bundle %q", pkg, ch, b)
		if strings.Contains(name, "/") {
			return fmt.Errorf("%s: a name with a '/' cannot be stored in upstream's JSON cache", who)
		}
		if other, ok := names[name]; ok {
			return fmt.Errorf("%s and %s: both would be stored as %s in upstream's JSON cache", other, who, name)
		}
		names[name] = who
		ab, err := x.APIBundle(rec, false, true)
		if err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
		data, err := json.Marshal(ab)
		if err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
		if err := w.file(path.Join(CacheSubdir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// The types of packages.json, in upstream's field order: struct fields
// without tags keep their Go names (Channels, Name, Head, Bundles), and
// only the deprecations are omitted when empty.
type (
	pkgJSON struct {
		Name           string    `json:"name"`
		Description    string    `json:"description"`
		Icon           *iconJSON `json:"icon"`
		DefaultChannel string    `json:"defaultChannel"`
		Channels       map[string]chanJSON
		Deprecation    *deprecationJSON `json:"deprecation,omitempty"`
	}
	iconJSON struct {
		Data      []byte `json:"base64data"`
		MediaType string `json:"mediatype"`
	}
	chanJSON struct {
		Name        string
		Head        string
		Bundles     map[string]entryJSON
		Deprecation *deprecationJSON `json:"deprecation,omitempty"`
	}
	entryJSON struct {
		Package  string   `json:"package"`
		Channel  string   `json:"channel"`
		Name     string   `json:"name"`
		Replaces string   `json:"replaces"`
		Skips    []string `json:"skips"`
	}
	deprecationJSON struct {
		Message string `json:"message"`
	}
)

// marshalPackages encodes the package index, keyed by package name.
func marshalPackages(x *serve.Index) ([]byte, error) {
	out := map[string]pkgJSON{}
	for _, p := range x.Packages() {
		pj := pkgJSON{
			Name:           p.Name,
			Description:    p.Description,
			DefaultChannel: p.DefaultChannel,
			Channels:       map[string]chanJSON{},
			Deprecation:    deprecationOf(p.Deprecation),
		}
		if p.Icon != nil {
			pj.Icon = &iconJSON{Data: p.Icon.Data, MediaType: p.Icon.MediaType}
		}
		for _, c := range p.Channels {
			cj := chanJSON{Name: c.Name, Bundles: map[string]entryJSON{}, Deprecation: deprecationOf(c.Deprecation)}
			if c.Head >= 0 {
				cj.Head = x.BundleOf(c.Head).Name
			}
			for _, r := range c.Records {
				rec := x.Record(r)
				name := x.BundleOf(r).Name
				cj.Bundles[name] = entryJSON{Package: p.Name, Channel: c.Name, Name: name, Replaces: rec.Replaces, Skips: rec.Skips}
			}
			pj.Channels[c.Name] = cj
		}
		out[p.Name] = pj
	}
	return json.Marshal(out)
}

func deprecationOf(d serve.Deprecation) *deprecationJSON {
	if !d.Set {
		return nil
	}
	return &deprecationJSON{Message: d.Message}
}
