//go:build !race

package catalogedit

const raceEnabled = false
