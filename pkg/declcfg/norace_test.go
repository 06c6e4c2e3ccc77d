//go:build !race

package declcfg

const raceEnabled = false
