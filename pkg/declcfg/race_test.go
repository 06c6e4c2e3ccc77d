//go:build race

package declcfg

// raceEnabled reports whether the race detector is on: it slows the YAML
// paths about twentyfold, so the conformance comparisons take only the
// smaller files then.
const raceEnabled = true
