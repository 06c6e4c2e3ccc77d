package declcfg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/opmkit/opm/internal/ignore"
	"github.com/opmkit/opm/internal/safefs"
)

// IndexIgnoreFilename is the name of the files holding gitignore-style
// patterns of paths the loader skips, scoped to their directory.
const IndexIgnoreFilename = ".indexignore"

// LoadError is a load failure positioned in a file. Err carries upstream's
// wording; Error prefixes it with the position.
type LoadError struct {
	Pos Position
	Err error

	// text, when set, replaces Err's text after the position (a YAML
	// error's document-relative line, for one, is left out: Pos has the
	// file's line).
	text string
}

func (e *LoadError) Error() string {
	msg := e.text
	if msg == "" {
		msg = e.message()
	}
	if !e.Pos.IsValid() {
		return msg
	}
	return e.Pos.String() + ": " + msg
}

func (e *LoadError) Unwrap() error { return e.Err }

// message is Err's text, less the file name when Err is one of safefs's
// refusals of the very file the position names ("f.yaml: file size ... is
// over the limit", not "f.yaml: read f.yaml: file size ...").
func (e *LoadError) message() string {
	if e.Pos.File != "" {
		return safefs.Refusal(e.Err, e.Pos.File).Error()
	}
	return e.Err.Error()
}

// UpstreamMessage returns the text upstream opm prints for err: the
// message of the innermost LoadError without its position.
func UpstreamMessage(err error) string {
	var le *LoadError
	if errors.As(err, &le) {
		return le.message()
	}
	return err.Error()
}

// LoadOption configures a load.
type LoadOption func(*loadOptions)

type loadOptions struct {
	concurrency int
	prefix      string // prepended to file names in positions
}

// WithConcurrency sets how many files are parsed at once (default: the
// number of CPUs).
func WithConcurrency(n int) LoadOption {
	return func(o *loadOptions) { o.concurrency = n }
}

// WithPathPrefix makes positions name files as prefix/relative-path.
func WithPathPrefix(prefix string) LoadOption {
	return func(o *loadOptions) { o.prefix = prefix }
}

// LoadDir loads the FBC rooted at dir. Positions name files relative to the
// current directory (dir/...). Every name is resolved inside dir: a
// symbolic link that leads outside it is an error naming the file.
func LoadDir(ctx context.Context, dir string, opts ...LoadOption) (*DeclarativeConfig, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	if err := NotOCILayout(dir); err != nil {
		return nil, err
	}
	fsys, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	opts = append([]LoadOption{WithPathPrefix(filepath.ToSlash(filepath.Clean(dir)))}, opts...)
	return LoadFS(ctx, fsys, opts...)
}

// ErrOCILayout is matched (errors.Is) by the error of a directory that is
// an OCI image layout, given where a catalog directory was expected.
var ErrOCILayout = errors.New("an OCI image layout, not a catalog directory")

// NotOCILayout returns an error matching ErrOCILayout when dir is an OCI
// image layout (an oci-layout file and an index.json at its root): read
// as a catalog, its blobs would give a baffling parse error. The error
// says to name it oci:DIR, which reads the image in it.
func NotOCILayout(dir string) error {
	for _, name := range []string{"oci-layout", "index.json"} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
	}
	return fmt.Errorf("%s is %w: to read the image it holds, write oci:%s", dir, ErrOCILayout, dir)
}

// LoadFS loads every non-ignored file of fsys, whatever its extension, as
// upstream does. Files are parsed in parallel; the result lists blobs in
// lexical file order, and in document order within a file. When several
// files are bad, the error is the one of the first bad file.
//
// Only regular files are read (a FIFO, device or socket is an error naming
// it), none larger than the limit of ctx (see [WithMaxFileSize]), and the
// load stops when ctx is done.
func LoadFS(ctx context.Context, fsys fs.FS, opts ...LoadOption) (*DeclarativeConfig, error) {
	if fsys == nil {
		return nil, errors.New("no filesystem to load")
	}
	o := loadOptions{concurrency: runtime.NumCPU()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.concurrency < 1 {
		o.concurrency = 1
	}
	sfs := safeFS(ctx, fsys)
	files, err := listFiles(ctx, sfs, o)
	if err != nil {
		return nil, err
	}

	results := make([]*DeclarativeConfig, len(files))
	err = eachFile(ctx, len(files), o.concurrency, func(i int) error {
		cfg, err := loadFile(sfs, files[i], o.name(files[i]))
		results[i] = cfg
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &DeclarativeConfig{}
	for _, r := range results {
		out.Merge(r)
	}
	return out, nil
}

// listFiles lists the files of sfs the loader reads, in lexical order:
// every regular file but .indexignore files and what they ignore.
func listFiles(ctx context.Context, sfs *safefs.FS, o loadOptions) ([]string, error) {
	matcher, err := ignore.New(sfs, IndexIgnoreFilename)
	if err != nil {
		return nil, err
	}
	var files []string
	err = fs.WalkDir(sfs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &LoadError{Pos: Position{File: o.name(p)}, Err: err}
		}
		if d.IsDir() || d.Name() == IndexIgnoreFilename || matcher.Match(p, false) {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return files, nil
}

// eachFile calls fn for the files 0..n-1, at most conc at a time. Once a
// file fails, later files are skipped; the error returned is the one of the
// first file that failed. It returns at once when ctx is done (calls in
// progress are abandoned: their reads stop at the next chunk).
func eachFile(ctx context.Context, n, conc int, fn func(i int) error) error {
	errs := make([]error, n)
	var firstBad atomic.Int64
	firstBad.Store(int64(n))
	done := make(chan struct{})
	go func() {
		defer close(done)
		var g errgroup.Group
		g.SetLimit(conc)
		for i := range n {
			if int64(i) > firstBad.Load() || ctx.Err() != nil {
				break
			}
			g.Go(func() error {
				if int64(i) > firstBad.Load() {
					return nil // a file before it is bad already
				}
				if err := fn(i); err != nil {
					errs[i] = err
					storeMin(&firstBad, int64(i))
				}
				return nil
			})
		}
		g.Wait()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if i := firstBad.Load(); i < int64(n) {
		return errs[i]
	}
	return nil
}

func storeMin(v *atomic.Int64, x int64) {
	for {
		cur := v.Load()
		if x >= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}

func (o loadOptions) name(p string) string {
	if o.prefix == "" || o.prefix == "." {
		return p
	}
	if p == "." {
		return o.prefix
	}
	return path.Join(o.prefix, p)
}

// loadFile reads and decodes the file p of fsys; name is used in positions.
func loadFile(fsys *safefs.FS, p, name string) (*DeclarativeConfig, error) {
	f, size, err := openDecode(fsys, p, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeConfig(f, size, name, 0)
}

// LoadReader loads one stream; name is used in positions. It is
// LoadReaderContext without a context: no cancellation, and the default
// size limit.
func LoadReader(r io.Reader, name string) (*DeclarativeConfig, error) {
	return LoadReaderContext(context.Background(), r, name)
}

// LoadReaderContext loads one stream (standard input, for one); name is
// used in positions. It stops when ctx is done, even while waiting for
// input. No single document or value in the stream may be larger than the
// file size limit of ctx (see WithMaxFileSize), and the whole stream no
// larger than the limit on standard input (see WithMaxStdinSize).
func LoadReaderContext(ctx context.Context, r io.Reader, name string) (*DeclarativeConfig, error) {
	return decodeConfig(safefs.StdinReader(ctx, r), -1, name, safefs.LimitsFrom(ctx).MaxFileSize)
}

// LoadFile loads the single file p of fsys, with the checks of LoadFS.
func LoadFile(ctx context.Context, fsys fs.FS, p string) (*DeclarativeConfig, error) {
	return loadFile(safeFS(ctx, fsys), p, p)
}

// LoadPath loads the single file at path with the checks of LoadFS (a
// regular file, within the size limit of ctx, cancellable); positions name
// path as given. A symbolic link at path itself is followed, since it is
// the file the caller named.
func LoadPath(ctx context.Context, path string) (*DeclarativeConfig, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	sfs, err := safefs.OpenDir(ctx, filepath.Dir(real))
	if err != nil {
		return nil, err
	}
	defer sfs.Close()
	return loadFile(sfs, filepath.Base(real), path)
}

// decodeConfig decodes the stream r (of size sizeHint, or -1) into a
// config. maxWindow, when positive, bounds the bytes held at once.
func decodeConfig(r io.Reader, sizeHint int64, name string, maxWindow int64) (*DeclarativeConfig, error) {
	cfg := &DeclarativeConfig{}
	err := decodeReader(r, sizeHint, maxWindow, name, func(n normalized, line, col int) error {
		pos := Position{File: name, Line: line, Column: col}
		if err := cfg.addBlob(n, pos); err != nil {
			return &LoadError{Pos: pos, Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// addBlob adds one normalised blob, parsing the known schemas into their
// types with upstream's error wording.
func (c *DeclarativeConfig) addBlob(n normalized, pos Position) error {
	switch n.schema {
	case SchemaPackage:
		var p Package
		if err := json.Unmarshal(n.blob, &p); err != nil {
			return fmt.Errorf("parse package: %v", err)
		}
		p.Pos = pos
		c.Packages = append(c.Packages, p)
	case SchemaChannel:
		var ch Channel
		if err := json.Unmarshal(n.blob, &ch); err != nil {
			return fmt.Errorf("parse channel: %v", err)
		}
		ch.Pos = pos
		c.Channels = append(c.Channels, ch)
	case SchemaBundle:
		var b Bundle
		if n.top == nil || !decodeBundleFast(n.blob, n.top, &b) {
			b = Bundle{}
			if err := json.Unmarshal(n.blob, &b); err != nil {
				return fmt.Errorf("parse bundle: %v", err)
			}
		}
		if err := checkBundleObjects(&b); err != nil {
			return err
		}
		b.Pos = pos
		c.Bundles = append(c.Bundles, b)
	case SchemaDeprecations:
		var d Deprecation
		if err := json.Unmarshal(n.blob, &d); err != nil {
			return fmt.Errorf("parse deprecation: %v", err)
		}
		d.Pos = pos
		c.Deprecations = append(c.Deprecations, d)
	case "":
		blob := string(n.blob)
		if n.hasKeys {
			blob += "\n"
		}
		return fmt.Errorf("object '%s' is missing root schema field", blob)
	default:
		c.Others = append(c.Others, Meta{
			Schema:  n.schema,
			Package: n.pkg,
			Name:    n.name,
			Blob:    n.blob,
			Pos:     pos,
		})
	}
	return nil
}
