//go:build race

package catalogedit

const raceEnabled = true
