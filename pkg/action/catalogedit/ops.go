package catalogedit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/bundle"
	ce "github.com/opmkit/opm/pkg/catalogedit"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/migrations"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/versionrange"
)

// PromoteOptions configure Promote.
type PromoteOptions struct {
	Common
	Package string
	Bundle  string
	// Channels are the channels to add the bundle to, each with Edges.
	Channels []string
	// Create creates a channel when the package has none of that name.
	Create bool
	Edges  ce.Edges
}

// Promote adds an existing bundle to channels, by default replacing the
// channel's head (or, for a bundle older than the head, letting the head
// skip it).
func Promote(ctx context.Context, opts PromoteOptions) (*Result, error) {
	return runChecked(ctx, "promote", opts.Common, func(_ context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		if len(opts.Channels) == 0 {
			return nil, errors.New("name at least one channel to promote to")
		}
		for _, ch := range opts.Channels {
			if err := c.Promote(opts.Package, opts.Bundle, ch, opts.Edges, opts.Create); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, &crdCheck{})
}

// SetDefaultChannelOptions configure SetDefaultChannel.
type SetDefaultChannelOptions struct {
	Common
	Package string
	Channel string
}

// SetDefaultChannel changes a package's default channel.
func SetDefaultChannel(ctx context.Context, opts SetDefaultChannelOptions) (*Result, error) {
	return run(ctx, "set-default-channel", opts.Common, func(_ context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		return nil, c.SetDefaultChannel(opts.Package, opts.Channel)
	})
}

// AddBundleOptions configure AddBundle.
type AddBundleOptions struct {
	Common
	// Ref is a bundle directory or a bundle image.
	Ref string
	// Channels to add the bundle to (at least one).
	Channels []string
	Edges    ce.Edges
	// Create creates a missing package (its default channel: the first
	// of Channels) and missing channels.
	Create bool
	// MigrateLevel, when set, is the migration level applied to the
	// rendered bundle; otherwise the bundle follows the package's newest
	// bundle (olm.csv.metadata or olm.bundle.object).
	MigrateLevel string
	// Image sets the bundle's image (for a bundle directory, which has
	// none).
	Image    string
	Registry render.RegistryOptions
}

// AddBundle renders a bundle and inserts it into its package and channels.
func AddBundle(ctx context.Context, opts AddBundleOptions) (*Result, error) {
	if opts.MigrateLevel != "" {
		if err := migrations.Check(opts.MigrateLevel); err != nil {
			return nil, err
		}
	}
	if err := opts.Edges.Check(); err != nil {
		return nil, err
	}
	crds := &crdCheck{}
	fromAnnotations := len(opts.Channels) == 0
	var note string
	res, err := runChecked(ctx, "add-bundle", opts.Common, func(ctx context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		if c.Template {
			if st, err := os.Stat(opts.Ref); err == nil && st.IsDir() {
				return nil, fmt.Errorf("a basic template lists bundle images; %s is a directory (push it and add its image)", opts.Ref)
			}
		}
		cfg, err := render.Render(ctx, render.Options{
			Refs:           []string{opts.Ref},
			AllowedRefMask: render.RefBundleDir | render.RefBundleImage,
			Registry:       opts.Registry,
			WithChannels:   fromAnnotations,
		})
		if err != nil {
			if fromAnnotations {
				return nil, fmt.Errorf("render %s: %w: give the channels with --channel", opts.Ref, err)
			}
			return nil, fmt.Errorf("render %s: %w", opts.Ref, err)
		}
		if len(cfg.Bundles) != 1 {
			return nil, fmt.Errorf("render %s: expected one bundle, got %d", opts.Ref, len(cfg.Bundles))
		}
		channels := opts.Channels
		if fromAnnotations {
			var def string
			channels, def = annotationChannels(cfg)
			note = fmt.Sprintf("channels from the bundle's annotations (%s): %s (default channel: %s); --channel overrides them", bundle.AnnotationChannels, strings.Join(channels, ", "), def)
		}
		if opts.Image != "" {
			cfg.Bundles[0].Image = opts.Image
		}
		if cfg.Bundles[0].Image == "" {
			return nil, noImageError(opts.Ref, &cfg.Bundles[0])
		}
		// its CRDs, before a migration to olm.csv.metadata drops them
		if b, ok, err := crd.FromDeclcfg(ctx, &cfg.Bundles[0], nil); err == nil && ok {
			crds.extra = map[string]*crd.Bundle{cfg.Bundles[0].Name: b}
		}
		level := opts.MigrateLevel
		if level == "" && c.UsesCSVMetadata(cfg.Bundles[0].Package) {
			level = migrations.LevelBundleObjectToCSVMetadata
		}
		if level != "" {
			if err := migrations.Migrate(cfg, level); err != nil {
				return nil, fmt.Errorf("migrate %s: %w", opts.Ref, err)
			}
		}
		return nil, c.AddBundle(cfg.Bundles[0], channels, opts.Edges, opts.Create)
	}, crds)
	if err != nil {
		if note != "" {
			return nil, fmt.Errorf("%w (%s)", err, note)
		}
		return nil, err
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	return res, nil
}

// annotationChannels returns the channels a bundle rendered WithChannels
// names in its annotations, in their order but with the default channel
// first (the default of a package add-bundle creates), and that default
// (the first channel when the annotations name none).
func annotationChannels(cfg *declcfg.DeclarativeConfig) ([]string, string) {
	var names []string
	for _, ch := range cfg.Channels {
		names = append(names, ch.Name)
	}
	def := ""
	if len(cfg.Packages) == 1 {
		def = cfg.Packages[0].DefaultChannel
	}
	if i := slices.Index(names, def); i > 0 {
		names = append([]string{def}, slices.Delete(names, i, i+1)...)
	}
	if def == "" && len(names) > 0 {
		def = names[0]
	}
	return names, def
}

// noImageError refuses a bundle directory given without an image: a
// catalog's bundle names the image OLM pulls it from, and an empty image
// would validate (the bundle carries its objects) yet not install.
func noImageError(ref string, b *declcfg.Bundle) error {
	example := "quay.io/example/" + b.Package + "-bundle:v1.0.0"
	if v, err := graph.BundleVersion(b); err == nil {
		example = fmt.Sprintf("quay.io/example/%s-bundle:v%s", b.Package, v)
	}
	return action.Usagef("%s is a bundle directory, which has no image reference: an image reference is required (the image OLM will pull bundle %s from, once pushed); give it with --image, e.g. --image %s", ref, b.Name, example)
}

// RemoveBundleOptions configure RemoveBundle.
type RemoveBundleOptions struct {
	Common
	Package string
	Bundles []string
	// DropEdges drops the removed bundles' names from the skips of the
	// entries that upgraded from them, leaving their installs without an
	// upgrade (by default they are kept, so those installs still upgrade).
	DropEdges bool
	// Registry is used to render a template's bundle stubs to find the
	// ones to remove.
	Registry render.RegistryOptions
}

// RemoveBundle removes bundles and re-stitches the channels they were in.
func RemoveBundle(ctx context.Context, opts RemoveBundleOptions) (*Result, error) {
	return run(ctx, "remove-bundle", opts.Common, func(ctx context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		return c.RemoveBundles(ctx, opts.Package, opts.Bundles, ce.RemoveOptions{
			DropEdges: opts.DropEdges,
			Resolve:   stubResolver(opts.Registry),
		})
	})
}

// stubResolver renders a template's bundle stub image to learn its name.
func stubResolver(reg render.RegistryOptions) ce.StubResolver {
	return func(ctx context.Context, image string) (string, error) {
		cfg, err := render.Render(ctx, render.Options{Refs: []string{image}, AllowedRefMask: render.RefBundleImage, Registry: reg})
		if err != nil {
			return "", err
		}
		if len(cfg.Bundles) != 1 {
			return "", errors.New("not one bundle")
		}
		return cfg.Bundles[0].Name, nil
	}
}

// PruneOptions configure Prune.
type PruneOptions struct {
	Common
	Package string
	// KeepLast keeps the KeepLast newest bundles of each channel.
	KeepLast int
	// Before removes the bundles older than this version.
	Before string
	// DropEdges: as RemoveBundleOptions.DropEdges.
	DropEdges bool
}

// Prune removes a package's old bundles and re-stitches its channels.
func Prune(ctx context.Context, opts PruneOptions) (*Result, error) {
	var before *semver.Version
	if opts.Before != "" {
		v, err := versionrange.ParseVersion(opts.Before)
		if err != nil {
			return nil, action.Usagef("invalid --before: %w", err)
		}
		before = &v
	}
	if (before == nil) == (opts.KeepLast <= 0) {
		return nil, errors.New("prune needs exactly one of --keep-last N (N > 0) and --before VERSION")
	}
	return run(ctx, "prune", opts.Common, func(ctx context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		names, err := c.PruneSet(opts.Package, opts.KeepLast, before)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, nil
		}
		return c.RemoveBundles(ctx, opts.Package, names, ce.RemoveOptions{DropEdges: opts.DropEdges})
	})
}

// DeprecateOptions configure Deprecate.
type DeprecateOptions struct {
	Common
	// Target is package, channel or bundle.
	Target  string
	Package string
	// Names are the channels or bundles (none for the package).
	Names   []string
	Message string
	// Remove takes the deprecations out instead.
	Remove bool
}

// Deprecate writes or updates deprecation entries in the package's
// olm.deprecations blob.
func Deprecate(ctx context.Context, opts DeprecateOptions) (*Result, error) {
	return run(ctx, "deprecate", opts.Common, func(_ context.Context, c *ce.Catalog) ([]ce.LostPath, error) {
		return nil, c.Deprecate(opts.Package, opts.Target, opts.Names, opts.Message, opts.Remove)
	})
}
