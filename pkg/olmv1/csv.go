package olmv1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/jsonscan"
	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// What OLM v1 reads of a bundle's manifests: the ClusterServiceVersion's
// install modes, owned APIServices and CRDs, deployments, permissions and
// webhook definitions (the bundle model's typed view of the CSV); each
// CRD's name and preserveUnknownFields; every other object's kind and
// name.

// Install mode types.
const (
	AllNamespaces   = manifest.InstallModeAllNamespaces
	OwnNamespace    = manifest.InstallModeOwnNamespace
	SingleNamespace = manifest.InstallModeSingleNamespace
	MultiNamespace  = manifest.InstallModeMultiNamespace
)

type objectMeta struct {
	Name string `json:"name"`
}

// objectHead is what every manifest is first decoded as.
type objectHead struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
}

// csvDoc is a ClusterServiceVersion: its name, and its spec decoded whole
// into the bundle model's typed view (pkg/bundle/manifest), whose JSON
// names are operator-framework/api's: a field of the wrong type anywhere
// in the spec fails the decoding, as OLM v1's typed decoding fails.
type csvDoc struct {
	Name string
	Spec manifest.CSVSpec
	// rules are the admission rules of each webhook definition.
	rules [][]admissionRule
}

// admissionRule is the part of an admission webhook rule the rules read
// (the model keeps the rules raw).
type admissionRule struct {
	APIGroups []string `json:"apiGroups"`
	Resources []string `json:"resources"`
}

// manifests is a bundle's manifests sorted as OLM v1 sorts them.
type manifests struct {
	csv    *csvDoc
	csvAt  int // index of the CSV among the objects
	crds   []namedAt
	others []otherAt
	// crdSpec holds preserveUnknownFields by object index.
	preserve map[int]bool
}

type namedAt struct {
	name string
	at   int
}

type otherAt struct {
	kind, name string
	at         int
}

// stringValue is the JSON string v ("" when v is not a string).
func stringValue(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	var s string
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// csvMembers are the members of a CSV's spec the rules read.
var csvMembers = map[string]bool{"version": true, "installModes": true, "apiservicedefinitions": true,
	"customresourcedefinitions": true, "install": true, "webhookdefinitions": true}

// decodeCSV decodes a CSV's spec (spec, the raw member; nil when the CSV
// has none) as OLM v1 does, typed (spec.version parsed as OLM's
// OperatorVersion: semver, tolerant of a "v" prefix and missing parts),
// but only the members the rules read: the others (descriptions, icons:
// most of a CSV's bytes) are skipped, so that a type error there goes
// unnoticed.
func decodeCSV(spec []byte) (*csvDoc, error) {
	c := &csvDoc{}
	if len(spec) == 0 || string(spec) == "null" {
		return c, nil
	}
	sel := []byte{'{'}
	if !jsonscan.Members(spec, func(k string, v []byte) {
		if csvMembers[k] {
			if len(sel) > 1 {
				sel = append(sel, ',')
			}
			sel = append(append(append(sel, '"'), k...), '"', ':')
			sel = append(sel, v...)
		}
	}) {
		sel = spec // not an object: let encoding/json say what is wrong
	} else {
		sel = append(sel, '}')
	}
	if err := json.Unmarshal(sel, &c.Spec); err != nil {
		return nil, err
	}
	if v := c.Spec.Version; v != nil {
		if _, err := semver.ParseTolerant(*v); err != nil {
			return nil, fmt.Errorf("spec.version %q: %w", *v, err)
		}
	}
	c.rules = make([][]admissionRule, len(c.Spec.WebhookDefinitions))
	for i, wh := range c.Spec.WebhookDefinitions {
		if len(wh.Rules) == 0 {
			continue
		}
		if err := json.Unmarshal(wh.Rules, &c.rules[i]); err != nil {
			return nil, fmt.Errorf("spec.webhookdefinitions[%d].rules: %w", i, err)
		}
	}
	return c, nil
}

// readManifests sorts objs as OLM v1's bundle source does: the last
// ClusterServiceVersion is the CSV, CustomResourceDefinitions are CRDs,
// everything else is an other object. A manifest without a kind, or a CSV
// or CRD that does not decode, is an issue: it fails OLM v1's read of the
// bundle. Only the CSV is decoded whole; of the other manifests (CRDs are
// most of a bundle's bytes) the few fields read are found by a scan.
func readManifests(objs []Object) (*manifests, []Issue) {
	m := &manifests{csvAt: -1, preserve: map[int]bool{}}
	var issues []Issue
	invalid := func(i int, format string, args ...any) {
		issues = append(issues, Issue{Code: CodeManifestInvalid, Object: i, Property: -1, Message: fmt.Sprintf(format, args...)})
	}
	for i, o := range objs {
		var kind, name, spec []byte
		jsonscan.Members(o.JSON, func(k string, v []byte) {
			switch k {
			case "kind":
				kind = v
			case "metadata":
				name = jsonscan.Member(v, "name")
			case "spec":
				spec = v
			}
		})
		switch kind := stringValue(kind); kind {
		case "":
			var h objectHead
			if err := json.Unmarshal(o.JSON, &h); err != nil {
				invalid(i, "manifest %d does not decode: %v", i, err)
			} else {
				invalid(i, "manifest %d has no kind", i)
			}
		case manifest.KindCSV:
			name := stringValue(name)
			c, err := decodeCSV(spec)
			if err != nil {
				invalid(i, "ClusterServiceVersion %q does not decode as OLM's ClusterServiceVersion: %v", name, err)
				continue
			}
			c.Name = name
			m.csv, m.csvAt = c, i
		case manifest.KindCRD:
			name := stringValue(name)
			preserve := false
			if v := jsonscan.Member(spec, "preserveUnknownFields"); v != nil {
				if err := json.Unmarshal(v, &preserve); err != nil {
					invalid(i, "CustomResourceDefinition %q does not decode: spec.preserveUnknownFields: %v", name, err)
					continue
				}
			}
			m.crds = append(m.crds, namedAt{name, i})
			m.preserve[i] = preserve
		default:
			m.others = append(m.others, otherAt{kind, stringValue(name), i})
		}
	}
	return m, issues
}
