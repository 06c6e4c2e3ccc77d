package declcfg

import (
	"context"
	"errors"
	"io/fs"
	"runtime"

	"github.com/opmkit/opm/internal/safefs"
)

// Blob is one blob of a catalog file: its normalised form (sorted keys,
// compact JSON, no HTML escaping, numbers as float64, as upstream's
// WalkMetasFS hands out) and, for the four known schemas, its typed form
// (exactly one of the pointers is set; none for other schemas, which only
// have Meta).
type Blob struct {
	Meta        Meta
	Package     *Package
	Channel     *Channel
	Bundle      *Bundle
	Deprecation *Deprecation
}

// WalkFile decodes data, one catalog file named name in positions, exactly
// as the loader does, and calls fn with each blob in document order. It
// fails as the loader fails, at the first bad blob, with a *LoadError.
// A Blob's Meta.Blob is its own allocation; the typed form may alias it.
// Callers that keep only part of each blob can so process a file without
// holding all of its blobs at once.
func WalkFile(data []byte, name string, fn func(Blob) error) error {
	return decodeStream(data, name, blobFunc(name, fn))
}

// blobFunc turns fn into the decoder's callback: each normalised blob is
// typed as the loader types it.
func blobFunc(name string, fn func(Blob) error) docFunc {
	return func(n normalized, line, col int) error {
		pos := Position{File: name, Line: line, Column: col}
		var cfg DeclarativeConfig
		if err := cfg.addBlob(n, pos); err != nil {
			return &LoadError{Pos: pos, Err: err}
		}
		b := Blob{Meta: Meta{Schema: n.schema, Package: n.pkg, Name: n.name, Blob: n.blob, Pos: pos}}
		switch {
		case len(cfg.Packages) == 1:
			b.Package = &cfg.Packages[0]
		case len(cfg.Channels) == 1:
			b.Channel = &cfg.Channels[0]
		case len(cfg.Bundles) == 1:
			b.Bundle = &cfg.Bundles[0]
		case len(cfg.Deprecations) == 1:
			b.Deprecation = &cfg.Deprecations[0]
		}
		return fn(b)
	}
}

// ListFiles lists the files of fsys that LoadFS reads (every file that no
// .indexignore excludes; .indexignore files are read with LoadFS's checks),
// in lexical order.
func ListFiles(ctx context.Context, fsys fs.FS) ([]string, error) {
	if fsys == nil {
		return nil, errors.New("no filesystem to load")
	}
	return listFiles(ctx, safeFS(ctx, fsys), loadOptions{})
}

// WalkFS decodes the given files of fsys (as listed by ListFiles) the way
// LoadFS loads them: the same checks (regular files only, names resolved
// by fsys, the size limit of ctx), the same decoding and errors, the same
// parallelism, and the same cancellation. For each file it calls
// visit(i, blob) for every blob in document order, then end(i) once the
// file is decoded (end may be nil); the calls for one file come from one
// goroutine, those of different files concurrently. When files fail, the
// error is the one of the first bad file, in file order; once ctx is done
// it returns at once (calls in progress are abandoned, and see their
// reads fail).
//
// Positions name files as given, or prefixed (WithPathPrefix); the
// concurrency is WithConcurrency's (default: the number of CPUs).
func WalkFS(ctx context.Context, fsys fs.FS, files []string, visit func(i int, b Blob) error, end func(i int) error, opts ...LoadOption) error {
	if fsys == nil {
		return errors.New("no filesystem to load")
	}
	o := loadOptions{concurrency: runtime.NumCPU()}
	for _, opt := range opts {
		opt(&o)
	}
	sfs := safeFS(ctx, fsys)
	return eachFile(ctx, len(files), max(o.concurrency, 1), func(i int) error {
		name := o.name(files[i])
		f, size, err := openDecode(sfs, files[i], name)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := decodeReader(f, size, 0, name, blobFunc(name, func(b Blob) error { return visit(i, b) })); err != nil {
			return err
		}
		if end != nil {
			return end(i)
		}
		return nil
	})
}

// safeFS returns fsys as a *safefs.FS, wrapping it under ctx's limits when
// it is not one already.
func safeFS(ctx context.Context, fsys fs.FS) *safefs.FS {
	if sfs, ok := fsys.(*safefs.FS); ok {
		return sfs
	}
	return safefs.New(ctx, fsys)
}

// openDecode opens the file p of sfs for decoding, with its size (-1 when
// not known); name is used in the error's position.
func openDecode(sfs *safefs.FS, p, name string) (fs.File, int64, error) {
	f, err := sfs.Open(p)
	if err != nil {
		return nil, 0, &LoadError{Pos: Position{File: name}, Err: err}
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, nil
}
