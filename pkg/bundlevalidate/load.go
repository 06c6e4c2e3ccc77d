package bundlevalidate

import (
	"fmt"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// Problems that keep operator-sdk from loading the bundle at all: it
// stops with a log line and prints no result. They are errors here, with
// upstream's wording, and the validators run on what could be read.

func (c *checker) loadErr(code, upstream, message string, where at) {
	c.add(Finding{Severity: SeverityError, Code: code, Upstream: upstream, Message: message}, where)
}

// checkLoad reports what operator-sdk's loading of a bundle directory
// refuses.
func (c *checker) checkLoad() {
	b := c.b
	c.begin("load")
	if b.Annotations == nil && b.HasManifestsDir {
		c.loadErr("load-metadata-missing", "metadata not found in "+c.dir,
			"no annotations file: metadata/annotations.yaml with an annotations map", at{})
	}
	for _, s := range b.Skipped {
		if s.Dir {
			c.loadErr("load-manifests-subdirectory", "error loading objs in directory: bundle manifests dir contains directory: "+c.joinDir(s.File),
				s.File+": manifests/ must not hold directories", at{})
		} else {
			c.loadErr("load-hidden-file", "error loading objs in directory: bundle manifests dir has hidden file: "+c.joinDir(s.File),
				s.File+": manifests/ must not hold hidden files", at{})
		}
	}
	c.checkManifestsDecode()
	if b.HasManifestsDir && b.CSVCount == 0 {
		c.loadErr("load-no-csv", "unable to find a csv in bundle directory "+c.joinDir("manifests"),
			"manifests/ holds no ClusterServiceVersion", at{})
	}
}

// checkCatalogLoad reports the olm.bundle.object properties that do not
// decode, and a bundle without a CSV.
func (c *checker) checkCatalogLoad() {
	c.begin("load")
	c.checkManifestsDecode()
	if c.b.CSVCount == 0 {
		c.loadErr("load-no-csv", "unable to find a csv in bundle "+c.b.Source,
			"the bundle's olm.bundle.object properties hold no ClusterServiceVersion", at{})
	}
}

// checkManifestsDecode reports manifests that do not decode, several
// CSVs, and CSVs or CRDs whose typed view does not decode.
func (c *checker) checkManifestsDecode() {
	b := c.b
	for _, m := range b.Manifests {
		where := atManifest(m, "")
		switch {
		case m.Err != nil:
			c.loadErr("load-decode", "error loading objs in directory: unable to decode object: "+m.Err.Error(),
				"the manifest does not decode: "+m.Err.Error(), where)
		case m.Object == nil:
			c.loadErr("load-decode", "error loading objs in directory: unable to decode object: EOF",
				"the manifest is empty (only the first document of a file is read)", where)
		case m.Kind == manifest.KindCRD && m.APIVersion != manifest.CRDv1 && m.APIVersion != manifest.CRDv1beta1:
			c.loadErr("load-crd-version", fmt.Sprintf("unsupported CRD version %s for %s", m.APIVersion, baseName(m.File)),
				fmt.Sprintf("CustomResourceDefinition of unsupported apiVersion %s (apiextensions.k8s.io/v1 or v1beta1)", m.APIVersion), atManifest(m, "apiVersion"))
		}
	}
	if b.CSVCount > 1 {
		var second *manifest.Manifest
		n := 0
		for _, m := range b.Manifests {
			if m.Kind == manifest.KindCSV {
				if n++; n == 2 {
					second = m
				}
			}
		}
		c.loadErr("load-multiple-csvs", "invalid bundle: contains multiple CSVs",
			fmt.Sprintf("the bundle has %d ClusterServiceVersions; only the first is validated", b.CSVCount), atManifest(second, ""))
	}
	if b.CSVErr != nil {
		var first *manifest.Manifest
		for _, m := range b.Manifests {
			if m.Kind == manifest.KindCSV && m.Object != nil {
				first = m
				break
			}
		}
		c.loadErr("load-csv", b.CSVErr.Error(), b.CSVErr.Error(), atManifest(first, ""))
	}
	for _, crd := range b.CRDs {
		if crd.Err != nil {
			c.loadErr("load-crd", crd.Err.Error(), crd.Err.Error(), atManifest(crd.Manifest, ""))
		}
	}
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
