//go:build race

package gencatalog

// raceEnabled reports whether the race detector is on; it slows JSON
// encoding about twentyfold, so size tests skip under it.
const raceEnabled = true
