// Package build is the action of `opm build catalog` and `opm build
// bundle`: it builds a catalog or bundle image from a directory with no
// container engine (pkg/imagebuild), reproducibly, and writes it to
// registries, OCI layouts and archives (pkg/image).
package build

import (
	"context"
	// Registers sha256 for go-digest, which the model's image pull-spec
	// checks need.
	_ "crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/internal/fsutil"
	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/action/dockerfile"
	"github.com/opmkit/opm/pkg/action/manifests"
	serveaction "github.com/opmkit/opm/pkg/action/serve"
	validateaction "github.com/opmkit/opm/pkg/action/validate"
	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/imagebuild"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/validate"
)

// UsageError reports options the build cannot run with (a bad
// destination, platform, label or time); the command exits 2 for it.
type UsageError = action.UsageError

func usagef(format string, args ...any) error { return action.Usagef(format, args...) }

// Options are what both builds take.
type Options struct {
	// Dir is the catalog or bundle directory.
	Dir string
	// Tags are where the image goes, at least one: HOST/REPO[:TAG],
	// oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG].
	Tags []string
	// Platforms ("os/arch[/variant]") narrow a multi-platform base to
	// these, or give a scratch image one image per platform (default
	// linux/amd64).
	Platforms []string
	// SourceDateEpoch is the value of the SOURCE_DATE_EPOCH variable (""
	// when unset): the files' modification time and the config's creation
	// time, else the Unix epoch.
	SourceDateEpoch string
	// Created sets the config's creation time instead: "now", an RFC 3339
	// time or seconds since the epoch ("" = the build time above).
	Created string
	// DigestFile, when set, receives the digest (replaced atomically).
	DigestFile string
	// Overwrite allows replacing an existing archive file.
	Overwrite bool
	// Registry are the registry options (TLS, CA, credentials cache,
	// limits, progress) for the base image and the pushes. Its Platform is
	// not used (see Platforms).
	Registry render.RegistryOptions
	// Now is the wall clock for Created "now" (nil = time.Now).
	Now func() time.Time
}

// CatalogOptions describe `opm build catalog`.
type CatalogOptions struct {
	Options
	// BaseImage is the base image ("" = dockerfile.DefaultImage; "scratch"
	// for none; BaseSelf for an opm image made of the running executable).
	BaseImage string
	// ExtraLabels are key=value labels, as `opm generate dockerfile`
	// takes them.
	ExtraLabels []string
	// SkipValidate builds without validating the catalog first.
	SkipValidate bool
	// Cmd, when not nil, replaces the command the Dockerfile sets.
	Cmd []string
	// ServeCache says whether to pre-build the serve cache into the image
	// at CacheDir (nil: yes, unless the base is scratch); see
	// ServeCacheResult.
	ServeCache *bool
	// Manifests, when set, is a directory that receives a CatalogSource
	// and a ClusterCatalog for the image (catalogsource.yaml,
	// clustercatalog.yaml), naming it by digest at its first registry
	// destination.
	Manifests string
	// ManifestOptions tune them (Image is set here).
	ManifestOptions manifests.Options
	// Warn receives warnings (nil = dropped): what the image's server will
	// not use.
	Warn func(string)
}

// BaseSelf is the base image made of the running opm executable (for its
// own platform): no registry is needed to build an image that serves with
// this opm.
const BaseSelf = "self"

// CacheDir is where catalog images keep their pre-built serve cache: this
// opm's own (opm-serve/) and upstream's JSON cache (cache/ and digest),
// which OLM's extractContent pods can copy out with
// grpcPodConfig.extractContent.cacheDir. It is outside /tmp, which pods
// often mount as an empty volume.
const CacheDir = "/var/cache/opm"

// BundleOptions describe `opm build bundle`.
type BundleOptions struct {
	Options
}

// Result describes the image built and where it went.
type Result struct {
	// Digest is the digest of the image manifest or index written.
	Digest string `json:"digest"`
	// MediaType is its media type.
	MediaType string `json:"mediaType"`
	// Platforms are those of its images, sorted.
	Platforms []string `json:"platforms"`
	// Base is the base image as given and the digest of what was used
	// (empty for scratch).
	Base       string `json:"base,omitempty"`
	BaseDigest string `json:"baseDigest,omitempty"`
	// Destinations are the tags written, in order.
	Destinations []string `json:"destinations"`
	// Layer describes the layer built from the directory.
	Layer Layer `json:"layer"`
	// ServeCache describes the pre-built serve cache (nil when there is
	// none).
	ServeCache *ServeCacheResult `json:"serveCache,omitempty"`
	// Manifests are the files written for --manifests.
	Manifests []string `json:"manifests,omitempty"`
	// Images are the images built, one per platform, in index order.
	Images []ImageResult `json:"images"`
	// Validated says whether the catalog was validated (false with
	// SkipValidate; unset for bundles, which are rendered instead), and
	// Warnings are the warnings the validation found (opm validate's, with
	// the catalog's .opm-validate.yaml applied).
	Validated *bool              `json:"validated,omitempty"`
	Warnings  []validate.Finding `json:"warnings,omitempty"`
}

// ImageResult describes one image built.
type ImageResult struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
	// Size is what a pull downloads: the config and every layer,
	// compressed.
	Size int64 `json:"size"`
}

// ServeCacheResult describes the serve cache built into a catalog image.
type ServeCacheResult struct {
	// Dir is where it is in the image (CacheDir).
	Dir string `json:"dir"`
	// JSONDigest is the integrity digest of upstream's JSON cache
	// (cache/ and digest), which upstream's `opm serve` checks.
	JSONDigest string `json:"jsonDigest"`
	// OpmServe reports whether this opm's own cache (opm-serve/) is
	// included: only when the image's opm is this very version.
	OpmServe bool `json:"opmServe"`
	// Layer describes the cache's layer.
	Layer Layer `json:"layer"`
}

// Layer describes the layer built from the directory.
type Layer struct {
	Digest           string `json:"digest"`
	DiffID           string `json:"diffID"`
	Size             int64  `json:"size"`
	UncompressedSize int64  `json:"uncompressedSize"`
	Files            int64  `json:"files"`
}

// common is what both builds parse from Options.
type common struct {
	dests     []image.Destination
	platforms []v1.Platform
	epoch     time.Time
	created   time.Time
}

// parse checks the options (UsageErrors) and that no archive would be
// replaced without Overwrite, before any work.
func (o Options) parse() (common, error) {
	var c common
	if len(o.Tags) == 0 {
		return c, usagef("no destination: give one or more with --tag")
	}
	seen := map[string]bool{}
	for _, t := range o.Tags {
		d, err := image.ParseDestination(t, o.Registry.UseHTTP)
		if err != nil {
			return c, &UsageError{Err: err}
		}
		if d.Transport != image.Remote {
			key := d.Transport.String() + ":" + filepath.Clean(d.Path)
			if d.Transport != image.OCILayout && seen[key] {
				return c, usagef("destination %q: the archive %s is written twice", t, d.Path)
			}
			seen[key] = true
			if d.Transport != image.OCILayout && !o.Overwrite {
				if _, err := os.Lstat(d.Path); err == nil {
					return c, fmt.Errorf("destination %q: %s already exists (use --overwrite to replace it)", t, d.Path)
				}
			}
		}
		c.dests = append(c.dests, d)
	}
	var err error
	if c.platforms, err = imagebuild.ParsePlatforms(o.Platforms); err != nil {
		return c, &UsageError{Err: err}
	}
	if c.epoch, err = imagebuild.Epoch(o.SourceDateEpoch); err != nil {
		return c, err
	}
	c.created = c.epoch
	if o.Created != "" {
		now := o.Now
		if now == nil {
			now = time.Now
		}
		if c.created, err = imagebuild.ParseCreated(o.Created, now); err != nil {
			return c, usagef("invalid --created %q: %v", o.Created, err)
		}
	}
	return c, nil
}

// session opens the image session for the registry options.
func (o Options) session() *image.Session {
	r := o.Registry
	return image.NewSession(
		image.WithSkipTLSVerify(r.SkipTLSVerify),
		image.WithUseHTTP(r.UseHTTP),
		image.WithCAFile(r.CAFile),
		image.WithCacheDir(r.CacheDir),
		image.WithProgress(r.Progress),
		image.WithLimits(r.Limits),
	)
}

// checkDir returns an error unless dir is a directory.
func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// RunCatalog validates the catalog of opts.Dir (unless SkipValidate),
// builds its image on the base image, with the pre-built serve cache, and
// writes it to every tag (and the manifests, when asked).
func RunCatalog(ctx context.Context, opts CatalogOptions) (*Result, error) {
	c, err := opts.parse()
	if err != nil {
		return nil, err
	}
	labels, err := dockerfile.ParseLabels(opts.ExtraLabels)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	for k, v := range labels {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return nil, usagef("invalid label %q: a NUL byte", k+"="+v)
		}
	}
	baseRef := opts.BaseImage
	if baseRef == "" {
		baseRef = dockerfile.DefaultImage
	}
	scratch := baseRef == "scratch"
	if scratch && opts.Cmd != nil {
		return nil, usagef("a scratch image runs nothing: --cmd needs a base image")
	}
	serveCache := !scratch
	if opts.ServeCache != nil {
		serveCache = *opts.ServeCache
	}
	var manifestDest *image.Destination
	if opts.Manifests != "" {
		for i := range c.dests {
			if c.dests[i].Transport == image.Remote {
				manifestDest = &c.dests[i]
				break
			}
		}
		if manifestDest == nil {
			return nil, usagef("--manifests needs a registry destination (-t HOST/REPO[:TAG]): the manifests name the image where a cluster pulls it")
		}
		if !opts.Overwrite {
			for _, f := range manifestFiles {
				p := filepath.Join(opts.Manifests, f)
				if _, err := os.Lstat(p); err == nil {
					return nil, fmt.Errorf("%s already exists (use --overwrite to replace it)", p)
				}
			}
		}
	}
	if err := checkDir(opts.Dir); err != nil {
		return nil, err
	}
	res := &Result{Validated: new(bool)}
	if !opts.SkipValidate {
		warnings, err := validateCatalog(ctx, opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("%w\n(no image built; use --skip-validate to build one anyway)", err)
		}
		*res.Validated, res.Warnings = true, warnings
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	s := opts.session()
	defer s.Close()
	// The labels, entrypoint and command of the generated Dockerfile: the
	// configs label, then the extra labels (a later LABEL wins); the
	// entrypoint and command unless the base is scratch.
	all := map[string]string{dockerfile.ConfigsLocationLabel: imagebuild.ConfigsDir}
	maps.Copy(all, labels)
	co := imagebuild.CatalogOptions{
		Dir:       opts.Dir,
		Platforms: c.platforms,
		Labels:    all,
		Created:   c.created,
		ModTime:   c.epoch,
		Limits:    opts.Registry.Limits,
	}
	// baseServeCache is the serve cache identity of the base's opm, when
	// it is this toolkit's.
	var baseServeCache string
	switch baseRef {
	case "scratch":
	case BaseSelf:
		self, err := selfImage(ctx, c)
		if err != nil {
			return nil, err
		}
		defer self.Close()
		co.Base = self.AsBase(BaseSelf)
		baseServeCache = serveaction.CacheIdentity()
		res.Base, res.BaseDigest = BaseSelf, self.Digest.String()
	default:
		base, err := s.OpenBase(ctx, baseRef, c.platforms)
		if err != nil {
			return nil, fmt.Errorf("base image: %w", err)
		}
		defer base.Close()
		co.Base = base
		baseServeCache = serveCacheLabel(base)
		if r, err := image.ParseReference(baseRef, opts.Registry.UseHTTP); err == nil && r.Transport == image.Remote {
			co.BaseName = strings.TrimPrefix(baseRef, "docker://")
		}
		res.Base, res.BaseDigest = baseRef, base.Digest.String()
	}
	if base := co.Base; base != nil && len(base.Images) > 0 && base.Images[0].Config != nil {
		if bl := base.Images[0].Config.Config.Labels; bl[imagebuild.LabelServeCache] != "" {
			relabelOpmBase(&co, bl, labels, catalogTitle(c.dests, opts.Dir))
		}
	}
	if !scratch {
		co.Entrypoint, co.Cmd = dockerfile.Entrypoint(), dockerfile.Cmd()
		if serveCache {
			co.Cmd = []string{"serve", imagebuild.ConfigsDir, "--cache-dir=" + CacheDir}
		}
		if opts.Cmd != nil {
			co.Cmd = opts.Cmd
		}
	}
	if serveCache {
		sc, layer, err := buildServeCache(ctx, opts, c, baseServeCache, scratch, warn)
		if err != nil {
			return nil, err
		}
		co.Extra = []imagebuild.ExtraLayer{{Layer: layer, CreatedBy: "COPY cache " + CacheDir + " # opm build catalog: the serve cache"}}
		res.ServeCache = sc
	}
	built, err := imagebuild.Catalog(ctx, co)
	if err != nil {
		return nil, err
	}
	defer built.Close()
	if res, err = finish(ctx, s, opts.Options, c, built, res); err != nil {
		return nil, err
	}
	if manifestDest != nil {
		if err := writeManifests(opts, *manifestDest, res, serveCache, scratch); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// opmLabels are the OCI labels of an opm image (OpmImage): they describe
// opm, not a catalog built on it.
var opmLabels = []string{
	"org.opencontainers.image.title", "org.opencontainers.image.description",
	"org.opencontainers.image.version", "org.opencontainers.image.revision",
	"org.opencontainers.image.source", "org.opencontainers.image.licenses",
	"org.opencontainers.image.created",
}

// relabelOpmBase makes the labels of a catalog image built on an opm image
// (base labels bl) describe the catalog: its title is the catalog's (title),
// opm's version and revision move to imagebuild.LabelOpmVersion and
// LabelOpmRevision, and opm's other OCI labels are dropped. The --extra-labels
// (user) win.
func relabelOpmBase(co *imagebuild.CatalogOptions, bl, user map[string]string, title string) {
	co.DropLabels = opmLabels
	set := map[string]string{
		"org.opencontainers.image.title": title,
		imagebuild.LabelOpmVersion:       bl["org.opencontainers.image.version"],
		imagebuild.LabelOpmRevision:      bl["org.opencontainers.image.revision"],
	}
	for k, v := range set {
		if _, given := user[k]; !given && v != "" {
			co.Labels[k] = v
		}
	}
}

// catalogTitle names a catalog image: the repository of its first registry
// destination (quay.io/example/my-catalog:v1 gives my-catalog), else the
// catalog directory's name. Either stays the same from one build to the
// next.
func catalogTitle(dests []image.Destination, dir string) string {
	for _, d := range dests {
		if d.Transport != image.Remote {
			continue
		}
		if r, err := name.ParseReference(strings.TrimPrefix(d.Raw, "docker://"), name.WeakValidation); err == nil {
			repo := r.Context().RepositoryStr()
			return repo[strings.LastIndex(repo, "/")+1:]
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(dir)
}

// manifestFiles are the files --manifests writes.
var manifestFiles = []string{"catalogsource.yaml", "clustercatalog.yaml"}

// writeManifests writes a CatalogSource and a ClusterCatalog for the image
// at dest, named by digest, into opts.Manifests. A scratch image is served
// by OLM's own opm: its CatalogSource uses extractContent, with the
// pre-built cache when the image has one.
func writeManifests(opts CatalogOptions, dest image.Destination, res *Result, serveCache, scratch bool) error {
	mo := opts.ManifestOptions
	repo := strings.TrimPrefix(dest.Raw, "docker://")
	if r, err := name.ParseReference(repo, name.WeakValidation); err == nil {
		repo = r.Context().Name()
	}
	mo.Image = repo + "@" + res.Digest
	if scratch {
		mo.ExtractContent = true
		if serveCache && mo.CacheDir == "" {
			mo.CacheDir = CacheDir
		}
	}
	if err := os.MkdirAll(opts.Manifests, 0o755); err != nil {
		return err
	}
	for i, gen := range []func(manifests.Options) ([]byte, error){manifests.CatalogSource, manifests.ClusterCatalog} {
		data, err := gen(mo)
		if err != nil {
			var ue *manifests.UsageError
			if errors.As(err, &ue) {
				return &UsageError{Err: fmt.Errorf("--manifests: %w", err)}
			}
			return err
		}
		p := filepath.Join(opts.Manifests, manifestFiles[i])
		if err := replaceFile(p, data); err != nil {
			return err
		}
		res.Manifests = append(res.Manifests, p)
	}
	return nil
}

// selfImage builds the opm image of the running executable, for its own
// platform, which must be among those asked for.
func selfImage(ctx context.Context, c common) (*imagebuild.Built, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("base image self: %w", err)
	}
	p := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	if len(c.platforms) > 0 {
		ok := false
		for _, want := range c.platforms {
			ok = ok || p.Satisfies(want)
		}
		if !ok {
			return nil, usagef("base image self is this opm, for %s only: --platform asks for %s", p, platformNames(c.platforms))
		}
	}
	bi := buildinfo.Get()
	self, err := OpmImage(ctx, OpmImageOptions{
		Binaries: []imagebuild.Binary{{Platform: p, Path: exe}},
		Version:  bi.Version,
		Revision: bi.GitCommit,
		Created:  c.created,
		ModTime:  c.epoch,
	})
	if err != nil {
		return nil, fmt.Errorf("base image self: %w", err)
	}
	return self, nil
}

func platformNames(ps []v1.Platform) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, ", ")
}

// serveCacheLabel returns the serve cache identity every image of the base
// carries in its imagebuild.LabelServeCache label, or "" when they do not
// all carry the same.
func serveCacheLabel(base *image.Base) string {
	id := ""
	for i, bi := range base.Images {
		var v string
		if bi.Config != nil {
			v = bi.Config.Config.Labels[imagebuild.LabelServeCache]
		}
		if i > 0 && v != id {
			return ""
		}
		id = v
	}
	return id
}

// buildServeCache indexes the catalog and builds the layer holding the
// serve cache at CacheDir: upstream's JSON cache always, this opm's own
// when the base's opm is this very version.
func buildServeCache(ctx context.Context, opts CatalogOptions, c common, baseServeCache string, scratch bool, warn func(string)) (*ServeCacheResult, *imagebuild.Layer, error) {
	ours := baseServeCache != "" && baseServeCache == serveaction.CacheIdentity()
	if !scratch && !ours {
		if baseServeCache != "" {
			warn(fmt.Sprintf("the base image's opm writes serve caches %q, this opm %q: the image gets upstream's JSON cache only, and its opm will index the catalog when it starts (build with the opm of the base image, or use --base-image self)", baseServeCache, serveaction.CacheIdentity()))
		}
	}
	tmp, err := os.MkdirTemp("", "opm-build-cache-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "cache")
	ic, err := serveaction.BuildImageCache(ctx, serveaction.ImageCacheOptions{
		Catalog:  opts.Dir,
		Dir:      dir,
		OpmServe: ours,
		Created:  c.epoch,
		Mode:     imagebuild.LayerMode,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pre-building the serve cache: %w\n(no image built; use --serve-cache=false to build one without it)", err)
	}
	layer, err := imagebuild.BuildLayer(ctx, dir, []imagebuild.Tree{{Src: ".", Dst: CacheDir}}, imagebuild.LayerOptions{ModTime: c.epoch, Limits: opts.Registry.Limits})
	if err != nil {
		return nil, nil, err
	}
	return &ServeCacheResult{Dir: CacheDir, JSONDigest: ic.JSONDigest, OpmServe: ic.OpmServe, Layer: layerResult(layer)}, layer, nil
}

// RunBundle renders the bundle of opts.Dir (to prove it parses), builds
// its image on scratch with its annotations as labels and writes it to
// every tag.
func RunBundle(ctx context.Context, opts BundleOptions) (*Result, error) {
	c, err := opts.parse()
	if err != nil {
		return nil, err
	}
	if err := checkDir(opts.Dir); err != nil {
		return nil, err
	}
	labels, err := bundleLabels(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	s := opts.session()
	defer s.Close()
	built, err := imagebuild.Bundle(ctx, imagebuild.BundleOptions{
		Dir:       opts.Dir,
		Labels:    labels,
		Platforms: c.platforms,
		Created:   c.created,
		ModTime:   c.epoch,
		Limits:    opts.Registry.Limits,
	})
	if err != nil {
		return nil, err
	}
	defer built.Close()
	return finish(ctx, s, opts.Options, c, built, &Result{})
}

// finish writes built to every destination, then the digest file.
func finish(ctx context.Context, s *image.Session, o Options, c common, built *imagebuild.Built, res *Result) (*Result, error) {
	res.Digest = built.Digest.String()
	res.MediaType = string(built.MediaType)
	res.Platforms = built.Platforms()
	res.Layer = layerResult(built.Layer)
	for _, img := range built.Images {
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		ir := ImageResult{Platform: img.Platform().String(), Digest: d.String(), Size: m.Config.Size}
		for _, l := range m.Layers {
			ir.Size += l.Size
		}
		res.Images = append(res.Images, ir)
	}
	for _, dst := range c.dests {
		if err := s.Write(ctx, dst, built.Artifact, image.WriteOptions{Overwrite: o.Overwrite, ModTime: c.epoch}); err != nil {
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("%w (use --overwrite to replace it)", err)
			}
			return nil, err
		}
		res.Destinations = append(res.Destinations, dst.Raw)
	}
	if o.DigestFile != "" {
		if err := replaceFile(o.DigestFile, []byte(res.Digest)); err != nil {
			return nil, fmt.Errorf("writing the digest file: %w", err)
		}
	}
	return res, nil
}

func layerResult(l *imagebuild.Layer) Layer {
	d, _ := l.Digest()
	id, _ := l.DiffID()
	size, _ := l.Size()
	return Layer{Digest: d.String(), DiffID: id.String(), Size: size, UncompressedSize: l.UncompressedSize(), Files: l.Files()}
}

// validateCatalog validates the catalog as `opm validate DIR` does (the
// same loader, rules and verdict, and the directory's .opm-validate.yaml)
// and returns its warnings; a catalog that fails is an error naming the
// first problem and where it is.
func validateCatalog(ctx context.Context, dir string) ([]validate.Finding, error) {
	r, err := validateaction.Run(ctx, validateaction.Options{Ref: dir})
	if err != nil {
		return nil, err
	}
	if r.Passed {
		return r.Findings, nil
	}
	if r.Tree != nil {
		return nil, fmt.Errorf("invalid catalog %q: %s", dir, r.Tree.Format(func(err error) string {
			var re *model.RuleError
			if errors.As(err, &re) && re.Pos.IsValid() {
				return re.Message + " (" + re.Pos.String() + ")"
			}
			return err.Error()
		}))
	}
	for _, f := range r.Findings {
		if f.Severity == validate.SeverityError {
			if p := f.Pos(); p.IsValid() {
				return nil, fmt.Errorf("invalid catalog %q: %s: %s", dir, p, f.Message)
			}
			return nil, fmt.Errorf("invalid catalog %q: %s", dir, f.Message)
		}
	}
	return nil, fmt.Errorf("invalid catalog %q: %s", dir, r.Message)
}

// maxAnnotationsFile bounds the annotations file read for the labels.
const maxAnnotationsFile = 4 << 20

// bundleLabels renders the bundle (through an os.Root) and returns the
// annotations of the annotations file it used.
func bundleLabels(ctx context.Context, dir string) (map[string]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, sub := range []string{"manifests", "metadata"} {
		st, err := root.Stat(sub)
		if err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s is not a bundle directory: it needs manifests/ and metadata/ directories", dir)
		}
	}
	fsys := root.FS()
	// Parse and render the bundle as opm render does, to prove it renders.
	b, err := bundle.ParseFS(ctx, fsys)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if _, err := b.Declcfg(""); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	name := filepath.Join(dir, filepath.FromSlash(b.AnnotationsFile))
	st, err := root.Stat(b.AnnotationsFile)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxAnnotationsFile {
		return nil, fmt.Errorf("%s: %d bytes, over the %d MiB annotations limit", name, st.Size(), maxAnnotationsFile>>20)
	}
	data, err := fs.ReadFile(fsys, b.AnnotationsFile)
	if err != nil {
		return nil, err
	}
	labels, err := imagebuild.BundleLabels(data, name)
	if err != nil {
		return nil, err
	}
	return labels, nil
}

// replaceFile replaces path with data through a temporary file in the same
// directory.
func replaceFile(path string, data []byte) error {
	return fsutil.ReplaceFile(path, data, 0o644)
}
