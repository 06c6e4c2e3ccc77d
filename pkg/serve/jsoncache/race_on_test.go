//go:build race

package jsoncache

// raceEnabled reports whether the race detector is on (it slows the large
// end-to-end builds tenfold).
const raceEnabled = true
