//go:build race

package main

// raceEnabled reports whether the race detector is on: it multiplies the
// memory and time of the opm the tests run, so tests that bound them
// build a binary without it, or (`bounded`) scale their bounds by
// raceScale.
const raceEnabled = true
