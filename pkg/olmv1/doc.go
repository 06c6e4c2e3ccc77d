// Package olmv1 answers offline what OLM v1 (operator-controller, whose
// rules at [Release] it follows) does with registry+v1 bundles and
// catalogs: which bundles it refuses and why, which it installs only given
// something (a watchNamespace config, a certificate provider), what a
// ClusterExtension installs from a channel, and where OLM v1 upgrades
// differently from OLM classic. Every reason is an [Issue] with a rule
// code ([Rules]) and the element it is about.
//
// One bundle: read it ([LoadDir] for a bundle directory, read as OLM v1
// reads a bundle image; [FromDeclcfg] for a catalog's olm.bundle), check
// it under a feature gate state ([Check], [DefaultGates], [ParseGates]),
// and place each issue ([Bundle.Position] for a directory):
//
//	b, err := olmv1.LoadDir(ctx, dir)
//	v := olmv1.Check(b, olmv1.DefaultGates())
//	for _, is := range v.Issues {
//		pos, _ := b.Position(is) // file, line and column
//		fmt.Println(pos.File, pos.Line, is.Level(), is.Code, is.Message)
//	}
//
// A package: [CheckPackage] takes its upgrade graph (pkg/graph) and its
// bundles' verdicts; [Resolve] is what a ClusterExtension installs;
// [Summary] counts a catalog. opm validate --target olm-v1 (pkg/validate)
// turns all of it into findings.
package olmv1
