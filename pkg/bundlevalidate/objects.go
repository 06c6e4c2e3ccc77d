package bundlevalidate

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The other objects of a bundle, as operator-sdk checks them: their kind
// must be one a registry+v1 bundle may ship, and their metadata must be
// what the API server accepts. Their errors join the CSV validator's
// result, as upstream reports them.

// supportedKinds are the kinds a registry+v1 bundle may ship
// (operator-registry's supported resources).
var supportedKinds = map[string]bool{
	"ClusterServiceVersion":    true,
	"CustomResourceDefinition": true,
	"Secret":                   true,
	"ClusterRole":              true,
	"ClusterRoleBinding":       true,
	"ConfigMap":                true,
	"ServiceAccount":           true,
	"Service":                  true,
	"Role":                     true,
	"RoleBinding":              true,
	"PrometheusRule":           true,
	"ServiceMonitor":           true,
	"PodDisruptionBudget":      true,
	"PriorityClass":            true,
	"VerticalPodAutoscaler":    true,
	"ConsoleYAMLSample":        true,
	"ConsoleQuickStart":        true,
	"ConsoleCLIDownload":       true,
	"ConsoleLink":              true,
	"ConsolePlugin":            true,
	"NetworkPolicy":            true,
}

// SupportedKind reports whether a registry+v1 bundle may ship objects of
// kind.
func SupportedKind(kind string) bool { return supportedKinds[kind] }

func (c *checker) checkObjects(media string) {
	for _, m := range c.b.Manifests {
		if m.Object == nil || m.Kind == manifest.KindCSV || m.Kind == manifest.KindCRD {
			continue
		}
		if media == mediaRegistryV1 && !supportedKinds[m.Kind] {
			gvk := manifest.GVKOf(m.APIVersion, m.Kind)
			d := fmt.Sprintf("unsupported media type %s for bundle object", media)
			c.add(Finding{Severity: SeverityError, Code: "object-kind-unsupported", Upstream: apiError(levelError, "", str(gvk.String()), d),
				Message: fmt.Sprintf("a registry+v1 bundle cannot ship a %s (%s); OLM accepts %s", m.Kind, m.APIVersion, supportedList)},
				atManifest(m, "kind"))
			continue
		}
		md, _ := m.Object["metadata"].(map[string]any)
		if errs := validateObjectMeta(md); len(errs) > 0 {
			d := fmt.Sprintf("error validating object: %s. %s", aggregate(errs), unstructuredString(m.Object))
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.Error()
			}
			c.add(Finding{Severity: SeverityError, Code: "object-metadata-invalid", Upstream: apiError(levelError, "", str(m.Name), d),
				Message: fmt.Sprintf("%s %s: %s", m.Kind, m.Name, strings.Join(msgs, "; "))}, atManifest(m, errs[0].Field))
		}
	}
}

// supportedList names the kinds besides the CSV and CRDs.
const supportedList = "ClusterRole, ClusterRoleBinding, ConfigMap, ConsoleCLIDownload, ConsoleLink, ConsolePlugin, " +
	"ConsoleQuickStart, ConsoleYAMLSample, NetworkPolicy, PodDisruptionBudget, PriorityClass, PrometheusRule, Role, " +
	"RoleBinding, Secret, Service, ServiceAccount, ServiceMonitor, VerticalPodAutoscaler besides the CSV and CRDs"
