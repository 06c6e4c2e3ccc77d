package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/opmkit/opm/pkg/bundle"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/property"
	"github.com/opmkit/opm/pkg/sqlite"
)

// inputBundle is a bundle image given to add: what upstream's loader read
// from it.
type inputBundle struct {
	ref            string
	name           string
	pkg            string
	version        string
	channels       []string
	defaultChannel string
	row            *sqlite.Bundle
	images         []string
}

// pullBundles pulls and parses the bundle images, four at a time through
// one image session; the first error in argument order is returned.
func pullBundles(ctx context.Context, refs []string, reg []image.Option) ([]*inputBundle, error) {
	session := image.NewSession(reg...)
	defer session.Close()
	out := make([]*inputBundle, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group
	g.SetLimit(4)
	for i, ref := range refs {
		g.Go(func() error {
			out[i], errs[i] = pullBundle(ctx, session, ref)
			return nil
		})
	}
	_ = g.Wait() // every func returns nil
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("bundle %q: %w", refs[i], err)
		}
	}
	return out, nil
}

func pullBundle(ctx context.Context, session *image.Session, ref string) (*inputBundle, error) {
	img, err := session.Open(ctx, ref)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	tmp, err := os.MkdirTemp("", "opm-index-bundle-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := img.Extract(ctx, tmp, "manifests", "metadata"); err != nil {
		return nil, err
	}
	// Every read goes through an os.Root: a symbolic link in the image
	// cannot lead to a host file.
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, err := bundle.ParseFS(ctx, root.FS())
	if err != nil {
		return nil, err
	}
	return newInputBundle(ref, b)
}

// newInputBundle turns a parsed bundle into the row upstream's loader
// wrote for it: its CSV and manifests, its upgrade edges from the CSV, its
// properties (provided APIs, its properties file and the CSV's
// olm.properties annotation) and dependencies (required APIs, its
// dependencies file), and the images of its related_image rows.
//
// Upstream's render of such a database drops the dependencies other than
// olm.gvk and olm.package (olm.label, olm.constraint); they are kept here,
// as properties, as `opm render` of the bundle image keeps them, so that
// no dependency is lost.
func newInputBundle(ref string, b *bundle.Bundle) (*inputBundle, error) {
	dc, err := b.Declcfg(ref)
	if err != nil {
		return nil, err
	}
	replaces, err := b.CSV.Replaces()
	if err != nil {
		return nil, fmt.Errorf("%s: spec.replaces: %w", b.CSV.File, err)
	}
	skips, err := b.CSV.Skips()
	if err != nil {
		return nil, fmt.Errorf("%s: spec.skips: %w", b.CSV.File, err)
	}
	version, err := b.CSV.Version()
	if err != nil {
		return nil, fmt.Errorf("%s: spec.version: %w", b.CSV.File, err)
	}
	if b.Name == "" {
		return nil, fmt.Errorf("csv name not found")
	}
	valid := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	var manifests strings.Builder
	for _, o := range b.Objects {
		manifests.Write(o.JSON)
		manifests.WriteByte('\n')
	}
	row := &sqlite.Bundle{
		Name:           b.Name,
		CSV:            valid(string(b.CSV.JSON) + "\n"),
		Manifests:      valid(manifests.String()),
		Path:           valid(ref),
		Version:        valid(version),
		SkipRange:      valid(b.CSV.SkipRange()),
		Replaces:       valid(replaces),
		Skips:          valid(strings.Join(skips, ",")),
		SubstitutesFor: valid(b.CSV.Annotations["olm.substitutesFor"]),
	}
	addRows(row, dc.Properties)
	ib := &inputBundle{
		ref:            ref,
		name:           b.Name,
		pkg:            b.Package,
		version:        version,
		channels:       b.Channels,
		defaultChannel: b.DefaultChannel,
		row:            row,
	}
	seen := map[string]bool{}
	for _, ri := range dc.RelatedImages {
		if !seen[ri.Image] {
			seen[ri.Image] = true
			ib.images = append(ib.images, ri.Image)
		}
	}
	return ib, nil
}

// addRows stores a bundle blob's properties as the database holds them:
// olm.gvk.required and olm.package.required as dependencies, the others
// (but olm.package, which the channel walk writes, and olm.bundle.object,
// which is the manifests) as properties.
func addRows(row *sqlite.Bundle, props []property.Property) {
	valid := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	for _, p := range props {
		switch p.Type {
		case property.TypeBundleObject:
		case property.TypePackage:
			// written by the walk; kept only when it says more than the
			// walk's (a release)
			var v property.Package
			if json.Unmarshal(p.Value, &v) == nil && v.Release != "" {
				row.Properties = append(row.Properties, sqlite.TypedValue{Type: valid(p.Type), Value: valid(string(p.Value))})
			}
		case property.TypeGVKRequired:
			var v property.GVKRequired
			if err := json.Unmarshal(p.Value, &v); err != nil {
				row.Properties = append(row.Properties, sqlite.TypedValue{Type: valid(p.Type), Value: valid(string(p.Value))})
				continue
			}
			raw, _ := json.Marshal(property.GVK(v))
			row.Dependencies = append(row.Dependencies, sqlite.TypedValue{Type: valid(property.TypeGVK), Value: valid(string(raw))})
		case property.TypePackageRequired:
			var v property.PackageRequired
			if err := json.Unmarshal(p.Value, &v); err != nil {
				row.Properties = append(row.Properties, sqlite.TypedValue{Type: valid(p.Type), Value: valid(string(p.Value))})
				continue
			}
			raw, _ := json.Marshal(property.Package{PackageName: v.PackageName, Version: v.VersionRange})
			row.Dependencies = append(row.Dependencies, sqlite.TypedValue{Type: valid(property.TypePackage), Value: valid(string(raw))})
		default:
			row.Properties = append(row.Properties, sqlite.TypedValue{Type: valid(p.Type), Value: valid(string(p.Value))})
		}
	}
}

// declcfgBundleRelated is the relatedImages of a catalog's bundle blob as
// Contents keeps them for it.
func declcfgBundleRelated(b *declcfg.Bundle) []declcfg.RelatedImage {
	if b.RelatedImages == nil {
		return []declcfg.RelatedImage{}
	}
	return b.RelatedImages
}
