package olmv1

// Level is how a rule's finding bears on installing the bundle.
type Level int

const (
	// Refused: OLM v1 does not install the bundle (its ClusterExtension
	// reports the refusal in its conditions).
	Refused Level = iota + 1
	// Conditional: OLM v1 installs the bundle only given something outside
	// it (a watchNamespace config, a certificate provider in the cluster).
	Conditional
	// Migration: OLM v1 installs the bundle, but it relies on something OLM
	// classic provides and OLM v1 does not.
	Migration
	// NotChecked: the check could not run (the catalog holds no manifests
	// for the bundle).
	NotChecked
)

func (l Level) String() string {
	switch l {
	case Refused:
		return "refused"
	case Conditional:
		return "conditional"
	case Migration:
		return "migration"
	case NotChecked:
		return "not-checked"
	}
	return "unknown"
}

// Rule is one reason for a verdict.
type Rule struct {
	Code  string
	Level Level
	// Summary is one line for rule lists.
	Summary string
	// Source is where operator-controller (or the migration library)
	// implements it.
	Source string
	// Gate names the feature gate the rule depends on, if any.
	Gate string
}

// Rule codes of bundles.
const (
	CodeNoCSV                    = "olmv1-no-csv"
	CodeBundleUnreadable         = "olmv1-bundle-unreadable"
	CodeManifestInvalid          = "olmv1-manifest-invalid"
	CodeManifestsSubdirectory    = "olmv1-manifests-subdirectory"
	CodeAPIServiceOwned          = "olmv1-apiservice-owned"
	CodeWebhooksUnsupported      = "olmv1-webhooks-unsupported"
	CodeWebhooksCertProvider     = "olmv1-webhooks-cert-provider"
	CodeAllNamespacesUnsupported = "olmv1-all-namespaces-unsupported"
	CodeWatchNamespace           = "olmv1-watch-namespace"
	CodeInstallModesUnsupported  = "olmv1-install-modes-unsupported"
	CodeDependency               = "olmv1-dependency"
	CodeDeploymentDuplicate      = "olmv1-deployment-duplicate"
	CodeDeploymentNameInvalid    = "olmv1-deployment-name-invalid"
	CodeCRDDuplicate             = "olmv1-crd-duplicate"
	CodeOwnedCRDMissing          = "olmv1-owned-crd-missing"
	CodePackageNameEmpty         = "olmv1-package-name-empty"
	CodeConversionInstallModes   = "olmv1-conversion-webhook-install-modes"
	CodeWebhookDeploymentMissing = "olmv1-webhook-deployment-missing"
	CodeWebhookDuplicate         = "olmv1-webhook-duplicate"
	CodeWebhookNameInvalid       = "olmv1-webhook-name-invalid"
	CodeConversionCRDShared      = "olmv1-conversion-webhook-crd-shared"
	CodeConversionCRDNotOwned    = "olmv1-conversion-webhook-crd-not-owned"
	CodeConversionPreserve       = "olmv1-conversion-webhook-preserve-unknown-fields"
	CodeWebhookRuleForbidden     = "olmv1-webhook-rule-forbidden"
	CodeObjectUnsupported        = "olmv1-object-unsupported"
	CodeOperatorCondition        = "olmv1-operatorcondition"
	CodeClassicAPI               = "olmv1-olm-classic-api"
	CodeManifestsNotRead         = "olmv1-manifests-not-read"
	CodeDependenciesNotChecked   = "olmv1-dependencies-not-checked"
)

// Rule codes of channels and packages.
const (
	// CodePickRefused: the bundle a ClusterExtension installs (for the
	// package, or for one channel) is one OLM v1 refuses.
	CodePickRefused = "olmv1-pick-refused"
	// CodeUpgradeRefused: from an installable bundle, OLM v1's upgrade goes
	// to a bundle it refuses, so installations stay where they are.
	CodeUpgradeRefused = "olmv1-upgrade-refused"
	// CodeUpgradeDiffers: from a bundle, OLM v1 upgrades to another bundle
	// than OLM classic does in the same channel.
	CodeUpgradeDiffers = "olmv1-upgrade-differs"
)

const (
	srcProvider   = "internal/operator-controller/applier/provider.go (RegistryV1ManifestProvider.Get)"
	srcValidators = "internal/operator-controller/rukpak/render/registryv1/validators/validator.go"
	srcSource     = "internal/operator-controller/rukpak/bundle/source/source.go (fsBundleSource.GetBundle)"
	srcGenerators = "internal/operator-controller/rukpak/render/registryv1/generators/generators.go (BundleCRDGenerator)"
	srcResolver   = "internal/operator-controller/resolve/validation.go (NoDependencyValidation) and resolve/catalog.go"
	srcConfig     = "internal/operator-controller/rukpak/bundle/registryv1.go (GetConfigSchema) and rukpak/render/render.go (validateTargetNamespaces)"
	srcMigration  = "operator-framework/library-olm migration/pkg/migration/compatibility.go"
	srcLimits     = "docs/project/olmv1_limitations.md"
)

// Rules lists every rule, bundle rules first, in documentation order.
var Rules = []Rule{
	{CodeNoCSV, Refused, "The bundle's manifests hold no ClusterServiceVersion.", srcSource, ""},
	{CodeBundleUnreadable, Refused, "The bundle's metadata/annotations.yaml or manifests/ directory cannot be read.", srcSource, ""},
	{CodeManifestInvalid, Refused, "A manifest document does not decode, lacks apiVersion or kind, or does not decode as the typed object OLM v1 reads (a CSV field of the wrong type, an invalid spec.version).", srcSource, ""},
	{CodeManifestsSubdirectory, Refused, "The manifests/ directory of a bundle has a subdirectory.", srcSource, ""},
	{CodeAPIServiceOwned, Refused, "The CSV owns APIServices (spec.apiservicedefinitions.owned).", srcProvider, ""},
	{CodeWebhooksUnsupported, Refused, "The CSV has webhooks and no certificate provider is enabled.", srcProvider, GateCertManager + ", " + GateServiceCA},
	{CodeWebhooksCertProvider, Conditional, "The CSV has webhooks: OLM v1 installs them with certificates from the enabled provider (cert-manager by default), which the cluster must run.", srcProvider, GateCertManager + ", " + GateServiceCA},
	{CodeAllNamespacesUnsupported, Refused, "The CSV does not support the AllNamespaces install mode (OLM v1 installs it only with " + GateSingleOwnNamespace + " on, and a watchNamespace config).", srcProvider, GateSingleOwnNamespace},
	{CodeWatchNamespace, Conditional, "The CSV supports no AllNamespaces install mode: OLM v1 (" + GateSingleOwnNamespace + " on) installs it only with a watchNamespace config.", srcConfig, GateSingleOwnNamespace},
	{CodeInstallModesUnsupported, Refused, "The CSV supports none of AllNamespaces, SingleNamespace and OwnNamespace (MultiNamespace alone, or no install mode).", srcProvider, ""},
	{CodeDependency, Refused, "The bundle declares a dependency (olm.package.required, olm.gvk.required, olm.constraint; the CSV's required CRDs and APIServices become olm.gvk.required).", srcResolver, ""},
	{CodeDeploymentDuplicate, Refused, "Two deployments of the CSV's install strategy have the same name.", srcValidators + " (CheckDeploymentSpecUniqueness)", ""},
	{CodeDeploymentNameInvalid, Refused, "A deployment name of the CSV's install strategy is not a DNS-1123 subdomain.", srcValidators + " (CheckDeploymentNameIsDNS1123SubDomain)", ""},
	{CodeCRDDuplicate, Refused, "Two CRDs of the bundle have the same name.", srcValidators + " (CheckCRDResourceUniqueness)", ""},
	{CodeOwnedCRDMissing, Refused, "A CRD the CSV owns is not in the bundle.", srcValidators + " (CheckOwnedCRDExistence)", ""},
	{CodePackageNameEmpty, Refused, "The bundle's metadata/annotations.yaml names no package.", srcValidators + " (CheckPackageNameNotEmpty)", ""},
	{CodeConversionInstallModes, Refused, "The CSV has a conversion webhook and supports another install mode than AllNamespaces.", srcValidators + " (CheckConversionWebhookSupport)", ""},
	{CodeWebhookDeploymentMissing, Refused, "A webhook names a deployment the CSV's install strategy does not have.", srcValidators + " (CheckWebhookDeploymentReferentialIntegrity)", ""},
	{CodeWebhookDuplicate, Refused, "Two webhooks of one type have the same generateName.", srcValidators + " (CheckWebhookNameUniqueness)", ""},
	{CodeWebhookNameInvalid, Refused, "A webhook's generateName is not a DNS-1123 subdomain.", srcValidators + " (CheckWebhookNameIsDNS1123SubDomain)", ""},
	{CodeConversionCRDShared, Refused, "Two conversion webhooks convert the same CRD.", srcValidators + " (CheckConversionWebhookCRDReferenceUniqueness)", ""},
	{CodeConversionCRDNotOwned, Refused, "A conversion webhook converts a CRD the CSV does not own.", srcValidators + " (CheckConversionWebhooksReferenceOwnedCRDs)", ""},
	{CodeConversionPreserve, Refused, "A CRD a conversion webhook converts has spec.preserveUnknownFields: true.", srcGenerators, ""},
	{CodeWebhookRuleForbidden, Refused, "An admission webhook rule targets every API group, OLM v1's olm.operatorframework.io, or admission webhook configurations.", srcValidators + " (CheckWebhookRules)", ""},
	{CodeObjectUnsupported, Refused, "A manifest is of a kind registry+v1 bundles may not hold.", srcValidators + " (CheckObjectSupport)", ""},
	{CodeOperatorCondition, Migration, "The CSV asks for permissions on OperatorConditions, an OLM classic API OLM v1 does not serve.", srcLimits + "; " + srcMigration, ""},
	{CodeClassicAPI, Migration, "The CSV asks for permissions on OLM classic's APIs (subscriptions, installplans, clusterserviceversions, catalogsources) and none on OLM v1's.", srcMigration + " (checkOLMv0APIAccess)", ""},
	{CodeManifestsNotRead, NotChecked, "The catalog holds no manifests for the bundle (olm.csv.metadata only): webhooks, deployments, CRDs and permissions were not checked.", "", ""},
	{CodeDependenciesNotChecked, NotChecked, "opm render cannot render the bundle directory, so its properties (and dependencies) are unknown.", "", ""},

	{CodePickRefused, Refused, "The bundle a ClusterExtension installs for the package (or one of its channels) is one OLM v1 refuses.", "internal/operator-controller/resolve/catalog.go (CatalogResolver.Resolve)", ""},
	{CodeUpgradeRefused, Conditional, "From a bundle OLM v1 installs, its upgrade goes to a bundle it refuses: installations stay where they are.", "internal/operator-controller/resolve/catalog.go (CatalogResolver.Resolve)", ""},
	{CodeUpgradeDiffers, Migration, "From a bundle, OLM v1 upgrades to another bundle than OLM classic in the same channel.", "internal/operator-controller/catalogmetadata/filter/successors.go", ""},
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
