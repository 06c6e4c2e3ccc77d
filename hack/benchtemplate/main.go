// Command benchtemplate prepares the render-template benchmark of
// hack/bench-template.sh: it builds N bundle images of one package (a CSV
// with description, icon, install strategy and related images, and a few
// CRDs with schemas, about 30 KB each), pushes them to a registry, and
// writes a semver template naming them (as quay.io/opmkit-bench/...) and a
// registries.conf that sends that prefix to the registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/opmkit/opm/internal/registrytest"
)

func main() {
	reg := flag.String("registry", "", "registry host:port to push to (plain HTTP on loopback)")
	n := flag.Int("n", 200, "number of bundle images")
	out := flag.String("o", "", "output directory for template.yaml and registries.conf")
	flag.Parse()
	if *reg == "" || *out == "" {
		log.Fatal("usage: benchtemplate -registry HOST:PORT -o DIR [-n N]")
	}
	if err := run(*reg, *n, *out); err != nil {
		log.Fatal(err)
	}
}

// version i of n: majors of 10 minors of 5 patches.
func version(i int) string { return fmt.Sprintf("%d.%d.%d", i/50, (i/5)%10, i%5) }

func run(reg string, n int, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(8)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			v := version(i)
			img, err := registrytest.Image(map[string]string{
				"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
				"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
				"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
				"operators.operatorframework.io.bundle.package.v1":   "bench-operator",
				"operators.operatorframework.io.bundle.channels.v1":  "stable",
			}, mustLayer(bundleEntries(v)))
			if err != nil {
				return err
			}
			return registrytest.Push(ctx, fmt.Sprintf("%s/opmkit-bench/bench-operator-bundle:v%s", reg, v), img)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var t strings.Builder
	t.WriteString("schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n")
	for _, a := range []struct {
		name  string
		every int
	}{{"candidate", 1}, {"fast", 2}, {"stable", 4}} {
		fmt.Fprintf(&t, "%s:\n  bundles:\n", a.name)
		for i := 0; i < n; i += a.every {
			fmt.Fprintf(&t, "  - image: quay.io/opmkit-bench/bench-operator-bundle:v%s\n", version(i))
		}
	}
	if err := os.WriteFile(filepath.Join(out, "template.yaml"), []byte(t.String()), 0o644); err != nil {
		return err
	}
	conf := fmt.Sprintf("[[registry]]\nprefix = \"quay.io/opmkit-bench\"\nlocation = \"%s/opmkit-bench\"\ninsecure = true\n", reg)
	return os.WriteFile(filepath.Join(out, "registries.conf"), []byte(conf), 0o644)
}

func mustLayer(entries []registrytest.Entry) v1.Layer {
	l, err := registrytest.Layer(entries...)
	if err != nil {
		log.Fatal(err)
	}
	return l
}

// bundleEntries is the bundle of version v: manifests/ and metadata/.
func bundleEntries(v string) []registrytest.Entry {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: bench-operator.v%[1]s
  annotations:
    capabilities: Full Lifecycle
    categories: Monitoring
    containerImage: quay.io/opmkit-bench/operator:v%[1]s
    olm.skipRange: '<%[1]s'
spec:
  displayName: Bench Operator
  version: %[1]s
  description: |
    Bench Operator %[1]s. %[2]s
  icon:
  - base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=
    mediatype: image/svg+xml
  maintainers:
  - name: Bench
    email: bench@example.com
  provider:
    name: Example
  customresourcedefinitions:
    owned:
`, v, strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 20))
	for c := 0; c < 4; c++ {
		fmt.Fprintf(&b, "    - name: widget%[1]ds.bench.example.com\n      version: v1\n      kind: Widget%[1]d\n      displayName: Widget %[1]d\n      description: A widget.\n", c)
	}
	fmt.Fprintf(&b, `  install:
    strategy: deployment
    spec:
      deployments:
      - name: bench-operator
        spec:
          replicas: 1
          selector:
            matchLabels: {app: bench-operator}
          template:
            metadata:
              labels: {app: bench-operator}
            spec:
              containers:
              - name: manager
                image: quay.io/opmkit-bench/operator:v%[1]s
                env:
                - name: OPERAND_IMAGE
                  value: quay.io/opmkit-bench/operand:v%[1]s
  relatedImages:
  - name: operator
    image: quay.io/opmkit-bench/operator:v%[1]s
  - name: operand
    image: quay.io/opmkit-bench/operand:v%[1]s
`, v)
	entries := []registrytest.Entry{
		{Name: "manifests/", Type: '5'},
		{Name: "manifests/bench-operator.clusterserviceversion.yaml", Body: b.String()},
	}
	for c := 0; c < 4; c++ {
		var crd strings.Builder
		fmt.Fprintf(&crd, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widget%[1]ds.bench.example.com
spec:
  group: bench.example.com
  names: {kind: Widget%[1]d, plural: widget%[1]ds}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
`, c)
		for f := 0; f < 60; f++ {
			fmt.Fprintf(&crd, "          field%d:\n            type: string\n            description: Field %d of the widget, with a description long enough to look real.\n", f, f)
		}
		entries = append(entries, registrytest.Entry{Name: fmt.Sprintf("manifests/widget%d.crd.yaml", c), Body: crd.String()})
	}
	entries = append(entries,
		registrytest.Entry{Name: "metadata/", Type: '5'},
		registrytest.Entry{Name: "metadata/annotations.yaml", Body: "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: bench-operator\n  operators.operatorframework.io.bundle.channels.v1: stable\n"},
	)
	return entries
}
