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
