package validate

import "github.com/opmkit/opm/pkg/model"

// Rule describes one rule code.
type Rule struct {
	Code string
	// Upstream reports whether upstream opm enforces the rule (its
	// findings are errors); other rules are warnings unless --strict.
	Upstream bool
	// Summary is a one-line description.
	Summary string
}

// Rules lists every rule code, in documentation order.
var Rules = []Rule{
	{CodeLoad, true, "A file cannot be parsed as FBC (JSON or YAML syntax, missing or non-string schema, duplicate keys, a typed parse error)."},

	{model.CodePackageNoName, true, "An olm.package blob has no name."},
	{model.CodePackageDuplicate, true, "Two olm.package blobs have the same name."},
	{model.CodePackageNameInvalid, true, "A package name is not a lowercase RFC 1123 label."},
	{model.CodeChannelUnknownPackage, true, "An olm.channel names a package with no olm.package blob."},
	{model.CodeChannelNoName, true, "An olm.channel blob has no name."},
	{model.CodeChannelDuplicate, true, "Two olm.channel blobs of a package have the same name."},
	{model.CodeChannelDuplicateEntry, true, "A channel lists the same bundle twice."},
	{model.CodeBundleNoPackage, true, "An olm.bundle blob has no package."},
	{model.CodeBundleUnknownPackage, true, "An olm.bundle names a package with no olm.package blob."},
	{model.CodeBundleDuplicate, true, "Two olm.bundle blobs of a package have the same name."},
	{model.CodeBundlePropertiesInvalid, true, "A bundle property value does not parse as its type."},
	{model.CodeBundlePackagePropCount, true, "A bundle does not have exactly one olm.package property."},
	{model.CodeBundlePackagePropMismatch, true, "A bundle's olm.package property names another package."},
	{model.CodeBundleImageInvalid, true, "A bundle's image is not a valid image pull spec."},
	{model.CodeBundleRelatedImageInvalid, true, "A related image is not a valid image pull spec."},
	{model.CodeBundleVersionInvalid, true, "A bundle version is not strict semver."},
	{model.CodeBundleReleaseInvalid, true, "A bundle release is not a valid release string."},
	{model.CodeBundleNotInChannel, true, "A bundle is listed by no channel."},
	{model.CodeChannelEntryNoBundle, true, "Channel entries have no olm.bundle blob."},
	{model.CodeDeprecationNoPackage, true, "An olm.deprecations blob has no package."},
	{model.CodeDeprecationUnknownPackage, true, "An olm.deprecations blob names an unknown package."},
	{model.CodeDeprecationDuplicate, true, "A package has more than one olm.deprecations blob."},
	{model.CodeDeprecationNoSchema, true, "A deprecation entry's reference has no schema."},
	{model.CodeDeprecationDuplicateEntry, true, "Two deprecation entries have the same reference."},
	{model.CodeDeprecationBundleNotFound, true, "A deprecation entry names a bundle the package does not have."},
	{model.CodeDeprecationChannelMissing, true, "A deprecation entry names a channel the package does not have."},
	{model.CodeDeprecationPackageNamed, true, "A package deprecation entry has a name."},
	{model.CodeDeprecationSchemaUnknown, true, "A deprecation entry references an unknown schema."},

	{model.CodePackageNameEmpty, true, "A package in the model has no name."},
	{model.CodePackageNoDefaultChannel, true, "A package has no default channel."},
	{model.CodePackageNoChannels, true, "A package has no channel."},
	{model.CodePackageChannelKey, true, "Internal: a channel is filed under another name."},
	{model.CodePackageChannelLink, true, "Internal: a channel is not linked to its package."},
	{model.CodePackageDuplicateVersions, true, "Several bundles of a package have the same version."},
	{model.CodePackageDefaultNotFound, true, "Internal: the default channel is not among the package's channels."},
	{model.CodeDeprecationNoMessage, true, "A deprecation entry has no message."},
	{model.CodeChannelNameEmpty, true, "A channel in the model has no name."},
	{model.CodeChannelNoPackage, true, "Internal: a channel has no package."},
	{model.CodeChannelEmpty, true, "A channel has no bundle (often: the default channel does not exist)."},
	{model.CodeChannelNoHead, true, "Every entry of a channel is replaced or skipped: there is no head."},
	{model.CodeChannelMultipleHeads, true, "Several entries of a channel are replaced or skipped by none."},
	{model.CodeChannelCycle, true, "The replaces chain of a channel loops."},
	{model.CodeChannelStranded, true, "Entries of a channel are neither on the replaces chain from the head nor skipped."},
	{model.CodeChannelBundleKey, true, "Internal: a bundle is filed under another name."},
	{model.CodeChannelBundleLink, true, "Internal: a bundle is not linked to its channel."},
	{model.CodeBundleNameEmpty, true, "A bundle in the model has no name."},
	{model.CodeBundleNameNotNormalized, true, "A bundle with a release is not named <package>-v<version>-<release>."},
	{model.CodeBundleChannelUnset, true, "Internal: a bundle has no channel."},
	{model.CodeBundlePackageUnset, true, "Internal: a bundle has no package."},
	{model.CodeBundlePackageChannel, true, "Internal: a bundle's package differs from its channel's."},
	{model.CodeBundleSkipEmpty, true, "A skips list holds an empty name."},
	{model.CodeBundleSkipRangeInvalid, true, "A skipRange does not parse as a semver range."},
	{model.CodeBundlePackagePropMissing, true, "A channel entry's bundle has no olm.package property (often: no olm.bundle blob)."},
	{model.CodeBundleImageMissing, true, "A bundle has neither an image nor olm.bundle.object properties."},
	{model.CodeBundleBuildMetaAndRelease, true, "A bundle has both build metadata in its version and a release."},

	{CodeSchema, false, "A blob or property value does not satisfy opm's CUE schemas."},
	{CodeCustomSchema, true, "A blob does not satisfy a schema given with --schema-dir."},

	{CodeSkipRangeVPrefix, false, "A skipRange writes versions with a \"v\" prefix."},
	{CodeSkipRangeCoversNone, false, "A skipRange covers none of the package's versions, and is not a range of older versions that were pruned."},
	{CodeVersionShared, false, "Bundles of a package share a version, differing only in build metadata."},
	{CodeEdgeTargetMissing, false, "A replaces or skips names a bundle that exists nowhere in the package, and is not pruned history."},
	{CodeSkippedAndReplaced, false, "A bundle on the replaces chain is also skipped, so the chain stops there."},
	{CodePackageRequiredUnmet, false, "An olm.package.required no bundle in the catalog satisfies."},
	{CodeGVKRequiredUnmet, false, "An olm.gvk.required no bundle in the catalog provides."},
	{CodeVersionRangeInvalid, false, "An olm.package.required versionRange does not parse."},
	{CodeConstraintKindMissing, false, "An olm.constraint has none of gvk, package, cel, all, any or not."},
	{CodeMaxOpenShiftInvalid, false, "A bundle's olm.maxOpenShiftVersion is not a <major>.<minor> version, or is given more than once."},
	{CodeDependenciesUnresolvable, false, "A channel head's dependencies cannot be resolved from the catalog and the --with catalogs (--check-dependencies)."},
	{CodeDependenciesUndecided, false, "The dependency check could not decide a channel head (the solver budget, or the CEL cost limit, was spent): it and the heads after it were not checked (--check-dependencies)."},
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
