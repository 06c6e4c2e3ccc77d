//go:build race

package main

// raceEnabled reports whether the race detector is on: `bounded` scales its
// time and memory bounds by raceScale then.
const raceEnabled = true
