package validate

import (
	"fmt"
	"strconv"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/property"
)

// CodeMaxOpenShiftInvalid is a bundle whose olm.maxOpenShiftVersion OLM
// cannot read (a warning; an error under --strict).
const CodeMaxOpenShiftInvalid = "max-openshift-version-invalid"

// maxOpenShiftChecks reports every bundle of the group whose
// olm.maxOpenShiftVersion is malformed or given more than once, read as
// `opm graph upgradeable` and OLM read it (pkg/graph). OLM treats such a
// value as blocking every cluster upgrade while the bundle is installed.
// The finding is at the value (malformed) or at the second property
// (given twice).
func (g *group) maxOpenShiftChecks() []Finding {
	var out []Finding
	for i := range g.cfg.Bundles {
		b := &g.cfg.Bundles[i]
		_, err := graph.BundleMaxOpenShiftVersion(b)
		if err == nil {
			continue
		}
		var idx []int
		for k, p := range b.Properties {
			if p.Type == property.TypeMaxOpenShift {
				idx = append(idx, k)
			}
		}
		path := ""
		switch {
		case len(idx) > 1:
			path = "properties[" + strconv.Itoa(idx[1]) + "]"
		case len(idx) == 1:
			path = "properties[" + strconv.Itoa(idx[0]) + "].value"
		}
		f := Finding{Severity: SeverityWarning, Code: CodeMaxOpenShiftInvalid,
			Message: fmt.Sprintf("bundle %q has an invalid olm.maxOpenShiftVersion: %v", b.Name, err),
			Package: b.Package, Bundle: b.Name, Path: path, at: blobID{kind: declcfg.KindBundle, i: i, ok: true},
			Help: `give one olm.maxOpenShiftVersion property whose value is a "<major>.<minor>" string, such as "4.16"; while a bundle with an unreadable value is installed, OLM blocks every cluster upgrade`}
		g.finish(&f)
		out = append(out, f)
	}
	return out
}
