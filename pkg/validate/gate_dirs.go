package validate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// maxDirEntries bounds the entries DirectoryChecks walks.
const maxDirEntries = 1 << 20

// DirectoryChecks runs the release gate's rules about a catalog
// directory's layout: at least one subdirectory (package-directory-missing,
// as Konflux expects a directory per package), and no directory that
// holds no blob (directory-empty): empty, or holding only files that
// .indexignore lists or that hold no blob. fsys is the catalog directory,
// name how findings name it, and blobFiles the files (slash paths in fsys)
// that gave the catalog a blob. Only the topmost of nested empty
// directories is reported.
func DirectoryChecks(ctx context.Context, fsys fs.FS, name string, blobFiles []string, o *GateOptions) ([]Finding, error) {
	if !o.on(CodeDirectoryEmpty) && !o.on(CodePackageDirMissing) {
		return nil, nil
	}
	full := map[string]bool{} // directories with a blob below them
	for _, f := range blobFiles {
		for dir := path.Dir(f); !full[dir]; dir = path.Dir(dir) {
			full[dir] = true
			if dir == "." {
				break
			}
		}
	}
	files := map[string]int{} // directory -> files directly in it
	var dirs []string
	topLevel := 0
	n := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; n > maxDirEntries {
			return fmt.Errorf("%s: more than %d entries", name, maxDirEntries)
		}
		if d.IsDir() {
			if p != "." {
				dirs = append(dirs, p)
				if !strings.Contains(p, "/") {
					topLevel++
				}
			}
			return nil
		}
		files[path.Dir(p)]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	at := func(p string) string {
		if name == "" || name == "." {
			return p
		}
		return path.Join(name, p)
	}
	var out []Finding
	if o.on(CodePackageDirMissing) && topLevel == 0 {
		out = append(out, Finding{Severity: o.Levels[CodePackageDirMissing], Code: CodePackageDirMissing, File: name, ref: -1,
			Message: fmt.Sprintf("catalog directory %s has no subdirectory", name),
			Help:    "put each package's blobs in a directory of its own (" + path.Join(name, "<package>") + "/catalog.yaml): Konflux's validate-fbc refuses a catalog without"})
	}
	if !o.on(CodeDirectoryEmpty) {
		return out, nil
	}
	sort.Strings(dirs)
	reported := ""
	for _, d := range dirs {
		if full[d] || reported != "" && strings.HasPrefix(d, reported+"/") {
			continue
		}
		reported = d
		what := "it is empty"
		switch k := countBelow(files, d); {
		case k == 1:
			what = "its one file is listed in .indexignore or holds no blob"
		case k > 1:
			what = fmt.Sprintf("its %d files are listed in .indexignore or hold no blob", k)
		}
		out = append(out, Finding{Severity: o.Levels[CodeDirectoryEmpty], Code: CodeDirectoryEmpty, File: at(d), ref: -1,
			Message: fmt.Sprintf("directory %s holds no blob: %s", at(d), what),
			Help:    "remove the directory, or add the package's blobs to it (Konflux's validate-fbc refuses an empty package directory)"})
	}
	return out, nil
}

// DirectoriesNotChecked is what the directory rules say when the catalog
// is not a directory (a file, standard input, an image): that they did not
// run.
func DirectoriesNotChecked(o *GateOptions) []Finding {
	var codes []string
	for _, c := range []string{CodePackageDirMissing, CodeDirectoryEmpty} {
		if o.on(c) {
			codes = append(codes, c)
		}
	}
	if len(codes) == 0 || !o.on(CodeGateNotChecked) {
		return nil
	}
	return []Finding{{Severity: o.Levels[CodeGateNotChecked], Code: CodeGateNotChecked, ref: -1,
		Message: fmt.Sprintf("the catalog is not a directory: %s not checked", strings.Join(codes, ", ")),
		Help:    "validate the catalog directory the image is built from"}}
}

// countBelow counts the files in dir and below it.
func countBelow(files map[string]int, dir string) int {
	n := 0
	for d, k := range files {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			n += k
		}
	}
	return n
}
