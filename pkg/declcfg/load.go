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
	"sync"
	"sync/atomic"

	"github.com/opmkit/opm/internal/ignore"
)

// IndexIgnoreFilename is the name of the files holding gitignore-style
// patterns of paths the loader skips, scoped to their directory.
const IndexIgnoreFilename = ".indexignore"

// LoadError is a load failure positioned in a file. Err carries upstream's
// wording; Error prefixes it with the position.
type LoadError struct {
	Pos Position
	Err error
}

func (e *LoadError) Error() string {
	if !e.Pos.IsValid() {
		return e.Err.Error()
	}
	return e.Pos.String() + ": " + e.Err.Error()
}

func (e *LoadError) Unwrap() error { return e.Err }

// UpstreamMessage returns the text upstream opm prints for err: the
// message of the innermost LoadError without its position.
func UpstreamMessage(err error) string {
	var le *LoadError
	if errors.As(err, &le) {
		return le.Err.Error()
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
// current directory (dir/...).
func LoadDir(ctx context.Context, dir string, opts ...LoadOption) (*DeclarativeConfig, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	opts = append([]LoadOption{WithPathPrefix(filepath.ToSlash(filepath.Clean(dir)))}, opts...)
	return LoadFS(ctx, os.DirFS(dir), opts...)
}

// LoadFS loads every non-ignored file of fsys, whatever its extension, as
// upstream does. Files are parsed in parallel; the result lists blobs in
// lexical file order, and in document order within a file. When several
// files are bad, the error is the one of the first bad file.
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
	matcher, err := ignore.New(fsys, IndexIgnoreFilename)
	if err != nil {
		return nil, err
	}
	var files []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
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
		return nil, err
	}

	results := make([]*DeclarativeConfig, len(files))
	errs := make([]error, len(files))
	var next atomic.Int64
	firstBad := atomic.Int64{}
	firstBad.Store(int64(len(files)))
	var wg sync.WaitGroup
	for w := 0; w < min(o.concurrency, len(files)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // reused across this worker's files: nothing keeps a reference to file bytes
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) || int64(i) > firstBad.Load() {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					storeMin(&firstBad, int64(i))
					return
				}
				cfg, err := loadFileBuf(fsys, files[i], o.name(files[i]), &buf)
				if err != nil {
					errs[i] = err
					storeMin(&firstBad, int64(i))
					continue
				}
				results[i] = cfg
			}
		}()
	}
	wg.Wait()
	if i := firstBad.Load(); i < int64(len(files)) {
		return nil, errs[i]
	}
	out := &DeclarativeConfig{}
	for _, r := range results {
		out.Merge(r)
	}
	return out, nil
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

// loadFile reads and decodes one file of fsys; name is used in positions.
func loadFile(fsys fs.FS, p, name string) (*DeclarativeConfig, error) {
	var buf []byte
	return loadFileBuf(fsys, p, name, &buf)
}

// loadFileBuf is loadFile reading into *buf, which it grows as needed.
// Decoding copies whatever it keeps, so the buffer can be reused.
func loadFileBuf(fsys fs.FS, p, name string, buf *[]byte) (*DeclarativeConfig, error) {
	data, err := readFileInto(fsys, p, *buf)
	if err != nil {
		return nil, &LoadError{Pos: Position{File: name}, Err: err}
	}
	*buf = data[:0]
	return decodeConfig(data, name)
}

// readFileInto reads the file p of fsys into buf's storage.
func readFileInto(fsys fs.FS, p string, buf []byte) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && int64(cap(buf)) < st.Size()+1 {
		buf = make([]byte, 0, st.Size()+1)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// LoadReader loads one stream (a file or standard input); name is used in
// positions.
func LoadReader(r io.Reader, name string) (*DeclarativeConfig, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &LoadError{Pos: Position{File: name}, Err: err}
	}
	return decodeConfig(data, name)
}

// LoadFile loads the single file p of fsys.
func LoadFile(fsys fs.FS, p string) (*DeclarativeConfig, error) {
	return loadFile(fsys, p, p)
}

func decodeConfig(data []byte, name string) (*DeclarativeConfig, error) {
	cfg := &DeclarativeConfig{}
	err := decodeStream(data, name, func(n normalized, line, col int) error {
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
