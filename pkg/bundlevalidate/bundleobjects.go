package bundlevalidate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The bundle-objects validator (operator-framework/api's ObjectValidator,
// which operator-registry runs as `alpha bundle validate -o
// bundle-objects`): PodDisruptionBudgets that block every eviction,
// default PriorityClasses, and Roles that may change PDBs or the default
// SecurityContextConstraints. Upstream prints the whole object as the
// value of these errors; here it is its kind and name. A maxUnavailable
// given as a percentage is only refused at 0%, where upstream refuses
// every percentage.

var defaultSCCs = map[string]bool{
	"privileged": true, "restricted": true, "anyuid": true, "hostaccess": true,
	"hostmount-anyuid": true, "hostnetwork": true, "node-exporter": true, "nonroot": true,
}

func (c *checker) checkBundleObjects() {
	for _, m := range c.b.Manifests {
		if m.Object == nil {
			continue
		}
		switch m.Kind {
		case "PodDisruptionBudget":
			c.begin("bundle-objects")
			c.checkPDB(m)
		case "PriorityClass":
			c.begin("bundle-objects")
			if g, _ := m.Object["globalDefault"].(bool); g {
				c.objectErr(m, "objects-priorityclass-default", "globalDefault field cannot be set to true", "globalDefault")
			}
		case "Role", "ClusterRole":
			c.begin("bundle-objects")
			c.checkRBACObject(m)
		}
	}
}

func (c *checker) objectErr(m *manifest.Manifest, code, detail, path string) {
	value := m.Kind + "/" + m.Name
	c.add(Finding{Severity: SeverityError, Code: code, Upstream: apiError(levelError, "", str(value), detail),
		Message: fmt.Sprintf("%s %s: %s", m.Kind, m.Name, detail)}, atManifest(m, path))
}

func (c *checker) checkPDB(m *manifest.Manifest) {
	spec, _ := m.Object["spec"].(map[string]any)
	if v, ok := spec["maxUnavailable"]; ok && v != nil {
		zero := false
		switch t := v.(type) {
		case int64:
			zero = t == 0
		case float64:
			zero = t == 0
		case string:
			zero = strings.TrimSpace(t) == "0%" || t == "0"
		}
		if zero {
			c.objectErr(m, "objects-pdb-max-unavailable", "maxUnavailable field cannot be set to 0 or 0%", "spec.maxUnavailable")
		}
	}
	if v, ok := spec["minAvailable"].(string); ok && v == "100%" {
		c.objectErr(m, "objects-pdb-min-available", "minAvailable field cannot be set to 100%", "spec.minAvailable")
	}
}

func (c *checker) checkRBACObject(m *manifest.Manifest) {
	rules, _ := m.Object["rules"].([]any)
	type rule struct {
		verbs, groups, resources, names, urls []string
		i                                     int
	}
	var rs []rule
	for i, r := range rules {
		rm, _ := r.(map[string]any)
		rs = append(rs, rule{strList(rm["verbs"]), strList(rm["apiGroups"]), strList(rm["resources"]), strList(rm["resourceNames"]), strList(rm["nonResourceURLs"]), i})
	}
	value := func(r rule) string {
		return fmt.Sprintf("{%s %s %s %s %s}", goList(r.verbs), goList(r.groups), goList(r.resources), goList(r.names), goList(r.urls))
	}
	for _, r := range rs {
		if contains(r.groups, "policy") && contains(r.resources, "poddisruptionbudgets") && anyIn(r.verbs, []string{"*", "create", "update", "patch"}) {
			d := "RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability"
			c.add(Finding{Severity: SeverityWarning, Code: "objects-rbac-pdb", Upstream: apiError(levelWarn, "", str(value(r)), d),
				Message: fmt.Sprintf("%s %s: rule %d may create or update poddisruptionbudgets, which could impact cluster stability", m.Kind, m.Name, r.i)},
				atManifest(m, "rules["+strconv.Itoa(r.i)+"]"))
		}
	}
	for _, r := range rs {
		if !contains(r.groups, "security.openshift.io") || !contains(r.resources, "securitycontextconstraints") ||
			!anyIn(r.verbs, []string{"*", "delete", "update", "patch"}) {
			continue
		}
		for _, n := range r.names {
			if defaultSCCs[n] {
				d := "RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability"
				c.add(Finding{Severity: SeverityError, Code: "objects-rbac-scc", Upstream: apiError(levelError, "", str(value(r)), d),
					Message: fmt.Sprintf("%s %s: rule %d may modify the default securitycontextconstraints %s, which could impact cluster stability", m.Kind, m.Name, r.i, n)},
					atManifest(m, "rules["+strconv.Itoa(r.i)+"]"))
				break
			}
		}
	}
}

func strList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// goList is %v of a []string.
func goList(l []string) string { return "[" + strings.Join(l, " ") + "]" }
