package bundlevalidate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The deprecated-API validator (alpha-deprecated-apis, also run by
// operatorhubv2): the bundle's objects, owned CRD resources and RBAC
// rules against the APIs Kubernetes removed, as errors when the bundle
// targets (k8s-version) or requires (minKubeVersion) a release that no
// longer serves them, warnings otherwise. Upstream knows the removals of
// 1.22, 1.25 and 1.26; this table has every removal of the deprecation
// guide (https://kubernetes.io/docs/reference/using-api/deprecation-guide/),
// 1.16 to 1.32, with upstream's checks and messages for its three.

// K8sVersionKey is the --optional-values key of the target Kubernetes
// version.
const K8sVersionKey = "k8s-version"

// removal is the set of APIs one Kubernetes release removed.
type removal struct {
	version semver.Version
	// apis are the group/version and kinds removed.
	apis map[string][]string
}

var removals = []removal{
	{semver.MustParse("1.16.0"), map[string][]string{
		"extensions/v1beta1": {"NetworkPolicy", "PodSecurityPolicy", "DaemonSet", "Deployment", "ReplicaSet"},
		"apps/v1beta1":       {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"},
		"apps/v1beta2":       {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"},
	}},
	{semver.MustParse("1.22.0"), map[string][]string{
		"scheduling.k8s.io/v1beta1":            {"PriorityClass"},
		"rbac.authorization.k8s.io/v1beta1":    {"Role", "ClusterRoleBinding", "RoleBinding", "ClusterRole"},
		"apiregistration.k8s.io/v1beta1":       {"APIService"},
		"authentication.k8s.io/v1beta1":        {"TokenReview"},
		"authorization.k8s.io/v1beta1":         {"LocalSubjectAccessReview", "SelfSubjectAccessReview", "SubjectAccessReview"},
		"admissionregistration.k8s.io/v1beta1": {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"},
		"coordination.k8s.io/v1beta1":          {"Lease"},
		"extensions/v1beta1":                   {"Ingress"},
		"networking.k8s.io/v1beta1":            {"Ingress", "IngressClass"},
		"storage.k8s.io/v1beta1":               {"CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"},
		"certificates.k8s.io/v1beta1":          {"CertificateSigningRequest"},
	}},
	{semver.MustParse("1.25.0"), map[string][]string{
		"batch/v1beta1":            {"CronJob"},
		"discovery.k8s.io/v1beta1": {"EndpointSlice"},
		"events.k8s.io/v1beta1":    {"Event"},
		"autoscaling/v2beta1":      {"HorizontalPodAutoscaler"},
		"policy/v1beta1":           {"PodDisruptionBudget", "PodSecurityPolicy"},
		"node.k8s.io/v1beta1":      {"RuntimeClass"},
	}},
	{semver.MustParse("1.26.0"), map[string][]string{
		"autoscaling/v2beta2":                  {"HorizontalPodAutoscaler"},
		"flowcontrol.apiserver.k8s.io/v1beta1": {"FlowSchema", "PriorityLevelConfiguration"},
	}},
	{semver.MustParse("1.27.0"), map[string][]string{
		"storage.k8s.io/v1beta1": {"CSIStorageCapacity"},
	}},
	{semver.MustParse("1.29.0"), map[string][]string{
		"flowcontrol.apiserver.k8s.io/v1beta2": {"FlowSchema", "PriorityLevelConfiguration"},
	}},
	{semver.MustParse("1.32.0"), map[string][]string{
		"flowcontrol.apiserver.k8s.io/v1beta3": {"FlowSchema", "PriorityLevelConfiguration"},
	}},
}

// removed125 are the resources of the 1.25 removals, which upstream also
// looks for in the CSV's RBAC rules (as warnings).
var removed125 = map[[2]string]bool{
	{"batch", "cronjobs"}: true, {"discovery.k8s.io", "endpointslices"}: true, {"events.k8s.io", "events"}: true,
	{"autoscaling", "horizontalpodautoscalers"}: true, {"policy", "poddisruptionbudgets"}: true,
	{"policy", "podsecuritypolicies"}: true, {"node.k8s.io", "runtimeclasses"}: true,
}

// LatestRemoval is the newest Kubernetes release the deprecated-API
// table knows removals of.
func LatestRemoval() string { return removals[len(removals)-1].version.String() }

func (c *checker) checkDeprecatedAPIs() {
	c.begin("alpha-deprecated-apis")
	c.deprecatedAPIs()
}

// offender is one use of a removed API: its name in upstream's message,
// and where it is.
type offender struct {
	name  string
	where at
}

// deprecatedAPIs runs the checks for every removal.
func (c *checker) deprecatedAPIs() {
	b := c.b
	csv := b.CSV
	name := csv.Name
	given := c.opts.Values[K8sVersionKey]
	target, _ := semver.ParseTolerant(given)
	if given != "" {
		if _, err := semver.ParseTolerant(given); err != nil {
			d := "invalid value informed via the k8s key option : " + given
			c.add(Finding{Severity: SeverityError, Code: "deprecated-api-k8s-version", Upstream: apiError(levelError, "", str(name), d),
				Message: fmt.Sprintf("--optional-values k8s-version=%s is not a Kubernetes version", given)}, at{})
		}
	}
	var minKube semver.Version
	if v := csv.Spec.MinKubeVersion; v != "" {
		mk, err := semver.ParseTolerant(v)
		if err != nil {
			d := "unable to use csv.Spec.MinKubeVersion to verify the CRD/Webhook apis because it has an invalid value: " + v
			c.add(Finding{Severity: SeverityError, Code: "deprecated-api-min-kube-version", Upstream: apiError(levelError, "", str(name), d),
				Message: fmt.Sprintf("spec.minKubeVersion %q does not parse, so it cannot tell which removed APIs matter", v)}, atManifest(csv.Manifest, "spec.minKubeVersion"))
		}
		minKube = mk
	}
	for _, r := range removals {
		found, perms := c.removedAPIs(r)
		if len(found) > 0 {
			sev := SeverityWarning
			if target.GE(r.version) || minKube.GE(r.version) {
				sev = SeverityError
			}
			c.deprecationFinding(sev, r.version, found, false)
		}
		if len(perms) > 0 {
			c.deprecationFinding(SeverityWarning, r.version, perms, true)
		}
	}
}

func (c *checker) deprecationFinding(sev Severity, v semver.Version, found map[string][]offender, rbac bool) {
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var msg strings.Builder
	var human []string
	for _, k := range keys {
		names := make([]string, len(found[k]))
		for i, o := range found[k] {
			names[i] = strconv.QuoteToASCII(o.name)
		}
		msg.WriteString(k + ": ([" + strings.Join(names, " ") + "])")
		if len(keys) > 1 {
			msg.WriteString(",") // upstream's separator, after each
		}
		human = append(human, k+" "+strings.Join(rawNames(found[k]), ", "))
	}
	d := fmt.Sprintf("this bundle is using APIs which were deprecated and removed in v%d.%d. "+
		"More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v%d-%d. "+
		"Migrate the API(s) for %s", v.Major, v.Minor, v.Major, v.Minor, msg.String())
	what := "uses APIs"
	if rbac {
		what = "has RBAC rules for resources of APIs"
	}
	message := fmt.Sprintf("the bundle %s removed in Kubernetes %d.%d: %s (https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v%d-%d)",
		what, v.Major, v.Minor, strings.Join(human, "; "), v.Major, v.Minor)
	code := "deprecated-api-removed"
	if rbac {
		code = "deprecated-api-removed-rbac"
	}
	c.add(Finding{Severity: sev, Code: code, Upstream: apiError(levelOf(sev), "", str(c.b.CSV.Name), d), Message: message}, found[keys[0]][0].where)
}

func rawNames(os []offender) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.name
	}
	return out
}

// removedAPIs returns, by kind (or resource), the uses of the APIs r
// removed: the objects of the bundle, the resources of the CSV's CRD
// descriptions, and (for 1.25) its RBAC rules.
func (c *checker) removedAPIs(r removal) (found, perms map[string][]offender) {
	b := c.b
	found = map[string][]offender{}
	perms = map[string][]offender{}
	is := func(apiVersion, kind string) bool {
		return contains(r.apis[apiVersion], kind)
	}
	v122 := r.version.Major == 1 && r.version.Minor == 22
	v125 := r.version.Major == 1 && r.version.Minor == 25
	if v122 {
		for _, crd := range b.CRDs {
			if crd.V1beta1 {
				found["CRD"] = append(found["CRD"], offender{crd.Name, atManifest(crd.Manifest, "apiVersion")})
			}
		}
	}
	for _, m := range b.Manifests {
		if m.Object == nil {
			continue
		}
		if v125 && m.APIVersion == "operators.coreos.com/v1alpha1" && m.Kind == manifest.KindCSV {
			if m == b.CSV.Manifest {
				c.csvRemovedAPIs(r, found, perms)
			}
			continue
		}
		if is(m.APIVersion, m.Kind) {
			found[m.Kind] = append(found[m.Kind], offender{m.Name, atManifest(m, "apiVersion")})
		}
	}
	return found, perms
}

// csvRemovedAPIs looks at the CSV's CRD descriptions' resources (whose
// version upstream reads as an apiVersion) and, when their resource is
// not one of those, at its RBAC rules.
func (c *checker) csvRemovedAPIs(r removal, found, perms map[string][]offender) {
	csv := c.b.CSV
	m := csv.Manifest
	inCRDs := map[string]bool{}
	for _, part := range []struct {
		field, path string
		descs       []manifest.CRDDescription
	}{{"Owned", "owned", csv.Spec.CustomResourceDefinitions.Owned}, {"Required", "required", csv.Spec.CustomResourceDefinitions.Required}} {
		for i, d := range part.descs {
			for j, res := range d.Resources {
				inCRDs[strings.ToLower(res.Kind)+"s"] = true
				if contains(r.apis[res.Version], res.Kind) {
					name := fmt.Sprintf("ClusterServiceVersion.Spec.CustomResourceDefinitions.%s[%d].Resource[%d]", part.field, i, j)
					path := fmt.Sprintf("spec.customresourcedefinitions.%s[%d].resources[%d]", part.path, i, j)
					found[res.Kind] = append(found[res.Kind], offender{name, atManifest(m, path)})
				}
			}
		}
	}
	sd := csv.Spec.InstallStrategy.StrategySpec
	for _, part := range []struct {
		field, path string
		perms       []manifest.StrategyDeploymentPermissions
	}{{"ClusterPermissions", "clusterPermissions", sd.ClusterPermissions}, {"Permissions", "permissions", sd.Permissions}} {
		for i, p := range part.perms {
			for j, rule := range p.Rules {
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						if inCRDs[res] || !removed125[[2]string{g, res}] {
							continue
						}
						name := fmt.Sprintf("ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.%s[%d].Rules[%d]", part.field, i, j)
						path := fmt.Sprintf("spec.install.spec.%s[%d].rules[%d]", part.path, i, j)
						perms[res] = append(perms[res], offender{name, atManifest(m, path)})
					}
				}
			}
		}
	}
}
