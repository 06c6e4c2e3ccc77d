package olmv1

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// FuzzLoadCheck reads a manifest file as OLM v1 reads a bundle image's
// (YAML or JSON documents, Lists) and checks the bundle: neither may
// panic, and every issue must have a position or none, never a bad one.
func FuzzLoadCheck(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/bundles/opentelemetry-operator.v0.17.1*/manifests/*.yaml")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[{\"kind\":\"ClusterServiceVersion\",\"apiVersion\":\"x\",\"spec\":{\"installModes\":[]}}]}"))
	f.Add([]byte("---\n# a comment\n---\nkind: ClusterServiceVersion\napiVersion: v1\nspec: {webhookdefinitions: [{type: ConversionWebhook, conversionCRDs: [a, a]}]}\n"))
	annotations := []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: fuzz\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"manifests/a.yaml":          {Data: data},
			"metadata/annotations.yaml": {Data: annotations},
		}
		b, err := LoadFS(context.Background(), fsys)
		if err != nil {
			return
		}
		for _, g := range []Gates{DefaultGates(), {SingleOwnNamespace: true}} {
			v := Check(b, g)
			for _, is := range v.Issues {
				if s, ok := b.Position(is); ok && s.File == "" {
					t.Fatalf("%s: a position without a file", is.Code)
				}
			}
		}
	})
}
