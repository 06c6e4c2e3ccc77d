package validate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Bundle validation (--check-bundles).
//
// The bundles a catalog carries as olm.bundle.object properties are
// validated as `opm bundle validate` validates a bundle directory
// (pkg/bundlevalidate, minus the checks of the bundle format, which a
// catalog bundle has no files for); bundles with olm.csv.metadata only are
// pulled from their images when BundleOptions.Pull is set, and counted as
// not validated otherwise. Each finding is at the bundle's blob: at the
// olm.bundle.object property of the manifest it is about.

// BundleOptions turn on bundle validation.
type BundleOptions struct {
	// Validate selects the validators (the optional ones, the target
	// Kubernetes version).
	Validate bundlevalidate.Options
	// Pull, when set, returns the bundles of the given catalog bundles,
	// by bundle name, loaded from their images (those without
	// olm.bundle.object properties). Such bundles are not validated when
	// it is nil.
	Pull func(ctx context.Context, pkg string, bundles []*declcfg.Bundle) (map[string]*manifest.Bundle, error)
}

// CodeBundleUnchecked is a package whose bundles carry no manifests
// (olm.csv.metadata only) and were not pulled: they are not validated.
const CodeBundleUnchecked = "bundle-unchecked"

func init() {
	Rules = append(Rules, Rule{Code: CodeBundleUnchecked, Summary: "Bundle validation (--check-bundles): bundles carry no olm.bundle.object properties and were not pulled (--pull-bundles), so they are not validated."})
	for _, r := range bundlevalidate.Rules {
		Rules = append(Rules, Rule{Code: r.Code, Summary: "Bundle validation (--check-bundles, opm bundle validate): " + r.Summary})
	}
}

// bundleChecks validates the group's bundles.
func (g *group) bundleChecks(ctx context.Context, opts *BundleOptions) ([]Finding, error) {
	var out []Finding
	var missing []*declcfg.Bundle
	index := map[string]int{}
	for i := range g.cfg.Bundles {
		b := &g.cfg.Bundles[i]
		mb, err := manifest.FromDeclcfg(b)
		if err != nil {
			missing = append(missing, b)
			index[b.Name] = i
			continue
		}
		fs, err := g.bundleFindings(ctx, i, mb, opts, "")
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	if len(missing) == 0 {
		return out, nil
	}
	if opts.Pull == nil {
		first := missing[0]
		msg := fmt.Sprintf("%d bundle(s) of package %s carry no manifests (no olm.bundle.object properties), so they are not validated; --pull-bundles validates their images", len(missing), g.name)
		f := Finding{Severity: SeverityWarning, Code: CodeBundleUnchecked, Message: msg, Package: first.Package, Bundle: first.Name,
			at: blobID{kind: declcfg.KindBundle, i: index[first.Name], ok: true}}
		g.finish(&f)
		return append(out, f), nil
	}
	pulled, err := opts.Pull(ctx, g.name, missing)
	if err != nil {
		return nil, err
	}
	for _, b := range missing {
		mb, ok := pulled[b.Name]
		if !ok {
			continue // no image: the model rules report it
		}
		fs, err := g.bundleFindings(ctx, index[b.Name], mb, opts, b.Image)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// bundleFindings validates one bundle (of blob i) and places each finding
// at the blob: at the olm.bundle.object property of its manifest, or at
// the bundle's image when it was pulled from image.
func (g *group) bundleFindings(ctx context.Context, i int, mb *manifest.Bundle, opts *BundleOptions, image string) ([]Finding, error) {
	b := &g.cfg.Bundles[i]
	vopts := opts.Validate
	vopts.Dir = b.Name
	rep, err := bundlevalidate.Validate(ctx, mb, vopts)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, bf := range rep.Findings {
		f := Finding{Severity: Severity(bf.Severity), Code: bf.Code, Message: bf.Message, Package: b.Package, Bundle: b.Name,
			at: blobID{kind: declcfg.KindBundle, i: i, ok: true}}
		m := bundlevalidate.ManifestOf(bf)
		switch {
		case image != "":
			f.Path = "image"
			f.Message += " (image " + image
			if m != nil {
				f.Message += ", " + describeManifest(m, bf.Path)
			}
			f.Message += ")"
		case m != nil && m.Property >= 0:
			f.Path = "properties[" + strconv.Itoa(m.Property) + "]"
			f.Message += " (" + describeManifest(m, bf.Path) + ")"
		}
		g.finish(&f)
		// distinct elements of one object are distinct baseline records
		f.key += "#" + bf.Path
		out = append(out, f)
	}
	rep.Release()
	return out, nil
}

// describeManifest names a manifest and an element of it.
func describeManifest(m *manifest.Manifest, path string) string {
	s := m.Kind + " " + m.Name
	if path != "" {
		s += " at " + path
	}
	return s
}

// BundleResult turns the reports of `opm bundle validate` into a Result,
// for this package's writers and baselines: each finding at the position
// its report located it, with its file named as prefix(report) + the path
// in the bundle, about the bundle's package and CSV.
func BundleResult(reports []*bundlevalidate.Report, prefix func(*bundlevalidate.Report) string) *Result {
	res := &Result{}
	for _, r := range reports {
		for _, bf := range r.Findings {
			f := Finding{Severity: Severity(bf.Severity), Code: bf.Code, Message: bf.Message, Help: bf.Help, Package: r.Package, Bundle: r.Name,
				Path: bf.Path, ref: -1}
			if bf.Pos.IsValid() {
				f.File, f.Line, f.Column = prefix(r)+bf.Pos.File, bf.Pos.Line, bf.Pos.Column
			} else if r.Source != "" {
				f.File = r.Source
			}
			f.key = bf.Pos.File + "#" + bf.Path
			if f.Bundle == "" {
				f.Bundle = r.Source
			}
			res.Findings = append(res.Findings, f)
		}
	}
	res.settle()
	return res
}
