package bundlevalidate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The good-practices validator: resource requests, CRD descriptions,
// permissions to create CRDs, and the CSV's name.

var csvVersionSuffix = regexp.MustCompile(`([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$`)

func (c *checker) failed(sev Severity, code, detail, message string, where at) {
	c.add(Finding{Severity: sev, Code: code, Upstream: apiError(levelOf(sev), "", str(c.b.CSV.Name), detail), Message: message}, where)
}

func (c *checker) checkGoodPractices() {
	c.begin("good-practices")
	csv := c.b.CSV
	m := csv.Manifest
	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if deps == nil {
		c.failed(SeverityError, "good-practices-no-deployment", "unable to find a deployment to install in the CSV",
			"the CSV's install strategy has no deployment", atManifest(m, "spec.install.spec.deployments"))
	}
	for i, d := range deps {
		for j, ct := range d.Spec.Template.Spec.Containers {
			if ct.Resources.Requests != nil {
				continue
			}
			detail := fmt.Sprintf("unable to find the resource requests for the container: (%s). It is recommended "+
				"to ensure the resource request for CPU and Memory. Be aware that for some clusters configurations "+
				"it is required to specify requests or limits for those values. Otherwise, the system or quota may "+
				"reject Pod creation. More info: https://master.sdk.operatorframework.io/docs/best-practices/managing-resources/", ct.Name)
			c.failed(SeverityWarning, "good-practices-resource-requests", detail,
				fmt.Sprintf("container %s of deployment %s has no resource requests (CPU and memory): some clusters refuse such pods", ct.Name, d.Name),
				atManifest(m, fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.containers[%d]", i, j)))
		}
	}
	for _, part := range []struct {
		rel   string
		descs []manifest.CRDDescription
	}{{"owned", csv.Spec.CustomResourceDefinitions.Owned}, {"required", csv.Spec.CustomResourceDefinitions.Required}} {
		for i, d := range part.descs {
			if d.Description == "" {
				detail := fmt.Sprintf("%s CRD %q has an empty description", part.rel, d.Name)
				c.failed(SeverityWarning, "good-practices-crd-description", detail, detail,
					atManifest(m, "spec.customresourcedefinitions."+part.rel+"["+strconv.Itoa(i)+"]"))
			}
		}
	}
	if path, ok := crdRBACRule(csv.Spec.InstallStrategy.StrategySpec); ok {
		detail := "CSV contains permissions to create CRD. An Operator shouldn't deploy or manage " +
			"other operators (such patterns are known as meta or super operators or include CRDs in its Operands)." +
			" It's the Operator Lifecycle Manager's job to manage the deployment and lifecycle of operators. " +
			" Please, review the design of your solution and if you should not be using Dependency Resolution from OLM instead." +
			" More info: https://sdk.operatorframework.io/docs/best-practices/common-recommendation/"
		c.failed(SeverityWarning, "good-practices-crd-rbac", detail,
			"the CSV has permissions to create CRDs: an operator should not manage other operators or ship CRDs in its operands; use OLM's dependency resolution (https://sdk.operatorframework.io/docs/best-practices/common-recommendation/)",
			atManifest(m, path))
	}
	name := csv.Name
	match := csvVersionSuffix.FindString(name)
	bad := match == ""
	if !bad {
		_, err := semver.Parse(match)
		bad = err != nil
	}
	if bad {
		detail := fmt.Sprintf("csv.metadata.Name %v is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/", name)
		c.failed(SeverityWarning, "good-practices-csv-name-version", detail, fmt.Sprintf("metadata.name %s does not end with a semantic version (MAJOR.MINOR.PATCH)", name), atManifest(m, "metadata.name"))
	}
	if len(strings.Split(name, ".v")) != 2 {
		detail := fmt.Sprintf("csv.metadata.Name %v is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1", name)
		c.failed(SeverityWarning, "good-practices-csv-name", detail, fmt.Sprintf("metadata.name %s is not <operator-name>.v<semver> (e.g. memcached-operator.v0.0.1)", name), atManifest(m, "metadata.name"))
	}
}

// crdRBACRule returns the path of the first rule (permissions, then
// cluster permissions) that lets the operator create or patch CRDs.
func crdRBACRule(sd manifest.StrategyDetailsDeployment) (string, bool) {
	resources := []string{"customresourcedefinitions", "*", "[*]"}
	verbs := []string{"create", "*", "[*]", "patch"}
	for _, part := range []struct {
		path  string
		perms []manifest.StrategyDeploymentPermissions
	}{{"permissions", sd.Permissions}, {"clusterPermissions", sd.ClusterPermissions}} {
		for i, p := range part.perms {
			for j, r := range p.Rules {
				if !contains(r.APIGroups, "apiextensions.k8s.io") || !anyIn(r.Resources, resources) || !anyIn(r.Verbs, verbs) {
					continue
				}
				return fmt.Sprintf("spec.install.spec.%s[%d].rules[%d]", part.path, i, j), true
			}
		}
	}
	return "", false
}

// anyIn reports whether a value of l is in set.
func anyIn(l, set []string) bool {
	for _, x := range l {
		if contains(set, x) {
			return true
		}
	}
	return false
}
