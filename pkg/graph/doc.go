// Package graph models OLM upgrade graphs: per package and channel, the
// nodes (channel entries with their versions) and the edges that replaces,
// skips and skipRange make between them.
//
// It provides upstream's channel invariants (head, replaces chain, cycles,
// stranded bundles) with upstream's wording, the successors of an installed
// version, and upgrade paths under the two semantics OLM has used:
//
//   - Classic (OLM v0's resolver): candidates are the entries on the
//     channel's replaces chain whose replaces or skips names the installed
//     bundle or whose skipRange covers its version; the candidate closest to
//     the head wins. Deprecations play no part.
//   - V1 (operator-controller): every entry of the selected channels that
//     replaces, skips or skipRange-covers the installed bundle is a
//     successor. The installed bundle is ranked among the candidates,
//     deprecated bundles after the others, then the highest version (then
//     release: the olm.package release, or the build metadata) wins; it
//     never moves to a lower version.
//
// The installed bundle need not be in the catalog ([PackageGraph.ResolveInstalled]):
// replaces and skips match it by name, skipRange by version.
//
// [PackageGraph.CheckClusterUpgrade] reads olm.maxOpenShiftVersion: whether
// an installed bundle blocks the cluster's next OpenShift minor version, and
// the path to the nearest bundle that does not.
package graph
