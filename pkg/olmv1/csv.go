package olmv1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/csvtypes"
	"github.com/opmkit/opm/internal/jsonscan"
)

// What OLM v1 reads of a bundle's manifests: the ClusterServiceVersion's
// install modes, owned APIServices and CRDs, deployments, permissions and
// webhook definitions; each CRD's name and preserveUnknownFields; every
// other object's kind and name. The types follow operator-framework/api's
// v1alpha1 JSON names; only the fields a rule reads are decoded.

// Install mode types.
const (
	AllNamespaces   = "AllNamespaces"
	OwnNamespace    = "OwnNamespace"
	SingleNamespace = "SingleNamespace"
	MultiNamespace  = "MultiNamespace"
)

// Webhook types.
const (
	webhookValidating = "ValidatingAdmissionWebhook"
	webhookMutating   = "MutatingAdmissionWebhook"
	webhookConversion = "ConversionWebhook"
)

const (
	kindCSV = "ClusterServiceVersion"
	kindCRD = "CustomResourceDefinition"
)

// objectHead is what every manifest is first decoded as.
type objectHead struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
}

type csvDoc struct {
	Metadata objectMeta `json:"metadata"`
	Spec     csvSpec    `json:"spec"`
}

type objectMeta struct {
	Name string `json:"name"`
}

type csvSpec struct {
	Version                   *csvVersion                        `json:"version"`
	InstallModes              []csvtypes.InstallMode             `json:"installModes"`
	APIServiceDefinitions     csvtypes.APIServiceDefinitions     `json:"apiservicedefinitions"`
	CustomResourceDefinitions csvtypes.CustomResourceDefinitions `json:"customresourcedefinitions"`
	Install                   struct {
		Strategy string `json:"strategy"`
		Spec     struct {
			Deployments []struct {
				Name string `json:"name"`
			} `json:"deployments"`
			Permissions        []permission `json:"permissions"`
			ClusterPermissions []permission `json:"clusterPermissions"`
		} `json:"spec"`
	} `json:"install"`
	WebhookDefinitions []webhook `json:"webhookdefinitions"`
}

// csvVersion decodes spec.version as OLM's OperatorVersion does (semver,
// tolerant of a "v" prefix and missing parts); an invalid one fails the
// CSV's decoding, in OLM v1 too.
type csvVersion struct{}

func (*csvVersion) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	_, err := semver.ParseTolerant(s)
	return err
}

type permission struct {
	ServiceAccountName string       `json:"serviceAccountName"`
	Rules              []policyRule `json:"rules"`
}

type policyRule struct {
	APIGroups []string `json:"apiGroups"`
	Resources []string `json:"resources"`
}

type webhook struct {
	Type           string       `json:"type"`
	GenerateName   string       `json:"generateName"`
	DeploymentName string       `json:"deploymentName"`
	ConversionCRDs []string     `json:"conversionCRDs"`
	Rules          []policyRule `json:"rules"`
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

// csvMembers are the members of a CSV's spec OLM v1's rules read.
var csvMembers = map[string]bool{"version": true, "installModes": true, "apiservicedefinitions": true,
	"customresourcedefinitions": true, "install": true, "webhookdefinitions": true}

// decodeCSV decodes the spec members of a CSV the rules read, skipping the
// others (descriptions, icons, examples: most of a CSV's bytes). A member
// of the wrong type is an error, as in OLM v1's typed decoding.
func decodeCSV(data, spec []byte) (*csvDoc, error) {
	var sel []byte
	ok := jsonscan.Members(spec, func(k string, v []byte) {
		if csvMembers[k] {
			if len(sel) > 0 {
				sel = append(sel, ',')
			}
			sel = strconv.AppendQuote(sel, k)
			sel = append(sel, ':')
			sel = append(sel, v...)
		}
	})
	c := &csvDoc{}
	if !ok {
		// no spec, or a broken one: let encoding/json say what is wrong
		return c, json.Unmarshal(data, c)
	}
	return c, json.Unmarshal(append(append([]byte("{"), sel...), '}'), &c.Spec)
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
		case kindCSV:
			name := stringValue(name)
			c, err := decodeCSV(o.JSON, spec)
			if err != nil {
				invalid(i, "ClusterServiceVersion %q does not decode as OLM's ClusterServiceVersion: %v", name, err)
				continue
			}
			c.Metadata.Name = name
			m.csv, m.csvAt = c, i
		case kindCRD:
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
