package gencatalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Mean sizes, tuned so that 200 x 20 comes to about 190 MB of JSON.
const (
	meanCSVDescription = 8600 // bytes of Markdown in the CSV description
	meanSchemaFields   = 16   // top-level spec fields of each CRD version's schema
)

// pkgContent is what every bundle of a package shares: the CRDs, the icon,
// descriptions and the static parts of the CSV.
type pkgContent struct {
	plan        *plan
	icon        []byte
	iconType    string
	description string // package description (short)
	csvDesc     string // CSV description (long)
	crdJSON     [][]byte
	keywords    []string
	maintainer  string
	provider    string
	rules       []any
	clusterRule []any
	examples    string
	descriptors []any
}

func (g *Generator) content(r *rand.Rand, p *plan) *pkgContent {
	c := &pkgContent{plan: p}
	if p.svgIcon {
		c.icon, c.iconType = svgIcon(r), "image/svg+xml"
	} else {
		c.icon, c.iconType = pngIcon(r), "image/png"
	}
	c.description = markdown(r, p.name, 600+r.IntN(1200))
	c.csvDesc = markdown(r, p.name, int(meanCSVDescription*p.sizeFactor))
	for i := 0; i < 3+r.IntN(4); i++ {
		c.keywords = append(c.keywords, words[r.IntN(len(words))])
	}
	c.maintainer = words[r.IntN(len(words))] + " team"
	c.provider = strings.ToUpper(p.name[:1]) + p.name[1:] + " Authors"
	for _, crd := range p.crds {
		c.crdJSON = append(c.crdJSON, mustMarshal(crdObject(r, p, crd)))
	}
	c.rules = policyRules(r, p, 4+r.IntN(4))
	c.clusterRule = policyRules(r, p, 3+r.IntN(3))
	c.examples = almExamples(r, p)
	for _, crd := range p.crds {
		c.descriptors = append(c.descriptors, ownedCRD(r, p, crd))
	}
	return c
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v) // sorted keys, compact, HTML escaped: as upstream encodes objects
	if err != nil {
		panic(err) // only maps, slices, strings, numbers and bools
	}
	return b
}

func digest(r *rand.Rand) string {
	const hex = "0123456789abcdef"
	var b [64]byte
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return "sha256:" + string(b[:])
}

// fieldName returns a camelCase field name of one or two words.
func fieldName(r *rand.Rand) string {
	w := words[r.IntN(len(words))]
	if r.IntN(2) == 0 {
		x := words[r.IntN(len(words))]
		w += strings.ToUpper(x[:1]) + x[1:]
	}
	return w
}

func schemaField(r *rand.Rand, depth int) map[string]any {
	f := map[string]any{"description": sentence(r, 6, 24)}
	switch x := r.IntN(10); {
	case x < 4:
		f["type"] = "string"
		if r.IntN(4) == 0 {
			f["enum"] = []any{"Always", "IfNotPresent", "Never"}
		}
	case x < 6:
		f["type"] = "integer"
		f["format"] = "int32"
		if r.IntN(2) == 0 {
			f["minimum"] = 0
		}
	case x < 7:
		f["type"] = "boolean"
	case x < 8:
		f["type"] = "array"
		f["items"] = map[string]any{"type": "string"}
	default:
		f["type"] = "object"
		if depth < 2 {
			props := map[string]any{}
			for i := 0; i < 2+r.IntN(4); i++ {
				props[fieldName(r)] = schemaField(r, depth+1)
			}
			f["properties"] = props
		} else {
			f["additionalProperties"] = map[string]any{"type": "string"}
		}
	}
	return f
}

func crdObject(r *rand.Rand, p *plan, crd crdPlan) map[string]any {
	var versions []any
	for i, v := range crd.versions {
		spec := map[string]any{}
		n := int(float64(meanSchemaFields) * p.sizeFactor / float64(len(crd.versions)))
		for j := 0; j < n; j++ {
			spec[fieldName(r)] = schemaField(r, 0)
		}
		schema := map[string]any{
			"description": crd.kind + " is the Schema for the " + crd.plural + " API",
			"type":        "object",
			"properties": map[string]any{
				"apiVersion": map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
				"kind":       map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
				"metadata":   map[string]any{"type": "object"},
				"spec":       map[string]any{"type": "object", "description": crd.kind + "Spec defines the desired state of " + crd.kind, "properties": spec},
				"status": map[string]any{"type": "object", "description": crd.kind + "Status defines the observed state of " + crd.kind,
					"properties": map[string]any{
						"conditions": map[string]any{"type": "array", "items": map[string]any{"type": "object",
							"required": []any{"lastTransitionTime", "message", "reason", "status", "type"},
							"properties": map[string]any{
								"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
								"message":            map[string]any{"type": "string", "maxLength": 32768},
								"observedGeneration": map[string]any{"type": "integer", "format": "int64", "minimum": 0},
								"reason":             map[string]any{"type": "string", "maxLength": 1024, "minLength": 1, "pattern": `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`},
								"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
								"type":               map[string]any{"type": "string", "maxLength": 316},
							}}},
						"phase": map[string]any{"type": "string"},
					}},
			},
		}
		versions = append(versions, map[string]any{
			"name":         v,
			"served":       true,
			"storage":      i == len(crd.versions)-1,
			"schema":       map[string]any{"openAPIV3Schema": schema},
			"subresources": map[string]any{"status": map[string]any{}},
		})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":              crd.plural + "." + p.group,
			"creationTimestamp": nil,
			"annotations":       map[string]any{"controller-gen.kubebuilder.io/version": "v0.14.0"},
		},
		"spec": map[string]any{
			"group":    p.group,
			"names":    map[string]any{"kind": crd.kind, "listKind": crd.kind + "List", "plural": crd.plural, "singular": crd.singular},
			"scope":    "Namespaced",
			"versions": versions,
		},
		"status": map[string]any{"acceptedNames": map[string]any{"kind": "", "plural": ""}, "conditions": nil, "storedVersions": nil},
	}
}

func policyRules(r *rand.Rand, p *plan, n int) []any {
	verbs := []any{"create", "delete", "get", "list", "patch", "update", "watch"}
	groups := []string{"", "apps", "batch", "monitoring.coreos.com", "networking.k8s.io", "rbac.authorization.k8s.io", "coordination.k8s.io", p.group}
	resources := []string{"configmaps", "secrets", "services", "pods", "events", "deployments", "statefulsets",
		"jobs", "servicemonitors", "ingresses", "roles", "rolebindings", "leases", "persistentvolumeclaims"}
	var rules []any
	for i := 0; i < n; i++ {
		var res []any
		for j := 0; j < 1+r.IntN(4); j++ {
			res = append(res, resources[r.IntN(len(resources))])
		}
		rules = append(rules, map[string]any{"apiGroups": []any{groups[r.IntN(len(groups))]}, "resources": res, "verbs": verbs})
	}
	return rules
}

func almExamples(r *rand.Rand, p *plan) string {
	var ex []any
	for _, crd := range p.crds {
		spec := map[string]any{}
		for i := 0; i < 3+r.IntN(5); i++ {
			spec[fieldName(r)] = words[r.IntN(len(words))]
		}
		spec["replicas"] = 1 + r.IntN(3)
		ex = append(ex, map[string]any{
			"apiVersion": p.group + "/" + crd.versions[len(crd.versions)-1],
			"kind":       crd.kind,
			"metadata":   map[string]any{"name": crd.singular + "-sample", "labels": map[string]any{"app.kubernetes.io/name": p.name}},
			"spec":       spec,
		})
	}
	b, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func ownedCRD(r *rand.Rand, p *plan, crd crdPlan) map[string]any {
	desc := func(path string) map[string]any {
		return map[string]any{
			"path": path, "displayName": strings.ToUpper(path[:1]) + path[1:], "description": sentence(r, 5, 12),
			"x-descriptors": []any{"urn:alm:descriptor:com.tectonic.ui:text"},
		}
	}
	var specD, statusD []any
	for i := 0; i < 3+r.IntN(4); i++ {
		specD = append(specD, desc(fieldName(r)))
	}
	statusD = append(statusD, desc("conditions"), desc("phase"))
	return map[string]any{
		"name": crd.plural + "." + p.group, "kind": crd.kind, "version": crd.versions[len(crd.versions)-1],
		"displayName": crd.kind, "description": sentence(r, 6, 14),
		"resources": []any{
			map[string]any{"kind": "Deployment", "name": "", "version": "v1"},
			map[string]any{"kind": "Service", "name": "", "version": "v1"},
		},
		"specDescriptors": specD, "statusDescriptors": statusD,
	}
}

// csvObject builds the ClusterServiceVersion of bundle k.
func (c *pkgContent) csvObject(r *rand.Rand, k int, e entry, operatorImage, operandImage string) map[string]any {
	p := c.plan
	name := p.bundleName(k)
	annotations := map[string]any{
		"alm-examples":                           c.examples,
		"capabilities":                           []string{"Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights"}[p.index%4],
		"categories":                             "Database, Monitoring",
		"containerImage":                         operatorImage,
		"createdAt":                              fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00Z", 1+k%12, 1+r.IntN(28), r.IntN(24), r.IntN(60)),
		"description":                            sentence(r, 6, 12),
		"repository":                             "https://github.com/gen/" + p.name,
		"support":                                c.provider,
		"operators.operatorframework.io/builder": "operator-sdk-v1.34.1",
		"operators.operatorframework.io/project_layout":  "go.kubebuilder.io/v4",
		"features.operators.openshift.io/disconnected":   "true",
		"features.operators.openshift.io/fips-compliant": "false",
		"features.operators.openshift.io/proxy-aware":    "true",
	}
	if e.SkipRange != "" {
		annotations["olm.skipRange"] = e.SkipRange
	}
	container := map[string]any{
		"name":    "manager",
		"image":   operatorImage,
		"args":    []any{"--health-probe-bind-address=:8081", "--metrics-bind-address=127.0.0.1:8080", "--leader-elect"},
		"command": []any{"/manager"},
		"env": []any{
			map[string]any{"name": "RELATED_IMAGE_OPERAND", "value": operandImage},
			map[string]any{"name": "WATCH_NAMESPACE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.annotations['olm.targetNamespaces']"}}},
		},
		"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8081}, "initialDelaySeconds": 15, "periodSeconds": 20},
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/readyz", "port": 8081}, "initialDelaySeconds": 5, "periodSeconds": 10},
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "512Mi"},
			"requests": map[string]any{"cpu": "10m", "memory": "64Mi"},
		},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
	}
	deployment := map[string]any{
		"name":  p.name + "-controller-manager",
		"label": map[string]any{"control-plane": "controller-manager"},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"control-plane": "controller-manager"}},
			"strategy": map[string]any{},
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"kubectl.kubernetes.io/default-container": "manager"},
					"labels": map[string]any{"control-plane": "controller-manager"}},
				"spec": map[string]any{
					"containers":                    []any{container},
					"securityContext":               map[string]any{"runAsNonRoot": true},
					"serviceAccountName":            p.name + "-controller-manager",
					"terminationGracePeriodSeconds": 10,
				},
			},
		},
	}
	var keywords []any
	for _, k := range c.keywords {
		keywords = append(keywords, k)
	}
	spec := map[string]any{
		"apiservicedefinitions":     map[string]any{},
		"customresourcedefinitions": map[string]any{"owned": c.descriptors},
		"description":               c.csvDesc,
		"displayName":               strings.ToUpper(p.name[:1]) + p.name[1:] + " Operator",
		"icon":                      []any{map[string]any{"base64data": base64.StdEncoding.EncodeToString(c.icon), "mediatype": c.iconType}},
		"install": map[string]any{
			"strategy": "deployment",
			"spec": map[string]any{
				"clusterPermissions": []any{map[string]any{"rules": c.clusterRule, "serviceAccountName": p.name + "-controller-manager"}},
				"deployments":        []any{deployment},
				"permissions":        []any{map[string]any{"rules": c.rules, "serviceAccountName": p.name + "-controller-manager"}},
			},
		},
		"installModes": []any{
			map[string]any{"supported": true, "type": "OwnNamespace"},
			map[string]any{"supported": true, "type": "SingleNamespace"},
			map[string]any{"supported": false, "type": "MultiNamespace"},
			map[string]any{"supported": true, "type": "AllNamespaces"},
		},
		"keywords":       keywords,
		"links":          []any{map[string]any{"name": "Documentation", "url": "https://gen.example.com/" + p.name + "/docs"}},
		"maintainers":    []any{map[string]any{"email": p.name + "@gen.example.com", "name": c.maintainer}},
		"maturity":       "stable",
		"minKubeVersion": "1.25.0",
		"provider":       map[string]any{"name": c.provider, "url": "https://gen.example.com"},
		"relatedImages": []any{
			map[string]any{"image": operatorImage, "name": "manager"},
			map[string]any{"image": operandImage, "name": "operand"},
		},
		"version": p.versions[k],
	}
	if e.Replaces != "" {
		spec["replaces"] = e.Replaces
	}
	if len(e.Skips) > 0 {
		spec["skips"] = e.Skips
	}
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata":   map[string]any{"name": name, "namespace": "placeholder", "annotations": annotations},
		"spec":       spec,
	}
}
