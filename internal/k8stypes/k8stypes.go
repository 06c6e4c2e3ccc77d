// Package k8stypes holds the few Kubernetes API types opm decodes
// manifests into, with the same JSON rules as k8s.io/apimachinery, so that
// malformed manifests fail the way upstream's typed decoding fails.
package k8stypes

import (
	"encoding/json"
	"time"
)

// Time decodes like metav1.Time: null or an RFC 3339 string.
type Time struct{ time.Time }

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = pt
	return nil
}

// ObjectMeta mirrors the typed fields of metav1.ObjectMeta, so that a
// manifest whose metadata has a field of the wrong type fails to decode.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	SelfLink                   string            `json:"selfLink,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          Time              `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          *Time             `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []struct {
		APIVersion         string `json:"apiVersion"`
		Kind               string `json:"kind"`
		Name               string `json:"name"`
		UID                string `json:"uid"`
		Controller         *bool  `json:"controller,omitempty"`
		BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
	} `json:"ownerReferences,omitempty"`
	Finalizers    []string          `json:"finalizers,omitempty"`
	ManagedFields []json.RawMessage `json:"managedFields,omitempty"`
}
