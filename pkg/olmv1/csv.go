package olmv1

import (
	"encoding/json"
	"fmt"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/csvtypes"
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
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

type csvDoc struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
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
	} `json:"spec"`
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

type crdDoc struct {
	Spec struct {
		PreserveUnknownFields bool `json:"preserveUnknownFields"`
	} `json:"spec"`
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

// readManifests sorts objs as OLM v1's bundle source does: the last
// ClusterServiceVersion is the CSV, CustomResourceDefinitions are CRDs,
// everything else is an other object. An object that does not decode is
// an issue, as it fails OLM v1's read of the bundle.
func readManifests(objs []Object) (*manifests, []Issue) {
	m := &manifests{csvAt: -1, preserve: map[int]bool{}}
	var issues []Issue
	for i, o := range objs {
		var h objectHead
		if err := json.Unmarshal(o.JSON, &h); err != nil {
			issues = append(issues, Issue{Code: CodeManifestInvalid, Object: i, Property: -1,
				Message: fmt.Sprintf("manifest %d does not decode: %v", i, err)})
			continue
		}
		switch h.Kind {
		case kindCSV:
			var c csvDoc
			if err := json.Unmarshal(o.JSON, &c); err != nil {
				issues = append(issues, Issue{Code: CodeManifestInvalid, Object: i, Property: -1,
					Message: fmt.Sprintf("ClusterServiceVersion %q does not decode as OLM's ClusterServiceVersion: %v", h.Metadata.Name, err)})
				continue
			}
			m.csv, m.csvAt = &c, i
		case kindCRD:
			var c crdDoc
			if err := json.Unmarshal(o.JSON, &c); err != nil {
				issues = append(issues, Issue{Code: CodeManifestInvalid, Object: i, Property: -1,
					Message: fmt.Sprintf("CustomResourceDefinition %q does not decode: %v", h.Metadata.Name, err)})
				continue
			}
			m.crds = append(m.crds, namedAt{h.Metadata.Name, i})
			m.preserve[i] = c.Spec.PreserveUnknownFields
		default:
			m.others = append(m.others, otherAt{h.Kind, h.Metadata.Name, i})
		}
	}
	return m, issues
}
