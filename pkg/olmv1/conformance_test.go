package olmv1

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

const conformanceBundles = "../../../shared/conformance/bundle"

// TestConformanceBundles reads every bundle of the shared conformance
// suite as OLM v1 reads a bundle image and checks the verdicts of those
// whose reasons are known from operator-controller's code; every other
// bundle must read and check without error.
func TestConformanceBundles(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(conformanceBundles, "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", conformanceBundles)
	}
	want := map[string]struct {
		installable bool
		codes       []string // every code of the verdict, each once, in rule order
	}{
		// a conversion webhook, AllNamespaces only
		"argocd-operator@0.13.0": {true, []string{CodeWebhooksCertProvider}},
		"argocd-operator@0.0.15": {true, nil},
		// OwnNamespace and SingleNamespace
		"3scale-community-operator@0.7.0": {false, []string{CodeAllNamespacesUnsupported}},
		// required CRDs of cert-manager, a webhook
		"node-healthcheck-operator@0.8.0": {false, []string{CodeWebhooksCertProvider, CodeDependency}},
		// OperatorConditions and OLM classic's APIs, webhooks
		"community-kubevirt-hyperconverged@1.8.2": {true, []string{CodeWebhooksCertProvider, CodeOperatorCondition, CodeClassicAPI}},
		// upstream's test bundles declare no install mode at all
		"upstream-etcd.0.9.0":     {false, []string{CodeAllNamespacesUnsupported, CodeInstallModesUnsupported}},
		"webhook-operator@v0.0.1": {true, []string{CodeWebhooksCertProvider}},
	}
	seen := 0
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir))
		b, err := LoadDir(context.Background(), dir)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		v := Check(b, DefaultGates())
		for _, is := range v.Issues {
			if _, ok := b.Position(is); !ok && is.Level() == Refused && is.Code != CodeNoCSV {
				t.Errorf("%s: %s has no position", name, is.Code)
			}
		}
		w, ok := want[name]
		if !ok {
			continue
		}
		seen++
		var codes []string
		for _, l := range []Level{Refused, Conditional, Migration, NotChecked} {
			codes = append(codes, v.Codes(l)...)
		}
		slices.SortFunc(codes, func(a, b string) int { return ruleOrder[a] - ruleOrder[b] })
		if v.Installable != w.installable || !slices.Equal(codes, w.codes) {
			t.Errorf("%s: installable %v, codes %v; want %v, %v", name, v.Installable, codes, w.installable, w.codes)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d expected bundles found in %s", seen, len(want), conformanceBundles)
	}
}
