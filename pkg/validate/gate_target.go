package validate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// Rules about OpenShift versions: the target's (--ocp-version) and those a
// bundle claims in its CSV's com.redhat.openshift.versions annotation.

// csvMetadataThreshold is the first OpenShift version whose catalogs carry
// olm.csv.metadata instead of olm.bundle.object (Konflux validate-fbc).
var csvMetadataThreshold = ocpversion.Version{Major: 4, Minor: 17}

// baseKinds are the object kinds OLM classic installs from a bundle on
// every OpenShift 4 version besides the CSV and its CRDs (the list of
// Conforma's allowed_olm_resource_kinds, which follows operator-registry's
// supported kinds).
var baseKinds = []string{
	"ClusterServiceVersion", "CustomResourceDefinition", "Secret", "ClusterRole", "ClusterRoleBinding",
	"ConfigMap", "ServiceAccount", "Service", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
	"PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample",
	"ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin",
}

// laterKinds are the kinds OLM installs from an OpenShift version on:
// NetworkPolicy from 4.20 (operator-registry v1.55; backported to the
// z-streams of 4.12 to 4.19 in 2025), PodMonitor from 4.21
// (operator-registry #1795).
var laterKinds = map[string]struct {
	since    ocpversion.Version
	backport *ocpversion.Version
}{
	"NetworkPolicy": {ocpversion.Version{Major: 4, Minor: 20}, &ocpversion.Version{Major: 4, Minor: 12}},
	"PodMonitor":    {ocpversion.Version{Major: 4, Minor: 21}, nil},
}

// kindSupported says whether OLM installs objects of kind on target, and
// what to say when it does not.
func kindSupported(kind string, target ocpversion.Version, extra []string) (ok bool, why string) {
	if slices.Contains(baseKinds, kind) || slices.Contains(extra, kind) {
		return true, ""
	}
	if k, known := laterKinds[kind]; known {
		switch {
		case target.Compare(k.since) >= 0:
			return true, ""
		case k.backport != nil && target.Compare(*k.backport) >= 0:
			return false, fmt.Sprintf("OLM installs %s objects from OpenShift %s on, and on %s only from the z-stream release that backported them", kind, k.since, target)
		}
		return false, fmt.Sprintf("OLM installs %s objects from OpenShift %s on", kind, k.since)
	}
	return false, "OLM does not install objects of this kind from a bundle"
}

// bundleObject is what the gate reads of one olm.bundle.object manifest.
type bundleObject struct {
	prop int
	head objectHead
}

type objectHead struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		MinKubeVersion string `json:"minKubeVersion"`
	} `json:"spec"`
}

// gateBundle is what the target rules read of one bundle.
type gateBundle struct {
	b                   *declcfg.Bundle
	i                   int
	objProps, metaProps []int
	objects             []bundleObject
	// minKube and claim are the CSV's minKubeVersion and
	// com.redhat.openshift.versions annotation, with their paths.
	minKube, minKubePath string
	claim, claimPath     string
	hasClaim             bool
}

func readGateBundle(b *declcfg.Bundle, i int, decode bool) *gateBundle {
	gb := &gateBundle{b: b, i: i}
	for k, p := range b.Properties {
		switch p.Type {
		case property.TypeBundleObject:
			gb.objProps = append(gb.objProps, k)
			if !decode {
				continue
			}
			data, ok := property.BundleObjectData(p.Value)
			if !ok {
				continue
			}
			var h objectHead
			if json.Unmarshal(data, &h) != nil && yaml.Unmarshal(data, &h) != nil {
				continue
			}
			gb.objects = append(gb.objects, bundleObject{prop: k, head: h})
			if h.Kind == "ClusterServiceVersion" {
				at := "properties[" + strconv.Itoa(k) + "]"
				if h.Spec.MinKubeVersion != "" && gb.minKube == "" {
					gb.minKube, gb.minKubePath = h.Spec.MinKubeVersion, at
				}
				if c, ok := h.Metadata.Annotations[ocpversion.VersionsLabel]; ok && !gb.hasClaim {
					gb.claim, gb.claimPath, gb.hasClaim = c, at, true
				}
			}
		case property.TypeCSVMetadata:
			gb.metaProps = append(gb.metaProps, k)
			if !decode {
				continue
			}
			var m struct {
				Annotations    map[string]string `json:"annotations"`
				MinKubeVersion string            `json:"minKubeVersion"`
			}
			if json.Unmarshal(p.Value, &m) != nil {
				continue
			}
			at := "properties[" + strconv.Itoa(k) + "].value"
			if m.MinKubeVersion != "" && gb.minKube == "" {
				gb.minKube, gb.minKubePath = m.MinKubeVersion, at+".minKubeVersion"
			}
			if c, ok := m.Annotations[ocpversion.VersionsLabel]; ok && !gb.hasClaim {
				gb.claim, gb.claimPath, gb.hasClaim = c, at+`.annotations."`+ocpversion.VersionsLabel+`"`, true
			}
		}
	}
	return gb
}

// targetChecks runs the rules about the target and claimed OpenShift
// versions on the group's bundles.
func (g *group) targetChecks(o *GateOptions) []Finding {
	cfg := g.cfg
	target := o.Target
	onTarget := func(code string) bool { return target != nil && o.on(code) }
	decode := onTarget(CodeObjectKind) || onTarget(CodeMinKubeAboveTarget) || onTarget(CodeVersionsExcludeTarget) ||
		o.on(CodeVersionsInvalid) || o.on(CodeVersionsWider) || o.on(CodeMinKubeConflict)
	if !decode && !onTarget(CodeMetadataFormat) && !onTarget(CodeMaxOpenShiftBelow) {
		return nil
	}
	bound := ocpversion.Newest
	if target != nil && target.Compare(bound) > 0 {
		bound = *target
	}
	var out []Finding
	var noObjects []string
	claims := map[string]*ocpversion.Range{}
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		gb := readGateBundle(b, i, decode)
		at := blobID{kind: declcfg.KindBundle, i: i, ok: true}
		add := func(code, path, help, format string, args ...any) {
			out = append(out, g.gateFinding(o, code, at, path, b.Package, "", b.Name, help, format, args...))
		}
		if onTarget(CodeMetadataFormat) {
			out = append(out, g.metadataFormat(o, gb, at)...)
		}
		if onTarget(CodeMaxOpenShiftBelow) {
			if max, err := graph.BundleMaxOpenShiftVersion(b); err == nil && max != nil {
				if max.Compare(*target) < 0 {
					add(CodeMaxOpenShiftBelow, maxOpenShiftPath(b), "ship a bundle whose olm.maxOpenShiftVersion is "+target.String()+" or later in this catalog, or raise the value if the bundle runs there",
						"bundle %q has olm.maxOpenShiftVersion %s, below the target OpenShift %s: once installed there, OLM marks the cluster not upgradeable", b.Name, max, target)
				}
			}
		}
		if onTarget(CodeMinKubeAboveTarget) && o.Kube != nil && gb.minKube != "" {
			k, err := ocpversion.ParseKube(gb.minKube)
			switch {
			case err != nil:
				add(CodeMinKubeAboveTarget, gb.minKubePath, "write minKubeVersion as a Kubernetes version such as 1.25.0",
					"bundle %q has an invalid minKubeVersion: %v", b.Name, err)
			case k.Compare(*o.Kube) > 0:
				add(CodeMinKubeAboveTarget, gb.minKubePath, "OLM refuses to install a CSV whose minKubeVersion the cluster does not meet: lower minKubeVersion, or leave the bundle out of this catalog",
					"bundle %q requires Kubernetes %s (minKubeVersion %s), above the Kubernetes %s of the target OpenShift %s", b.Name, k, gb.minKube, o.Kube, target)
			}
		}
		if onTarget(CodeObjectKind) {
			if len(gb.objProps) == 0 {
				noObjects = append(noObjects, b.Name)
			}
			for _, obj := range gb.objects {
				if ok, why := kindSupported(obj.head.Kind, *target, o.Kinds); !ok {
					add(CodeObjectKind, "properties["+strconv.Itoa(obj.prop)+"]", why+"; remove the object from the bundle, or allow the kind in the policy (allow.kinds) if your clusters install it",
						"bundle %q holds %s %q, which OLM on OpenShift %s does not install", b.Name, obj.head.Kind, obj.head.Metadata.Name, target)
				}
			}
		}
		if !gb.hasClaim {
			continue
		}
		r, err := ocpversion.ParseRange(gb.claim)
		if err != nil {
			if o.on(CodeVersionsInvalid) {
				add(CodeVersionsInvalid, gb.claimPath, `write "v4.12" (that version and later), "=v4.12" (that version only) or "v4.12-v4.14"`,
					"bundle %q: %v", b.Name, err)
			}
			continue
		}
		claims[b.Name] = &r
		if onTarget(CodeVersionsExcludeTarget) && !r.Contains(*target) {
			add(CodeVersionsExcludeTarget, gb.claimPath, "leave the bundle out of this catalog, or widen its com.redhat.openshift.versions if it runs there",
				"bundle %q claims OpenShift %s (com.redhat.openshift.versions %q), which does not include the target %s", b.Name, r, gb.claim, target)
		}
		if o.on(CodeMinKubeConflict) && gb.minKube != "" {
			if k, err := ocpversion.ParseKube(gb.minKube); err == nil {
				var bad []string
				for _, v := range ocpversion.Known() {
					if kv, _ := ocpversion.Kube(v); r.Contains(v) && kv.Compare(k) < 0 {
						bad = append(bad, v.String())
					}
				}
				if len(bad) > 0 {
					verb := "ships"
					if len(bad) > 1 {
						verb = "ship"
					}
					add(CodeMinKubeConflict, gb.minKubePath, "raise the lower end of com.redhat.openshift.versions, or lower minKubeVersion",
						"bundle %q claims OpenShift %s but requires Kubernetes %s (minKubeVersion %s): OpenShift %s %s an older Kubernetes", b.Name, r, k, gb.minKube, strings.Join(bad, ", "), verb)
				}
			}
		}
	}
	if onTarget(CodeObjectKind) {
		out = append(out, g.notChecked(o, CodeObjectKind, noObjects, "the catalog carries no olm.bundle.object for them, so their manifests are not known here")...)
	}
	if o.on(CodeVersionsWider) {
		out = append(out, g.widerThanReplaced(o, claims, bound)...)
	}
	return out
}

// metadataFormat checks one bundle's metadata format against the target.
func (g *group) metadataFormat(o *GateOptions, gb *gateBundle, at blobID) []Finding {
	b, target := gb.b, *o.Target
	var out []Finding
	add := func(path, help, format string, args ...any) {
		out = append(out, g.gateFinding(o, CodeMetadataFormat, at, path, b.Package, "", b.Name, help, format, args...))
	}
	prop := func(k int) string { return "properties[" + strconv.Itoa(k) + "]" }
	if target.Compare(csvMetadataThreshold) >= 0 {
		if len(gb.objProps) > 0 {
			add(prop(gb.objProps[0]), "migrate the catalog: opm render CATALOG --migrate-level bundle-object-to-csv-metadata",
				"bundle %q carries olm.bundle.object, which a catalog for OpenShift %s must not: from %s bundles carry olm.csv.metadata", b.Name, target, csvMetadataThreshold)
		} else if len(gb.metaProps) == 0 {
			add("", "render the bundle with opm render --migrate-level bundle-object-to-csv-metadata",
				"bundle %q has no olm.csv.metadata property, which every bundle of a catalog for OpenShift %s must have", b.Name, target)
		}
		return out
	}
	if len(gb.metaProps) > 0 {
		add(prop(gb.metaProps[0]), "render the bundle without --migrate-level bundle-object-to-csv-metadata, so that it carries olm.bundle.object",
			"bundle %q carries olm.csv.metadata, which a catalog for OpenShift %s must not: below %s bundles carry their manifests as olm.bundle.object", b.Name, target, csvMetadataThreshold)
	} else if len(gb.objProps) == 0 {
		add("", "render the bundle image with opm render, which writes its manifests as olm.bundle.object properties",
			"bundle %q has no olm.bundle.object property, which every bundle of a catalog for OpenShift %s must have", b.Name, target)
	}
	return out
}

func maxOpenShiftPath(b *declcfg.Bundle) string {
	for k, p := range b.Properties {
		if p.Type == property.TypeMaxOpenShift {
			return "properties[" + strconv.Itoa(k) + "].value"
		}
	}
	return ""
}

// widerThanReplaced checks, for every replaces edge, that the bundle
// claims no OpenShift version its replaced bundle does not (both claims
// bounded by the newest version opm knows, or the target): on such a
// version the edge names a bundle the catalog does not ship.
func (g *group) widerThanReplaced(o *GateOptions, claims map[string]*ocpversion.Range, bound ocpversion.Version) []Finding {
	var out []Finding
	var unknown []string
	seen := map[string]bool{}
	for ci := range g.cfg.Channels {
		ch := &g.cfg.Channels[ci]
		at := blobID{kind: declcfg.KindChannel, i: ci, ok: true}
		for ei, e := range ch.Entries {
			if e.Replaces == "" || e.Replaces == e.Name {
				continue
			}
			nr, or := claims[e.Name], claims[e.Replaces]
			if nr == nil || or == nil {
				if !seen[e.Name] && g.hasBundle(e.Name) && g.hasBundle(e.Replaces) {
					unknown = append(unknown, e.Name)
				}
				seen[e.Name] = true
				continue
			}
			if nr.Within(*or, bound) {
				continue
			}
			out = append(out, g.gateFinding(o, CodeVersionsWider, at, fmt.Sprintf("entries[%d].replaces", ei), ch.Package, ch.Name, e.Name,
				"align the bundle's com.redhat.openshift.versions with the range of the bundle it replaces (operator-pipelines check_replaces_availability)",
				"bundle %q claims OpenShift %s (%q), but the bundle it replaces, %q, claims only %s (%q)", e.Name, nr, nr.Text, e.Replaces, or, or.Text))
		}
	}
	return append(out, g.notChecked(o, CodeVersionsWider, unknown, "a bundle or the one it replaces has no readable com.redhat.openshift.versions annotation in its CSV")...)
}

func (g *group) hasBundle(name string) bool {
	for i := range g.cfg.Bundles {
		if g.cfg.Bundles[i].Name == name {
			return true
		}
	}
	return false
}
