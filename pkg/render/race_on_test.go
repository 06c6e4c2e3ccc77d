//go:build race

package render

// raceEnabled reports whether the race detector is on (it slows the large
// end-to-end renders tenfold).
const raceEnabled = true
