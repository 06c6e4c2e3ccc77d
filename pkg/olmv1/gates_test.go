package olmv1

import (
	"strings"
	"testing"
)

func TestParseGates(t *testing.T) {
	g, err := ParseGates(nil)
	if err != nil || g != DefaultGates() || g.CertProvider() != "cert-manager" {
		t.Fatalf("defaults: %+v, %v", g, err)
	}
	g, err = ParseGates([]string{"SingleOwnNamespaceInstallSupport=true, WebhookProviderCertManager=false", "WebhookProviderOpenshiftServiceCA=true"})
	if err != nil || !g.SingleOwnNamespace || g.CertProvider() != "OpenShift service CA" {
		t.Fatalf("got %+v, %v", g, err)
	}
	if g.String() != "SingleOwnNamespaceInstallSupport=true,WebhookProviderCertManager=false,WebhookProviderOpenshiftServiceCA=true" {
		t.Errorf("String() = %s", g)
	}
	for in, want := range map[string]string{
		"SingleOwnNamespaceInstallSuport=true": `did you mean "SingleOwnNamespaceInstallSupport"?`,
		"WebhookProviderCertManager":           "want Name=true or Name=false",
		"WebhookProviderCertManager=maybe":     `"maybe" is not true or false`,
	} {
		if _, err := ParseGates([]string{in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseGates(%q) = %v, want %q", in, err, want)
		}
	}
}
