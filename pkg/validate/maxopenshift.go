package validate

import (
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
)

// CodeMaxOpenShiftInvalid is a bundle whose olm.maxOpenShiftVersion OLM
// cannot read (a warning; an error under --strict).
const CodeMaxOpenShiftInvalid = "max-openshift-version-invalid"

// maxOpenShiftChecks reports every bundle whose olm.maxOpenShiftVersion is
// malformed or given more than once, read as `opm graph upgradeable` and
// OLM read it (pkg/graph). OLM treats such a value as blocking every
// cluster upgrade while the bundle is installed.
func maxOpenShiftChecks(cfg *declcfg.DeclarativeConfig) []Finding {
	var out []Finding
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if _, err := graph.BundleMaxOpenShiftVersion(b); err != nil {
			out = append(out, Finding{Severity: SeverityWarning, Code: CodeMaxOpenShiftInvalid,
				Message: fmt.Sprintf("bundle %q has an invalid olm.maxOpenShiftVersion: %v", b.Name, err),
				File:    b.Pos.File, Line: b.Pos.Line, Column: b.Pos.Column, Package: b.Package, Bundle: b.Name,
				Help: `give one olm.maxOpenShiftVersion property whose value is a "<major>.<minor>" string, such as "4.16"; while a bundle with an unreadable value is installed, OLM blocks every cluster upgrade`})
		}
	}
	return out
}
