// Package alphabundle is the action of upstream's legacy bundle commands,
// `opm alpha bundle generate`, `build` and `unpack`: bundle metadata and
// bundle.Dockerfile from a manifests directory, a bundle image built from
// them with no container engine (pkg/action/build), and a bundle image's
// contents unpacked into a directory (pkg/image).
package alphabundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/bundle"
)

// DockerfileName is the file generate writes in the working directory.
const DockerfileName = "bundle.Dockerfile"

// GenerateOptions configure Generate; the fields are upstream's flags.
type GenerateOptions struct {
	// Directory holds the bundle's manifests (--directory), e.g.
	// bundle/manifests. The metadata goes beside it, in
	// <parent>/metadata, unless OutputDir is set.
	Directory string
	// OutputDir (--output-dir), when set, receives a copy of the
	// manifests (OutputDir/manifests) and the metadata
	// (OutputDir/metadata).
	OutputDir string
	// Package and Channels (comma-separated) name the bundle's package
	// and channels; when either is empty, both are inferred from a
	// package manifest in Directory's parent (the legacy packagemanifests
	// layout). DefaultChannel is optional.
	Package, Channels, DefaultChannel string
	// BaseImage is the Dockerfile's FROM ("" = scratch).
	BaseImage string
	// Overwrite replaces files that exist and differ. Without it, an
	// existing annotations file must agree with the generated one, copied
	// manifests must be identical, and a different bundle.Dockerfile is
	// kept (with a note).
	Overwrite bool
	// WorkDir is where bundle.Dockerfile goes, and what its COPY paths
	// are relative to ("" = the current directory).
	WorkDir string
}

// File is one file generate wrote or found.
type File struct {
	Path string `json:"path"`
	// Action is "created", "replaced", "unchanged" (the same bytes were
	// there), or "kept" (an existing file that differs was left: an
	// annotations file that agrees, a bundle.Dockerfile without
	// Overwrite).
	Action string `json:"action"`
	// Why a file was kept.
	Why string `json:"why,omitempty"`
}

// GenerateResult is what Generate did.
type GenerateResult struct {
	MediaType      string `json:"mediaType"`
	Package        string `json:"package"`
	Channels       string `json:"channels"`
	DefaultChannel string `json:"defaultChannel,omitempty"`
	// InferredFrom names the package manifest the package or channels
	// came from, when they did.
	InferredFrom string `json:"inferredFrom,omitempty"`
	// ManifestsDir and MetadataDir are the directories the Dockerfile
	// copies; BundleDir is the metadata directory's parent.
	ManifestsDir string `json:"manifestsDir"`
	MetadataDir  string `json:"metadataDir"`
	BundleDir    string `json:"bundleDir"`
	Files        []File `json:"files"`
	// Notes say what was inferred or kept.
	Notes []string `json:"notes,omitempty"`
}

// display returns p relative to dir when it lies below it, else p.
func display(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(r) {
		return r
	}
	return p
}

// write is one planned file.
type write struct {
	path   string
	data   []byte
	exists bool
}

// Generate writes metadata/annotations.yaml and bundle.Dockerfile for the
// manifests of opts.Directory, as upstream's generate does, and, with
// OutputDir, copies the manifests there. Every conflict is found before
// anything is written; each file is written atomically.
func Generate(ctx context.Context, opts GenerateOptions) (*GenerateResult, error) {
	if opts.Directory == "" {
		return nil, action.Usagef("no manifests directory: give it with --directory")
	}
	dir, err := filepath.Abs(opts.Directory)
	if err != nil {
		return nil, err
	}
	work := opts.WorkDir
	if work == "" {
		if work, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if work, err = filepath.Abs(work); err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", opts.Directory)
	}
	src, err := safefs.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer src.Close()

	res := &GenerateResult{}
	res.MediaType, err = bundle.DetectMediaType(src)
	if errors.Is(err, bundle.ErrNoManifestFiles) {
		err = fmt.Errorf("the directory %s %w", opts.Directory, err)
		if sub, serr := os.Stat(filepath.Join(dir, "manifests")); serr == nil && sub.IsDir() {
			err = fmt.Errorf("%w: --directory names the manifests directory itself (here %s)", err, filepath.Join(opts.Directory, "manifests"))
		}
	}
	if err != nil {
		return nil, err
	}

	a := bundle.Annotations{MediaType: res.MediaType, Package: opts.Package, Channels: opts.Channels, DefaultChannel: opts.DefaultChannel}
	if a.Package == "" || a.Channels == "" {
		if err := infer(ctx, src, dir, work, &a, res); err != nil {
			return nil, err
		}
	}
	if err := a.Check(); err != nil {
		return nil, &action.UsageError{Err: err}
	}
	res.Package, res.Channels, res.DefaultChannel = a.Package, a.Channels, a.DefaultChannel

	copyDir := filepath.Dir(dir)
	res.ManifestsDir = dir
	var plan []write
	if opts.OutputDir != "" {
		if copyDir, err = filepath.Abs(opts.OutputDir); err != nil {
			return nil, err
		}
		res.ManifestsDir = filepath.Join(copyDir, "manifests")
		copies, err := planCopies(src, res.ManifestsDir, opts.Overwrite, res, func(p string) string { return display(work, p) })
		if err != nil {
			return nil, err
		}
		plan = append(plan, copies...)
	}
	res.BundleDir = copyDir
	res.MetadataDir = filepath.Join(copyDir, "metadata")

	annotations := a.YAML()
	annotationsPath := filepath.Join(res.MetadataDir, bundle.AnnotationsFileName)
	w, err := planFile(annotationsPath, annotations, opts.Overwrite, res, func(existing []byte) (string, error) {
		if err := bundle.CheckAnnotations(existing, a); err != nil {
			return "", fmt.Errorf("%s exists and disagrees with the generated annotations: %w (use --overwrite to replace it)", display(work, annotationsPath), err)
		}
		return "it has the generated annotations, and others", nil
	})
	if err != nil {
		return nil, err
	}
	plan = append(plan, w...)

	relManifests, err := filepath.Rel(work, res.ManifestsDir)
	if err != nil {
		return nil, err
	}
	relMetadata, err := filepath.Rel(work, res.MetadataDir)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{relManifests, relMetadata} {
		if err := bundle.DockerfilePath(p); err != nil {
			return nil, err
		}
	}
	base := opts.BaseImage
	if base == "" {
		base = "scratch"
	}
	dockerfile := a.Dockerfile(base, relManifests, relMetadata)
	dfPath := filepath.Join(work, DockerfileName)
	w, err = planFile(dfPath, dockerfile, opts.Overwrite, res, func([]byte) (string, error) {
		return "it differs from the generated one (--overwrite replaces it)", nil
	})
	if err != nil {
		return nil, err
	}
	plan = append(plan, w...)

	for _, w := range plan {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(w.path), 0o777); err != nil {
			return nil, err
		}
		if err := fsutil.WriteFile(w.path, w.data, 0o666, w.exists); err != nil {
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("%w (created meanwhile; use --overwrite to replace it)", err)
			}
			return nil, err
		}
		act := "created"
		if w.exists {
			act = "replaced"
		}
		res.Files = append(res.Files, File{Path: w.path, Action: act})
	}
	for i := range res.Files {
		res.Files[i].Path = display(work, res.Files[i].Path)
	}
	return res, nil
}

// infer fills a missing package or channels (and a missing default
// channel) from the package manifest in dir's parent, as upstream does.
func infer(ctx context.Context, src *safefs.FS, dir, work string, a *bundle.Annotations, res *GenerateResult) error {
	var missing []string
	if a.Channels == "" {
		missing = append(missing, "--channels")
	}
	if a.Package == "" {
		missing = append(missing, "--package")
	}
	fail := func(err error) error {
		return fmt.Errorf("no %s given, and they cannot be inferred from the package directory %s: %w; give %s", strings.Join(missing, " or "), display(work, filepath.Dir(dir)), err, strings.Join(missing, " and "))
	}
	csv, err := bundle.CSVName(src)
	if err != nil {
		return fail(err)
	}
	if csv == "" {
		return fail(errors.New("no ClusterServiceVersion among the manifests"))
	}
	parent, err := safefs.OpenDir(ctx, filepath.Dir(dir))
	if err != nil {
		return fail(err)
	}
	defer parent.Close()
	info, err := bundle.InferFromPackageDir(parent, csv)
	if err != nil {
		return fail(err)
	}
	res.InferredFrom = display(work, filepath.Join(filepath.Dir(dir), info.File))
	if a.Channels == "" {
		if len(info.Channels) == 0 {
			return fail(fmt.Errorf("no channel of %s reaches %s", info.File, csv))
		}
		a.Channels = strings.Join(info.Channels, ",")
		res.Notes = append(res.Notes, fmt.Sprintf("inferred channels %s from %s", a.Channels, res.InferredFrom))
	}
	if a.Package == "" {
		a.Package = info.Package
		res.Notes = append(res.Notes, fmt.Sprintf("inferred package %s from %s", a.Package, res.InferredFrom))
	}
	if a.DefaultChannel == "" && info.DefaultChannel != "" && strings.Contains(","+a.Channels+",", ","+info.DefaultChannel+",") {
		a.DefaultChannel = info.DefaultChannel
		res.Notes = append(res.Notes, fmt.Sprintf("inferred default channel %s from %s", a.DefaultChannel, res.InferredFrom))
	}
	return nil
}

// planCopies plans the copy of the manifests directory's files (not its
// subdirectories, which a bundle's manifests do not have) into dst.
func planCopies(src *safefs.FS, dst string, overwrite bool, res *GenerateResult, display func(string) string) ([]write, error) {
	entries, err := fs.ReadDir(src, ".")
	if err != nil {
		return nil, err
	}
	var plan []write
	for _, e := range entries {
		if e.IsDir() {
			res.Notes = append(res.Notes, fmt.Sprintf("not copied: %s/ (a bundle's manifests are the files of its manifests directory)", e.Name()))
			continue
		}
		data, err := fs.ReadFile(src, e.Name())
		if err != nil {
			return nil, err
		}
		target := filepath.Join(dst, e.Name())
		w, err := planFile(target, data, overwrite, res, func([]byte) (string, error) {
			return "", fmt.Errorf("%s exists and differs from the manifest %s (use --overwrite to replace it)", display(target), e.Name())
		})
		if err != nil {
			return nil, err
		}
		plan = append(plan, w...)
	}
	return plan, nil
}

// maxExisting bounds what is read of an existing file to compare it.
const maxExisting = 64 << 20

// planFile plans writing data to path. An existing file with the same
// bytes is noted unchanged; a different one is replaced with overwrite,
// else differs decides: an error refuses, else the file is kept for the
// reason it gives.
func planFile(path string, data []byte, overwrite bool, res *GenerateResult, differs func(existing []byte) (string, error)) ([]write, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []write{{path: path, data: data}}, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s exists and is not a regular file (%s)", path, safefs.Kind(st.Mode()))
	}
	existing, err := safefs.ReadRegular(nil, path, maxExisting)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(existing, data) {
		res.Files = append(res.Files, File{Path: path, Action: "unchanged"})
		return nil, nil
	}
	if overwrite {
		return []write{{path: path, data: data, exists: true}}, nil
	}
	why, err := differs(existing)
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, File{Path: path, Action: "kept", Why: why})
	return nil, nil
}
