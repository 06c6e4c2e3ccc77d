package bundlevalidate

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The bundle validator (operator-framework/api's BundleValidator): owned
// CRDs against the CRDs shipped, service accounts the CSV already
// defines, and the bundle's size.

// maxBundleSize is the limit of a bundle's compressed size: what a
// ConfigMap holds (1 MiB). Above 85% of it is a warning.
const maxBundleSize = 1 << 20

func (c *checker) checkBundle() {
	b := c.b
	csv := b.CSV
	c.begin("bundle")
	name := b.Name()

	// CRD keys of the bundle: v1 CRDs first, then v1beta1, each version.
	type crdKey struct {
		k   manifest.GVK
		crd *manifest.CRD
		i   int
	}
	var keys []crdKey
	for _, v1beta1 := range []bool{false, true} {
		for _, crd := range b.CRDs {
			if crd.V1beta1 != v1beta1 || crd.Err != nil {
				continue
			}
			if crd.V1beta1 && len(crd.Versions) == 0 {
				keys = append(keys, crdKey{manifest.GVK{Group: crd.Group, Version: crd.Version, Kind: crd.Names.Kind}, crd, -1})
				continue
			}
			for i, v := range crd.Versions {
				keys = append(keys, crdKey{manifest.GVK{Group: crd.Group, Version: v.Name, Kind: crd.Names.Kind}, crd, i})
			}
		}
	}
	keySet := map[manifest.GVK]crdKey{}
	for _, k := range keys {
		if _, dup := keySet[k.k]; dup {
			d := fmt.Sprintf("duplicate CRD %q in bundle %q", k.k.String(), name)
			c.add(Finding{Severity: SeverityError, Code: "bundle-crd-duplicate", Upstream: apiError(levelError, "", str(k.k.String()), d),
				Message: fmt.Sprintf("CRD version %s is defined twice in the bundle", k.k)}, atManifest(k.crd.Manifest, versionPath(k.i)))
		}
		keySet[k.k] = k
	}
	ownedGK := map[[2]string]bool{}
	for i, k := range csv.OwnedCRDKeys() {
		if _, ok := keySet[k]; !ok {
			d := fmt.Sprintf("owned CRD %q not found in bundle %q", k.String(), name)
			c.add(Finding{Severity: SeverityError, Code: "bundle-owned-crd-missing", Upstream: apiError(levelError, "", str(k.String()), d),
				Message: fmt.Sprintf("the CSV owns %s, which no CRD of the bundle defines", k)}, atManifest(csv.Manifest, "spec.customresourcedefinitions.owned["+strconv.Itoa(i)+"]"))
			continue
		}
		delete(keySet, k)
		ownedGK[[2]string{k.Group, k.Kind}] = true
	}
	var stray []crdKey
	for k, v := range keySet {
		if !ownedGK[[2]string{k.Group, k.Kind}] {
			stray = append(stray, v)
		}
	}
	sort.Slice(stray, func(i, j int) bool { return stray[i].k.String() < stray[j].k.String() })
	for _, k := range stray {
		d := fmt.Sprintf("CRD %q is present in bundle %q but not defined in CSV", k.k.String(), name)
		c.add(Finding{Severity: SeverityError, Code: "bundle-crd-not-owned", Upstream: apiError(levelError, "", str(k.k.String()), d),
			Message: fmt.Sprintf("the bundle defines %s, which the CSV does not own (spec.customresourcedefinitions.owned)", k.k)}, atManifest(k.crd.Manifest, versionPath(k.i)))
	}

	c.checkServiceAccounts()
	c.checkSize()
}

func versionPath(i int) string {
	if i < 0 {
		return "spec.version"
	}
	return "spec.versions[" + strconv.Itoa(i) + "]"
}

// checkServiceAccounts reports ServiceAccount objects named as a
// deployment's service account: OLM creates those itself.
func (c *checker) checkServiceAccounts() {
	b := c.b
	names := map[string]bool{}
	for _, d := range b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		names[d.Spec.Template.Spec.ServiceAccountName] = true
	}
	for _, m := range b.Manifests {
		if m.Object == nil || m.APIVersion != "v1" || m.Kind != "ServiceAccount" {
			continue
		}
		if names[m.Name] {
			d := fmt.Sprintf("invalid service account found in bundle. "+
				"This service account %s in your bundle is not valid, because a service account with the same name "+
				"was already specified in your CSV. If this was unintentional, please remove the service account "+
				"manifest from your bundle. If it was intentional to specify a separate service account, "+
				"please rename the SA in either the bundle manifest or the CSV.", m.Name)
			c.add(Finding{Severity: SeverityError, Code: "bundle-service-account", Upstream: apiError(levelError, "", str(m.Name), d),
				Message: fmt.Sprintf("service account %s is the one of a deployment of the CSV, which OLM creates: remove this manifest or rename one of them", m.Name)},
				atManifest(m, "metadata.name"))
		}
	}
}

// checkSize reports a bundle whose compressed size nears or exceeds what
// OLM can stage.
func (c *checker) checkSize() {
	b := c.b
	name := b.Name()
	warnAt := float64(maxBundleSize) * 0.85
	if float64(b.CompressedBound()) <= warnAt {
		return // cannot be near the limit: skip the compression
	}
	s := b.Size()
	switch {
	case s.Compressed == 0:
		d := "unable to check the bundle compressed size"
		c.add(Finding{Severity: SeverityWarning, Code: "bundle-size-unknown", Upstream: apiError(levelWarn, "", str(name), d), Message: d}, at{})
	case s.Bytes == 0:
		d := "unable to check the bundle size"
		c.add(Finding{Severity: SeverityWarning, Code: "bundle-size-unknown", Upstream: apiError(levelWarn, "", str(name), d), Message: d}, at{})
	case s.Compressed > maxBundleSize:
		d := fmt.Sprintf("maximum bundle compressed size with gzip size exceeded: size=~%s , max=%s. Bundle uncompressed size is %s",
			formatBytes(s.Compressed), formatBytes(maxBundleSize), formatBytes(s.Bytes))
		c.add(Finding{Severity: SeverityError, Code: "bundle-size-exceeded", Upstream: apiError(levelError, "", str(name), d),
			Message: fmt.Sprintf("the bundle's manifests are ~%s once compressed, more than the %s OLM can stage (%s uncompressed)",
				formatBytes(s.Compressed), formatBytes(maxBundleSize), formatBytes(s.Bytes))}, at{})
	case float64(s.Compressed) > warnAt:
		d := fmt.Sprintf("nearing maximum bundle compressed size with gzip: size=~%s , max=%s. Bundle uncompressed size is %s",
			formatBytes(s.Compressed), formatBytes(maxBundleSize), formatBytes(s.Bytes))
		c.add(Finding{Severity: SeverityWarning, Code: "bundle-size-near", Upstream: apiError(levelWarn, "", str(name), d),
			Message: fmt.Sprintf("the bundle's manifests are ~%s once compressed, near the %s OLM can stage (%s uncompressed)",
				formatBytes(s.Compressed), formatBytes(maxBundleSize), formatBytes(s.Bytes))}, at{})
	}
}

// formatBytes writes a size in decimal units, as upstream.
func formatBytes(b int64) string {
	const unit = 1000
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(b)/float64(div), "kMGTPE"[exp])
}
