package validate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/distribution/reference"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/pkg/declcfg"
)

// The release gate.
//
// What gets a catalog rejected before release is checked by each pipeline
// in its own scripts: Konflux's validate-fbc task, Red Hat's
// operator-pipelines static tests, Conforma's OLM policy rules. These
// rules check the same things, with positions and opm's output formats.
// None runs unless a target OpenShift version (--ocp-version, or the
// catalog image's label) or a policy (--policy, presets konflux and
// community, see policy.go) turns it on; a policy also sets each rule's
// severity and the allow-lists (registries, object kinds). A rule that is
// on but cannot run (no target version, a target whose Kubernetes version
// opm does not know, bundles whose manifests the catalog does not carry)
// says so with a release-not-checked finding.

// Rule codes of the release gate.
const (
	CodeMetadataFormat        = "bundle-metadata-format"
	CodeMaxOpenShiftBelow     = "max-openshift-version-below-target"
	CodeMinKubeAboveTarget    = "min-kube-version-above-target"
	CodeObjectKind            = "bundle-object-kind-unsupported"
	CodeVersionsExcludeTarget = "openshift-versions-exclude-target"
	CodeVersionsInvalid       = "openshift-versions-invalid"
	CodeVersionsWider         = "openshift-versions-wider-than-replaced"
	CodeMinKubeConflict       = "min-kube-version-conflict"
	CodeReplacesItself        = "bundle-replaces-itself"
	CodeBundleImageDigest     = "bundle-image-not-pinned"
	CodeRelatedImageDigest    = "related-image-not-pinned"
	CodeBundleImageRegistry   = "bundle-image-registry-not-allowed"
	CodeRelatedImageRegistry  = "related-image-registry-not-allowed"
	CodeCatalogEmpty          = "catalog-empty"
	CodeDirectoryEmpty        = "directory-empty"
	CodePackageDirMissing     = "package-directory-missing"
	CodeLifecycleInvalid      = "lifecycle-invalid"
	CodeLifecycleUnknownPkg   = "lifecycle-unknown-package"
	CodeLifecycleDuplicate    = "lifecycle-duplicate"
	CodeLifecycleMissing      = "lifecycle-missing"
	CodeLifecycleVersion      = "lifecycle-version-missing"
	CodeLifecyclePlatform     = "lifecycle-platform-excludes-target"
	CodeGateNotChecked        = "release-not-checked"
)

// GateRule describes a release gate rule.
type GateRule struct {
	Code    string
	Summary string
	// Target marks the rules about a target OpenShift version: a target
	// alone (--ocp-version) turns them on, at Level.
	Target bool
	Level  Severity
}

// GateRules lists the release gate rules, in documentation order.
var GateRules = []GateRule{
	{CodeMetadataFormat, "Bundles do not carry the metadata format of the target OpenShift version: olm.bundle.object below 4.17, olm.csv.metadata from 4.17.", true, SeverityError},
	{CodeMaxOpenShiftBelow, "A bundle's olm.maxOpenShiftVersion is below the target OpenShift version.", true, SeverityError},
	{CodeMinKubeAboveTarget, "A bundle's minKubeVersion is above the Kubernetes version of the target OpenShift version (or does not parse).", true, SeverityError},
	{CodeObjectKind, "A bundle object is of a kind OLM does not install on the target OpenShift version (or the policy does not allow).", true, SeverityError},
	{CodeVersionsExcludeTarget, "A bundle's com.redhat.openshift.versions does not include the target OpenShift version.", true, SeverityWarning},
	{CodeLifecycleMissing, "A package with bundles has no lifecycle blob, in a catalog for OpenShift 5 or later.", true, SeverityError},
	{CodeLifecyclePlatform, "The lifecycle of a version the catalog ships lists OpenShift versions without the target.", true, SeverityWarning},
	{CodeVersionsInvalid, "A bundle's com.redhat.openshift.versions does not parse.", false, SeverityError},
	{CodeVersionsWider, "A bundle claims OpenShift versions (com.redhat.openshift.versions) the bundle it replaces does not.", false, SeverityError},
	{CodeMinKubeConflict, "A bundle's minKubeVersion is above the Kubernetes version of OpenShift versions it claims.", false, SeverityError},
	{CodeReplacesItself, "A channel entry replaces or skips itself.", false, SeverityError},
	{CodeBundleImageDigest, "A bundle image is not pinned by digest.", false, SeverityError},
	{CodeRelatedImageDigest, "A related image is not pinned by digest.", false, SeverityError},
	{CodeBundleImageRegistry, "A bundle image is not from a registry the policy allows.", false, SeverityError},
	{CodeRelatedImageRegistry, "A related image is not from a registry the policy allows.", false, SeverityError},
	{CodeCatalogEmpty, "The catalog has no package with a bundle.", false, SeverityError},
	{CodeDirectoryEmpty, "A directory of the catalog holds no blob (it is empty, or holds only ignored or empty files).", false, SeverityError},
	{CodePackageDirMissing, "The catalog directory has no subdirectory: Konflux expects one per package.", false, SeverityError},
	{CodeLifecycleInvalid, "An io.openshift.operators.lifecycles.v1alpha1 blob does not have the lifecycle's shape (CUE schema #Lifecycle, dates, phases).", false, SeverityError},
	{CodeLifecycleUnknownPkg, "A lifecycle blob names a package the catalog does not have.", false, SeverityError},
	{CodeLifecycleDuplicate, "A package has more than one lifecycle blob.", false, SeverityError},

	{CodeLifecycleVersion, "The lifecycle of a package lists no version for the <major>.<minor> of some of its bundles.", false, SeverityWarning},
	{CodeGateNotChecked, "A release gate rule that is on could not run (no target version, an unknown Kubernetes version, manifests the catalog does not carry).", false, SeverityWarning},
}

// GateRuleByCode returns the release gate rule of a code.
func GateRuleByCode(code string) (GateRule, bool) {
	for _, r := range GateRules {
		if r.Code == code {
			return r, true
		}
	}
	return GateRule{}, false
}

func init() {
	for _, r := range GateRules {
		Rules = append(Rules, Rule{Code: r.Code, Summary: "Release gate (--ocp-version, --policy): " + r.Summary})
	}
}

// GateOptions turn on release gate rules.
type GateOptions struct {
	// Levels are the rules that are on and the severity of their
	// findings; a rule not in Levels is off.
	Levels map[string]Severity
	// Target is the OpenShift version the catalog is for, and TargetFrom
	// where it was read ("--ocp-version", a label of the image, ...).
	Target     *ocpversion.Version
	TargetFrom string
	// Kube is the Kubernetes version of Target: opm's table, or the
	// policy's kubeVersion; nil when unknown.
	Kube *ocpversion.Version
	// BundleRegistries and RelatedImageRegistries are the allowed prefixes
	// of bundle and related images.
	BundleRegistries       []string
	RelatedImageRegistries []string
	// Kinds are object kinds the policy accepts besides those OLM
	// installs on the target.
	Kinds []string
	// Policy names the policy applied ("" for none).
	Policy string
}

// On reports whether a rule is on.
func (o *GateOptions) On(code string) bool { return o.on(code) }

func (o *GateOptions) on(code string) bool {
	if o == nil {
		return false
	}
	_, ok := o.Levels[code]
	return ok
}

// GateSummary is what the release gate checked, for the output.
type GateSummary struct {
	Policy     string `json:"policy,omitempty"`
	OpenShift  string `json:"openShiftVersion,omitempty"`
	From       string `json:"openShiftVersionFrom,omitempty"`
	Kubernetes string `json:"kubernetesVersion,omitempty"`
	// Rules are the rules that were on, with their severity.
	Rules map[string]Severity `json:"rules"`
}

func (o *GateOptions) summary() *GateSummary {
	s := &GateSummary{Policy: o.Policy, From: o.TargetFrom, Rules: o.Levels}
	if o.Target != nil {
		s.OpenShift = o.Target.String()
	}
	if o.Kube != nil {
		s.Kubernetes = o.Kube.String()
	}
	return s
}

// Text is the summary line of text output.
func (s *GateSummary) Text() string {
	var sb strings.Builder
	sb.WriteString("release gate: ")
	if s.Policy != "" {
		sb.WriteString("policy " + s.Policy + ", ")
	}
	if s.OpenShift != "" {
		sb.WriteString("OpenShift " + s.OpenShift)
		if s.Kubernetes != "" {
			sb.WriteString(" (Kubernetes " + s.Kubernetes + ")")
		}
		if s.From != "" {
			sb.WriteString(" from " + s.From)
		}
		sb.WriteString(", ")
	} else {
		sb.WriteString("no target OpenShift version, ")
	}
	n := len(s.Rules)
	if n == 1 {
		sb.WriteString("1 rule on")
	} else {
		sb.WriteString(strconv.Itoa(n) + " rules on")
	}
	return sb.String()
}

// gateFacts are what the release gate gathers across groups.
type gateFacts struct {
	// withBundles counts the packages that have a bundle.
	withBundles int
}

// gateFinding builds a finding of a release gate rule at a blob, with the
// rule's severity, and places it.
func (g *group) gateFinding(o *GateOptions, code string, at blobID, path, pkg, ch, bundle, help, format string, args ...any) Finding {
	f := Finding{Severity: o.Levels[code], Code: code, Message: fmt.Sprintf(format, args...),
		Package: pkg, Channel: ch, Bundle: bundle, Path: path, Help: help, at: at}
	g.finish(&f)
	return f
}

// gateChecks runs the release gate rules of one group.
func (g *group) gateChecks(o *GateOptions, sc *schemaChecker, facts *gateFacts) []Finding {
	cfg := g.cfg
	if len(cfg.Packages) > 0 && len(cfg.Bundles) > 0 {
		facts.withBundles++
	}
	var out []Finding
	bundleAt := func(i int) blobID { return blobID{kind: declcfg.KindBundle, i: i, ok: true} }
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		out = append(out, g.imageChecks(o, b, bundleAt(i))...)
	}
	if o.on(CodeReplacesItself) {
		for ci := range cfg.Channels {
			ch := &cfg.Channels[ci]
			at := blobID{kind: declcfg.KindChannel, i: ci, ok: true}
			for ei, e := range ch.Entries {
				if e.Replaces != "" && e.Replaces == e.Name {
					out = append(out, g.gateFinding(o, CodeReplacesItself, at, fmt.Sprintf("entries[%d].replaces", ei), ch.Package, ch.Name, e.Name,
						"name the bundle this one upgrades from, or drop replaces",
						"bundle %q replaces itself, so channel %q has no head OLM can find", e.Name, ch.Name))
				}
				for si, s := range e.Skips {
					if s == e.Name {
						out = append(out, g.gateFinding(o, CodeReplacesItself, at, fmt.Sprintf("entries[%d].skips[%d]", ei, si), ch.Package, ch.Name, e.Name,
							"drop the bundle's own name from its skips",
							"bundle %q skips itself, so channel %q has no head OLM can find", e.Name, ch.Name))
					}
				}
			}
		}
	}
	out = append(out, g.targetChecks(o)...)
	out = append(out, g.lifecycleChecks(o, sc)...)
	return out
}

// imageChecks checks a bundle's image and related images: pinned by
// digest, from allowed registries.
func (g *group) imageChecks(o *GateOptions, b *declcfg.Bundle, at blobID) []Finding {
	var out []Finding
	check := func(ref, path, what string, digestCode, registryCode string, allowed []string) {
		if ref == "" {
			return
		}
		if o.on(digestCode) && !pinned(ref) {
			out = append(out, g.gateFinding(o, digestCode, at, path, b.Package, "", b.Name,
				"refer to the image by digest (image@sha256:...), so that what was tested is what clusters install",
				"%s %q of bundle %q is not pinned by digest", what, ref, b.Name))
		}
		if o.on(registryCode) && !allowedRegistry(ref, allowed) {
			out = append(out, g.gateFinding(o, registryCode, at, path, b.Package, "", b.Name,
				"the policy allows "+strings.Join(quoteAll(allowed), ", ")+": publish the image there, or change the policy's allow list",
				"%s %q of bundle %q is not from an allowed registry", what, ref, b.Name))
		}
	}
	check(b.Image, "image", "image", CodeBundleImageDigest, CodeBundleImageRegistry, o.BundleRegistries)
	for i, ri := range b.RelatedImages {
		check(ri.Image, fmt.Sprintf("relatedImages[%d].image", i), "related image", CodeRelatedImageDigest, CodeRelatedImageRegistry, o.RelatedImageRegistries)
	}
	return out
}

// pinned reports whether ref names its image by digest. A reference that
// does not parse is left to the upstream rules (bundle-image-invalid).
func pinned(ref string) bool {
	r, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return true
	}
	_, ok := r.(reference.Digested)
	return ok
}

// allowedRegistry reports whether ref starts with one of the prefixes, as
// written or in its normalized form (docker.io/library/busybox for
// busybox).
func allowedRegistry(ref string, prefixes []string) bool {
	full := ref
	if r, err := reference.ParseNormalizedNamed(ref); err == nil {
		full = r.String()
	}
	for _, p := range prefixes {
		if strings.HasPrefix(ref, p) || strings.HasPrefix(full, p) {
			return true
		}
	}
	return false
}

// catalogGateFindings are the findings about the whole catalog: no
// package with a bundle, and rules that could not run for want of a
// target or its Kubernetes version.
func catalogGateFindings(o *GateOptions, facts gateFacts) []Finding {
	var out []Finding
	add := func(code, help, format string, args ...any) {
		out = append(out, Finding{Severity: o.Levels[code], Code: code, Message: fmt.Sprintf(format, args...), Help: help, ref: -1})
	}
	if o.on(CodeCatalogEmpty) && facts.withBundles == 0 {
		add(CodeCatalogEmpty, "add at least one package with a channel and a bundle (Konflux's validate-fbc refuses a catalog without)",
			"the catalog has no package with a bundle")
	}
	if !o.on(CodeGateNotChecked) {
		return out
	}
	var needTarget, needKube []string
	for _, r := range GateRules {
		if !o.on(r.Code) {
			continue
		}
		if r.Target && o.Target == nil {
			needTarget = append(needTarget, r.Code)
		}
		if o.Target != nil && o.Kube == nil && r.Code == CodeMinKubeAboveTarget {
			needKube = append(needKube, r.Code)
		}
	}
	if len(needTarget) > 0 {
		add(CodeGateNotChecked, "give --ocp-version 4.x, or ocpVersion in the policy, or label the catalog image (com.redhat.fbc.openshift.version)",
			"no target OpenShift version: %s not checked", strings.Join(needTarget, ", "))
	}
	if len(needKube) > 0 {
		add(CodeGateNotChecked, fmt.Sprintf("give kubeVersion in the policy; opm knows OpenShift versions up to %s", ocpversion.Newest),
			"the Kubernetes version of OpenShift %s is unknown to opm: %s not checked", o.Target, strings.Join(needKube, ", "))
	}
	return out
}

// notChecked reports, for one package, bundles a rule could not check.
func (g *group) notChecked(o *GateOptions, code string, bundles []string, why string) []Finding {
	if len(bundles) == 0 || !o.on(CodeGateNotChecked) {
		return nil
	}
	sort.Strings(bundles)
	pkg := g.name
	at := blobID{}
	if len(g.cfg.Packages) > 0 {
		at = blobID{kind: declcfg.KindPackage, i: 0, ok: true}
	}
	list := strings.Join(quoteAll(bundles), ", ")
	if len(bundles) > 3 {
		list = strings.Join(quoteAll(bundles[:3]), ", ") + fmt.Sprintf(" and %d more", len(bundles)-3)
	}
	return []Finding{g.gateFinding(o, CodeGateNotChecked, at, "", pkg, "", "", "",
		"package %q: %s not checked for %s: %s", pkg, code, plural(len(bundles), "bundle", "bundles")+" ("+list+")", why)}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
