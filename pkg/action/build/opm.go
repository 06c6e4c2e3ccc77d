package build

import (
	"context"
	"time"

	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/imagebuild"

	serveaction "github.com/opmkit/opm/pkg/action/serve"
)

// Source is where this toolkit's source lives (the opm image's
// org.opencontainers.image.source label).
const Source = "https://github.com/opmkit/opm"

// OpmImageOptions describe an opm image (`make image`, and the base of
// `opm build catalog --base-image self`).
type OpmImageOptions struct {
	// Binaries are static Linux opm executables of this source tree, one
	// per platform.
	Binaries []imagebuild.Binary
	// Version and Revision are those stamped into the executables (the
	// Makefile's VERSION and COMMIT): the image's OCI labels and the serve
	// cache identity its catalog images are built for.
	Version, Revision string
	// Created and ModTime are the config's and the files' time.
	Created, ModTime time.Time
	Limits           image.Limits
}

// OpmImage builds the opm image of the executables: /bin/opm as the
// entrypoint, user 1001, a writable /tmp, and the labels
// org.opencontainers.image.{title,description,version,revision,source,
// licenses,created} and imagebuild.LabelServeCache.
func OpmImage(ctx context.Context, o OpmImageOptions) (*imagebuild.Built, error) {
	labels := map[string]string{
		"org.opencontainers.image.title":       "opm",
		"org.opencontainers.image.description": "opm: a toolkit for Operator Lifecycle Manager catalogs; serves catalogs to OLM",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
		imagebuild.LabelServeCache:             serveaction.CacheIdentityOf(o.Version, o.Revision),
	}
	if o.Revision == "" {
		delete(labels, "org.opencontainers.image.revision")
	}
	return imagebuild.OpmImage(ctx, imagebuild.OpmImageOptions{
		Binaries: o.Binaries,
		Labels:   labels,
		Created:  o.Created,
		ModTime:  o.ModTime,
		Limits:   o.Limits,
	})
}
