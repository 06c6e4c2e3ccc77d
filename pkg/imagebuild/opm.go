package imagebuild

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/pkg/image"
)

// The opm image: a static opm executable at /bin/opm, its entrypoint, run
// as a non-root user with a writable /tmp, and nothing else (no shell, no
// libraries, no CA certificates).

// OpmUser is the user the opm image runs as: uid 1001, group 0, as OLM's
// restricted catalog pods run (OpenShift's random uids are in group 0 too).
const (
	OpmUID  = 1001
	OpmUser = "1001"
)

// OpmPath is where the executable is.
const OpmPath = "/bin/opm"

// LabelServeCache is the label of an opm image that names the serve cache
// its opm accepts (the cache format and the opm version that write it):
// a catalog image built on it carries a pre-built cache its server loads
// only when this matches the builder's.
const LabelServeCache = "io.github.opmkit.opm.serve-cache"

// LabelOpmVersion and LabelOpmRevision name the version and commit of the
// opm that serves a catalog image built on an opm image: there the OCI
// labels (org.opencontainers.image.title, version, ...) describe the
// catalog, not opm.
const (
	LabelOpmVersion  = "io.github.opmkit.opm.version"
	LabelOpmRevision = "io.github.opmkit.opm.revision"
)

// Binary is an opm executable for one platform: statically linked (built
// with CGO_ENABLED=0), for Linux.
type Binary struct {
	Platform v1.Platform
	Path     string
}

// OpmImageOptions describe an opm image.
type OpmImageOptions struct {
	// Binaries are the executables, one per platform, in index order.
	Binaries []Binary
	// Labels are the image's labels (the OCI ones: version, revision,
	// source, licenses; LabelServeCache).
	Labels map[string]string
	// Created and ModTime as for catalog images.
	Created, ModTime time.Time
	Limits           image.Limits
	TempDir          string
}

// passwd and group name root and the opm user (uid 1001, group 0, home
// /tmp), so that tools asking who runs get an answer.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nopm:x:1001:0:opm:/tmp:/sbin/nologin\n"
	group  = "root:x:0:\n"
)

// opmEnv is the image's environment.
var opmEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

// OpmImage builds the opm image: per platform, one layer with /bin/opm
// (0755), /etc/passwd and /etc/group, and /tmp (1777), on scratch, with
// the entrypoint /bin/opm and the user 1001; an index when there are
// several platforms. Each executable must be a static Linux ELF file of
// its platform's architecture.
func OpmImage(ctx context.Context, o OpmImageOptions) (*Built, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("opm image: no executable")
	}
	b := &Built{}
	fail := func(err error) (*Built, error) {
		b.Close()
		return nil, err
	}
	seen := map[string]bool{}
	for _, bin := range o.Binaries {
		p := bin.Platform.String()
		if seen[p] {
			return fail(fmt.Errorf("opm image: two executables for %s", p))
		}
		seen[p] = true
		if err := CheckStatic(bin.Path, bin.Platform); err != nil {
			return fail(err)
		}
		layer, err := FilesLayer(ctx, []File{
			{Path: "bin", Mode: fs.ModeDir | 0o755},
			{Path: "bin/opm", Mode: 0o755, Src: bin.Path},
			{Path: "etc", Mode: fs.ModeDir | 0o755},
			{Path: "etc/group", Mode: 0o644, Data: []byte(group)},
			{Path: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
			{Path: "tmp", Mode: fs.ModeDir | fs.ModeSticky | 0o777},
		}, LayerOptions{ModTime: o.ModTime, Limits: o.Limits, TempDir: o.TempDir})
		if err != nil {
			return fail(err)
		}
		b.Extra = append(b.Extra, layer)
		img, err := newImage(imageSpec{
			platform:   bin.Platform,
			layers:     []specLayer{{layer, "COPY opm " + OpmPath + " # opm image"}},
			labels:     o.Labels,
			entrypoint: []string{OpmPath},
			user:       OpmUser,
			env:        opmEnv,
			created:    o.Created,
		})
		if err != nil {
			return fail(err)
		}
		b.Images = append(b.Images, img)
	}
	if len(b.Images) == 1 {
		img := b.Images[0]
		b.Artifact, b.Digest, b.MediaType = img, img.digest, img.manifest.MediaType
		return b, nil
	}
	idx, err := newIndex(types.OCIImageIndex, b.Images)
	if err != nil {
		return fail(err)
	}
	b.Artifact, b.Digest, b.MediaType = idx, idx.digest, types.OCIImageIndex
	return b, nil
}

// elfMachines maps GOARCH names to ELF machines (and byte orders).
var elfMachines = map[string]struct {
	machine elf.Machine
	order   string
}{
	"amd64":   {elf.EM_X86_64, "LittleEndian"},
	"arm64":   {elf.EM_AARCH64, "LittleEndian"},
	"arm":     {elf.EM_ARM, "LittleEndian"},
	"ppc64le": {elf.EM_PPC64, "LittleEndian"},
	"s390x":   {elf.EM_S390, "BigEndian"},
	"386":     {elf.EM_386, "LittleEndian"},
	"riscv64": {elf.EM_RISCV, "LittleEndian"},
}

// CheckStatic returns an error unless path is a statically linked Linux
// ELF executable for platform p: an image with nothing else in it cannot
// run one that needs a dynamic loader.
func CheckStatic(path string, p v1.Platform) error {
	if p.OS != "linux" {
		return fmt.Errorf("%s: platform %s: the opm image is for Linux only", path, p)
	}
	want, ok := elfMachines[p.Architecture]
	if !ok {
		return fmt.Errorf("%s: platform %s: unknown architecture", path, p)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Machine != want.machine || f.ByteOrder.String() != want.order {
		return fmt.Errorf("%s: an executable for %s (%s), not for %s", path, f.Machine, f.ByteOrder, p)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: not an executable (%s)", path, f.Type)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: dynamically linked (it needs a loader and libraries an opm image does not have): build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

// AsBase returns the built image (or index) as a base image to build on,
// named ref in messages. Its layers are b's: b must stay open while what
// is built on it is written.
func (b *Built) AsBase(ref string) *image.Base {
	base := &image.Base{Ref: ref, Digest: b.Digest, MediaType: b.MediaType, IsIndex: b.MediaType.IsIndex()}
	for _, img := range b.Images {
		base.Images = append(base.Images, &image.BaseImage{
			Platform:    img.platform,
			Digest:      img.digest,
			MediaType:   img.manifest.MediaType,
			Manifest:    img.manifest,
			RawManifest: img.raw,
			Config:      img.cf,
			RawConfig:   img.config,
			Layers:      append([]v1.Layer(nil), img.layers...),
		})
	}
	return base
}
