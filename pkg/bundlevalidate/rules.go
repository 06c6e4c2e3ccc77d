package bundlevalidate

// Rule describes one rule code.
type Rule struct {
	Code string
	// Validator is the validator that reports it.
	Validator string
	// Severity is the severity of its findings ("" when it depends).
	Severity Severity
	Summary  string
}

// Rules lists every rule code, in documentation order.
var Rules = []Rule{
	{"load-metadata-missing", "load", SeverityError, "No metadata/annotations.yaml (nor any file) holds an annotations map: operator-sdk stops here."},
	{"load-manifests-subdirectory", "load", SeverityError, "manifests/ holds a directory, which the bundle format does not allow."},
	{"load-hidden-file", "load", SeverityError, "manifests/ holds a file whose name starts with a dot."},
	{"load-decode", "load", SeverityError, "A manifest does not decode (YAML or JSON syntax, no kind) or is empty."},
	{"load-crd-version", "load", SeverityError, "A CustomResourceDefinition is of an apiVersion other than apiextensions.k8s.io/v1 and v1beta1."},
	{"load-multiple-csvs", "load", SeverityError, "The bundle has more than one ClusterServiceVersion."},
	{"load-no-csv", "load", SeverityError, "The bundle has no ClusterServiceVersion."},
	{"load-csv", "load", SeverityError, "The ClusterServiceVersion does not decode into its type (a field of the wrong type, a spec.version that is not semver)."},
	{"load-crd", "load", SeverityError, "A CustomResourceDefinition does not decode into its type."},
	{"load-unreadable", "load", SeverityError, "The bundle could not be read at all (an image that cannot be pulled, a refused file)."},

	{"format-manifests-dir", "format", SeverityError, "The bundle has no manifests/ directory."},
	{"format-metadata-dir", "format", SeverityError, "The bundle has no metadata/ directory."},
	{"format-no-manifests", "format", SeverityError, "manifests/ holds no file."},
	{"format-annotations-missing", "format", SeverityError, "No file of metadata/ holds an annotations map."},
	{"format-annotation-missing", "format", SeverityError, "A required annotation (media type, manifests, metadata, package, channels) is missing."},
	{"format-annotation-value", "format", SeverityError, "The media type annotation differs from the manifests' (registry+v1 with a CSV), or the channels or default channel annotation is empty."},
	{"format-dependency", "format", SeverityError, "An entry of metadata/dependencies.yaml is invalid (olm.gvk, olm.package, olm.label, olm.constraint)."},

	{"csv-name-invalid", "csv", SeverityError, "metadata.name is not a DNS subdomain and label value."},
	{"csv-replaces-invalid", "csv", SeverityError, "spec.replaces is not a DNS subdomain and label value."},
	{"csv-annotations-missing", "csv", SeverityWarning, "The CSV has no annotations (so no alm-examples)."},
	{"csv-examples-missing", "csv", SeverityWarning, "The CSV has no alm-examples (or olm.examples) annotation."},
	{"csv-examples-both", "csv", SeverityWarning, "Both alm-examples and olm.examples are set; only alm-examples is read."},
	{"csv-examples-invalid", "csv", SeverityError, "alm-examples is not valid JSON."},
	{"csv-examples-decode", "csv", SeverityError, "alm-examples is not a list of objects with a kind."},
	{"csv-owned-crd-name", "csv", SeverityError, "An owned CRD's name is not <plural>.<group>."},
	{"csv-example-not-provided", "csv", SeverityError, "An example is of an API the CSV does not own."},
	{"csv-example-missing", "csv", SeverityWarning, "An owned API has no example in alm-examples."},
	{"csv-install-modes-missing", "csv", SeverityError, "spec.installModes is missing or empty."},
	{"csv-install-modes-conversion", "csv", SeverityError, "A webhook converts CRDs, and install modes other than AllNamespaces are supported."},
	{"csv-install-modes-unsupported", "csv", SeverityError, "No install mode is supported."},
	{"csv-min-kube-version-missing", "csv", SeverityWarning, "spec.minKubeVersion is not set."},
	{"csv-min-kube-version-invalid", "csv", SeverityError, "spec.minKubeVersion is not a semantic version."},
	{"csv-required-field", "csv", SeverityError, "A required field of the CSV is missing (metadata, spec, spec.install, its strategy and deployments, spec.displayName)."},
	{"csv-annotation-case", "csv", SeverityError, "An OLM annotation is written in the wrong case (olm.skipRange, olm.operatorGroup, ...)."},
	{"csv-olm-properties", "csv", SeverityWarning, "The CSV uses the olm.properties annotation instead of metadata/properties.yaml."},
	{"csv-apiversion-missing", "csv", SeverityError, "The CSV has no apiVersion."},

	{"crd-invalid", "crd", SeverityError, "A CRD is not one the API server accepts (names, scope, versions, storage version, subresources, printer columns, conversion, preserveUnknownFields, API approval)."},

	{"bundle-crd-duplicate", "bundle", SeverityError, "Two CRDs of the bundle define the same group, version and kind."},
	{"bundle-owned-crd-missing", "bundle", SeverityError, "The CSV owns a CRD version no CRD of the bundle defines."},
	{"bundle-crd-not-owned", "bundle", SeverityError, "The bundle defines a CRD the CSV does not own."},
	{"bundle-service-account", "bundle", SeverityError, "The bundle ships a ServiceAccount a deployment of the CSV uses (OLM creates it)."},
	{"bundle-size-near", "bundle", SeverityWarning, "The manifests, compressed, are above 85% of the 1 MiB OLM can stage."},
	{"bundle-size-exceeded", "bundle", SeverityError, "The manifests, compressed, exceed the 1 MiB OLM can stage."},
	{"bundle-size-unknown", "bundle", SeverityWarning, "The bundle's size could not be measured."},

	{"object-kind-unsupported", "objects", SeverityError, "A manifest is of a kind a registry+v1 bundle cannot ship."},
	{"object-metadata-invalid", "objects", SeverityError, "A manifest's metadata is not what the API server accepts (no name, a namespace, bad labels or annotations)."},

	{"operatorhub-provider", "operatorhubv2", SeverityError, "spec.provider.name is not set."},
	{"operatorhub-maintainer", "operatorhubv2", SeverityError, "A maintainer lacks a name or an email."},
	{"operatorhub-maintainer-email", "operatorhubv2", SeverityError, "A maintainer's email is not an email address."},
	{"operatorhub-link", "operatorhubv2", SeverityError, "A link lacks a name or a url."},
	{"operatorhub-link-url", "operatorhubv2", SeverityError, "A link's url is not a URL."},
	{"operatorhub-version", "operatorhubv2", SeverityError, "spec.version is not set."},
	{"operatorhub-icon-missing", "operatorhubv2", SeverityWarning, "spec.icon is not set."},
	{"operatorhub-icon-count", "operatorhubv2", SeverityError, "spec.icon has more or less than one element."},
	{"operatorhub-icon", "operatorhubv2", SeverityError, "The icon lacks its data or media type."},
	{"operatorhub-icon-mediatype", "operatorhubv2", SeverityError, "The icon's media type is not image/gif, image/jpeg, image/png or image/svg+xml."},
	{"operatorhub-min-kube-version-missing", "operatorhubv2", SeverityWarning, "spec.minKubeVersion is not set."},
	{"operatorhub-min-kube-version-invalid", "operatorhubv2", SeverityError, "spec.minKubeVersion is not a semantic version."},
	{"operatorhub-deprecated", "operatorhub", SeverityWarning, "The operatorhub validator is deprecated (operatorhubv2, capabilities and categories replace it)."},
	{"capabilities-invalid", "capabilities", SeverityError, "The capabilities annotation is not a capability level."},
	{"categories-invalid", "categories", SeverityError, "A category of the categories annotation is not a standard one (or one of OPERATOR_BUNDLE_CATEGORIES)."},
	{"categories-file", "categories", SeverityError, "The OPERATOR_BUNDLE_CATEGORIES file cannot be read."},

	{"deprecated-api-removed", "alpha-deprecated-apis", "", "The bundle uses APIs a Kubernetes release removed: an error when k8s-version or spec.minKubeVersion is that release or later, a warning otherwise."},
	{"deprecated-api-removed-rbac", "alpha-deprecated-apis", SeverityWarning, "The CSV's RBAC rules name resources of APIs Kubernetes 1.25 removed."},
	{"deprecated-api-k8s-version", "alpha-deprecated-apis", SeverityError, "--optional-values k8s-version is not a version."},
	{"deprecated-api-min-kube-version", "alpha-deprecated-apis", SeverityError, "spec.minKubeVersion does not parse, so it cannot tell which removals matter."},

	{"good-practices-no-deployment", "good-practices", SeverityError, "The install strategy has no deployment."},
	{"good-practices-resource-requests", "good-practices", SeverityWarning, "A container has no resource requests."},
	{"good-practices-crd-description", "good-practices", SeverityWarning, "An owned or required CRD has no description."},
	{"good-practices-crd-rbac", "good-practices", SeverityWarning, "The CSV may create or patch CRDs."},
	{"good-practices-csv-name-version", "good-practices", SeverityWarning, "The CSV's name does not end with a semantic version."},
	{"good-practices-csv-name", "good-practices", SeverityWarning, "The CSV's name is not <operator-name>.v<semver>."},

	{"multiarch-container-tools", "multiarch", SeverityError, "--optional-values container-tools is not docker, podman or none."},
	{"multiarch-inspect", "multiarch", SeverityWarning, "An image could not be inspected."},
	{"multiarch-unsupported", "multiarch", SeverityError, "An image does not provide a platform the CSV claims."},
	{"multiarch-labels", "multiarch", SeverityWarning, "The manager image supports a platform the CSV does not claim with its labels."},
	{"multiarch-image-platforms", "multiarch", SeverityWarning, "An image lacks a platform the CSV or its manager image supports."},
	{"multiarch-affinity-missing", "multiarch", SeverityWarning, "A deployment has no required node affinity for its image's platforms."},
	{"multiarch-affinity-extra", "multiarch", SeverityWarning, "A node affinity allows a platform the image does not provide."},
	{"multiarch-affinity-narrow", "multiarch", SeverityWarning, "A node affinity leaves out platforms the image provides."},

	{"objects-pdb-max-unavailable", "bundle-objects", SeverityError, "A PodDisruptionBudget's maxUnavailable is 0 or 0%."},
	{"objects-pdb-min-available", "bundle-objects", SeverityError, "A PodDisruptionBudget's minAvailable is 100%."},
	{"objects-priorityclass-default", "bundle-objects", SeverityError, "A PriorityClass is the global default."},
	{"objects-rbac-pdb", "bundle-objects", SeverityWarning, "A Role may create or update PodDisruptionBudgets."},
	{"objects-rbac-scc", "bundle-objects", SeverityError, "A Role may modify a default SecurityContextConstraints."},

	{"external", "external", "", "A finding of an external validator (--alpha-select-external)."},
}

// RuleByCode returns the rule of a code.
func RuleByCode(code string) (Rule, bool) {
	for _, r := range Rules {
		if r.Code == code {
			return r, true
		}
	}
	return Rule{}, false
}
