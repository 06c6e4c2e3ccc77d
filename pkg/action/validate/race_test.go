//go:build race

package validate

const raceEnabled = true
