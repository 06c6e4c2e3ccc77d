package olmv1

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
)

// Release is the operator-controller release whose rules and feature gate
// defaults this package follows. Its rules are unchanged at commit
// df2c201d (v1.11.0-47), the commit they were read at.
const Release = "v1.11.0"

// The feature gates of operator-controller that change a verdict.
const (
	// GateSingleOwnNamespace (alpha, off by default) lets OLM v1 install
	// bundles without the AllNamespaces install mode, watching one
	// namespace given as the ClusterExtension's watchNamespace config.
	GateSingleOwnNamespace = "SingleOwnNamespaceInstallSupport"
	// GateCertManager (GA, on by default) has cert-manager issue the
	// certificates of a bundle's webhooks.
	GateCertManager = "WebhookProviderCertManager"
	// GateServiceCA (GA, on by default) has OpenShift's service CA issue
	// them, when GateCertManager is off.
	GateServiceCA = "WebhookProviderOpenshiftServiceCA"
)

// Gates is the state of the feature gates a verdict depends on.
type Gates struct {
	SingleOwnNamespace bool
	CertManager        bool
	ServiceCA          bool
}

// DefaultGates is the default state of operator-controller Release.
func DefaultGates() Gates {
	return Gates{SingleOwnNamespace: false, CertManager: true, ServiceCA: true}
}

// gateNames are the gates ParseGates accepts.
var gateNames = []string{GateSingleOwnNamespace, GateCertManager, GateServiceCA}

// ParseGates applies a list in operator-controller's --feature-gates form
// (Name=true,Name=false) to the defaults. Unknown names and values that
// are not booleans are errors.
func ParseGates(list []string) (Gates, error) {
	g := DefaultGates()
	for _, item := range list {
		for _, kv := range strings.Split(item, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			name, val, ok := strings.Cut(kv, "=")
			if !ok {
				return g, fmt.Errorf("feature gate %q: want Name=true or Name=false", kv)
			}
			on, err := strconv.ParseBool(strings.TrimSpace(val))
			if err != nil {
				return g, fmt.Errorf("feature gate %q: %q is not true or false", name, val)
			}
			switch strings.TrimSpace(name) {
			case GateSingleOwnNamespace:
				g.SingleOwnNamespace = on
			case GateCertManager:
				g.CertManager = on
			case GateServiceCA:
				g.ServiceCA = on
			default:
				return g, suggest.Unknown("feature gate", name, "", gateNames)
			}
		}
	}
	return g, nil
}

// CertProvider names the provider of webhook certificates under g:
// "cert-manager", "OpenShift service CA", or "" when there is none (then
// OLM v1 refuses bundles with webhooks).
func (g Gates) CertProvider() string {
	switch {
	case g.CertManager:
		return "cert-manager"
	case g.ServiceCA:
		return "OpenShift service CA"
	}
	return ""
}

// String lists the gates in --feature-gates form, sorted by name.
func (g Gates) String() string {
	s := []string{
		GateSingleOwnNamespace + "=" + strconv.FormatBool(g.SingleOwnNamespace),
		GateCertManager + "=" + strconv.FormatBool(g.CertManager),
		GateServiceCA + "=" + strconv.FormatBool(g.ServiceCA),
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
