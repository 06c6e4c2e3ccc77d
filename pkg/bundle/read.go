package bundle

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/opmkit/opm/internal/safefs"
)

// ManifestFile is one file of a bundle's manifests/ directory, read and
// decoded as upstream decodes it, and not judged: ParseFS builds a Bundle
// from these, and the bundle checks (pkg/bundle/manifest) report on them.
type ManifestFile struct {
	// File is the slash path relative to the bundle root
	// ("manifests/x.yaml").
	File string
	// Data is the file's content (nil when it could not be read).
	Data []byte
	// Object is the first document, decoded into an unstructured object
	// with apimachinery's number rules; nil when the document is empty or
	// null, or when Err is set.
	Object map[string]any
	// JSON is json.Marshal of Object: sorted keys, compact, HTML escaped,
	// as upstream stores it in olm.bundle.object.
	JSON []byte
	// Err is why the file could not be read or decoded (upstream only logs
	// such files and skips them).
	Err error
}

// SkippedEntry is an entry of manifests/ that is not read as a manifest.
type SkippedEntry struct {
	// File is the slash path relative to the bundle root.
	File string
	// Dir reports a directory; otherwise the name starts with a dot.
	Dir bool
}

// Manifests are the files of a bundle's manifests/ directory.
type Manifests struct {
	// Files are the regular files whose name does not start with a dot,
	// in name order.
	Files []ManifestFile
	// Skipped are the subdirectories and the names starting with a dot,
	// which upstream's renderer skips (and operator-sdk refuses).
	Skipped []SkippedEntry
}

// ReadManifests reads and decodes every file of fsys's manifests/
// directory, several at a time. Files are read through safefs (regular
// files only, within the size limit of ctx, links resolved inside the
// root): a refusal or a cancelled ctx is the error, where a file that
// merely does not read or decode is recorded in its ManifestFile.
func ReadManifests(ctx context.Context, fsys fs.FS) (*Manifests, error) {
	return readManifests(ctx, fsys, true)
}

// ReadManifestObjects is ReadManifests without the JSON encodings of YAML
// files (their ManifestFile.JSON is nil): a third less work, for readers
// of the objects only.
func ReadManifestObjects(ctx context.Context, fsys fs.FS) (*Manifests, error) {
	return readManifests(ctx, fsys, false)
}

func readManifests(ctx context.Context, fsys fs.FS, wantJSON bool) (*Manifests, error) {
	sfs, ok := fsys.(*safefs.FS)
	if !ok {
		sfs = safefs.New(ctx, fsys)
	}
	entries, err := fs.ReadDir(sfs, "manifests")
	if err != nil {
		return nil, fmt.Errorf("error opening manifests directory: %w", err)
	}
	out := &Manifests{}
	for _, e := range entries {
		name := path.Join("manifests", e.Name())
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			out.Skipped = append(out.Skipped, SkippedEntry{File: name, Dir: e.IsDir()})
			continue
		}
		out.Files = append(out.Files, ManifestFile{File: name})
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range out.Files {
		f := &out.Files[i]
		g.Go(func() error {
			data, err := sfs.ReadFile(f.File)
			if err != nil {
				if unsafeRead(ctx, err) {
					return readErr(ctx, f.File, err)
				}
				f.Err = err
				return nil
			}
			f.Data = data
			f.Object, f.JSON, f.Err = decodeObjectJSON(data, wantJSON)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeFirst decodes the first document of data (YAML, or JSON when it
// starts with '{') into v, as upstream decodes bundle metadata files.
func DecodeFirst(data []byte, v any) error { return decodeTyped(data, v) }

// DecodeObject decodes the first document of data into an unstructured
// object and its JSON encoding, as ReadManifests decodes each manifest.
// Both are nil when the document is empty or null.
func DecodeObject(data []byte) (map[string]any, []byte, error) { return decodeObject(data) }
