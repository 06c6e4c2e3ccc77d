package olmv1_test

import (
	"context"
	"fmt"

	"github.com/opmkit/opm/pkg/olmv1"
)

func Example() {
	b, err := olmv1.LoadDir(context.Background(), "testdata/bundles/oadp-operator.v0.5.6")
	if err != nil {
		panic(err)
	}
	for _, gates := range []string{"", olmv1.GateSingleOwnNamespace + "=true"} {
		g, err := olmv1.ParseGates([]string{gates})
		if err != nil {
			panic(err)
		}
		v := olmv1.Check(b, g)
		fmt.Printf("installable: %v\n", v.Installable)
		for _, is := range v.Issues {
			pos, _ := b.Position(is)
			fmt.Printf("  %s:%d:%d: %s [%s]\n", pos.File, pos.Line, pos.Column, is.Level(), is.Code)
		}
	}
	// Output:
	// installable: false
	//   manifests/oadp-operator.clusterserviceversion.yaml:421:3: refused [olmv1-all-namespaces-unsupported]
	// installable: true
	//   manifests/oadp-operator.clusterserviceversion.yaml:421:3: conditional [olmv1-watch-namespace]
}
